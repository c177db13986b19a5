/* Taskflow's example programs (examples/ folder) written again for weft.hpp:
 * what each program does, with its printing replaced by exact checks, on 1, 2
 * and 4 workers and with awkward sizes (0, 1).  Each TEST names the example.
 * Where weft.hpp has no counterpart of a Taskflow call, the C API on the
 * native handle stands in (said where it happens). */
#include "cpp_test.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace {

const unsigned kWorkers[] = {1, 2, 4};

/* A log of events in the order they happened, for ordering checks. */
struct order_log {
    std::mutex mu;
    std::vector<std::string> ev;
    void add(const std::string &s) {
        std::lock_guard<std::mutex> l(mu);
        ev.push_back(s);
    }
    long at(const std::string &s) {
        std::lock_guard<std::mutex> l(mu);
        auto it = std::find(ev.begin(), ev.end(), s);
        return it == ev.end() ? -1 : static_cast<long>(it - ev.begin());
    }
    size_t count(const std::string &s) {
        std::lock_guard<std::mutex> l(mu);
        return static_cast<size_t>(std::count(ev.begin(), ev.end(), s));
    }
};

} // namespace

/* simple.cpp: A precedes B and C, which precede D. */
TEST(tf_example_simple_runs_a_diamond_in_order) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        weft::taskflow taskflow("simple");
        order_log log;
        auto [A, B, C, D] = taskflow.emplace([&] { log.add("A"); }, [&] { log.add("B"); }, [&] { log.add("C"); },
                                             [&] { log.add("D"); });
        A.name("A");
        B.name("B");
        C.name("C");
        D.name("D");
        A.precede(B, C);
        D.succeed(B, C);
        executor.run(taskflow).wait();
        ASSERT_EQ(log.ev.size(), 4u);
        ASSERT_EQ(log.at("A"), 0);
        ASSERT_EQ(log.at("D"), 3);
        std::string dot = taskflow.dump();
        ASSERT_TRUE(dot.find("simple") != std::string::npos);
        ASSERT_TRUE(dot.find("\"D\"") != std::string::npos || dot.find("D") != std::string::npos);
    }
}

/* fibonacci.cpp: fib by a task group per call (silent_async one half, compute
 * the other, corun), started from an async task of a shared executor. */
static weft::executor *fib_executor;
static size_t spawn_async(size_t n) {
    if (n < 2) return n;
    size_t r1 = 0, r2;
    weft::task_group tg = fib_executor->task_group();
    tg.silent_async([n, &r1] { r1 = spawn_async(n - 1); });
    r2 = spawn_async(n - 2);
    tg.corun();
    return r1 + r2;
}
TEST(tf_example_fibonacci_by_task_groups_from_an_async_task) {
    static const size_t fib[] = {0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2584, 4181, 6765};
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        fib_executor = &executor;
        for (size_t n : {0, 1, 2, 3, 10, 20}) {
            ASSERT_EQ(executor.async([n] { return spawn_async(n); }).get(), fib[n]);
            ASSERT_EQ(executor.run_root([n] { return spawn_async(n); }), fib[n]);
        }
        fib_executor = nullptr;
    }
}

/* do_while_loop.cpp and while_loop.cpp: a counter loop by a condition task. */
TEST(tf_example_do_while_and_while_loops_run_their_bodies_five_times_each_run) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        {
            weft::taskflow taskflow;
            int i = -1, bodies = 0, dones = 0;
            auto [init, body, cond, done] = taskflow.emplace(
                [&] { i = 0; }, [&] { i++, bodies++; }, [&] { return i < 5 ? 0 : 1; }, [&] { dones++; });
            init.precede(body);
            body.precede(cond);
            cond.precede(body, done);
            executor.run(taskflow).wait();
            executor.run(taskflow).wait();
            ASSERT_EQ(i, 5);
            ASSERT_EQ(bodies, 10);
            ASSERT_EQ(dones, 2);
        }
        {
            weft::taskflow taskflow;
            int i = -1, bodies = 0, conds = 0, backs = 0, dones = 0;
            auto [init, cond, body, back, done] =
                taskflow.emplace([&] { i = 0; }, [&] { conds++; return i < 5 ? 0 : 1; }, [&] { i++, bodies++; },
                                 [&] { backs++; return 0; }, [&] { dones++; });
            init.precede(cond);
            cond.precede(body, done);
            body.precede(back);
            back.precede(cond);
            (void)taskflow.dump();
            executor.run_n(taskflow, 3).wait();
            ASSERT_EQ(i, 5);
            ASSERT_EQ(bodies, 15);
            ASSERT_EQ(backs, 15);
            ASSERT_EQ(conds, 18);
            ASSERT_EQ(dones, 3);
        }
    }
}

/* for_loop.cpp: a condition task that precedes itself (Y.precede(Y, Z)) runs
 * N + 1 times; the same loop as N runs of a one-task taskflow. */
TEST(tf_example_for_loop_condition_task_preceding_itself_repeats_n_plus_one_times) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        for (size_t N : {0, 1, 2, 1000}) {
            weft::taskflow taskflow;
            size_t ys = 0, zs = 0, xs = 0;
            auto X = taskflow.emplace([&] { xs++; });
            auto Y = taskflow.emplace([&, i = size_t(0)]() mutable {
                ys++;
                return (i++ < N) ? 0 : 1;
            });
            auto Z = taskflow.emplace([&] { zs++; });
            X.precede(Y);
            Y.precede(Y, Z);
            ASSERT_EQ(Y.num_successors(), 2u);
            executor.run(taskflow).wait();
            ASSERT_EQ(xs, 1u);
            ASSERT_EQ(ys, N + 1);
            ASSERT_EQ(zs, 1u);

            weft::taskflow tx, ty, tz;
            size_t loops = 0;
            tx.emplace([] {});
            ty.emplace([&] { loops++; });
            tz.emplace([] {});
            executor.run(tx).wait();
            for (size_t i = 0; i < N; ++i) executor.run(ty).wait();
            executor.run(tz).wait();
            ASSERT_EQ(loops, N);
        }
    }
}

/* if_else.cpp and nested_if_else.cpp: exactly one leaf of the decision tree. */
TEST(tf_example_nested_if_else_runs_exactly_the_one_matching_leaf) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        weft::taskflow taskflow;
        int i = 0;
        std::array<std::atomic<int>, 4> hits{};
        auto initi = taskflow.emplace([] {});
        auto cond1 = taskflow.emplace([&] { return i > 1 ? 1 : 0; });
        auto cond2 = taskflow.emplace([&] { return i > 2 ? 1 : 0; });
        auto cond3 = taskflow.emplace([&] { return i > 3 ? 1 : 0; });
        auto equl1 = taskflow.emplace([&] { hits[0]++; });
        auto equl2 = taskflow.emplace([&] { hits[1]++; });
        auto equl3 = taskflow.emplace([&] { hits[2]++; });
        auto grtr3 = taskflow.emplace([&] { hits[3]++; });
        initi.precede(cond1);
        cond1.precede(equl1, cond2);
        cond2.precede(equl2, cond3);
        cond3.precede(equl3, grtr3);
        for (i = 0; i <= 5; i++) {
            for (auto &h : hits) h = 0;
            executor.run(taskflow).wait();
            int want = i <= 1 ? 0 : i == 2 ? 1 : i == 3 ? 2 : 3;
            for (int k = 0; k < 4; k++) ASSERT_EQ(hits[k].load(), k == want ? 1 : 0);
        }
    }
}

/* switch_case.cpp: a switch picks one case (each a condition returning 0 to
 * the target); the target runs once.  A pick past the last case runs none. */
TEST(tf_example_switch_case_runs_one_case_then_the_target_once) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        weft::taskflow taskflow;
        int pick = 0;
        std::array<int, 3> cases{};
        int sources = 0, targets = 0;
        auto [source, swcond, case1, case2, case3, target] = taskflow.emplace(
            [&] { sources++; }, [&] { return pick; }, [&] { cases[0]++; return 0; }, [&] { cases[1]++; return 0; },
            [&] { cases[2]++; return 0; }, [&] { targets++; });
        source.precede(swcond);
        swcond.precede(case1, case2, case3);
        target.succeed(case1, case2, case3);
        ASSERT_EQ(target.num_weak_dependents(), 3u);
        for (pick = 0; pick <= 3; pick++) {
            cases = {};
            targets = 0;
            executor.run(taskflow).wait();
            for (int k = 0; k < 3; k++) ASSERT_EQ(cases[k], k == pick ? 1 : 0);
            ASSERT_EQ(targets, pick < 3 ? 1 : 0);
        }
        ASSERT_EQ(sources, 4);
    }
}

/* multi_condition.cpp: A returns {0, 2}: B and D run, C does not. */
TEST(tf_example_multi_condition_runs_the_listed_successors_only) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        weft::taskflow taskflow("Multi-Conditional Tasking Demo");
        weft::branches pick{0, 2};
        std::array<std::atomic<int>, 3> ran{};
        auto A = taskflow.emplace([&]() -> weft::branches { return pick; }).name("A");
        auto B = taskflow.emplace([&] { ran[0]++; }).name("B");
        auto C = taskflow.emplace([&] { ran[1]++; }).name("C");
        auto D = taskflow.emplace([&] { ran[2]++; }).name("D");
        A.precede(B, C, D);
        executor.run(taskflow).wait();
        ASSERT_EQ(ran[0].load(), 1);
        ASSERT_EQ(ran[1].load(), 0);
        ASSERT_EQ(ran[2].load(), 1);
        /* none, out of range, all, a repeat */
        const std::vector<weft::branches> more = {{}, {7}, {0, 1, 2}, {1, 1}};
        const int want[][3] = {{0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {0, 1, 0}};
        for (size_t k = 0; k < more.size(); k++) {
            pick = more[k];
            for (auto &r : ran) r = 0;
            executor.run(taskflow).wait();
            for (int j = 0; j < 3; j++) ASSERT_EQ(ran[j].load(), want[k][j]);
        }
    }
}

/* composition.cpp, example 1: f1 composed into f2 between f2C and f2D, run 3 times. */
TEST(tf_example_composition_module_runs_between_its_edges_each_of_three_runs) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        order_log log;
        weft::taskflow f1("F1");
        auto [f1A, f1B, f1C] = f1.emplace([&] { log.add("f1A"); }, [&] { log.add("f1B"); }, [&] { log.add("f1C"); });
        f1A.precede(f1C);
        f1B.precede(f1C);
        weft::taskflow f2("F2");
        auto [f2A, f2B, f2C, f2D] =
            f2.emplace([&] { log.add("f2A"); }, [&] { log.add("f2B"); }, [&] { log.add("f2C"); }, [&] { log.add("f2D"); });
        f2A.precede(f2C);
        f2B.precede(f2C);
        weft::task m = f2.composed_of(f1).name("module");
        f2C.precede(m);
        m.precede(f2D);
        (void)f2.dump();
        executor.run_n(f2, 3).get();
        ASSERT_EQ(log.ev.size(), 21u);
        for (size_t r = 0; r < 3; r++) {
            /* each run is 7 events; within one: f2C before f1*, f1C before f2D */
            std::vector<std::string> run(log.ev.begin() + static_cast<long>(7 * r), log.ev.begin() + static_cast<long>(7 * r + 7));
            auto pos = [&](const char *s) { return std::find(run.begin(), run.end(), s) - run.begin(); };
            ASSERT_LT(pos("f2A"), pos("f2C"));
            ASSERT_LT(pos("f2C"), pos("f1A"));
            ASSERT_LT(pos("f2C"), pos("f1B"));
            ASSERT_LT(pos("f1A"), pos("f1C"));
            ASSERT_LT(pos("f1C"), pos("f2D"));
            ASSERT_EQ(pos("f2D"), 6);
        }
    }
}

/* composition.cpp, example 2: f4 composes f3 (which composes f2, which
 * composes f1) and then f2 again; three run_until calls queued back to back. */
TEST(tf_example_composition_four_levels_with_three_queued_run_untils) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        std::atomic<int> f1A{0}, f1B{0}, f2A{0}, f2C{0}, f3A{0};
        weft::taskflow f1("F1");
        f1.emplace([&] { f1A++; });
        f1.emplace([&] { f1B++; });
        weft::taskflow f2("F2");
        auto a = f2.emplace([&] { f2A++; });
        auto b = f2.emplace([] {});
        auto c = f2.emplace([&] { f2C++; });
        a.precede(c);
        b.precede(c);
        f2.composed_of(f1).name("module_of_f1");
        weft::taskflow f3("F3");
        f3.composed_of(f2).name("module_of_f2");
        f3.emplace([&] { f3A++; });
        weft::taskflow f4;
        f4.name("F4");
        auto m3 = f4.composed_of(f3).name("module_of_f3");
        auto m2 = f4.composed_of(f2).name("module_of_f2");
        m3.precede(m2);
        (void)f4.dump();
        executor.run_until(f4, [iter = 1]() mutable { return iter-- == 0; }).get();
        ASSERT_EQ(f3A.load(), 1);
        ASSERT_EQ(f1A.load(), 2);
        auto r2 = executor.run_until(f4, [iter = 2]() mutable { return iter-- == 0; });
        auto r3 = executor.run_until(f4, [iter = 3]() mutable { return iter-- == 0; });
        r2.get();
        r3.get();
        ASSERT_EQ(f3A.load(), 6);
        ASSERT_EQ(f2A.load(), 12);
        ASSERT_EQ(f2C.load(), 12);
        ASSERT_EQ(f1A.load(), 12);
        ASSERT_EQ(f1B.load(), 12);
    }
}

/* run.cpp: one worker; a subflow task; run, wait_for_all, run_n(4), run_until. */
TEST(tf_example_run_counts_every_task_and_subflow_task_over_nine_runs) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        weft::taskflow taskflow("Demo");
        std::atomic<int> A{0}, B{0}, B1{0}, B2{0}, B3{0}, C{0}, D{0};
        std::atomic<int> b3_early{0}, d_early{0};
        auto ta = taskflow.emplace([&] { A++; }).name("A");
        auto tb = taskflow.emplace([&](weft::subflow &subflow) {
                              B++;
                              auto b1 = subflow.emplace([&] { B1++; }).name("B1");
                              auto b2 = subflow.emplace([&] { B2++; }).name("B2");
                              auto b3 = subflow.emplace([&] {
                                            if (B1.load() != B3.load() + 1 || B2.load() != B3.load() + 1) b3_early++;
                                            B3++;
                                        }).name("B3");
                              b1.precede(b3);
                              b2.precede(b3);
                          }).name("B");
        auto tc = taskflow.emplace([&] { C++; }).name("C");
        auto td = taskflow.emplace([&] {
                              if (B3.load() != D.load() + 1 || C.load() != D.load() + 1) d_early++;
                              D++;
                          }).name("D");
        ta.precede(tb, tc);
        tb.precede(td);
        tc.precede(td);
        (void)taskflow.dump();
        executor.run(taskflow).get();
        std::string after = taskflow.dump();
        ASSERT_TRUE(after.find("B") != std::string::npos);
        executor.run(taskflow).get();
        executor.wait_for_all();
        executor.run(taskflow).get();
        executor.run_n(taskflow, 4).get();
        int calls = 0;
        executor.run_until(taskflow, [counter = 3, &calls]() mutable {
                    calls++;
                    return counter-- == 0;
                }).get();
        ASSERT_EQ(calls, 4);
        for (auto *c : {&A, &B, &B1, &B2, &B3, &C, &D}) ASSERT_EQ(c->load(), 10);
        ASSERT_EQ(b3_early.load(), 0);
        ASSERT_EQ(d_early.load(), 0);
    }
}

/* corun.cpp: N tasks, each coruns a taskflow of T tasks, on few workers. */
TEST(tf_example_corun_of_a_hundred_taskflows_from_tasks_counts_every_task) {
    const size_t N = 100, T = 100;
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        weft::taskflow taskflow;
        std::vector<weft::taskflow> taskflows(N);
        std::atomic<size_t> counter{0};
        for (size_t n = 0; n < N; n++) {
            for (size_t i = 0; i < T; i++) taskflows[n].emplace([&] { counter++; });
            taskflow.emplace([&executor, &tf = taskflows[n]] { executor.corun(tf); });
        }
        executor.run(taskflow).wait();
        ASSERT_EQ(counter.load(), N * T);
        executor.run(taskflow).wait();
        ASSERT_EQ(counter.load(), 2 * N * T);
    }
}

/* async.cpp and runtime_async.cpp: async with and without a value and a
 * runtime; a task that starts 100 children and coruns them (rt.silent_async +
 * rt.corun: a task group here). */
TEST(tf_example_async_values_silent_asyncs_and_a_task_corunning_its_children) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        std::atomic<int> silent{0};
        auto fu1 = executor.async([] { return 1; });
        executor.silent_async([&] { silent++; });
        auto fu2 = executor.async([&](weft::runtime &rt) { ASSERT_LT(rt.worker_id(), (int)w); });
        executor.silent_async([&](weft::runtime &rt) {
            if (rt.worker_id() >= 0) silent++;
        });
        executor.wait_for_all();
        ASSERT_EQ(silent.load(), 2);
        ASSERT_EQ(fu1.get(), 1);
        fu2.get();

        weft::taskflow taskflow;
        std::atomic<int> counter{0};
        int seen = -1;
        taskflow.emplace([&] {
            auto tg = executor.task_group();
            for (int i = 0; i < 100; i++) tg.silent_async([&] { counter.fetch_add(1, std::memory_order_relaxed); });
            tg.corun();
            seen = counter.load();
        });
        executor.run(taskflow).wait();
        ASSERT_EQ(seen, 100);
        /* twice more: the group is rebuilt every run */
        executor.run_n(taskflow, 2).wait();
        ASSERT_EQ(seen, 300);
    }
}

/* dependent_async.cpp: A before B and C, both before D; twice. */
TEST(tf_example_dependent_async_diamond_runs_in_dependency_order) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        for (int rep = 0; rep < 20; rep++) {
            order_log log;
            auto A = executor.async([&] { log.add("A"); });
            auto B = executor.dependent_async([&] { log.add("B"); }, A);
            auto C = executor.dependent_async([&] { log.add("C"); }, A);
            auto D = executor.dependent_async([&] { log.add("D"); }, B, C);
            D.get();
            ASSERT_EQ(log.ev.size(), 4u);
            ASSERT_EQ(log.at("A"), 0);
            ASSERT_EQ(log.at("D"), 3);
        }
        /* the silent form: futures dropped at once, waited by wait_for_all */
        order_log log;
        {
            auto A = executor.async([&] { log.add("A"); });
            auto B = executor.dependent_async([&] { log.add("B"); }, A);
            auto C = executor.dependent_async([&] { log.add("C"); }, A);
            (void)executor.dependent_async([&] { log.add("D"); }, B, C);
        }
        executor.wait_for_all();
        ASSERT_EQ(log.ev.size(), 4u);
        ASSERT_EQ(log.at("A"), 0);
        ASSERT_EQ(log.at("D"), 3);
    }
}

/* dependent_async_algorithm.cpp: for_each, transform and reduce as three
 * dependent async tasks: sum = 1 + 2 N. */
TEST(tf_example_dependent_async_algorithms_fill_double_and_sum_exactly) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        for (size_t N : {0, 1, 2, 65536}) {
            int sum = 1;
            std::vector<int> data(N);
            auto A = executor.async([&] { weft::for_each(executor, data.begin(), data.end(), [](int &i) { i = 1; }); });
            auto B = executor.dependent_async(
                [&] { weft::transform(executor, data.begin(), data.end(), data.begin(), [](int &i) { return i * 2; }); }, A);
            auto C = executor.dependent_async(
                [&] { sum = weft::reduce(executor, data.begin(), data.end(), sum, std::plus<int>{}); }, B);
            executor.wait_for_all();
            ASSERT_EQ(sum, static_cast<int>(N * 2 + 1));
        }
    }
}

/* exclusive_scan.cpp and inclusive_scan.cpp, as taskflow tasks. */
TEST(tf_example_scans_as_tasks_equal_the_std_scans_for_0_1_and_odd_sizes) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        for (size_t N : {0, 1, 2, 3, 1001, 100000}) {
            std::vector<int> elements(N), seq(N), par(N, -7);
            std::vector<unsigned> uel(N), useq(N), upar(N, 7);
            for (size_t i = 0; i < N; i++) {
                elements[i] = static_cast<int>(i % 1000); /* the sums stay below INT_MAX (UBSan) */
                uel[i] = static_cast<unsigned>(i * 2 + 1);
            }
            std::exclusive_scan(elements.begin(), elements.end(), seq.begin(), -1, std::plus<int>{});
            std::inclusive_scan(uel.begin(), uel.end(), useq.begin(), std::multiplies<unsigned>{});
            weft::taskflow taskflow;
            taskflow.exclusive_scan(elements.begin(), elements.end(), par.begin(), -1, std::plus<int>{});
            taskflow.inclusive_scan(uel.begin(), uel.end(), upar.begin(), std::multiplies<unsigned>{});
            executor.run(taskflow).wait();
            ASSERT_TRUE(seq == par);
            ASSERT_TRUE(useq == upar);
            /* in place, as free functions */
            std::vector<int> inplace = elements;
            weft::exclusive_scan(executor, inplace.begin(), inplace.end(), inplace.begin(), -1, std::plus<int>{});
            ASSERT_TRUE(inplace == seq);
        }
    }
}

/* parallel_for.cpp: for_each (static partitioner), for_each_index forward
 * and (after clear) reverse, for_each_by_index forward and reverse (guided). */
TEST(tf_example_parallel_for_visits_every_index_once_forward_and_reverse) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        for (int N : {0, 1, 2, 7, 1000}) {
            std::vector<std::atomic<int>> seen(static_cast<size_t>(N) + 1);
            auto reset = [&] {
                for (auto &s : seen) s = 0;
            };
            auto check = [&](int first, int step) {
                for (int i = 0; i < N; i++) {
                    bool want = step > 0 ? (i >= first && (i - first) % step == 0)
                                         : (i <= first && (first - i) % (-step) == 0);
                    if (seen[static_cast<size_t>(i)].load() != (want ? 1 : 0))
                        TEST_FAIL_("N=%d first=%d step=%d: index %d seen %d times", N, first, step, i,
                                   seen[static_cast<size_t>(i)].load());
                }
                ASSERT_EQ(seen[static_cast<size_t>(N)].load(), 0);
            };
            std::vector<int> data(static_cast<size_t>(N));
            std::iota(data.begin(), data.end(), 0);
            weft::taskflow taskflow;
            reset();
            taskflow.for_each(data.begin(), data.end(), [&](int v) { seen[static_cast<size_t>(v)]++; },
                              weft::static_partitioner());
            executor.run(taskflow).get();
            check(0, 1);

            taskflow.clear();
            reset();
            taskflow.for_each_index(0, N, 2, [&](int i) { seen[static_cast<size_t>(i)]++; });
            executor.run(taskflow).wait();
            check(0, 2);
            if (N > 0) {
                taskflow.clear();
                reset();
                taskflow.for_each_index(N - 1, -1, -2, [&](int i) { seen[static_cast<size_t>(i)]++; });
                executor.run(taskflow).wait();
                check(N - 1, -2);
            }

            taskflow.clear();
            reset();
            taskflow.for_each_by_index(
                weft::index_range<int>(0, N, 2),
                [&](weft::index_range<int> sub) {
                    for (int i = sub.begin(); i < sub.end(); i += sub.step_size()) seen[static_cast<size_t>(i)]++;
                },
                weft::guided_partitioner());
            executor.run(taskflow).wait();
            check(0, 2);
            if (N > 0) {
                taskflow.clear();
                reset();
                taskflow.for_each_by_index(
                    weft::index_range<int>(N - 1, -1, -1),
                    [&](weft::index_range<int> sub) {
                        for (int i = sub.begin(); i > sub.end(); i += sub.step_size()) seen[static_cast<size_t>(i)]++;
                    },
                    weft::guided_partitioner());
                executor.run(taskflow).wait();
                check(N - 1, -1);
            }
        }
    }
}

/* parallel_reduce.cpp: min by reduce, min of a*a + 2ab + b*b by transform_reduce. */
TEST(tf_example_parallel_reduce_min_and_transform_reduce_match_a_serial_loop) {
    struct Data {
        int a, b;
        int transform() const { return a * a + 2 * a * b + b * b; }
    };
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        for (size_t N : {0, 1, 2, 3, 9999}) {
            std::vector<int> data(N);
            std::vector<Data> dd(N);
            for (size_t i = 0; i < N; i++) {
                data[i] = static_cast<int>((i * 2654435761u) % 1000003u) - 500000;
                dd[i] = {static_cast<int>(i % 97) - 48, static_cast<int>(i % 89) - 44};
            }
            int smin = INT_MAX, tsmin = INT_MAX;
            for (int d : data) smin = std::min(smin, d);
            for (auto &d : dd) tsmin = std::min(tsmin, d.transform());
            weft::taskflow taskflow;
            int tmin = INT_MAX;
            taskflow.reduce(data.begin(), data.end(), tmin, [](int l, int r) { return std::min(l, r); });
            executor.run(taskflow).get();
            ASSERT_EQ(tmin, smin);
            int ttmin = weft::transform_reduce(
                executor, dd.begin(), dd.end(), INT_MAX, [](int l, int r) { return std::min(l, r); },
                [](const Data &d) { return d.transform(); });
            ASSERT_EQ(ttmin, tsmin);
        }
    }
}

/* parallel_sort.cpp: strings of 32 characters sorted by a sort task. */
TEST(tf_example_parallel_sort_of_strings_equals_std_sort) {
    static const char alphanum[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        for (size_t N : {0, 1, 2, 3, 20000}) {
            std::vector<std::string> strings(N);
            uint64_t x = 88172645463325252ull + N;
            for (auto &s : strings) {
                s.resize(N % 2 ? 32 : 3); /* short strings: many equal ones */
                for (auto &c : s) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    c = alphanum[x % (sizeof alphanum - 1)];
                }
            }
            std::vector<std::string> want = strings;
            std::sort(want.begin(), want.end());
            {
                weft::taskflow taskflow;
                taskflow.sort(strings.begin(), strings.end());
                executor.run(taskflow).wait();
            }
            ASSERT_TRUE(strings == want);
        }
    }
}

/* text_pipeline.cpp: read (serial), count letters (parallel), pick the most
 * frequent (serial), over per-line buffers of a variant. */
TEST(tf_example_text_pipeline_finds_each_strings_most_frequent_letter_in_order) {
    const std::vector<std::string> input = {"abade", "ddddf", "eefge", "xyzzd", "ijjjj", "jiiii", "kkijk"};
    const std::vector<std::pair<char, size_t>> want = {{'a', 2}, {'d', 4}, {'e', 3}, {'z', 2},
                                                      {'j', 4}, {'i', 4}, {'k', 3}};
    for (unsigned w : kWorkers) {
        for (size_t num_lines : {1, 2, 4}) {
            weft::executor executor(w);
            weft::taskflow taskflow("text-processing pipeline");
            using data_type = std::variant<std::string, std::map<char, size_t>>;
            std::vector<data_type> buffer(num_lines);
            std::vector<std::pair<char, size_t>> out;
            weft::pipeline pl(
                num_lines,
                weft::pipe{weft::pipe_type::serial,
                           [&](weft::pipeflow &pf) {
                               if (pf.token() == input.size()) pf.stop();
                               else buffer[pf.line()] = input[pf.token()];
                           }},
                weft::pipe{weft::pipe_type::parallel,
                           [&](weft::pipeflow &pf) {
                               std::map<char, size_t> map;
                               for (char c : std::get<std::string>(buffer[pf.line()])) map[c]++;
                               buffer[pf.line()] = map;
                           }},
                weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                               auto &map = std::get<std::map<char, size_t>>(buffer[pf.line()]);
                               auto sol = std::max_element(map.begin(), map.end(),
                                                           [](auto &a, auto &b) { return a.second < b.second; });
                               out.emplace_back(sol->first, sol->second);
                           }});
            weft::task init = taskflow.emplace([] {}).name("starting pipeline");
            weft::task task = taskflow.composed_of(pl).name("pipeline");
            weft::task stop = taskflow.emplace([] {}).name("pipeline stopped");
            init.precede(task);
            task.precede(stop);
            (void)taskflow.dump();
            executor.run(taskflow).wait();
            ASSERT_TRUE(out == want);
            ASSERT_EQ(pl.num_tokens(), input.size());
        }
    }
}

/* scalable_pipeline.cpp: three serial pipes of one callable switching on
 * pf.pipe(); each pipe after the first adds one to the line's buffer. */
TEST(tf_example_scalable_pipeline_buffers_gain_one_per_pipe_and_rerun_after_reset) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        const size_t num_lines = 4;
        std::array<size_t, num_lines> buffer{};
        std::vector<size_t> last(5, 0);
        auto pipe_callable = [&](weft::pipeflow &pf) {
            switch (pf.pipe()) {
            case 0:
                if (pf.token() == 5) pf.stop();
                else buffer[pf.line()] = pf.token();
                return;
            default:
                buffer[pf.line()] = buffer[pf.line()] + 1;
                if (pf.pipe() == 2) last[pf.token()] = buffer[pf.line()];
            }
        };
        weft::pipeline pl(num_lines, weft::pipe{weft::pipe_type::serial, pipe_callable},
                          weft::pipe{weft::pipe_type::serial, pipe_callable},
                          weft::pipe{weft::pipe_type::serial, pipe_callable});
        weft::taskflow taskflow("pipeline");
        weft::task init = taskflow.emplace([] {});
        weft::task task = taskflow.composed_of(pl);
        weft::task stop = taskflow.emplace([] {});
        init.precede(task);
        task.precede(stop);
        executor.run(taskflow).wait();
        for (size_t t = 0; t < 5; t++) ASSERT_EQ(last[t], t + 2);
        /* Taskflow's reset(pipes) adds pipes; weft's reset restarts the tokens */
        std::fill(last.begin(), last.end(), 0);
        pl.reset();
        executor.run(taskflow).wait();
        for (size_t t = 0; t < 5; t++) ASSERT_EQ(last[t], t + 2);
        ASSERT_EQ(pl.num_tokens(), 5u);
    }
}

/* taskflow_pipeline.cpp: each pipe coruns a taskflow of its own. */
TEST(tf_example_taskflow_pipeline_coruns_one_taskflow_per_pipe_per_token) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        weft::taskflow taskflow("taskflow processing pipeline");
        const size_t num_lines = 2, num_pipes = 3;
        std::array<weft::taskflow, num_pipes> taskflows;
        std::array<std::atomic<int>, num_pipes> ends{};
        std::atomic<int> bad{0};
        {
            std::atomic<int> *c = &ends[0];
            auto b = std::make_shared<std::atomic<int>>(0);
            auto [A1, B1, C1, D1] = taskflows[0].emplace([b] { *b = 0; }, [b] { (*b)++; }, [b] { (*b)++; },
                                                         [b, c, &bad] {
                                                             if (b->load() != 2) bad++;
                                                             (*c)++;
                                                         });
            A1.precede(B1, C1);
            D1.succeed(B1, C1);
        }
        {
            std::atomic<int> *c = &ends[1];
            auto s = std::make_shared<std::string>();
            auto [A2, B2, C2, D2] = taskflows[1].emplace([s] { *s = "A"; }, [s] { *s += "B"; }, [s] { *s += "C"; },
                                                         [s, c, &bad] {
                                                             if (*s != "ABC") bad++;
                                                             (*c)++;
                                                         });
            /* tf.linearize({A2, B2, C2, D2}) */
            A2.precede(B2);
            B2.precede(C2);
            C2.precede(D2);
        }
        {
            std::atomic<int> *c = &ends[2];
            auto [A3, B3, C3, D3] = taskflows[2].emplace([] {}, [c] { (*c)++; }, [c] { (*c)++; }, [c] { (*c)++; });
            A3.precede(B3, C3, D3);
        }
        weft::pipeline pl(num_lines,
                          weft::pipe{weft::pipe_type::serial,
                                     [&](weft::pipeflow &pf) {
                                         if (pf.token() == 5) {
                                             pf.stop();
                                             return;
                                         }
                                         executor.corun(taskflows[pf.pipe()]);
                                     }},
                          weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) { executor.corun(taskflows[pf.pipe()]); }},
                          weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) { executor.corun(taskflows[pf.pipe()]); }});
        weft::task init = taskflow.emplace([] {});
        weft::task task = taskflow.composed_of(pl);
        weft::task stop = taskflow.emplace([] {});
        init.precede(task);
        task.precede(stop);
        executor.run(taskflow).wait();
        ASSERT_EQ(ends[0].load(), 5);
        ASSERT_EQ(ends[1].load(), 5);
        ASSERT_EQ(ends[2].load(), 15);
        ASSERT_EQ(bad.load(), 0);
    }
}

/* limited_concurrency.cpp: five tasks behind one semaphore of 1 (weft.hpp has
 * no semaphore: the C calls on the native task). */
TEST(tf_example_limited_concurrency_runs_one_task_at_a_time) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        weft::taskflow taskflow;
        weft_status st = WEFT_OK;
        weft_semaphore *semaphore = weft_semaphore_create(1, &st);
        ASSERT_NOT_NULL(semaphore);
        std::atomic<int> inside{0}, most{0}, ran{0};
        auto body = [&] {
            int now = ++inside;
            int m = most.load();
            while (now > m && !most.compare_exchange_weak(m, now)) {}
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            --inside;
            ran++;
        };
        std::vector<weft::task> tasks{taskflow.emplace(body), taskflow.emplace(body), taskflow.emplace(body),
                                      taskflow.emplace(body), taskflow.emplace(body)};
        for (auto &task : tasks) {
            ASSERT_OK(weft_task_acquire(task.native(), semaphore));
            ASSERT_OK(weft_task_release(task.native(), semaphore));
        }
        (void)executor.run(taskflow);
        executor.wait_for_all();
        ASSERT_EQ(ran.load(), 5);
        ASSERT_EQ(most.load(), 1);
        ASSERT_EQ(weft_semaphore_value(semaphore), 1u);
        taskflow.clear();
        ASSERT_OK(weft_semaphore_destroy(semaphore));
    }
}

/* exception.cpp and subflow_exception.cpp: a throw reaches get(); what
 * depends on the throwing task does not run. */
TEST(tf_example_exceptions_from_tasks_and_subflow_tasks_reach_get) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        {
            weft::taskflow taskflow("exception");
            std::atomic<int> d{0};
            auto [A, B, C, D] = taskflow.emplace([] {}, [] { throw std::runtime_error("Exception on Task B"); },
                                                 [] { throw std::runtime_error("Exception on Task C"); }, [&] { d++; });
            A.precede(B, C);
            D.succeed(B, C);
            bool caught = false;
            try {
                executor.run(taskflow).get();
            } catch (const std::runtime_error &e) {
                std::string what = e.what();
                caught = what == "Exception on Task B" || what == "Exception on Task C";
            }
            ASSERT_TRUE(caught);
            ASSERT_EQ(d.load(), 0);
        }
        {
            weft::taskflow taskflow;
            std::atomic<int> b{0};
            taskflow.emplace([&](weft::subflow &sf) {
                weft::task A = sf.emplace([] { throw std::runtime_error("exception on A"); });
                weft::task B = sf.emplace([&] { b++; });
                A.precede(B);
                sf.join();
            });
            for (int rep = 0; rep < 2; rep++) {
                ASSERT_THROWS(executor.run(taskflow).get(), std::runtime_error, e,
                              ASSERT_STREQ(e.what(), "exception on A"));
            }
            ASSERT_EQ(b.load(), 0);
        }
    }
}

/* cancel.cpp: a run of many sleeping tasks cancelled at once ends long before
 * they could all run (weft's get() then throws weft::error: canceled). */
TEST(tf_example_cancel_ends_a_run_of_sleeping_tasks_early) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        weft::taskflow taskflow("cancel");
        std::atomic<int> ran{0};
        for (int i = 0; i < 1000; i++)
            taskflow.emplace([&] {
                ran++;
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            });
        auto beg = std::chrono::steady_clock::now();
        auto fu = executor.run(taskflow);
        fu.cancel();
        try {
            fu.get();
        } catch (const weft::error &e) {
            ASSERT_EQ(e.status(), WEFT_ECANCELED);
        }
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - beg).count();
        ASSERT_LT(ran.load(), 100);
        ASSERT_LT(ms, 1000);
        /* and the taskflow runs whole afterwards */
        ran = 0;
        taskflow.clear();
        for (int i = 0; i < 10; i++) taskflow.emplace([&] { ran++; });
        executor.run(taskflow).get();
        ASSERT_EQ(ran.load(), 10);
    }
}

/* observer.cpp: an observer sees each of eight named tasks enter and exit
 * once, on a worker of the executor (the C observer in the executor's config). */
namespace {
struct seen_tasks {
    std::mutex mu;
    std::map<std::string, int> entries, exits;
    std::atomic<int> bad_worker{0};
    unsigned workers = 0;
};
void on_entry(void *user, const weft_task_event *ev) {
    auto *s = static_cast<seen_tasks *>(user);
    if (ev->worker >= s->workers || ev->outcome != WEFT_TASK_RUNNING) s->bad_worker++;
    std::lock_guard<std::mutex> l(s->mu);
    s->entries[ev->name]++;
}
void on_exit(void *user, const weft_task_event *ev) {
    auto *s = static_cast<seen_tasks *>(user);
    if (ev->worker >= s->workers || ev->outcome != WEFT_TASK_SUCCEEDED) s->bad_worker++;
    std::lock_guard<std::mutex> l(s->mu);
    s->exits[ev->name]++;
}
} // namespace
TEST(tf_example_observer_sees_every_task_enter_and_exit_once) {
    for (unsigned w : kWorkers) {
        seen_tasks seen;
        seen.workers = w;
        weft_observer obs{on_entry, on_exit, &seen};
        weft_executor_config cfg{};
        cfg.workers = w;
        cfg.observer = &obs;
        weft::executor executor(cfg);
        weft::taskflow taskflow;
        std::atomic<int> ran{0};
        for (const char *n : {"A", "B", "C", "D", "E", "F", "G", "H"}) taskflow.emplace([&] { ran++; }).name(n);
        executor.run(taskflow).get();
        ASSERT_EQ(ran.load(), 8);
        ASSERT_EQ(seen.bad_worker.load(), 0);
        ASSERT_EQ(seen.entries.size(), 8u);
        for (auto &[name, n] : seen.entries) {
            ASSERT_EQ(n, 1);
            ASSERT_EQ(seen.exits[name], 1);
        }
    }
}

/* task_visitor.cpp: after a run, the taskflow's tasks are visited with their
 * names and successors, and the dump shows the subflow B built (B1, B2, B3). */
TEST(tf_example_task_visitor_walks_tasks_and_successors_after_a_run) {
    weft::taskflow taskflow("visitor");
    weft::executor executor(2);
    auto A = taskflow.emplace([] {});
    auto B = taskflow.emplace([](weft::subflow &subflow) {
        auto B1 = subflow.emplace([] {}).name("B1");
        auto B2 = subflow.emplace([] {}).name("B2");
        auto B3 = subflow.emplace([] {}).name("B3");
        B1.precede(B3);
        B2.precede(B3);
        subflow.retain(true);
    });
    auto C = taskflow.emplace([] {});
    auto D = taskflow.emplace([] {});
    A.name("A");
    B.name("B");
    C.name("C");
    D.name("D");
    A.precede(B);
    A.precede(C);
    B.precede(D);
    C.precede(D);
    executor.run(taskflow).wait();
    std::string dot = taskflow.dump();
    for (const char *n : {"B1", "B2", "B3"}) ASSERT_TRUE(dot.find(n) != std::string::npos);
    std::map<std::string, std::string> succ;
    auto visit = [](weft_task t, void *arg) -> bool {
        auto *m = static_cast<std::map<std::string, std::string> *>(arg);
        std::string s;
        weft::task(t).for_each_successor([&](weft::task x) { s += x.name(); });
        (*m)[weft_task_name(t)] = s;
        return true;
    };
    ASSERT_OK(weft_taskflow_for_each_task(taskflow.native(), visit, &succ));
    ASSERT_EQ(succ.size(), 4u);
    ASSERT_TRUE(succ["A"] == "BC");
    ASSERT_TRUE(succ["B"] == "D");
    ASSERT_TRUE(succ["C"] == "D");
    ASSERT_TRUE(succ["D"] == "");
}

/* attach_data.cpp: a placeholder given data and work, run ten times with the
 * data changed between runs (the C calls on the native task: weft.hpp's task
 * has neither data nor work). */
TEST(tf_example_attach_data_task_reads_the_data_of_each_run) {
    weft::executor executor(2);
    weft::taskflow taskflow("attach data to a task");
    int data = 0;
    std::vector<int> got;
    auto A = taskflow.placeholder();
    ASSERT_OK(weft_task_set_data(A.native(), &data));
    struct work_arg {
        std::vector<int> *got;
    } wa{&got};
    ASSERT_OK(weft_task_set_work(
        A.native(),
        [](weft_ctx *ctx, void *arg) -> int {
            int d = *static_cast<int *>(weft_task_data(weft_ctx_task(ctx)));
            static_cast<work_arg *>(arg)->got->push_back(d);
            return 0;
        },
        &wa));
    for (data = 0; data < 10; data++) executor.run(taskflow).wait();
    ASSERT_EQ(got.size(), 10u);
    for (int i = 0; i < 10; i++) ASSERT_EQ(got[static_cast<size_t>(i)], i);
}

/* tsp.cpp: branch and bound over tours, one task group per node (the first
 * branch followed in place, the others as children), a shared best bound;
 * here 8 cities, against a serial search of every tour. */
namespace {
constexpr int kCities = 8;
int tsp_dist[kCities][kCities];
weft::executor *tsp_executor;
std::atomic<int> best_cost{INT_MAX};
int tsp_lower_bound(int current, const std::vector<bool> &visited, int cost) {
    int min_curr = INT_MAX;
    for (int v = 0; v < kCities; v++)
        if (!visited[static_cast<size_t>(v)]) min_curr = std::min(min_curr, tsp_dist[current][v]);
    if (min_curr == INT_MAX) return cost;
    int bound = cost + min_curr;
    for (int u = 0; u < kCities; u++) {
        if (visited[static_cast<size_t>(u)]) continue;
        int min_u = INT_MAX;
        for (int v = 0; v < kCities; v++)
            if (v != u) min_u = std::min(min_u, tsp_dist[u][v]);
        bound += min_u;
    }
    return bound;
}
void branch_and_bound(int current, std::vector<bool> visited, int cost, int depth) {
    if (tsp_lower_bound(current, visited, cost) >= best_cost.load(std::memory_order_relaxed)) return;
    if (depth == kCities) {
        int total = cost + tsp_dist[current][0];
        int cur = best_cost.load(std::memory_order_relaxed);
        while (total < cur && !best_cost.compare_exchange_weak(cur, total, std::memory_order_relaxed)) {}
        return;
    }
    auto tg = tsp_executor->task_group();
    bool first = true;
    for (int v = 0; v < kCities; v++) {
        if (visited[static_cast<size_t>(v)]) continue;
        std::vector<bool> nv = visited;
        nv[static_cast<size_t>(v)] = true;
        int nc = cost + tsp_dist[current][v];
        if (first) {
            first = false;
            branch_and_bound(v, nv, nc, depth + 1);
        } else {
            tg.silent_async([=] { branch_and_bound(v, nv, nc, depth + 1); });
        }
    }
    tg.corun();
}
int tsp_serial(int current, std::vector<bool> &visited, int cost, int depth) {
    if (depth == kCities) return cost + tsp_dist[current][0];
    int best = INT_MAX;
    for (int v = 0; v < kCities; v++) {
        if (visited[static_cast<size_t>(v)]) continue;
        visited[static_cast<size_t>(v)] = true;
        best = std::min(best, tsp_serial(v, visited, cost + tsp_dist[current][v], depth + 1));
        visited[static_cast<size_t>(v)] = false;
    }
    return best;
}
} // namespace
TEST(tf_example_tsp_branch_and_bound_by_task_groups_finds_the_optimal_tour) {
    for (int seed = 1; seed <= 3; seed++) {
        for (int i = 0; i < kCities; i++)
            for (int j = 0; j <= i; j++)
                tsp_dist[i][j] = tsp_dist[j][i] = i == j ? 0 : 1 + static_cast<int>((i * 131 + j * 71 + seed * 977) % 97);
        std::vector<bool> visited(kCities, false);
        visited[0] = true;
        int want = tsp_serial(0, visited, 0, 1);
        for (unsigned w : kWorkers) {
            weft::executor executor(w);
            tsp_executor = &executor;
            best_cost = INT_MAX;
            executor.async([&] { branch_and_bound(0, visited, 0, 1); }).get();
            ASSERT_EQ(best_cost.load(), want);
            tsp_executor = nullptr;
        }
    }
}

/* composition.cpp, example 2's end: run_untils queued and never waited; the
 * taskflows and the executor go out of scope (the taskflows first: each waits
 * for its runs, the modules' bodies after the taskflows composing them). */
TEST(tf_example_composition_runs_left_queued_at_scope_end_all_complete) {
    std::atomic<int> f1A{0}, f3A{0};
    for (unsigned w : kWorkers) {
        f1A = 0;
        f3A = 0;
        {
            weft::executor executor(w);
            weft::taskflow f1("F1");
            f1.emplace([&] { f1A++; });
            weft::taskflow f2("F2");
            f2.emplace([] {});
            f2.composed_of(f1);
            weft::taskflow f3("F3");
            f3.composed_of(f2);
            f3.emplace([&] { f3A++; });
            weft::taskflow f4("F4");
            auto m3 = f4.composed_of(f3);
            auto m2 = f4.composed_of(f2);
            m3.precede(m2);
            (void)executor.run_until(f4, [iter = 1]() mutable { return iter-- == 0; });
            (void)executor.run_until(f4, [iter = 2]() mutable { return iter-- == 0; });
            (void)executor.run_until(f4, [iter = 3]() mutable { return iter-- == 0; });
        }
        ASSERT_EQ(f3A.load(), 6);
        ASSERT_EQ(f1A.load(), 12);
    }
}
