/* Session 44 (h44-6): weft.hpp, pass 3 — lifetimes and exception safety as
 * a Taskflow user writes them: executors destroyed while futures, taskflows
 * and pipelines made with them live; objects moved from, or moved onto while
 * they run; exceptions from pipeline stages (re-runs, resets, run_n, inside a
 * module body and a subflow), from algorithm comparators and operators, from
 * multi-conditions, and from fork-join objects dropped without a wait. */
#include "cpp_test.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct boom : std::runtime_error {
    int id;
    explicit boom(int i) : std::runtime_error("boom " + std::to_string(i)), id(i) {}
};

/* Counts live copies of a capture. */
struct tracked {
    static std::atomic<int> live;
    tracked() { live++; }
    tracked(const tracked &) { live++; }
    tracked(tracked &&) noexcept { live++; }
    ~tracked() { live--; }
};
std::atomic<int> tracked::live{0};

int boom_id(const std::function<void()> &f) {
    try {
        f();
    } catch (const boom &b) {
        return b.id;
    } catch (const weft::error &) {
        return -2; /* weft's own error: the exception was lost */
    }
    return -1;
}

} // namespace

TEST(an_executor_destroyed_while_its_futures_taskflow_and_pipeline_live_leaves_each_usable) {
    tracked::live = 0;
    std::atomic<int> tokens{0}, ran{0};
    weft::taskflow tf("outlives");
    weft::pipeline pl(2, weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                          if (pf.token() == 5) pf.stop();
                          else tokens++;
                      }});
    auto a = tf.emplace([&ran, &pl, t = tracked{}] {
        (void)t;
        pl.reset(); /* token numbers from 0 in each iteration */
        ran++;
    });
    auto p = tf.composed_of(pl);
    a.precede(p);
    weft::future<void> run;
    weft::future<int> value, thrown;
    {
        weft::executor ex(2);
        run = ex.run_n(tf, 3);
        value = ex.async([t = tracked{}] { (void)t; return 42; });
        thrown = ex.async([]() -> int { throw boom(9); });
    } /* destroyed without a wait: every queued run completes first */
    ASSERT_TRUE(run.ready());
    run.get();
    ASSERT_EQ(value.get(), 42);
    ASSERT_EQ(boom_id([&] { thrown.get(); }), 9);
    ASSERT_EQ(ran.load(), 3);
    ASSERT_EQ(tokens.load(), 15);
    /* The taskflow and pipeline run again on another executor. */
    weft::executor ex2(1);
    ex2.run(tf).get();
    ASSERT_EQ(ran.load(), 4);
    ASSERT_EQ(tokens.load(), 20);
    value = weft::future<int>();
    ASSERT_EQ(tracked::live.load(), 1); /* the taskflow's own capture */
}

TEST(a_future_move_assigned_over_an_unfinished_one_detaches_it_and_both_complete_once) {
    tracked::live = 0;
    weft::executor ex(2);
    std::atomic<bool> go{false};
    std::atomic<int> calls{0};
    {
        auto f = ex.async([&, t = tracked{}] {
            (void)t;
            while (!go.load()) std::this_thread::yield();
            calls++;
            return 1;
        });
        f = ex.async([&calls, t = tracked{}] { (void)t; calls++; return 2; }); /* the first still running */
        ASSERT_EQ(f.get(), 2);
        f = std::move(f); /* self-move keeps it */
        ASSERT_TRUE(f.valid());
        go = true;
        weft::future<int> g = std::move(f);
        ASSERT_FALSE(f.valid());
        ASSERT_THROWS(f.get(), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    }
    ex.wait_for_all();
    ASSERT_EQ(calls.load(), 2);
    for (int i = 0; i < 1000 && tracked::live.load() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(tracked::live.load(), 0);
}

TEST(a_taskflow_move_assigned_onto_one_that_runs_waits_and_that_run_keeps_its_exception) {
    weft::executor ex(2);
    std::atomic<bool> go{false};
    weft::taskflow a("a"), b("b");
    a.emplace([&] {
        while (!go.load()) std::this_thread::yield();
        throw boom(1);
    });
    std::atomic<int> bran{0};
    b.emplace([&] { bran++; });
    auto fa = ex.run(a);
    std::thread t([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        go = true;
    });
    a = std::move(b); /* waits for a's run */
    t.join();
    ASSERT_EQ(boom_id([&] { fa.get(); }), 1);
    ex.run(a).get();
    ASSERT_EQ(bran.load(), 1);
    ASSERT_THROWS(b.num_tasks(), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
}

TEST(a_pipeline_stage_exception_is_rethrown_by_each_failing_run_and_not_by_a_clean_one) {
    for (unsigned w : {1u, 2u, 4u}) {
        weft::executor ex(w);
        std::atomic<int> fail_at{3};
        weft::pipeline pl(3, weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                              if (pf.token() == 8) pf.stop();
                          }},
                          weft::pipe{weft::pipe_type::parallel, [&](weft::pipeflow &pf) {
                              if (static_cast<int>(pf.token()) == fail_at.load()) throw boom(static_cast<int>(pf.token()));
                          }},
                          weft::pipe{weft::pipe_type::serial, [](weft::pipeflow &) {}});
        weft::taskflow tf;
        tf.composed_of(pl);
        for (int round = 0; round < 3; ++round) {
            fail_at = round + 2;
            pl.reset();
            ASSERT_EQ(boom_id([&] { ex.run(tf).get(); }), round + 2);
        }
        fail_at = -1;
        pl.reset();
        ex.run(tf).get(); /* nothing left over from the failed runs */
        ASSERT_EQ(pl.num_tokens(), 8u);
        /* run_n: the second iteration throws, the rest are skipped. */
        std::atomic<int> iters{0};
        weft::taskflow tf2;
        auto c = tf2.emplace([&] {
            pl.reset();
            fail_at = ++iters == 2 ? 5 : -1;
        });
        c.precede(tf2.composed_of(pl));
        ASSERT_EQ(boom_id([&] { ex.run_n(tf2, 4).get(); }), 5);
        ASSERT_EQ(iters.load(), 2);
        fail_at = -1;
        ex.run_n(tf2, 2).get();
        ASSERT_EQ(iters.load(), 4);
    }
}

TEST(a_pipeline_stage_exception_inside_a_module_body_and_a_subflow_reaches_the_top_run) {
    weft::executor ex(2);
    weft::pipeline pl(2, weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                          if (pf.token() == 2) throw boom(5);
                      }});
    weft::taskflow body("body");
    body.composed_of(pl);
    weft::taskflow top("top");
    top.composed_of(body);
    ASSERT_EQ(boom_id([&] { ex.run(top).get(); }), 5);
    pl.reset();
    weft::taskflow sub("sub");
    sub.emplace([&](weft::subflow &sf) { sf.composed_of(pl); });
    ASSERT_EQ(boom_id([&] { ex.run(sub).get(); }), 5);
    pl.reset();
    sub.clear();
    sub.emplace([&](weft::subflow &sf) {
        sf.composed_of(pl);
        sf.join();
    });
    ASSERT_EQ(boom_id([&] { ex.run(sub).get(); }), 5);
}

TEST(algorithm_comparators_predicates_and_operators_that_throw_reach_the_caller) {
    for (unsigned w : {1u, 2u, 4u}) {
        weft::executor ex(w);
        std::vector<int> v(20000);
        std::iota(v.begin(), v.end(), 0);
        std::reverse(v.begin(), v.end());
        auto thrower = [](int at) {
            return [at](int a, int b) {
                if (a == at || b == at) throw boom(at);
                return a < b;
            };
        };
        ASSERT_EQ(boom_id([&] { weft::sort(ex, v.begin(), v.end(), thrower(123)); }), 123);
        ASSERT_EQ(boom_id([&] { (void)weft::min_element(ex, v.begin(), v.end(), thrower(77)); }), 77);
        ASSERT_EQ(boom_id([&] { (void)weft::max_element(ex, v.begin(), v.end(), thrower(19999)); }), 19999);
        ASSERT_EQ(boom_id([&] {
                      (void)weft::find_if(ex, v.begin(), v.end(), [](int x) {
                          if (x == 5) throw boom(5);
                          return false;
                      });
                  }),
                  5);
        ASSERT_EQ(boom_id([&] {
                      (void)weft::transform_reduce(ex, v.begin(), v.end(), 0L, std::plus<>(), [](int x) -> long {
                          if (x == 3) throw boom(3);
                          return x;
                      });
                  }),
                  3);
        ASSERT_EQ(boom_id([&] {
                      (void)weft::reduce(ex, v.begin(), v.end(), 0L, [](long a, long b) {
                          if (b == 11) throw boom(11);
                          return a + b;
                      });
                  }),
                  11);
        std::vector<long> out(v.size());
        ASSERT_EQ(boom_id([&] {
                      weft::inclusive_scan(ex, v.begin(), v.end(), out.begin(), [](long a, long b) {
                          if (b == 17) throw boom(17);
                          return a + b;
                      });
                  }),
                  17);
        ASSERT_EQ(boom_id([&] {
                      weft::exclusive_scan(ex, v.begin(), v.end(), out.begin(), 0L, [](long a, long b) {
                          if (b == 0) throw boom(0); /* the last element: only in pass 2 */
                          return a + b;
                      });
                  }),
                  0);
        /* The executor and data are still usable: a clean sort sorts. */
        weft::sort(ex, v.begin(), v.end());
        ASSERT_TRUE(std::is_sorted(v.begin(), v.end()));
        ASSERT_EQ(weft::reduce(ex, v.begin(), v.end(), 0L), 19999L * 20000 / 2);
    }
}

TEST(a_multi_condition_or_condition_that_throws_fails_the_run_with_its_exception) {
    weft::executor ex(2);
    weft::taskflow tf;
    std::atomic<int> after{0};
    auto m = tf.emplace([]() -> weft::branches { throw boom(4); });
    auto x = tf.emplace([&] { after++; });
    auto y = tf.emplace([&] { after++; });
    m.precede(x, y);
    ASSERT_EQ(boom_id([&] { ex.run(tf).get(); }), 4);
    ASSERT_EQ(after.load(), 0);
    weft::taskflow tf2;
    enum pick { left, right };
    int calls = 0;
    auto c = tf2.emplace([&calls]() -> pick {
        if (++calls == 3) throw boom(8);
        return left;
    });
    auto l = tf2.emplace([] { return 0; }); /* a condition: back to c */
    auto r = tf2.emplace([] {});
    c.precede(l, r);
    l.precede(c); /* loops until the third call throws */
    tf2.emplace([] {}).precede(c); /* the way in (a task with only weak predecessors is no source) */
    ASSERT_EQ(boom_id([&] { ex.run(tf2).get(); }), 8);
    ASSERT_EQ(calls, 3);
}

TEST(fork_join_objects_dropped_without_a_wait_drop_their_exceptions_without_leaking) {
    tracked::live = 0;
    weft::executor ex(2);
    std::atomic<int> ran{0};
    int v = ex.run_root([&] {
        {
            weft::task_group g = ex.task_group();
            for (int i = 0; i < 50; ++i)
                g.run([&ran, i, t = tracked{}] {
                    (void)t;
                    ran++;
                    if (i % 7 == 0) throw boom(i);
                });
            auto fut = g.async([t = tracked{}]() -> int { (void)t; throw boom(99); });
            (void)fut;
        } /* destroyed: waits, drops */
        {
            auto s = weft::spawn([t = tracked{}]() -> int { (void)t; throw boom(3); });
            (void)s;
        }
        return 6;
    });
    ASSERT_EQ(v, 6);
    ASSERT_TRUE(ran.load() >= 1);
    ex.wait_for_all();
    for (int i = 0; i < 1000 && tracked::live.load() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(tracked::live.load(), 0);
}

TEST(silent_async_and_silent_dependent_async_exceptions_are_dropped_and_their_captures_freed) {
    tracked::live = 0;
    {
        weft::executor ex(2);
        auto d = ex.async([t = tracked{}]() -> int { (void)t; throw boom(1); });
        for (int i = 0; i < 100; ++i) {
            ex.silent_async([t = tracked{}] { (void)t; throw boom(2); });
            ex.silent_dependent_async([t = tracked{}] { (void)t; throw boom(3); }, d);
        }
        std::vector<weft::future<int>> deps;
        deps.push_back(ex.async([] { return 1; }));
        ex.silent_dependent_async([t = tracked{}] { (void)t; throw boom(4); }, deps.begin(), deps.end());
        ex.wait_for_all();
        ASSERT_EQ(boom_id([&] { d.get(); }), 1);
    }
    ASSERT_EQ(tracked::live.load(), 0);
}

TEST(a_run_future_destroyed_by_a_task_of_its_own_run_detaches_it) {
    weft::executor ex(2);
    weft::taskflow tf;
    auto holder = std::make_shared<weft::future<void>>();
    std::atomic<bool> set{false};
    std::atomic<int> ran{0};
    auto a = tf.emplace([&] {
        while (!set.load()) std::this_thread::yield();
        *holder = weft::future<void>(); /* drops the run's own future */
        ran++;
    });
    auto b = tf.emplace([&] { ran++; });
    a.precede(b);
    *holder = ex.run(tf);
    set = true;
    ex.wait_for_all();
    ASSERT_EQ(ran.load(), 2);
    ASSERT_FALSE(holder->valid());
    ex.run(tf).get();
    ASSERT_EQ(ran.load(), 4);
}

TEST(two_threads_running_and_waiting_one_taskflow_get_every_run_once) {
    weft::executor ex(4);
    weft::taskflow tf;
    std::atomic<int> ran{0};
    auto a = tf.emplace([&] { ran++; });
    auto b = tf.emplace([&] { ran++; });
    a.precede(b);
    std::vector<std::thread> ts;
    for (int t = 0; t < 3; ++t)
        ts.emplace_back([&] {
            for (int i = 0; i < 100; ++i) {
                if (i % 2) ex.run(tf).get();
                else ex.run_n(tf, 2).wait();
            }
        });
    for (auto &t : ts) t.join();
    ASSERT_EQ(ran.load(), 3 * (50 * 2 + 50 * 4));
}

/* Run ids (weft_future_id) are unique per executor only, and a C API run's
 * future may be freed and its memory reused by the next run's future on
 * another executor: same address, same id (each executor's first run is 1).
 * The exception a task of the C API run threw (never harvested: weft.hpp does
 * not see that run end) was kept under that key, and the later run through
 * executor::run, failing with its own exception, rethrew the stale one (17
 * rounds of 20 before the fix, for a packed callable and a held one). */
TEST(a_run_never_rethrows_the_exception_of_a_c_api_run_on_another_executor_with_its_future_address_and_id) {
    int counter = 0;
    std::string big(64, 'x'); /* a capture too big to pack: the callable is held in the arena */
    for (int packed = 0; packed < 2; ++packed) {
        weft::taskflow tf;
        if (packed) tf.emplace([p = &counter] { throw boom(++*p); });
        else tf.emplace([p = &counter, big] { throw boom(++*p + 0 * static_cast<int>(big.size())); });
        int wrong = 0;
        for (int round = 0; round < 20; ++round) {
            {
                weft::executor a(1);
                weft_future *f = nullptr;
                ASSERT_EQ(weft_run(a.native(), tf.native(), &f), WEFT_OK);
                ASSERT_EQ(weft_future_wait(f), WEFT_ETASK);
                weft_future_destroy(f); /* its exception is never harvested */
            }
            weft::executor b(1);
            int expect = counter + 1;
            int got = boom_id([&] { b.run(tf).get(); });
            if (got != expect) wrong++;
        }
        ASSERT_EQ(wrong, 0);
    }
}

/* A taskflow's sink lists the sinks of what its subflows compose (module
 * bodies, pipelines) for the current run only, and the end of any run that
 * reached that taskflow as a module body dropped them, also while the
 * taskflow's own run was still going: B's own run, whose subflow composed
 * pipeline P, lost P's exception when a run of A (which composes B) ended in
 * the meantime, and B's get() threw weft::error WEFT_ETASK instead of it. */
TEST(a_run_keeps_the_exception_of_a_pipeline_its_subflow_composed_when_another_run_through_its_taskflow_ends) {
    weft::executor ex(4);
    std::atomic<int> mode{0}; /* 1: B's own run, whose stage throws */
    std::atomic<bool> started{false}, a_done{false};
    std::atomic<int> made{0};
    weft::pipeline pl(1, weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                          if (made.fetch_add(1) == 2) {
                              pf.stop();
                              return;
                          }
                          if (mode.load() == 1) {
                              started = true;
                              while (!a_done.load()) std::this_thread::yield();
                              throw boom(21);
                          }
                      }});
    weft::taskflow b("B");
    b.emplace([&](weft::subflow &sf) {
        made = 0;
        pl.reset();
        sf.composed_of(pl);
    });
    weft::taskflow a("A");
    auto m = a.composed_of(b);
    std::atomic<bool> x_entered{false};
    auto x = a.emplace([&] {
        x_entered = true; /* A's run of B has ended */
        while (!started.load()) std::this_thread::yield();
    });
    m.precede(x);
    weft::future<void> fa = ex.run(a);
    while (!x_entered.load()) std::this_thread::yield();
    mode = 1;
    weft::future<void> fb = ex.run(b);
    fa.get(); /* A ended (its end walked B's sink) while B's own run goes on */
    a_done = true;
    ASSERT_EQ(boom_id([&] { fb.get(); }), 21);
}

/* A pipeline a subflow composed in a run through the C API (weft_run on
 * native(), which weft.hpp never harvests) stayed listed in the taskflow's
 * sink; destroyed after that run (it outlived every run that used it), it
 * was walked, freed, by the end of the next run through executor::run
 * (ASan: heap-use-after-free in sink::take). */
TEST(a_pipeline_a_subflow_composed_in_a_c_api_run_may_be_destroyed_after_that_run) {
    weft::executor ex(2);
    std::unique_ptr<weft::pipeline> p;
    std::atomic<int> stages{0};
    weft::taskflow tf;
    tf.emplace([&](weft::subflow &sf) {
        if (p) sf.composed_of(*p);
    });
    p = std::make_unique<weft::pipeline>(1, weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                                             if (pf.token() == 3) pf.stop();
                                             else stages++;
                                         }});
    weft_future *f = nullptr;
    ASSERT_EQ(weft_run(ex.native(), tf.native(), &f), WEFT_OK);
    ASSERT_EQ(weft_future_wait(f), WEFT_OK);
    weft_future_destroy(f);
    ASSERT_EQ(stages.load(), 3);
    p.reset(); /* it outlived the run that composed it */
    ex.run(tf).get();
    ex.run(tf).get();
    ASSERT_EQ(stages.load(), 3);
}
