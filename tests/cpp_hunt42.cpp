/* Round 42 (h42-7): weft.hpp's callables and lifetimes as a Taskflow user
 * meets them.  Every API taking a callable, given callables that throw
 * (std and non-std types, from their copy or move), move-only ones, 4 KiB
 * captures, std::function, member pointers, mutable state; moved-from and
 * self-moved objects; an executor destroyed from another thread while its
 * futures are waited; task-group children after a sibling threw (Taskflow's
 * Exception.TaskGroup.Async). */
#include "cpp_test.hpp"

#include <array>
#include <atomic>
#include <csignal>
#include <chrono>
#include <functional>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

/* A thrown type that is not a std::exception. */
struct odd {
    int id;
};

/* A callable whose copy or move throws (when armed), counting live objects. */
struct bomb {
    static std::atomic<int> live, calls;
    static bool copy_throws, move_throws;
    bomb() { live++; }
    bomb(const bomb &) {
        if (copy_throws) throw odd{1};
        live++;
    }
    bomb(bomb &&) noexcept(false) {
        if (move_throws) throw odd{2};
        live++;
    }
    ~bomb() { live--; }
    int operator()() const {
        calls++;
        return 7;
    }
};
std::atomic<int> bomb::live{0}, bomb::calls{0};
bool bomb::copy_throws = false, bomb::move_throws = false;

/* The same shape taking a subflow. */
struct sub_bomb : bomb {
    void operator()(weft::subflow &) const { calls++; }
};

} // namespace

/* Taskflow's Exception.TaskGroup.Async (unittests/test_exceptions.cpp): of
 * 100 silent_async children that all throw, at most one per worker runs (a
 * child that has not started when a sibling threw is skipped), corun rethrows
 * the exception, and the group is not cancelled; 100 async children that all
 * throw all run, their exceptions go to their futures, and corun returns. */
TEST(task_group_children_not_started_after_a_sibling_threw_are_skipped_as_in_taskflow) {
    for (unsigned W : {1u, 2u, 3u, 4u}) {
        weft::executor executor(W);
        std::atomic<int> bad{0};
        executor.async([&]() {
            std::atomic<size_t> counter;
            weft::task_group tg = executor.task_group();
            for (size_t r = 0; r < 20; r++) {
                counter = 0;
                for (size_t i = 0; i < 100; i = i + 1) (void)tg.async([&]() { ++counter; throw std::runtime_error("x"); });
                try {
                    tg.corun();
                } catch (...) {
                    bad++;
                }
                if (tg.is_cancelled() || counter != 100) bad++;
                counter = 0;
                for (size_t i = 0; i < 100; i = i + 1) tg.silent_async([&]() { ++counter; throw std::runtime_error("x"); });
                bool threw = false;
                try {
                    tg.corun();
                } catch (const std::runtime_error &e) {
                    threw = std::string(e.what()) == "x";
                }
                if (!threw || counter > W || tg.is_cancelled()) bad++;
            }
        }).get();
        ASSERT_EQ(bad.load(), 0);
    }
}

/* On one worker the group's children run at wait(), newest first: the one
 * added last throws first, and every other child (run or async) is skipped:
 * the async one's future throws weft::error WEFT_ECANCELED.  The next batch
 * runs again. */
TEST(task_group_children_after_a_throw_are_skipped_and_the_next_batch_runs) {
    weft::executor ex(1);
    std::atomic<int> ran{0};
    std::string got;
    weft_status async_status = WEFT_OK;
    ex.run_root([&] {
        weft::task_group tg;
        auto fut = tg.async([&] { ran++; return 1; });
        for (int i = 0; i < 10; i++) tg.run([&] { ran++; });
        tg.run([] { throw std::runtime_error("first"); });
        try {
            tg.wait();
        } catch (const std::runtime_error &e) {
            got = e.what();
        }
        try {
            (void)fut.get();
        } catch (const weft::error &e) {
            async_status = e.status();
        }
        for (int i = 0; i < 10; i++) tg.run([&] { ran += 10; });
        tg.wait();
    });
    ASSERT_TRUE(got == "first");
    ASSERT_STATUS(async_status, WEFT_ECANCELED);
    ASSERT_EQ(ran.load(), 100);
}

/* A thrown int or a type that is no std::exception reaches each API's wait as
 * itself. */
TEST(non_std_exceptions_reach_every_wait_as_themselves) {
    weft::executor ex(2);
    auto is_odd = [](auto &&call, int id) {
        try {
            call();
        } catch (const odd &o) {
            return o.id == id;
        } catch (...) {
            return false;
        }
        return false;
    };
    int p = 0, *pp = &p;
    {
        weft::taskflow tf;
        tf.emplace([pp] { if (pp) throw odd{1}; }); /* packed */
        ASSERT_TRUE(is_odd([&] { ex.run(tf).get(); }, 1));
    }
    {
        weft::taskflow tf;
        tf.emplace([pp]() -> int { if (pp) throw 5; return 0; });
        bool ok = false;
        try {
            ex.run(tf).get();
        } catch (int v) {
            ok = v == 5;
        }
        ASSERT_TRUE(ok);
    }
    {
        weft::taskflow tf;
        tf.emplace([s = std::string("m")]() -> weft::branches { throw odd{3}; });
        ASSERT_TRUE(is_odd([&] { ex.run(tf).get(); }, 3));
        weft::taskflow outer;
        outer.composed_of(tf);
        ASSERT_TRUE(is_odd([&] { ex.run_n(outer, 2).get(); }, 3));
    }
    {
        weft::taskflow tf;
        tf.emplace([](weft::subflow &sf) { sf.emplace([] { throw odd{4}; }); });
        ASSERT_TRUE(is_odd([&] { ex.run(tf).wait(); }, 4));
    }
    ASSERT_TRUE(is_odd([&] { ex.async([] { throw odd{5}; }).get(); }, 5));
    ASSERT_TRUE(is_odd([&] { ex.run_root([]() -> int { throw odd{6}; }); }, 6));
    ASSERT_TRUE(is_odd([&] {
        ex.run_root([] {
            auto s = weft::spawn([]() -> long { throw odd{7}; });
            (void)s.sync();
        });
    }, 7));
    ASSERT_TRUE(is_odd([&] {
        ex.run_root([] {
            weft::task_group tg;
            tg.run([] { throw odd{8}; });
            tg.wait();
        });
    }, 8));
    {
        weft::taskflow tf;
        tf.emplace([] {});
        ASSERT_TRUE(is_odd([&] { ex.run_until(tf, []() -> bool { throw odd{9}; }).get(); }, 9));
    }
    {
        weft::pipeline pl(2, weft::pipe{weft::pipe_type::serial, [](weft::pipeflow &pf) {
                              if (pf.token() == 3) throw odd{10};
                          }});
        weft::taskflow tf;
        tf.composed_of(pl);
        ASSERT_TRUE(is_odd([&] { ex.run(tf).get(); }, 10));
    }
    std::vector<int> v(5000);
    std::iota(v.begin(), v.end(), 0);
    ASSERT_TRUE(is_odd([&] { weft::for_each(ex, v.begin(), v.end(), [](int x) { if (x == 4000) throw odd{11}; }); }, 11));
    ASSERT_TRUE(is_odd([&] { weft::sort(ex, v.begin(), v.end(), [](int, int) -> bool { throw odd{12}; }); }, 12));
    ASSERT_TRUE(is_odd([&] {
        (void)weft::reduce(ex, v.begin(), v.end(), 0, [](int a, int b) { if (b == 4321) throw odd{13}; return a + b; });
    }, 13));
}

/* A callable whose copy (an lvalue given) or move (an rvalue given) throws:
 * every API taking a callable throws that exception from the call itself,
 * submits or adds nothing, keeps no object of it, and leaves the taskflow,
 * group and executor usable. */
TEST(callables_whose_copy_or_move_throws_are_refused_at_the_call_with_nothing_kept) {
    weft::executor ex(2);
    auto throws_odd = [](auto &&call) {
        try {
            call();
        } catch (const odd &) {
            return true;
        } catch (...) {
            return false;
        }
        return false;
    };
    bomb::calls = 0;
    {
        bomb b;
        sub_bomb sb;
        auto base = bomb::live.load();
        weft::future<int> dep = ex.async([] { return 1; });
        std::vector<weft::future<int>> deps;
        deps.push_back(ex.async([] { return 2; }));
        weft::taskflow tf;
        for (int round = 0; round < 2; round++) {
            bomb::copy_throws = round == 0;
            bomb::move_throws = round == 1;
            /* each call once with an lvalue (copy) and once with an rvalue (move) */
            auto give = [&](auto &&submit) {
                if (round == 0) return throws_odd([&] { submit(b); });
                return throws_odd([&] { submit(std::move(b)); });
            };
            ASSERT_TRUE(give([&](auto &&x) { tf.emplace(std::forward<decltype(x)>(x)); }));
            ASSERT_TRUE(round == 0 ? throws_odd([&] { tf.emplace(sb); }) : throws_odd([&] { tf.emplace(std::move(sb)); }));
            ASSERT_EQ(tf.num_tasks(), 0u);
            ASSERT_TRUE(give([&](auto &&x) { (void)ex.async(std::forward<decltype(x)>(x)); }));
            ASSERT_TRUE(give([&](auto &&x) { ex.silent_async(std::forward<decltype(x)>(x)); }));
            ASSERT_TRUE(give([&](auto &&x) { (void)ex.dependent_async(std::forward<decltype(x)>(x), dep); }));
            ASSERT_TRUE(give([&](auto &&x) { (void)ex.dependent_async(std::forward<decltype(x)>(x), deps.begin(), deps.end()); }));
            ASSERT_TRUE(give([&](auto &&x) { ex.silent_dependent_async(std::forward<decltype(x)>(x), dep); }));
            ASSERT_TRUE(give([&](auto &&x) { ex.silent_dependent_async(std::forward<decltype(x)>(x), deps.begin(), deps.end()); }));
            ASSERT_TRUE(give([&](auto &&x) { (void)ex.run_root(std::forward<decltype(x)>(x)); }));
            ASSERT_TRUE(give([&](auto &&x) { (void)ex.run_until(tf, std::forward<decltype(x)>(x)); }));
            tf.clear(); /* no run was left in flight */
            std::atomic<int> inner_ok{0};
            ex.run_root([&] {
                weft::task_group tg;
                if (give([&](auto &&x) { tg.run(std::forward<decltype(x)>(x)); })) inner_ok++;
                if (give([&](auto &&x) { (void)tg.async(std::forward<decltype(x)>(x)); })) inner_ok++;
                if (give([&](auto &&x) { (void)tg.dependent_async(std::forward<decltype(x)>(x), dep); })) inner_ok++;
                if (tg.size() == 0) inner_ok++;
                tg.wait();
                if (give([&](auto &&x) { auto s = weft::spawn(std::forward<decltype(x)>(x)); (void)s.sync(); })) inner_ok++;
            });
            ASSERT_EQ(inner_ok.load(), 5);
            ex.wait_for_all();
            ASSERT_EQ(bomb::calls.load(), 0);
            ASSERT_EQ(bomb::live.load(), base);
        }
        bomb::copy_throws = bomb::move_throws = false;
        /* unarmed, the same objects work */
        ASSERT_EQ(ex.async(b).get(), 7);
        ASSERT_EQ(ex.run_root(b), 7);
        tf.emplace(b);
        tf.emplace(sb);
        ex.run(tf).get();
        ASSERT_EQ(bomb::calls.load(), 4);
    }
    ASSERT_EQ(bomb::live.load(), 0);
}

namespace {
/* A 4 KiB capture, over-aligned, whose bytes the callable checks. */
struct alignas(64) big_capture {
    std::array<unsigned char, 4096> bytes;
    explicit big_capture(unsigned char seed) {
        for (std::size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<unsigned char>(seed + i * 7);
    }
    bool intact(unsigned char seed) const {
        if (reinterpret_cast<std::uintptr_t>(this) % 64 != 0) return false;
        for (std::size_t i = 0; i < bytes.size(); i++)
            if (bytes[i] != static_cast<unsigned char>(seed + i * 7)) return false;
        return true;
    }
};
} // namespace

/* A callable with a 4 KiB, 64-byte-aligned capture works in every API that
 * takes one: graph tasks of each kind, subflow children, work(), async,
 * dependent async, run_root, spawn, task-group children, run_until's
 * predicate and pipeline stages (and with a moved-only pointer beside it). */
TEST(four_kib_over_aligned_captures_arrive_intact_in_every_api) {
    weft::executor ex(2);
    std::atomic<int> good{0}, bad{0};
    auto check = [&](const big_capture &c, unsigned char seed) { (c.intact(seed) ? good : bad)++; };
    big_capture c1(1);
    weft::taskflow tf;
    auto a = tf.emplace([c1, &check] { check(c1, 1); });
    auto b = tf.emplace([c1, &check]() -> int { check(c1, 1); return 0; });
    auto m = tf.emplace([c1, &check]() -> weft::branches { check(c1, 1); return {0}; });
    auto s = tf.emplace([c1, &check](weft::subflow &sf) {
        check(c1, 1);
        for (int i = 0; i < 3; i++) sf.emplace([c1, &check, p = std::make_unique<int>(i)] { check(c1, 1); });
    });
    auto w = tf.placeholder();
    w.work([c1, &check](weft::runtime &) { check(c1, 1); });
    a.precede(b);
    b.precede(m);
    m.precede(s);
    s.precede(w);
    ex.run_n(tf, 2).get();
    ASSERT_EQ(good.load(), 2 * 8);
    good = 0;
    auto f = ex.async([c1, &check] { check(c1, 1); return 3; });
    ASSERT_EQ(ex.dependent_async([c1, &check] { check(c1, 1); return 4; }, f).get(), 4);
    ASSERT_EQ(f.get(), 3);
    ASSERT_EQ(ex.run_root([c1, &check] {
        auto sp = weft::spawn([c1, &check] { check(c1, 1); return 5; });
        weft::task_group tg;
        for (int i = 0; i < 5; i++) tg.run([c1, &check] { check(c1, 1); });
        auto tf2 = tg.async([c1, &check] { check(c1, 1); return 6; });
        tg.wait();
        return sp.sync() + tf2.get();
    }), 11);
    ASSERT_EQ(good.load(), 9);
    good = 0;
    weft::taskflow one;
    one.emplace([] {});
    ex.run_until(one, [c1, &check, n = 0]() mutable { check(c1, 1); return ++n > 3; }).get();
    ASSERT_EQ(good.load(), 4);
    good = 0;
    weft::pipeline pl(2, weft::pipe{weft::pipe_type::serial, [c1, &check](weft::pipeflow &pf) {
                          check(c1, 1);
                          if (pf.token() == 4) pf.stop();
                      }},
                      weft::pipe{weft::pipe_type::parallel, [c1, &check](weft::pipeflow &) { check(c1, 1); }});
    weft::taskflow ptf;
    ptf.composed_of(pl);
    ex.run(ptf).get();
    ASSERT_EQ(good.load(), 5 + 4);
    ASSERT_EQ(bad.load(), 0);
}

/* std::function objects (Taskflow's own task type) as every kind of
 * callable; an empty one throws std::bad_function_call from the wait of the
 * work that called it. */
TEST(std_function_callables_work_everywhere_and_an_empty_one_throws_bad_function_call_at_the_wait) {
    weft::executor ex(2);
    std::atomic<int> n{0};
    std::function<void()> plain = [&] { n++; };
    std::function<int()> cond = [&] { n++; return 1; };
    std::function<weft::branches()> multi = [&] { n++; return weft::branches{0, 1}; };
    std::function<void(weft::subflow &)> sub = [&](weft::subflow &sf) { sf.emplace(plain); };
    std::function<void(weft::runtime &)> rt = [&](weft::runtime &r) { if (r.worker_id() >= 0) n++; };
    weft::taskflow tf;
    auto c = tf.emplace(cond);
    auto skipped = tf.emplace([&] { n += 100; });
    auto m = tf.emplace(multi);
    c.precede(skipped, m);
    auto [x, y, z] = tf.emplace(sub, rt, plain);
    m.precede(x, y);
    y.precede(z);
    ex.run(tf).get();
    ASSERT_EQ(n.load(), 5);
    std::function<int(weft::runtime &)> val = [](weft::runtime &r) { return r.worker_id() >= 0 ? 9 : -1; };
    ASSERT_EQ(ex.async(val).get(), 9);
    ASSERT_EQ(ex.run_root(val), 9);
    std::function<bool()> pred = [k = 0]() mutable { return ++k > 2; };
    n = 0;
    weft::taskflow one;
    one.emplace(plain);
    ex.run_until(one, pred).get();
    ASSERT_EQ(n.load(), 2);
    std::function<void(weft::pipeflow &)> stage = [&](weft::pipeflow &pf) { if (pf.token() == 2) pf.stop(); else n++; };
    weft::pipeline pl(1, weft::pipe{weft::pipe_type::serial, stage});
    weft::taskflow ptf;
    ptf.composed_of(pl);
    n = 0;
    ex.run(ptf).get();
    ASSERT_EQ(n.load(), 2);
    std::function<void(int &)> body = [](int &v) { v *= 2; };
    std::vector<int> v(1000, 1);
    weft::for_each(ex, v.begin(), v.end(), body);
    ASSERT_EQ(std::accumulate(v.begin(), v.end(), 0), 2000);

    std::function<void()> empty;
    std::function<int()> empty_int;
    weft::taskflow bad;
    bad.emplace(empty);
    ASSERT_THROWS(ex.run(bad).get(), std::bad_function_call, e, (void)e);
    ASSERT_THROWS(ex.async(empty_int).get(), std::bad_function_call, e, (void)e);
    ASSERT_THROWS(ex.run_root(empty), std::bad_function_call, e, (void)e);
    ASSERT_THROWS(ex.run_root([&] {
        weft::task_group tg;
        tg.run(empty);
        tg.wait();
    }), std::bad_function_call, e, (void)e);
}

/* A mutable lambda keeps what it changes in its captures from call to call
 * wherever weft.hpp keeps the callable: a serial pipeline stage (across
 * tokens and runs), a subflow task and its children's builder (across runs),
 * an async task, a task-group child, a spawned child and run_root. */
TEST(mutable_lambdas_keep_their_state_in_stages_subflows_and_fork_join) {
    weft::executor ex(2);
    std::vector<int> seen;
    weft::pipeline pl(2, weft::pipe{weft::pipe_type::serial, [k = 0, &seen](weft::pipeflow &pf) mutable {
                          seen.push_back(k++);
                          if (k % 3 == 0) pf.stop();
                      }});
    weft::taskflow ptf;
    ptf.composed_of(pl);
    ex.run(ptf).get();
    pl.reset();
    ex.run(ptf).get();
    ASSERT_EQ(seen.size(), 6u);
    for (int i = 0; i < 6; i++) ASSERT_EQ(seen[static_cast<std::size_t>(i)], i);
    std::atomic<int> last{-1};
    weft::taskflow tf;
    tf.emplace([runs = 0, &last](weft::subflow &sf) mutable {
        ++runs;
        sf.emplace([runs, &last] { last = runs; });
    });
    for (int i = 0; i < 4; i++) ex.run(tf).get();
    ASSERT_EQ(last.load(), 4);
    ASSERT_EQ(ex.async([n = 1]() mutable { n *= 6; return n; }).get(), 6);
    ASSERT_EQ(ex.run_root([n = 2]() mutable {
        auto s = weft::spawn([m = 3]() mutable { m += 1; return m; });
        int got = 0;
        weft::task_group tg;
        tg.run([k = 10, &got]() mutable { k++; got = k; });
        tg.wait();
        n += s.sync() + got;
        return n;
    }), 2 + 4 + 11);
}

namespace {
enum branch { go_left, go_right }; /* unscoped: converts to int */
} // namespace

/* A member pointer that std::invoke can call with the task's arguments is a
 * task, as std::is_invocable (which picks the kind) and Taskflow's
 * std::function say: &weft::runtime::worker_id as an async task,
 * &weft::runtime::cancelled as a condition, &weft::pipeflow::stop as a
 * stage.  Before, the traits accepted them and the call inside weft.hpp
 * failed to compile. */
TEST(member_pointers_are_callables_as_std_invoke_calls_them) {
    weft::executor ex(2);
    int id = ex.async(&weft::runtime::worker_id).get();
    ASSERT_TRUE(id == 0 || id == 1);
    ASSERT_GE(ex.run_root(&weft::runtime::worker_id), 0);
    weft::taskflow tf;
    int hit = -1;
    auto c = tf.emplace(&weft::runtime::cancelled); /* bool: a condition */
    auto a = tf.emplace([&] { hit = 0; });
    auto b = tf.emplace([&] { hit = 1; });
    c.precede(a, b);
    ASSERT_TRUE(c.type() == weft::task_type::condition);
    ex.run(tf).get();
    ASSERT_EQ(hit, 0);
    weft::pipeline pl(1, weft::pipe{weft::pipe_type::serial, &weft::pipeflow::stop});
    weft::taskflow ptf;
    ptf.composed_of(pl);
    ex.run(ptf).get();
    ASSERT_EQ(pl.num_tokens(), 0u);
}

/* A condition returning an unscoped enum picks the successor of its value, as
 * in Taskflow (whose condition is any callable returning what converts to
 * int); before, it was a static_assert. */
TEST(a_condition_returning_an_unscoped_enum_picks_that_successor) {
    weft::executor ex(2);
    weft::taskflow tf;
    std::atomic<int> left{0}, right{0};
    auto c = tf.emplace([n = 0]() mutable { return n++ % 2 ? go_right : go_left; });
    auto l = tf.emplace([&] { left++; });
    auto r = tf.emplace([&] { right++; });
    c.precede(l, r);
    ASSERT_TRUE(c.type() == weft::task_type::condition);
    ex.run_n(tf, 5).get();
    ASSERT_EQ(left.load(), 3);
    ASSERT_EQ(right.load(), 2);
}

/* Three threads wait on futures of an executor (get, wait_for in a loop,
 * wait then info) while a fourth destroys it: the destructor runs every queued
 * task to its end, each wait returns its own value or exception, and the
 * futures stay usable afterwards (ready, info, cancel false, get again). */
TEST(an_executor_destroyed_on_another_thread_while_its_futures_are_waited_completes_every_wait) {
    auto ex = std::make_unique<weft::executor>(2);
    weft::taskflow tf;
    std::atomic<int> ran{0};
    tf.emplace([&] { std::this_thread::sleep_for(std::chrono::microseconds(300)); ran++; });
    auto thrower = std::make_unique<weft::taskflow>();
    thrower->emplace([] { throw odd{42}; });
    std::vector<weft::future<int>> vals;
    for (int i = 0; i < 8; i++)
        vals.push_back(ex->async([i] { std::this_thread::sleep_for(std::chrono::microseconds(200)); return i; }));
    auto chained = ex->dependent_async([] { return 100; }, vals[0], vals[7]);
    std::vector<weft::future<void>> runs;
    for (int i = 0; i < 4; i++) runs.push_back(ex->run(tf));
    auto failing = ex->run(*thrower);
    std::atomic<int> bad{0};
    std::thread t1([&] {
        for (int i = 0; i < 4; i++) {
            auto &f = vals[static_cast<std::size_t>(i)];
            while (!f.wait_for(std::chrono::milliseconds(1))) {
            }
            if (f.get() != i) bad++;
        }
    });
    std::thread t2([&] {
        for (int i = 4; i < 8; i++)
            if (vals[static_cast<std::size_t>(i)].get() != i) bad++;
        if (chained.get() != 100) bad++;
    });
    std::thread t3([&] {
        for (auto &r : runs) {
            r.wait();
            if (r.info().status != WEFT_OK) bad++;
        }
        try {
            failing.wait();
            bad++;
        } catch (const odd &o) {
            if (o.id != 42) bad++;
        }
    });
    std::thread killer([&] { ex.reset(); });
    killer.join();
    t1.join();
    t2.join();
    t3.join();
    ASSERT_EQ(bad.load(), 0);
    ASSERT_EQ(ran.load(), 4);
    thrower.reset(); /* the failed run's exception stays with its future */
    ASSERT_THROWS(failing.get(), odd, o, ASSERT_EQ(o.id, 42));
    for (auto &f : vals) {
        ASSERT_TRUE(f.ready());
        ASSERT_FALSE(f.cancel());
    }
    for (auto &r : runs) {
        ASSERT_TRUE(r.ready());
        ASSERT_FALSE(r.cancel());
        r.get();
    }
    ASSERT_EQ(chained.info().status, WEFT_OK);
}

namespace {
/* A value whose move throws when armed. */
struct touchy {
    static bool armed;
    int v;
    explicit touchy(int x) : v(x) {}
    touchy(touchy &&o) noexcept(false) : v(o.v) {
        if (armed) throw odd{o.v};
    }
};
bool touchy::armed = false;
} // namespace

/* A value whose move throws while weft stores it (in the task) reaches get(),
 * sync() and run_root as that exception; one whose move throws only as get()
 * moves it out leaves it in place for a later get(). */
TEST(a_result_whose_move_throws_reaches_the_wait_as_its_exception) {
    weft::executor ex(2);
    touchy::armed = true;
    ASSERT_THROWS(ex.async([] { return touchy(1); }).get(), odd, o, ASSERT_EQ(o.id, 1));
    ASSERT_THROWS(ex.run_root([] { return touchy(2); }), odd, o, ASSERT_EQ(o.id, 2));
    int got = 0;
    ex.run_root([&] {
        auto s = weft::spawn([] { return touchy(3); });
        try {
            (void)s.sync();
        } catch (const odd &o) {
            got = o.id;
        }
    });
    ASSERT_EQ(got, 3);
    touchy::armed = false;
    auto f = ex.async([] { return touchy(4); });
    f.wait();
    touchy::armed = true;
    ASSERT_THROWS((void)f.get(), odd, o, ASSERT_EQ(o.id, 4));
    touchy::armed = false;
    ASSERT_EQ(f.get().v, 4);
}

/* Self-move leaves every movable object as it was; moved-from ones refuse
 * every call with weft::error WEFT_EINVAL (the calls cpp_graph's test does
 * not make), and a default-made future refuses too. */
TEST(self_moved_objects_keep_working_and_moved_from_ones_refuse_every_call) {
    weft::executor ex(2);
    weft::taskflow tf;
    std::atomic<int> n{0};
    tf.emplace([&] { n++; });
    weft::pipeline pl(1, weft::pipe{weft::pipe_type::serial, [](weft::pipeflow &pf) { pf.stop(); }});
    auto fut = ex.async([] { return 5; });
    weft::executor *pex = &ex;
    weft::taskflow *ptf = &tf;
    weft::pipeline *ppl = &pl;
    weft::future<int> *pfut = &fut;
    ex = std::move(*pex);
    tf = std::move(*ptf);
    pl = std::move(*ppl);
    fut = std::move(*pfut);
    ASSERT_EQ(fut.get(), 5);
    ex.run(tf).get();
    ASSERT_EQ(n.load(), 1);
    ASSERT_EQ(pl.num_lines(), 1u);

    weft::executor gone(std::move(ex));
    weft::taskflow tf2(std::move(tf));
#define HUNT42_EINVAL(expr) ASSERT_THROWS(expr, weft::error, err, ASSERT_STATUS(err.status(), WEFT_EINVAL))
    auto dep = gone.async([] { return 1; });
    HUNT42_EINVAL(ex.run_n(tf2, 2));
    HUNT42_EINVAL(ex.run_until(tf2, [] { return true; }));
    HUNT42_EINVAL(ex.corun(tf2));
    HUNT42_EINVAL(ex.silent_async([] {}));
    HUNT42_EINVAL(ex.dependent_async([] {}, dep));
    HUNT42_EINVAL(ex.silent_dependent_async([] {}, dep));
    HUNT42_EINVAL(ex.this_worker_id());
    HUNT42_EINVAL(ex.this_worker());
    HUNT42_EINVAL(gone.run(tf));
    HUNT42_EINVAL(gone.run_until(tf, [] { return true; }));
    HUNT42_EINVAL(gone.corun(tf));
    HUNT42_EINVAL(tf.for_each_task([](weft::task) {}));
    HUNT42_EINVAL(tf.linearize({}));
    HUNT42_EINVAL(tf.validate());
    HUNT42_EINVAL(tf.name("x"));
    HUNT42_EINVAL(tf.remove_dependency(weft::task(), weft::task()));
    std::vector<int> v(4);
    HUNT42_EINVAL(tf.for_each(v.begin(), v.end(), [](int) {}));
    HUNT42_EINVAL(tf.composed_of(tf2));
    HUNT42_EINVAL(tf2.composed_of(tf));
    HUNT42_EINVAL(gone.run_root([&ex] { weft::task_group tg = ex.task_group(); }));
    weft::future<int> empty;
    weft::future<int> from(std::move(dep));
    for (weft::future<int> *f : {&empty, &dep}) {
        ASSERT_FALSE(f->valid());
        ASSERT_FALSE(f->ready());
        ASSERT_FALSE(f->cancel());
        ASSERT_NULL(f->native());
        HUNT42_EINVAL(f->wait());
        HUNT42_EINVAL(f->get());
        HUNT42_EINVAL(f->wait_for(std::chrono::seconds(1)));
        HUNT42_EINVAL(f->info());
    }
    HUNT42_EINVAL(gone.dependent_async([] {}, empty));
#undef HUNT42_EINVAL
    ASSERT_EQ(from.get(), 1);
    gone.run(tf2).get();
    ASSERT_EQ(n.load(), 2);
}

/* The worker a task got from executor::this_worker() keeps its id while the
 * task asks another executor (or any executor from a thread that is not its
 * worker): Taskflow's this_worker() returns the worker object itself.  Before,
 * every executor shared one thread_local object, and other.this_worker() (a
 * nullptr) overwrote its id with -1: w->id() read SIZE_MAX. */
TEST(a_worker_from_this_worker_keeps_its_id_when_another_executor_is_asked) {
    weft::executor ex(2), other(1);
    std::atomic<int> bad{0};
    weft::taskflow tf;
    for (int i = 0; i < 16; i++)
        tf.emplace([&] {
            const weft::worker *w = ex.this_worker();
            if (!w) {
                bad++;
                return;
            }
            std::size_t id = w->id();
            if (other.this_worker() != nullptr) bad++;
            if (w->id() != id || static_cast<int>(id) != ex.this_worker_id()) bad++;
        });
    ex.run(tf).get();
    ASSERT_EQ(bad.load(), 0);
}

namespace {
/* A callable whose destructor may throw (noexcept(false)) and does not:
 * legal, and std::function (Taskflow's storage) takes it. */
struct loose_dtor {
    std::atomic<int> *n;
    ~loose_dtor() noexcept(false) {}
    int operator()() const { return ++*n; }
};
} // namespace

/* async, silent_async, dependent_async (both forms), silent_dependent_async,
 * run_until and task_group::async take a callable whose destructor is
 * noexcept(false).  Before, each failed to compile inside weft.hpp (their
 * state's implicit destructor took the callable's noexcept(false) and
 * overrode state_base's noexcept one). */
TEST(callables_whose_destructor_is_noexcept_false_are_accepted_by_every_async_api) {
    weft::executor ex(2);
    std::atomic<int> n{0};
    loose_dtor c{&n};
    auto f = ex.async(c);
    ASSERT_EQ(f.get(), 1);
    ex.silent_async(c);
    ex.wait_for_all();
    auto g = ex.async(c);
    std::vector<weft::future<int>> deps;
    deps.push_back(ex.async(c));
    ASSERT_GT(ex.dependent_async(c, g).get(), 0);
    ASSERT_GT(ex.dependent_async(c, deps.begin(), deps.end()).get(), 0);
    ex.silent_dependent_async(c, g);
    ex.silent_dependent_async(c, deps.begin(), deps.end());
    ex.wait_for_all();
    weft::taskflow tf;
    tf.emplace([] {});
    ex.run_until(tf, c).get(); /* returns 9 != 0: true at once */
    ASSERT_EQ(ex.run_root([&] {
        weft::task_group tg;
        auto h = tg.async(c);
        tg.wait();
        return h.get() > 0 ? 1 : 0;
    }), 1);
    ASSERT_EQ(n.load(), 10);
}

namespace {
struct machine {
    std::atomic<int> worked{0};
    int pick() { return 1; }
    void work() { worked++; }
};
} // namespace

/* A std::bind expression (which drops the arguments it has no placeholder
 * for, so it is invocable with a subflow too) is the task its result says,
 * as in Taskflow: bind(&machine::pick) returning int is a condition that runs
 * one successor, bind(&machine::work) a plain task; so is a variadic generic
 * lambda.  Before, each became a subflow task: the condition's result was
 * dropped and both successors ran.  A generic lambda taking (auto &sf) is
 * still a subflow. */
TEST(bind_expressions_and_variadic_lambdas_are_the_task_their_result_says_not_subflows) {
    weft::executor ex(2);
    weft::taskflow tf;
    machine m;
    std::atomic<int> hit0{0}, hit1{0}, hit2{0}, child{0};
    auto c = tf.emplace(std::bind(&machine::pick, &m));
    auto a = tf.emplace([&] { hit0++; });
    auto b = tf.emplace([&] { hit1++; });
    c.precede(a, b);
    auto w = tf.emplace(std::bind(&machine::work, &m));
    auto g = tf.emplace([](auto &&...) { return 0; });
    auto d = tf.emplace([&] { hit2++; });
    auto e = tf.emplace([&] { hit2 += 100; });
    g.precede(d, e);
    auto s = tf.emplace([&](auto &sf) { sf.emplace([&] { child++; }); });
    ASSERT_TRUE(c.type() == weft::task_type::condition);
    ASSERT_TRUE(w.type() == weft::task_type::plain);
    ASSERT_TRUE(g.type() == weft::task_type::condition);
    ASSERT_TRUE(s.type() == weft::task_type::subflow);
    ex.run_n(tf, 2).get();
    ASSERT_EQ(hit0.load(), 0);
    ASSERT_EQ(hit1.load(), 2);
    ASSERT_EQ(hit2.load(), 2);
    ASSERT_EQ(m.worked.load(), 2);
    ASSERT_EQ(child.load(), 2);
}

/* A condition returning a reference to its choice (int &, kept in an object)
 * is a condition, as in Taskflow (convertible to int); so is a
 * multi-condition returning a reference to its branches.  Before, both were
 * refused by the static_assert for results that are no task's. */
TEST(conditions_returning_a_reference_to_their_choice_are_conditions) {
    weft::executor ex(2);
    weft::taskflow tf;
    int choice = 1;
    weft::branches both{0, 1};
    std::atomic<int> a_hits{0}, b_hits{0}, x_hits{0};
    auto c = tf.emplace([&choice]() -> int & { return choice; });
    auto a = tf.emplace([&] { a_hits++; });
    auto b = tf.emplace([&] { b_hits++; });
    c.precede(a, b);
    auto m = tf.emplace([&both]() -> const weft::branches & { return both; });
    auto x = tf.emplace([&] { x_hits++; });
    auto y = tf.emplace([&] { x_hits++; });
    m.precede(x, y);
    ASSERT_TRUE(c.type() == weft::task_type::condition);
    ASSERT_TRUE(m.type() == weft::task_type::multi_condition);
    ex.run(tf).get();
    choice = 0;
    ex.run(tf).get();
    ASSERT_EQ(a_hits.load(), 1);
    ASSERT_EQ(b_hits.load(), 1);
    ASSERT_EQ(x_hits.load(), 4);
}

namespace {
/* A work() callable whose destructor throws when armed. */
struct throwing_dtor {
    static bool armed;
    ~throwing_dtor() noexcept(false) {
        if (armed) {
            armed = false;
            throw odd{9};
        }
    }
    void operator()() const {}
};
bool throwing_dtor::armed = false;

/* Runs body in a child process; its exit status. */
template <class B>
int in_child(B body) {
    pid_t pid = fork();
    if (pid == 0) {
        body();
        _exit(3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}
} // namespace

/* A callable given to task::work whose destructor throws when weft drops it
 * (its work replaced, or the taskflow cleared) ends the program
 * (std::terminate), as a throwing destructor does wherever else weft destroys
 * a callable.  Before, the exception left through weft's C frames to the
 * caller's catch, with the replace or clear half done. */
TEST(a_work_callable_whose_destructor_throws_terminates_instead_of_unwinding_weft) {
#ifdef __SANITIZE_THREAD__
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    for (int mode = 0; mode < 2; mode++) {
        int status = in_child([mode] {
            std::fclose(stderr); /* the terminate message */
            weft::taskflow tf;
            auto t = tf.placeholder();
            t.work(throwing_dtor{});
            throwing_dtor::armed = true;
            try {
                if (mode == 0) t.work([] {});
                else tf.clear();
            } catch (const odd &) {
                _exit(4); /* reached the caller through weft */
            }
            _exit(5);
        });
        ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    }
}

/* future::info() does not wait (status WEFT_EAGAIN while the run goes on)
 * and its failed_task is the future's: read while the future lives it names
 * the task (a condition that returned a negative value: no exception). */
TEST(future_info_does_not_wait_and_names_the_failed_task_while_the_future_lives) {
    weft::executor ex(2);
    weft::taskflow tf;
    std::atomic<bool> go{false};
    auto w = tf.emplace([&] {
        while (!go.load()) std::this_thread::yield();
    });
    auto neg = tf.emplace([] { return -7; }).name("neg");
    w.precede(neg);
    std::string name;
    {
        auto f = ex.run(tf);
        ASSERT_STATUS(f.info().status, WEFT_EAGAIN);
        go = true;
        ASSERT_THROWS(f.get(), weft::error, e, ASSERT_STATUS(e.status(), WEFT_ETASK));
        weft_run_info ri = f.info();
        ASSERT_EQ(ri.task_code, -7);
        name = ri.failed_task; /* copied while f lives */
    }
    ASSERT_TRUE(name == "neg");
}
