/* weft.hpp, hunt 38: paths a Taskflow user porting code takes that the other
 * C++ tests do not (fork-join objects reached from other tasks, ...). */
#include "cpp_test.hpp"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

/* A task_group belongs to the task that made it: its frames are on that
 * task's worker.  A child that captured the group by reference and calls
 * run() or wait() on it (from its own task, maybe on another worker) used to
 * pop another thread's (empty) frame list and crash on a NULL link; it is an
 * error now, and the group still works for its own task. */
TEST(cpp_task_group_used_from_another_task_is_an_error_not_a_crash) {
    weft::executor ex(cpp_test_workers());
    std::atomic<int> refused_run{0}, refused_wait{0}, ran{0};
    for (int rep = 0; rep < 20; rep++) {
        int r = ex.run_root([&] {
            weft::task_group tg;
            tg.run([&] {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                try {
                    tg.run([&] { ran++; });
                } catch (const weft::error &e) {
                    if (e.status() == WEFT_EINVAL) refused_run++;
                }
                try {
                    tg.wait();
                } catch (const weft::error &e) {
                    if (e.status() == WEFT_EINVAL) refused_wait++;
                }
            });
            tg.run([&] { ran++; });
            tg.wait();
            return 1;
        });
        ASSERT_EQ(r, 1);
    }
    ASSERT_EQ(refused_run.load(), 20);
    ASSERT_EQ(refused_wait.load(), 20);
    ASSERT_EQ(ran.load(), 20);
}

/* The same for a spawned child's handle synced by another task. */
TEST(cpp_spawned_synced_from_another_task_is_an_error_not_a_crash) {
    weft::executor ex(cpp_test_workers());
    std::atomic<int> refused{0};
    for (int rep = 0; rep < 20; rep++) {
        int v = ex.run_root([&] {
            auto x = weft::spawn([] {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                return 5;
            });
            weft::task_group tg;
            tg.run([&] {
                try {
                    (void)x.sync();
                } catch (const weft::error &e) {
                    if (e.status() == WEFT_EINVAL) refused++;
                }
            });
            tg.wait();
            return x.sync();
        });
        ASSERT_EQ(v, 5);
    }
    ASSERT_EQ(refused.load(), 20);
}

/* A run that cannot start (a cycle) names the call that submitted it: run_n
 * and run_until said "weft::executor::run".  Nothing is left in flight: the
 * taskflow clears at once. */
TEST(cpp_refused_run_n_and_run_until_name_their_own_call) {
    weft::executor ex(cpp_test_workers());
    weft::taskflow tf("loop");
    auto a = tf.emplace([] {}), b = tf.emplace([] {});
    a.precede(b);
    b.precede(a);
    ASSERT_THROWS(ex.run(tf), weft::error, e, {
        ASSERT_EQ(e.status(), WEFT_ECYCLE);
        ASSERT_EQ(std::string(e.what()).rfind("weft::executor::run: ", 0), 0u);
    });
    ASSERT_THROWS(ex.run_n(tf, 3), weft::error, e, {
        ASSERT_EQ(e.status(), WEFT_ECYCLE);
        ASSERT_EQ(std::string(e.what()).rfind("weft::executor::run_n: ", 0), 0u);
    });
    ASSERT_THROWS(ex.run_until(tf, [] { return false; }), weft::error, e, {
        ASSERT_EQ(e.status(), WEFT_ECYCLE);
        ASSERT_EQ(std::string(e.what()).rfind("weft::executor::run_until: ", 0), 0u);
    });
    tf.clear();
    ASSERT_EQ(tf.num_tasks(), 0u);
}

namespace {
struct hunt38_boom {
    int id;
};
std::atomic<int> hunt38_live{0};
struct hunt38_counted {
    hunt38_counted() { hunt38_live++; }
    hunt38_counted(const hunt38_counted &) { hunt38_live++; }
    hunt38_counted(hunt38_counted &&) noexcept { hunt38_live++; }
    ~hunt38_counted() { hunt38_live--; }
};
} // namespace

/* A run_until predicate that throws stops the run there, and its exception
 * (not weft::error) comes from get(), on its first call (before any
 * iteration) as on a later one; the predicate's captures go with the future. */
TEST(cpp_run_until_predicate_that_throws_stops_the_run_and_reaches_get) {
    weft::executor ex(cpp_test_workers());
    weft::taskflow tf;
    std::atomic<int> runs{0};
    tf.emplace([&] { runs++; });
    int calls = 0;
    {
        auto f = ex.run_until(tf, [&calls, c = hunt38_counted()] {
            if (++calls == 3) throw hunt38_boom{3};
            return false;
        });
        ASSERT_THROWS(f.get(), hunt38_boom, b, ASSERT_EQ(b.id, 3));
        ASSERT_THROWS(f.wait(), hunt38_boom, b, ASSERT_EQ(b.id, 3));
        ASSERT_EQ(calls, 3);
        ASSERT_EQ(runs.load(), 2);
    }
    ASSERT_EQ(hunt38_live.load(), 0);
    calls = 0;
    runs = 0;
    auto g = ex.run_until(tf, [&calls]() -> bool { ++calls; throw hunt38_boom{0}; });
    ASSERT_THROWS(g.get(), hunt38_boom, b, ASSERT_EQ(b.id, 0));
    ASSERT_EQ(calls, 1);
    ASSERT_EQ(runs.load(), 0);
    ex.run(tf).get(); /* the taskflow runs again */
    ASSERT_EQ(runs.load(), 1);
}

/* Futures may outlive both their executor and their taskflow: get(), wait()
 * and info() still report the run (its exception, again), and the captures
 * of the async task and the graph go exactly once. */
TEST(cpp_futures_outlive_their_executor_and_taskflow) {
    weft::future<int> fa;
    weft::future<void> fr, fok;
    {
        weft::executor ex(2);
        weft::taskflow tf;
        tf.emplace([c = hunt38_counted()] { throw hunt38_boom{1}; });
        weft::taskflow ok;
        ok.emplace([c = hunt38_counted()] {});
        fa = ex.async([c = hunt38_counted()] { return 42; });
        fr = ex.run(tf);
        fok = ex.run_n(ok, 3);
    }
    ASSERT_EQ(hunt38_live.load(), 1); /* the async task's, held by its future's state */
    ASSERT_EQ(fa.get(), 42);
    ASSERT_THROWS(fr.get(), hunt38_boom, b, ASSERT_EQ(b.id, 1));
    ASSERT_THROWS(fr.wait(), hunt38_boom, b, ASSERT_EQ(b.id, 1));
    ASSERT_EQ(fr.info().status, WEFT_ETASK);
    fok.get();
    ASSERT_EQ(fok.info().iterations, 3u);
    ASSERT_FALSE(fa.cancel());
    ASSERT_FALSE(fr.cancel());
    fa = weft::future<int>();
    ASSERT_EQ(hunt38_live.load(), 0);
}

/* One taskflow run by two executors at once, from two threads, with a
 * subflow, a module and a packed task that throw now and then: every failed
 * run rethrows one of its own exceptions, and none is lost or seen twice. */
TEST(cpp_one_taskflow_on_two_executors_at_once_keeps_each_runs_exception) {
    weft::executor e1(2), e2(2);
    weft::taskflow body("body"), tf("main");
    std::atomic<long> seq{0}, thrown_total{0};
    body.emplace([&] {
        long k = seq++;
        if (k % 7 == 3) { thrown_total++; throw hunt38_boom{int(k)}; }
    });
    auto s = tf.emplace([&](weft::subflow &sf) {
        sf.emplace([&] {
            long k = seq++;
            if (k % 11 == 5) { thrown_total++; throw hunt38_boom{int(k)}; }
        });
    });
    auto m = tf.composed_of(body);
    std::atomic<long> *seqp = &seq;
    auto p = tf.emplace([seqp] { /* packed: one pointer */
        long k = (*seqp)++;
        if (k % 13 == 7) throw hunt38_boom{-int(k)};
    });
    s.precede(m);
    m.precede(p);
    std::atomic<int> failed{0}, ok{0}, other{0};
    auto submit = [&](weft::executor &ex) {
        std::vector<weft::future<void>> fs;
        for (int i = 0; i < 40; i++) fs.push_back(i % 3 ? ex.run(tf) : ex.run_n(tf, 2));
        for (auto &f : fs) {
            try {
                f.get();
                ok++;
            } catch (const hunt38_boom &) {
                failed++;
            } catch (...) {
                other++;
            }
        }
    };
    std::thread a([&] { submit(e1); }), b([&] { submit(e2); });
    a.join();
    b.join();
    ASSERT_EQ(other.load(), 0);
    ASSERT_EQ(ok.load() + failed.load(), 80);
    ASSERT_GT(failed.load(), 0);
    ASSERT_GT(ok.load(), 0);
}
