/* Round 41: Taskflow members a Taskflow user reaches for that weft.hpp
 * lacked (docs/guide-cpp.md): task::priority (set and get), task::type,
 * task::remove_successors / remove_predecessors, and tf::TaskGroup's async,
 * dependent_async, cancel, is_cancelled and size. */
#include "cpp_test.hpp"

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

TEST(task_priority_is_set_and_read_back_and_an_empty_task_refuses_it) {
    weft::taskflow tf;
    auto a = tf.emplace([] {});
    ASSERT_TRUE(a.priority() == weft::task_priority::normal);
    a.priority(weft::task_priority::high);
    ASSERT_TRUE(a.priority() == weft::task_priority::high);
    ASSERT_EQ(static_cast<int>(weft_task_get_priority(a.native())), static_cast<int>(WEFT_PRIORITY_HIGH));
    a.priority(weft::task_priority::low).priority(weft::task_priority::critical);
    ASSERT_TRUE(a.priority() == weft::task_priority::critical);
    weft::task none;
    ASSERT_TRUE(none.priority() == weft::task_priority::normal);
    ASSERT_THROWS(none.priority(weft::task_priority::high), weft::error, e,
                  ASSERT_STATUS(e.status(), WEFT_EINVAL));
    /* A graph of prioritised tasks runs them all. */
    weft::executor ex(2);
    std::atomic<int> n{0};
    tf.clear();
    auto b = tf.emplace([&n] { n++; });
    auto c = tf.emplace([&n] { n++; });
    auto d = tf.emplace([&n] { n++; });
    b.priority(weft::task_priority::low);
    c.priority(weft::task_priority::high);
    b.precede(d);
    c.precede(d);
    for (int i = 0; i < 5; i++) ex.run(tf).get();
    ASSERT_EQ(n.load(), 15);
}

TEST(task_type_names_each_kind_of_task) {
    weft::taskflow body, tf;
    body.emplace([] {});
    ASSERT_TRUE(tf.emplace([] {}).type() == weft::task_type::plain);
    ASSERT_TRUE(tf.emplace([](weft::runtime &) {}).type() == weft::task_type::plain);
    ASSERT_TRUE(tf.placeholder().type() == weft::task_type::plain);
    ASSERT_TRUE(tf.emplace([] { return 0; }).type() == weft::task_type::condition);
    ASSERT_TRUE(tf.emplace([] { return weft::branches{}; }).type() == weft::task_type::multi_condition);
    ASSERT_TRUE(tf.emplace([](weft::subflow &) {}).type() == weft::task_type::subflow);
    ASSERT_TRUE(tf.composed_of(body).type() == weft::task_type::module);
    ASSERT_TRUE(weft::task().type() == weft::task_type::plain);
}

TEST(remove_successors_and_predecessors_drop_those_edges_and_skip_missing_ones) {
    weft::executor ex(2);
    weft::taskflow tf;
    std::vector<int> order;
    std::atomic<int> runs{0};
    auto a = tf.emplace([&] { runs++; });
    auto b = tf.emplace([&] { runs++; });
    auto c = tf.emplace([&] { runs++; });
    auto d = tf.emplace([&] { runs++; });
    a.precede(b, c, d);
    a.precede(b); /* a doubled edge: both copies go */
    d.precede(c);
    ASSERT_EQ(a.num_successors(), 4u);
    a.remove_successors(b, c);
    ASSERT_EQ(a.num_successors(), 1u);
    ASSERT_EQ(b.num_predecessors(), 0u);
    ASSERT_EQ(c.num_predecessors(), 1u);
    a.remove_successors(b); /* no edge a -> b left: skipped, as in Taskflow */
    a.remove_successors();
    c.remove_predecessors(d, a); /* a -> c is gone already: skipped */
    ASSERT_EQ(c.num_predecessors(), 0u);
    ASSERT_EQ(d.num_successors(), 0u);
    ASSERT_EQ(d.num_predecessors(), 1u);
    ex.run(tf).get();
    ASSERT_EQ(runs.load(), 4);
    /* Errors still throw: a task of another taskflow, an empty handle. */
    weft::taskflow other;
    auto o = other.emplace([] {});
    ASSERT_THROWS(a.remove_successors(o), weft::error, e, ASSERT_STATUS(e.status(), WEFT_EINVAL));
    ASSERT_THROWS(a.remove_predecessors(weft::task()), weft::error, e, ASSERT_STATUS(e.status(), WEFT_EINVAL));
}

TEST(remove_successors_while_the_taskflow_runs_throws_ebusy) {
    weft::executor ex(2);
    weft::taskflow tf;
    std::atomic<bool> go{false};
    weft::task a = tf.placeholder(), b = tf.placeholder();
    a.precede(b);
    a.work([&go] {
        while (!go.load()) {
        }
    });
    auto f = ex.run(tf);
    ASSERT_THROWS(a.remove_successors(b), weft::error, e, ASSERT_STATUS(e.status(), WEFT_EBUSY));
    ASSERT_THROWS(b.priority(weft::task_priority::high), weft::error, e, ASSERT_STATUS(e.status(), WEFT_EBUSY));
    go = true;
    f.get();
    ASSERT_EQ(a.num_successors(), 1u);
}

TEST(task_group_size_counts_children_until_wait) {
    weft::executor ex(2);
    std::size_t s3 = 9, s0 = 9, s2 = 9;
    std::atomic<int> n{0};
    ex.run_root([&] {
        weft::task_group tg;
        for (int i = 0; i < 3; i++) tg.run([&n] { n++; });
        s3 = tg.size();
        tg.wait();
        s0 = tg.size();
        tg.silent_async([&n] { n++; });
        auto f = tg.async([] { return 1; });
        s2 = tg.size();
        tg.corun();
        (void)f.get();
    });
    ASSERT_EQ(s3, 3u);
    ASSERT_EQ(s0, 0u);
    ASSERT_EQ(s2, 2u);
    ASSERT_EQ(n.load(), 4);
}

TEST(task_group_async_gives_a_future_and_the_group_waits_for_it) {
    for (unsigned w : {1u, 2u, 4u}) {
        weft::executor ex(w);
        std::atomic<int> done{0};
        int sum = ex.run_root([&] {
            weft::task_group tg;
            auto a = tg.async([] { return 20; });
            auto b = tg.async([](weft::runtime &rt) { return rt.cancelled() ? -1 : 22; });
            for (int i = 0; i < 8; i++) (void)tg.async([&done] { done++; }); /* futures dropped at once */
            auto c = tg.dependent_async([&done] { return done.load(); }, a, b);
            tg.wait();
            /* wait() waited for the dropped ones too. */
            if (done.load() != 8) return -1000;
            return a.get() + b.get() + c.get() * 0;
        });
        ASSERT_EQ(sum, 42);
        ASSERT_EQ(done.load(), 8);
    }
}

TEST(task_group_dependent_async_starts_after_its_dependencies) {
    weft::executor ex(4);
    for (int round = 0; round < 20; round++) {
        std::atomic<int> stage{0};
        bool ok = ex.run_root([&] {
            weft::task_group tg;
            auto a = tg.async([&stage] { stage.fetch_add(1); });
            auto b = tg.async([&stage] { stage.fetch_add(1); });
            auto c = tg.dependent_async([&stage] { return stage.load() == 2; }, a, b);
            auto d = tg.dependent_async([&stage] { return stage.fetch_add(1) == 2; }, c);
            tg.corun();
            return c.get() && d.get() && stage.load() == 3;
        });
        ASSERT_TRUE(ok);
    }
}

TEST(task_group_async_exception_goes_to_its_future_not_to_wait) {
    weft::executor ex(2);
    bool waited = false, got = false;
    ex.run_root([&] {
        weft::task_group tg;
        auto f = tg.async([]() -> int { throw std::runtime_error("boom"); });
        tg.wait();
        waited = true;
        try {
            (void)f.get();
        } catch (const std::runtime_error &e) {
            got = std::string(e.what()) == "boom";
        }
    });
    ASSERT_TRUE(waited);
    ASSERT_TRUE(got);
}

TEST(task_group_cancel_skips_children_not_yet_started) {
    /* One worker: the children wait in its deque until wait(). */
    weft::executor ex(1);
    std::atomic<int> ran{0};
    bool cancelled_before = true, cancelled_after = false, async_refused = false;
    ex.run_root([&] {
        weft::task_group tg;
        cancelled_before = tg.is_cancelled();
        for (int i = 0; i < 10; i++) tg.run([&ran] { ran++; });
        auto f = tg.async([&ran] {
            ran++;
            return 1;
        });
        tg.cancel();
        cancelled_after = tg.is_cancelled();
        tg.wait();
        try {
            (void)f.get();
        } catch (const weft::error &e) {
            async_refused = e.status() == WEFT_ECANCELED;
        }
        /* The group stays cancelled: later children are skipped too. */
        tg.run([&ran] { ran++; });
        tg.wait();
    });
    ASSERT_FALSE(cancelled_before);
    ASSERT_TRUE(cancelled_after);
    ASSERT_TRUE(async_refused);
    ASSERT_EQ(ran.load(), 0);
}

TEST(task_group_cancel_from_a_child_stops_the_rest_and_wait_returns) {
    weft::executor ex(4);
    for (int round = 0; round < 10; round++) {
        std::atomic<int> ran{0};
        ex.run_root([&] {
            weft::task_group tg;
            for (int i = 0; i < 1000; i++)
                tg.run([&ran, &tg] {
                    if (ran.fetch_add(1) == 10) tg.cancel();
                });
            tg.wait();
            ASSERT_TRUE(tg.is_cancelled());
        });
        ASSERT_TRUE(ran.load() >= 11);
        ASSERT_TRUE(ran.load() <= 1000);
    }
}

TEST(task_group_destroyed_without_wait_still_waits_for_its_async_children) {
    weft::executor ex(2);
    std::atomic<int> done{0};
    ex.run_root([&] {
        {
            weft::task_group tg;
            for (int i = 0; i < 16; i++) (void)tg.async([&done] { done++; });
        }
        ASSERT_EQ(done.load(), 16);
    });
}

TEST(task_group_async_from_a_child_of_the_group_throws_einval) {
    weft::executor ex(2);
    std::atomic<int> refused{0};
    ex.run_root([&] {
        weft::task_group tg;
        tg.run([&] {
            try {
                (void)tg.async([] {});
            } catch (const weft::error &e) {
                if (e.status() == WEFT_EINVAL) refused++;
            }
        });
        tg.wait();
    });
    ASSERT_EQ(refused.load(), 1);
}

TEST(task_group_with_a_thousand_async_children_sums_exactly) {
    weft::executor ex(4);
    long total = ex.run_root([] {
        weft::task_group tg;
        std::vector<weft::future<long>> fs;
        for (long i = 1; i <= 1000; i++) fs.push_back(tg.async([i] { return i; }));
        tg.wait();
        long s = 0;
        for (auto &f : fs) s += f.get();
        return s + static_cast<long>(tg.size());
    });
    ASSERT_EQ(total, 500500);
}

TEST(this_worker_is_null_off_the_executor_and_names_the_worker_on_it) {
    weft::executor ex(3), other(1);
    ASSERT_TRUE(ex.this_worker() == nullptr);
    std::atomic<int> bad{0};
    weft::taskflow tf;
    for (int i = 0; i < 32; i++)
        tf.emplace([&] {
            const weft::worker *w = ex.this_worker();
            if (!w || w->id() >= ex.num_workers() || static_cast<int>(w->id()) != ex.this_worker_id()) bad++;
            if (other.this_worker() != nullptr) bad++; /* a worker of ex is none of other's */
        });
    ex.run(tf).get();
    ASSERT_EQ(bad.load(), 0);
}

TEST(task_group_dependent_async_takes_a_range_of_futures) {
    weft::executor ex(2);
    int got = ex.run_root([] {
        weft::task_group tg;
        std::atomic<int> n{0};
        std::vector<weft::future<void>> deps;
        for (int i = 0; i < 10; i++) deps.push_back(tg.async([&n] { n++; }));
        auto f = tg.dependent_async([&n] { return n.load(); }, deps.begin(), deps.end());
        std::vector<weft::future<void>> none;
        auto g = tg.dependent_async([] { return 5; }, none.begin(), none.end());
        tg.corun();
        return f.get() * 10 + g.get();
    });
    ASSERT_EQ(got, 105);
}

TEST(task_group_async_in_graph_and_async_tasks_of_one_worker) {
    /* One worker: every wait must run the work it waits for. */
    weft::executor ex(1);
    weft::taskflow tf;
    std::atomic<int> sum{0};
    for (int k = 0; k < 4; k++)
        tf.emplace([&sum] {
            weft::task_group tg;
            auto a = tg.async([] { return 1; });
            auto b = tg.dependent_async([] { return 2; }, a);
            sum += a.get() + b.get(); /* before the group's wait */
            tg.corun();
        });
    ex.run(tf).get();
    ASSERT_EQ(sum.load(), 12);
    auto f = ex.async([] {
        weft::task_group tg;
        auto a = tg.async([] { return 40; });
        tg.run([] {});
        tg.wait();
        return a.get() + 2;
    });
    ASSERT_EQ(f.get(), 42);
}
