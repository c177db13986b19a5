/* Taskflow's own unit tests (unittests/test_*.cpp), their checks ported to
 * weft.hpp: the sizes and thread counts of Taskflow's tests where they run in
 * well under a second here, fewer repetitions where not.  Each TEST names the
 * Taskflow test case it ports.  Where weft differs on purpose (documented in
 * weft.hpp or docs/guide-cpp.md), the test checks weft's rule and says so. */
#include "cpp_test.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

const unsigned kWorkers[] = {1, 2, 3, 4, 8};

/* test_basics.cpp: sequential_runs */
void sequential_runs(unsigned W) {
    const size_t num_tasks = 100;
    weft::executor executor(W);
    weft::taskflow taskflow;
    std::atomic<int> counter{0};
    std::vector<weft::task> silent;
    for (size_t i = 0; i < num_tasks; i++) silent.push_back(taskflow.emplace([&counter] { counter += 1; }));

    auto fu = executor.run(taskflow);
    ASSERT_EQ(taskflow.num_tasks(), num_tasks);
    fu.get();
    ASSERT_EQ(counter.load(), (int)num_tasks);

    counter = 0;
    (void)executor.run(taskflow);
    executor.wait_for_all();
    ASSERT_EQ(counter.load(), (int)num_tasks);

    std::atomic<size_t> count(0);
    weft::taskflow tf1, tf2, tf3, tf4;
    for (size_t n = 0; n < 16; ++n) tf1.emplace([&] { count.fetch_add(1, std::memory_order_relaxed); });
    for (size_t n = 0; n < 1024; ++n) tf2.emplace([&] { count.fetch_add(1, std::memory_order_relaxed); });
    for (size_t n = 0; n < 32; ++n) tf3.emplace([&] { count.fetch_add(1, std::memory_order_relaxed); });
    for (size_t n = 0; n < 128; ++n) tf4.emplace([&] { count.fetch_add(1, std::memory_order_relaxed); });
    for (int i = 0; i < 200; ++i) {
        (void)executor.run(tf1);
        (void)executor.run(tf2);
        (void)executor.run(tf3);
        (void)executor.run(tf4);
    }
    executor.wait_for_all();
    ASSERT_EQ(count.load(), 240000u);
}

} // namespace

TEST(tf_basics_serial_runs_count_every_task_of_every_queued_run) {
    for (unsigned w : kWorkers) sequential_runs(w);
}

/* test_basics.cpp: Creation / Builder on an empty taskflow, and the awkward
 * run counts: run_n(0), run_n(1), run_until true at once, many runs queued. */
TEST(tf_basics_an_empty_taskflow_runs_and_completes_every_way) {
    weft::executor executor(4);
    weft::taskflow tf;
    ASSERT_TRUE(tf.empty());
    ASSERT_EQ(tf.num_tasks(), 0u);
    executor.run(tf).get();
    executor.run_n(tf, 0).get();
    executor.run_n(tf, 1).get();
    executor.run_n(tf, 100).get();
    int calls = 0;
    executor.run_until(tf, [&] { return ++calls > 0; }).get();
    ASSERT_EQ(calls, 1);
    std::vector<weft::future<void>> fus;
    for (int i = 0; i < 100; i++) fus.push_back(executor.run(tf));
    for (auto &f : fus) f.get();
    for (auto &f : fus) ASSERT_TRUE(f.ready());
    executor.wait_for_all();
    /* A taskflow of one placeholder. */
    tf.placeholder();
    ASSERT_EQ(tf.num_tasks(), 1u);
    executor.run_n(tf, 3).get();
}

/* run_n with n == 0 runs no task, and takes its turn behind the runs queued
 * before it (weft_run_n), as Taskflow's run_n(tf, 0) returns a ready future. */
TEST(tf_basics_run_n_zero_runs_nothing_and_queues_behind_earlier_runs) {
    weft::executor executor(2);
    weft::taskflow tf;
    std::atomic<int> counter{0};
    std::atomic<bool> go{false};
    tf.emplace([&] {
        while (!go.load()) std::this_thread::yield();
        counter++;
    });
    auto f1 = executor.run(tf);
    auto f0 = executor.run_n(tf, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_FALSE(f0.ready());
    go = true;
    f0.get();
    ASSERT_TRUE(f1.ready());
    ASSERT_EQ(counter.load(), 1);
    f1.get();
    executor.run_n(tf, 0).get();
    ASSERT_EQ(counter.load(), 1);
    ASSERT_EQ(executor.run_n(tf, 0).info().iterations, 0u);
}

/* test_basics.cpp: RunAndWait.Simple (corun from tasks).  Taskflow's corun
 * from a thread that is no worker throws; weft's corun runs and waits from any
 * thread (guide-cpp.md: "corun(tf) runs and waits"). */
TEST(tf_basics_corun_from_tasks_runs_the_other_taskflow_in_place) {
    weft::executor executor(2);
    weft::taskflow taskflow("Demo");
    executor.corun(taskflow); /* empty: fine from main in weft */
    int counter{0};
    weft::taskflow others;
    auto A = others.emplace([&] { counter++; });
    auto B = others.emplace([&] { counter++; });
    A.precede(B);
    std::atomic<int> c_seen{-1}, d_seen{-1};
    auto C = taskflow.emplace([&] {
        executor.corun(others);
        c_seen = counter;
    });
    auto D = taskflow.emplace([&] {
        executor.corun(others);
        d_seen = counter;
    });
    C.precede(D);
    executor.run(taskflow).wait();
    ASSERT_EQ(c_seen.load(), 2);
    ASSERT_EQ(d_seen.load(), 4);
    executor.run(others).wait();
    ASSERT_EQ(counter, 6);
}

/* test_basics.cpp: RunAndWait.Complex: 100 tasks each coruns its own taskflow
 * of 1000 tasks, on 2 workers. */
TEST(tf_basics_corun_of_one_hundred_taskflows_from_tasks_counts_all) {
    const size_t N = 100, T = 1000;
    weft::executor executor(2);
    weft::taskflow taskflow;
    std::vector<weft::taskflow> taskflows(N);
    std::atomic<size_t> counter{0};
    for (size_t n = 0; n < N; n++) {
        for (size_t i = 0; i < T; i++) taskflows[n].emplace([&] { counter++; });
        taskflow.emplace([&executor, &tf = taskflows[n]] { executor.corun(tf); });
    }
    executor.run(taskflow).wait();
    ASSERT_EQ(counter.load(), T * N);
}

/* test_basics.cpp: WorkerID (this_worker_id in tasks and subflows; -1 outside). */
TEST(tf_basics_worker_ids_are_in_range_in_tasks_and_subflows) {
    for (unsigned w : kWorkers) {
        weft::taskflow taskflow;
        weft::executor executor(w);
        ASSERT_EQ(executor.this_worker_id(), -1);
        ASSERT_EQ(executor.num_workers(), w);
        std::atomic<int> bad{0}, seen{0};
        auto check = [&, w] {
            int id = executor.this_worker_id();
            if (id < 0 || id >= (int)w) bad++;
            seen++;
        };
        for (int i = 0; i < 1000; i++) {
            auto A = taskflow.emplace([&] { check(); });
            auto B = taskflow.emplace([&](weft::subflow &sf) {
                check();
                sf.emplace([&] { check(); });
                sf.emplace([&](weft::subflow &) { check(); });
            });
            A.precede(B);
        }
        executor.run_n(taskflow, 10).wait();
        ASSERT_EQ(bad.load(), 0);
        ASSERT_EQ(seen.load(), 10 * 1000 * 4);
    }
}

/* test_basics.cpp: ParallelRuns (32 threads each run a taskflow of 2048 tasks
 * and wait; then 32 threads submit and the main thread waits for all). */
TEST(tf_basics_parallel_runs_from_32_threads_count_every_task) {
    for (unsigned w : {1u, 2u, 4u}) {
        std::atomic<int> counter{0};
        auto make_taskflow = [&](weft::taskflow &tf) {
            for (int i = 0; i < 1024; i++) {
                auto A = tf.emplace([&] { counter.fetch_add(1, std::memory_order_relaxed); });
                auto B = tf.emplace([&] { counter.fetch_add(1, std::memory_order_relaxed); });
                A.precede(B);
            }
        };
        {
            weft::executor executor(w);
            std::vector<std::thread> threads;
            for (int t = 0; t < 32; t++)
                threads.emplace_back([&] {
                    weft::taskflow taskflow;
                    make_taskflow(taskflow);
                    executor.run(taskflow).wait();
                });
            for (auto &t : threads) t.join();
            ASSERT_EQ(counter.load(), 32 * 1024 * 2);
        }
        {
            counter = 0;
            weft::executor executor(w);
            std::vector<std::unique_ptr<weft::taskflow>> taskflows(32);
            std::vector<std::thread> threads;
            std::atomic<size_t> barrier(0);
            for (int t = 0; t < 32; t++)
                threads.emplace_back([&, t] {
                    taskflows[t] = std::make_unique<weft::taskflow>();
                    make_taskflow(*taskflows[t]);
                    (void)executor.run(*taskflows[t]);
                    ++barrier;
                });
            while (barrier != 32) std::this_thread::yield();
            executor.wait_for_all();
            ASSERT_EQ(counter.load(), 32 * 1024 * 2);
            for (auto &t : threads) t.join();
        }
    }
}

namespace {
/* test_basics.cpp: NestedRuns: a task of one executor runs run_n(...).wait()
 * of a taskflow on another executor, three levels deep, clearing and
 * rebuilding the inner taskflows on every call. */
struct NestA {
    weft::executor executor;
    weft::taskflow taskflow;
    int &counter;
    NestA(unsigned w, int &c) : executor{w}, counter{c} {}
    void run() {
        taskflow.clear();
        auto A1 = taskflow.emplace([&] { counter++; });
        auto A2 = taskflow.emplace([&] { counter++; });
        A1.precede(A2);
        executor.run_n(taskflow, 10).wait();
    }
};
struct NestB {
    weft::taskflow taskflow;
    weft::executor executor;
    int &counter;
    NestA a;
    NestB(unsigned w, int &c) : executor{w}, counter{c}, a{w, c} {}
    void run() {
        taskflow.clear();
        auto B1 = taskflow.emplace([&] { ++counter; });
        auto B2 = taskflow.emplace([&] {
            ++counter;
            a.run();
        });
        B1.precede(B2);
        executor.run_n(taskflow, 100).wait();
    }
};
struct NestC {
    weft::taskflow taskflow;
    weft::executor executor;
    int &counter;
    NestB b;
    NestC(unsigned w, int &c) : executor{w}, counter{c}, b{w, c} {}
    void run(int n) {
        taskflow.clear();
        auto C1 = taskflow.emplace([&] { ++counter; });
        auto C2 = taskflow.emplace([&] {
            ++counter;
            b.run();
        });
        C1.precede(C2);
        executor.run_n(taskflow, static_cast<uint64_t>(n)).wait();
    }
};
} // namespace

TEST(tf_basics_nested_runs_on_three_executors_count_exactly) {
    for (unsigned w : {1u, 2u, 4u}) {
        int counter{0};
        NestC c(w, counter);
        c.run(10); /* Taskflow runs C 100 times (220200); 10 keeps it short */
        ASSERT_EQ(counter, 10 * (2 + 100 * (2 + 10 * 2)));
    }
}

/* test_basics.cpp: Iterators / Hash / num_* queries. */
TEST(tf_basics_successor_and_dependent_counts_follow_the_edges) {
    weft::taskflow taskflow;
    auto A = taskflow.emplace([] {}).name("A");
    auto B = taskflow.emplace([] {}).name("B");
    auto C = taskflow.emplace([] {}).name("C");
    auto D = taskflow.emplace([] {}).name("D");
    auto E = taskflow.emplace([] {}).name("E");
    A.precede(B, C, D, E);
    E.succeed(B, C, D);
    ASSERT_EQ(A.num_successors(), 4u);
    ASSERT_EQ(A.num_predecessors(), 0u);
    ASSERT_EQ(E.num_predecessors(), 4u);
    ASSERT_EQ(E.num_successors(), 0u);
    std::vector<std::string> names;
    A.for_each_successor([&](weft::task t) { names.push_back(t.name()); });
    ASSERT_TRUE((names == std::vector<std::string>{"B", "C", "D", "E"}));
    std::hash<weft::task> hash;
    weft::task t1, t2;
    ASSERT_EQ(hash(t1), hash(t2));
    ASSERT_TRUE(t1 == t2);
    t1 = A;
    ASSERT_TRUE(hash(t1) != hash(t2) || t1 != t2);
    t2 = A;
    ASSERT_EQ(hash(t1), hash(t2));
    ASSERT_TRUE(t1 == t2);
}

/* ---------------------------------------------------------------- control flow */

/* test_control_flow.cpp: LoopCond: a self-loop through a condition; 5 runs and
 * a run_n(10) queued at once. */
TEST(tf_control_flow_loop_cond_repeats_exactly_and_across_queued_runs) {
    for (unsigned w : {1u, 2u, 3u, 4u}) {
        weft::executor executor(w);
        weft::taskflow taskflow;
        int counter = -1, state = 0;
        std::atomic<int> bad{0};
        auto A = taskflow.emplace([&] { counter = 0; });
        auto B = taskflow.emplace([&]() mutable {
            if ((++counter % 100) != (++state % 100)) bad++;
            return counter < 100 ? 0 : 1;
        });
        auto C = taskflow.emplace([&] {
            if (counter != 100) bad++;
            counter = 0;
        });
        A.precede(B);
        B.precede(B, C);
        ASSERT_EQ(A.num_strong_dependents(), 0u);
        ASSERT_EQ(A.num_weak_dependents(), 0u);
        ASSERT_EQ(A.num_predecessors(), 0u);
        ASSERT_EQ(B.num_strong_dependents(), 1u);
        ASSERT_EQ(B.num_weak_dependents(), 1u);
        ASSERT_EQ(B.num_predecessors(), 2u);
        executor.run(taskflow).wait();
        ASSERT_EQ(counter, 0);
        ASSERT_EQ(state, 100);
        for (int i = 0; i < 4; i++) (void)executor.run(taskflow);
        (void)executor.run_n(taskflow, 10);
        executor.wait_for_all();
        ASSERT_EQ(state, 1500);
        ASSERT_EQ(bad.load(), 0);
    }
}

/* test_control_flow.cpp: CyclicCond: S -> A -> branch -> 1000 branches, each
 * back to A or on to T; each branch exactly once. */
TEST(tf_control_flow_cyclic_cond_visits_each_of_1000_branches_once) {
    for (unsigned w : kWorkers) {
        weft::executor executor(w);
        weft::taskflow flow;
        auto S = flow.emplace([] {});
        int num_iterations = 0;
        const int total = 1000;
        auto A = flow.emplace([&] { num_iterations++; });
        S.precede(A);
        int sel = 0;
        bool pass_T = false;
        std::vector<char> pass(total, 0);
        std::atomic<int> bad{0};
        auto T = flow.emplace([&] {
            if (num_iterations != total) bad++;
            pass_T = true;
        });
        auto branch = flow.emplace([&] { return sel++; });
        A.precede(branch);
        for (int i = 0; i < total; i++) {
            auto t = flow.emplace([&, i] {
                if (pass[i]) bad++;
                pass[i] = 1;
                return num_iterations < total ? 0 : 1;
            });
            branch.precede(t);
            t.precede(A);
            t.precede(T);
        }
        executor.run(flow).get();
        ASSERT_TRUE(pass_T);
        ASSERT_EQ(bad.load(), 0);
        for (int i = 0; i < total; i++) ASSERT_TRUE(pass[i]);
    }
}

/* test_control_flow.cpp: BTreeCondition: levels alternate plain tasks and
 * conditions returning 0 or 1; counter == 2^((level+1)/2) - 1. */
TEST(tf_control_flow_btree_of_conditions_runs_one_path_per_condition) {
    for (unsigned w = 1; w <= 8; w *= 2) {
        for (int l = 1; l < 12; l++) {
            weft::taskflow flow;
            std::vector<weft::task> prev_tasks, tasks;
            std::atomic<int> counter{0};
            for (int i = 0; i < l; i++) {
                tasks.clear();
                for (int j = 0; j < (1 << i); j++) {
                    if (i % 2 == 0) tasks.push_back(flow.emplace([&] { counter++; }));
                    else if (j % 2) tasks.push_back(flow.emplace([] { return 1; }));
                    else tasks.push_back(flow.emplace([] { return 0; }));
                }
                for (size_t j = 0; j < prev_tasks.size(); j++) {
                    prev_tasks[j].precede(tasks[2 * j]);
                    prev_tasks[j].precede(tasks[2 * j + 1]);
                }
                tasks.swap(prev_tasks);
            }
            weft::executor executor(w);
            executor.run(flow).wait();
            ASSERT_EQ(counter.load(), (1 << ((l + 1) / 2)) - 1);
        }
    }
}

namespace {
void conditional_spawn(std::atomic<int> &counter, const int max_depth, int depth, weft::subflow &subflow) {
    if (depth < max_depth) {
        for (int i = 0; i < 2; i++) {
            auto A = subflow.emplace([&] { counter++; });
            auto B = subflow.emplace(
                [&, max_depth, d = depth + 1](weft::subflow &sf2) { conditional_spawn(counter, max_depth, d, sf2); });
            auto C = subflow.emplace(
                [&, max_depth, d = depth + 1](weft::subflow &sf2) { conditional_spawn(counter, max_depth, d, sf2); });
            auto cond = subflow.emplace([depth] { return depth % 2 ? 1 : 0; });
            cond.precede(B, C);
            A.precede(cond);
        }
    }
}
} // namespace

/* test_control_flow.cpp: DynamicBTreeCondition: conditions inside nested subflows. */
TEST(tf_control_flow_conditions_in_nested_subflows_count_exactly) {
    for (unsigned w = 1; w <= 8; w++) {
        std::atomic<int> counter{0};
        constexpr int max_depth = 6;
        weft::taskflow flow;
        flow.emplace([&](weft::subflow &subflow) {
            counter++;
            conditional_spawn(counter, max_depth, 0, subflow);
        });
        weft::executor executor(w);
        executor.run_n(flow, 4).get();
        ASSERT_EQ(counter.load(), ((1 << (max_depth + 1)) - 1) * 4);
    }
}

/* test_control_flow.cpp: NestedCond: loops at three levels, two of them inside
 * subflows (mutable condition lambdas rebuilt with each subflow). */
TEST(tf_control_flow_nested_cond_loops_in_subflows_count_exactly) {
    for (unsigned w : kWorkers) {
        const int outer_loop = 3, mid_loop = 4, inner_loop = 5;
        int counter{0};
        weft::taskflow flow;
        auto S = flow.emplace([] {});
        auto A = flow.emplace([&](weft::subflow &subflow) {
                         auto S1 = subflow.emplace([] {});
                         auto A1 = subflow.emplace([] {});
                         A1.succeed(S1);
                         auto B1 = subflow.emplace([&](weft::subflow &sf) {
                             auto S2 = sf.emplace([] {});
                             auto A2 = sf.emplace([] {});
                             A2.succeed(S2);
                             auto B2 = sf.emplace([&] { counter++; });
                             B2.succeed(A2);
                             sf.emplace([&, repeat = 0]() mutable {
                                   if (repeat++ < inner_loop) return 0;
                                   repeat = 0;
                                   return 1;
                               })
                                 .succeed(B2)
                                 .precede(A2)
                                 .name("cond");
                             sf.emplace([] {}).succeed(A2).name("C");
                             sf.emplace([] {}).succeed(A2).name("D");
                             sf.emplace([] {}).succeed(A2).name("E");
                         });
                         B1.succeed(A1);
                         subflow.emplace([&, repeat = 0]() mutable {
                                    if (repeat++ < mid_loop) return 0;
                                    repeat = 0;
                                    return 1;
                                })
                             .succeed(B1)
                             .precede(A1)
                             .name("cond");
                     });
        A.succeed(S);
        flow.emplace([&, repeat = 0]() mutable {
                if (repeat++ < outer_loop) return 0;
                repeat = 0;
                return 1;
            })
            .succeed(A)
            .precede(A);
        weft::executor executor(w);
        const int repeat = 10;
        executor.run_n(flow, repeat).get();
        ASSERT_EQ(counter, (inner_loop + 1) * (mid_loop + 1) * (outer_loop + 1) * repeat);
    }
}

/* test_control_flow.cpp: Cond2Cond: a condition picking another condition. */
TEST(tf_control_flow_condition_to_condition_counts_visits_exactly) {
    for (unsigned w : kWorkers) {
        const int repeat = 10;
        weft::taskflow flow;
        int num_visit_A{0}, num_visit_C1{0}, num_visit_C2{0};
        int iteration_C1{0}, iteration_C2{0};
        std::atomic<int> b_ran{0};
        auto S = flow.emplace([] {});
        auto A = flow.emplace([&] { num_visit_A++; });
        A.succeed(S);
        auto cond1 = flow.emplace([&]() mutable {
            num_visit_C1++;
            iteration_C1++;
            return iteration_C1 == 1 ? 0 : 1;
        });
        cond1.succeed(A).precede(A);
        auto cond2 = flow.emplace([&]() mutable {
            num_visit_C2++;
            return iteration_C2++;
        });
        cond2.succeed(cond1).precede(cond1, A);
        flow.emplace([&] { b_ran++; }).succeed(cond1).name("B");
        flow.emplace([&] {
                iteration_C1 = 0;
                iteration_C2 = 0;
            })
            .succeed(cond2)
            .name("D");
        weft::executor executor(w);
        executor.run_n(flow, repeat).get();
        ASSERT_EQ(num_visit_A, 3 * repeat);
        ASSERT_EQ(num_visit_C1, 4 * repeat);
        ASSERT_EQ(num_visit_C2, 3 * repeat);
        ASSERT_EQ(b_ran.load(), 0);
    }
}

/* test_control_flow.cpp: CondSubflow: a subflow in a condition loop, its
 * graph rebuilt 1000 times per run; then run_n 1, 10, 100 queued. */
TEST(tf_control_flow_subflow_in_a_condition_loop_rebuilds_each_time) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::taskflow taskflow;
        weft::executor executor(W);
        const size_t I = 1000;
        std::vector<size_t> data(I);
        size_t i = 0;
        std::atomic<int> bad{0};
        auto init = taskflow.emplace([&] { i = 0; }).name("init");
        auto subflow = taskflow.emplace([&](weft::subflow &sf) {
                                   sf.emplace([&, i] {
                                         if (i >= I) bad++;
                                         else data[i] = i * (i + 1) / 2 * 123;
                                     })
                                       .name(std::to_string(i));
                               })
                           .name("subflow");
        auto cond = taskflow.emplace([&] { return ++i < I ? 0 : 1; }).name("cond");
        auto stop = taskflow.emplace([] {}).name("stop");
        init.precede(subflow);
        subflow.precede(cond);
        cond.precede(subflow, stop);
        executor.run(taskflow).wait();
        ASSERT_EQ(taskflow.num_tasks(), 4u);
        for (size_t j = 0; j < data.size(); ++j) {
            ASSERT_EQ(data[j], j * (j + 1) / 2 * 123);
            data[j] = 0;
        }
        (void)executor.run_n(taskflow, 1);
        (void)executor.run_n(taskflow, 10);
        (void)executor.run_n(taskflow, 100);
        executor.wait_for_all();
        ASSERT_EQ(taskflow.num_tasks(), 4u);
        for (size_t j = 0; j < data.size(); ++j) ASSERT_EQ(data[j], j * (j + 1) / 2 * 123);
        ASSERT_EQ(bad.load(), 0);
    }
}

/* test_control_flow.cpp: Cond.Types / MultiCond.Types: int, bool and
 * branches-returning lambdas are conditions. */
TEST(tf_control_flow_condition_types_are_conditions) {
    weft::taskflow taskflow;
    auto a = taskflow.emplace([] { return 1; });
    auto b = taskflow.emplace([]() -> int { return 2; });
    auto c = taskflow.emplace([] { return weft::branches{}; });
    auto d = taskflow.emplace([]() -> weft::branches { return {1, 2, 3, 9}; });
    ASSERT_EQ(weft_task_get_kind(a.native()), WEFT_TASK_CONDITION);
    ASSERT_EQ(weft_task_get_kind(b.native()), WEFT_TASK_CONDITION);
    ASSERT_EQ(weft_task_get_kind(c.native()), WEFT_TASK_MULTI_CONDITION);
    ASSERT_EQ(weft_task_get_kind(d.native()), WEFT_TASK_MULTI_CONDITION);
    /* run it: out-of-range picks run nothing, as in Taskflow */
    weft::executor ex(2);
    ex.run(taskflow).get();
}

/* test_control_flow.cpp: MultipleBranches: a multi-condition over 100 chains
 * picking random indices from -10 to 110 (out-of-range ones ignored). */
TEST(tf_control_flow_multi_condition_runs_exactly_the_picked_in_range_branches) {
    srand(12345);
    for (unsigned W : kWorkers) {
        weft::executor executor(W);
        weft::taskflow taskflow;
        std::atomic<int> counter{0};
        weft::branches conds;
        int ans = 0;
        for (int i = -10; i <= 110; i++) {
            if (::rand() % 10 == 0) {
                conds.push_back(i);
                if (0 <= i && i < 100) ans++;
            }
        }
        auto A = taskflow.emplace([&] { return conds; });
        for (int i = 0; i < 100; i++) {
            auto X = taskflow.emplace([&] { counter.fetch_add(1, std::memory_order_relaxed); });
            auto Y = taskflow.emplace([&] { counter.fetch_add(1, std::memory_order_relaxed); });
            X.precede(Y);
            A.precede(X);
        }
        executor.run(taskflow).wait();
        ASSERT_EQ(2 * ans, counter.load());
    }
}

/* test_control_flow.cpp: MultipleLoops: four self-looping multi-conditions
 * chained; a {-1} pick ends a loop. */
TEST(tf_control_flow_four_chained_multi_condition_loops_run_ten_times_each) {
    for (unsigned W : kWorkers) {
        weft::executor executor(W);
        weft::taskflow taskflow;
        std::atomic<int> counter{0};
        auto mk = [&] {
            return taskflow.emplace([&, i = true, c = 0]() mutable -> weft::branches {
                if (i) {
                    i = false;
                    return {0, 1};
                }
                counter.fetch_add(1, std::memory_order_relaxed);
                return {++c < 10 ? 0 : -1};
            });
        };
        auto A = taskflow.emplace([] {});
        auto B = mk(), C = mk(), D = mk(), E = mk();
        A.precede(B);
        B.precede(B, C);
        C.precede(C, D);
        D.precede(D, E);
        E.precede(E);
        executor.run(taskflow).wait();
        ASSERT_EQ(counter.load(), 40);
    }
}

/* test_control_flow.cpp: MultiCondBinaryTree: 1023 multi-conditions picking
 * both children, run_n(10). */
TEST(tf_control_flow_multi_condition_binary_tree_runs_every_node_each_iteration) {
    for (unsigned w : {1u, 2u, 3u, 4u}) {
        const int N = 10;
        weft::taskflow taskflow;
        weft::executor executor(w);
        std::atomic<int> counter{0};
        std::vector<weft::task> tasks;
        for (int i = 1; i < (1 << N); i++)
            tasks.push_back(taskflow.emplace([&counter]() -> weft::branches {
                counter.fetch_add(1, std::memory_order_relaxed);
                return {0, 1};
            }));
        for (size_t i = 0; i < tasks.size(); i++) {
            size_t l = i * 2 + 1, r = l + 1;
            if (l < tasks.size()) tasks[i].precede(tasks[l]);
            if (r < tasks.size()) tasks[i].precede(tasks[r]);
        }
        executor.run_n(taskflow, N).wait();
        ASSERT_EQ(((1 << N) - 1) * N, counter.load());
    }
}

/* test_control_flow.cpp: MultiCond.MultipleRuns: a task with a strong and
 * two weak-reached predecessors never runs (its join counter never drains). */
TEST(tf_control_flow_task_behind_weak_and_strong_edges_never_runs_on_reruns) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor executor(W);
        weft::taskflow taskflow;
        bool flag = false;
        auto [init, cond1, cond2, yes, no] =
            taskflow.emplace([] {}, [] { return 0; }, [] { return 1; }, [&] { flag = true; }, [] {});
        (void)no;
        auto t1 = taskflow.emplace([] {});
        auto t2 = taskflow.emplace([] {});
        cond2.precede(t2);
        t2.precede(yes);
        init.precede(yes);
        cond1.precede(t1);
        t1.precede(yes);
        for (int n = 1; n <= 3; n++) {
            executor.run_n(taskflow, n).wait();
            ASSERT_FALSE(flag);
        }
    }
}

/* ---------------------------------------------------------------- subflows */

/* test_subflows.cpp: JoinedSubflow "Trivial": empty and nested subflows,
 * explicit join, order of the counts. */
TEST(tf_subflows_joined_empty_and_nested_subflows_keep_their_order) {
    for (unsigned W : kWorkers) {
        weft::executor executor(W);
        weft::taskflow tf;
        std::atomic<int> fu3v{0}, fu3v_{0}, bad{0};
        auto subflow1 = tf.emplace([&](weft::subflow &fb) {
            fu3v++;
            fb.join();
            if (fb.joinable()) bad++;
        });
        auto subflow2 = tf.emplace([&](weft::subflow &fb) {
            fu3v++;
            fb.emplace([&](weft::subflow &fb2) {
                fu3v++;
                fb2.emplace([&](weft::subflow &fb3) {
                    fu3v++;
                    fb3.join();
                });
            });
        });
        auto subflow3 = tf.emplace([&](weft::subflow &fb) {
            if (fu3v != 4) bad++;
            fu3v++;
            fu3v_++;
            auto sub3 = fb.emplace([&](weft::subflow &fb2) {
                if (fu3v_ != 3) bad++;
                fu3v++;
                fu3v_++;
                fb2.join();
            });
            auto s1 = fb.emplace([&] {
                fu3v_++;
                fu3v++;
            });
            auto s2 = fb.emplace([&] {
                fu3v_++;
                fu3v++;
            });
            auto s3 = fb.emplace([&] {
                fu3v++;
                if (fu3v_ != 4) bad++;
            });
            s1.precede(sub3);
            s2.precede(sub3);
            sub3.precede(s3);
            if (fu3v_ != 1) bad++;
        });
        auto subflow4 = tf.emplace([&] { fu3v++; });
        subflow1.precede(subflow2);
        subflow2.precede(subflow3);
        subflow3.precede(subflow4);
        executor.run(tf).get();
        ASSERT_EQ(bad.load(), 0);
        ASSERT_EQ(fu3v.load(), 10);
        /* and again: the subflow graphs are rebuilt */
        fu3v = 0;
        fu3v_ = 0;
        executor.run_n(tf, 5).get();
        ASSERT_EQ(fu3v.load(), 50);
    }
}

/* test_subflows.cpp: JoinedSubflow "Complex": an algorithm task (reduce)
 * inside a subflow, ordered by edges, and nested subflow counts. */
TEST(tf_subflows_reduce_task_inside_a_subflow_runs_between_its_edges) {
    for (unsigned W : kWorkers) {
        weft::executor executor(W);
        weft::taskflow tf;
        std::vector<int> data;
        int sum{0};
        std::atomic<int> bad{0};
        auto A = tf.emplace([&data] {
            for (int i = 0; i < 10; ++i) data.push_back(1);
        });
        auto B = tf.emplace([&](weft::subflow &fb) {
            auto task = fb.reduce(data.begin(), data.end(), sum, std::plus<int>());
            fb.emplace([&] {
                  if (sum != 0) bad++;
              })
                .precede(task);
            task.precede(fb.emplace([&] {
                if (sum != 10) bad++;
            }));
        });
        A.precede(B);
        executor.run(tf).get();
        ASSERT_EQ(sum, 10);
        ASSERT_EQ(bad.load(), 0);
    }
}

/* test_subflows.cpp: DetachedSubflow (commented out in Taskflow; weft claims
 * detach): the successor does not wait for a detached graph, the run does. */
TEST(tf_subflows_detached_subflow_finishes_before_its_run_ends) {
    for (unsigned W : kWorkers) {
        weft::executor executor(W);
        weft::taskflow tf;
        std::atomic<int> count{0}, after{0};
        auto A = tf.emplace([&](weft::subflow &sf) {
            for (int i = 0; i < 100; i++) sf.emplace([&] { count++; });
            sf.detach();
            if (sf.joinable()) count += 1000;
        });
        auto B = tf.emplace([&] { after++; });
        A.precede(B);
        for (int r = 1; r <= 10; r++) {
            executor.run(tf).get();
            ASSERT_EQ(count.load(), 100 * r);
            ASSERT_EQ(after.load(), r);
        }
        executor.run_n(tf, 10).get();
        ASSERT_EQ(count.load(), 2000);
    }
}

namespace {
int fibonacci_spawn(int n, weft::subflow &sf) {
    (void)sf;
    return n;
}
size_t fib_subflow(size_t n, weft::subflow &sf) {
    if (n < 2) return n;
    size_t res1 = 0, res2 = 0;
    sf.emplace([&res1, n](weft::subflow &s) { res1 = fib_subflow(n - 1, s); });
    sf.emplace([&res2, n](weft::subflow &s) { res2 = fib_subflow(n - 2, s); });
    sf.join();
    return res1 + res2;
}
} // namespace

/* test_subflows.cpp: FibSubflow: recursive subflows with explicit join. */
TEST(tf_subflows_fibonacci_by_nested_joined_subflows) {
    (void)fibonacci_spawn;
    for (unsigned W : {1u, 2u, 4u, 8u}) {
        size_t N = 18, res = 0;
        weft::executor executor(W);
        weft::taskflow taskflow;
        taskflow.emplace([&res, N](weft::subflow &sf) { res = fib_subflow(N, sf); });
        executor.run(taskflow).wait();
        ASSERT_EQ(res, 2584u);
    }
}

/* test_subflows.cpp: MultipleSubflowRuns, .ChangedTaskflow, .Predicate:
 * taskflows with subflows run many times, grown between runs, and by run_until. */
TEST(tf_subflows_multiple_runs_changed_taskflow_and_predicate) {
    for (unsigned W : {1u, 2u, 4u}) {
        const size_t num_flows = 8;
        weft::executor executor(W);
        std::atomic<size_t> counter{0};
        std::vector<weft::taskflow> flows(num_flows);
        std::vector<weft::future<void>> fus;
        auto plus1 = [&] { counter.fetch_add(1, std::memory_order_relaxed); };
        for (size_t i = 0; i < num_flows; i++) {
            auto &tf = flows[i];
            auto A = tf.emplace([&] { plus1(); });
            auto B = tf.emplace([&, i](weft::subflow &sf) {
                for (size_t j = 0; j < i; j++) sf.emplace([&] { plus1(); });
            });
            A.precede(B);
        }
        size_t c = 0;
        for (size_t i = 0; i < num_flows; i++) {
            fus.push_back(executor.run_n(flows[i], 10));
            c += (1 + i) * 10;
        }
        for (auto &f : fus) f.get();
        ASSERT_EQ(counter.load(), c);
        /* changed: add a task to each, run again */
        counter = 0;
        fus.clear();
        c = 0;
        for (size_t i = 0; i < num_flows; i++) {
            flows[i].emplace([&](weft::subflow &sf) { sf.emplace([&] { plus1(); }); });
            fus.push_back(executor.run_n(flows[i], 10));
            c += (2 + i) * 10;
        }
        for (auto &f : fus) f.get();
        ASSERT_EQ(counter.load(), c);
        /* predicate */
        counter = 0;
        fus.clear();
        c = 0;
        for (size_t i = 0; i < num_flows; i++) {
            fus.push_back(executor.run_until(flows[i], [n = 0]() mutable { return n++ == 5; }));
            c += (2 + i) * 5;
        }
        for (auto &f : fus) f.get();
        ASSERT_EQ(counter.load(), c);
    }
}

/* ---------------------------------------------------------------- modules */

/* test_modules.cpp: Module1: module after a chain, run, run_n(100), a second
 * module of the same body, run_n(n) for n = 0..99, 100 runs queued. */
TEST(tf_modules_module1_counts_for_every_run_count_including_zero) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor executor(W);
        weft::taskflow f0;
        int cnt{0};
        auto A = f0.emplace([&cnt] { ++cnt; });
        auto B = f0.emplace([&cnt] { ++cnt; });
        auto C = f0.emplace([&cnt] { ++cnt; });
        auto D = f0.emplace([&cnt] { ++cnt; });
        auto E = f0.emplace([&cnt] { ++cnt; });
        A.precede(B);
        B.precede(C);
        C.precede(D);
        D.precede(E);
        weft::taskflow f1;
        std::tie(A, B, C, D, E) =
            f1.emplace([&cnt] { ++cnt; }, [&cnt] { ++cnt; }, [&cnt] { ++cnt; }, [&cnt] { ++cnt; }, [&cnt] { ++cnt; });
        A.precede(B);
        B.precede(C);
        C.precede(D);
        D.precede(E);
        auto m1_1 = f1.composed_of(f0);
        E.precede(m1_1);
        executor.run(f1).get();
        ASSERT_EQ(cnt, 10);
        cnt = 0;
        executor.run_n(f1, 100).get();
        ASSERT_EQ(cnt, 10 * 100);
        auto m1_2 = f1.composed_of(f0);
        m1_1.precede(m1_2);
        for (int n = 0; n < 100; n++) {
            cnt = 0;
            executor.run_n(f1, n).get();
            ASSERT_EQ(cnt, 15 * n);
        }
        cnt = 0;
        for (int n = 0; n < 100; n++) (void)executor.run(f1);
        executor.wait_for_all();
        ASSERT_EQ(cnt, 1500);
    }
}

/* test_modules.cpp: Module3: four levels of modules, each composing the one
 * below twice (the same body twice in one graph, at every level). */
TEST(tf_modules_four_levels_each_composing_the_lower_twice) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor executor(W);
        int cnt{0};
        weft::taskflow f0, f1, f2, f3;
        auto A = f0.emplace([&cnt] { ++cnt; });
        auto B = f0.emplace([&cnt] { ++cnt; });
        A.precede(B);
        auto m1_1 = f1.composed_of(f0), m1_2 = f1.composed_of(f0);
        m1_1.precede(m1_2);
        auto m2_1 = f2.composed_of(f1), m2_2 = f2.composed_of(f1);
        m2_1.precede(m2_2);
        auto m3_1 = f3.composed_of(f2), m3_2 = f3.composed_of(f2);
        m3_1.precede(m3_2);
        for (int n = 0; n < 100; n++) {
            cnt = 0;
            executor.run_n(f3, n).get();
            ASSERT_EQ(cnt, 16 * n);
        }
        cnt = 0;
        for (int n = 0; n < 100; n++) (void)executor.run(f3);
        executor.wait_for_all();
        ASSERT_EQ(cnt, 16 * 100);
    }
}

/* Module3 with the two modules of each level NOT ordered: the two copies of
 * one body are ready together, so the second waits in the body's queue. */
TEST(tf_modules_unordered_modules_of_one_body_run_one_after_another) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor executor(W);
        std::atomic<int> cnt{0}, inside{0}, overlap{0};
        weft::taskflow f0, f1, f2, f3;
        f0.emplace([&] {
            if (inside.fetch_add(1) != 0) overlap++;
            std::this_thread::yield();
            ++cnt;
            inside.fetch_sub(1);
        });
        f1.composed_of(f0);
        f1.composed_of(f0);
        f2.composed_of(f1);
        f2.composed_of(f1);
        f3.composed_of(f2);
        f3.composed_of(f2);
        executor.run_n(f3, 20).get();
        ASSERT_EQ(cnt.load(), 8 * 20);
        ASSERT_EQ(overlap.load(), 0);
    }
}

/* test_modules.cpp: ParallelModules: 100 bodies of 800 tasks, each a module. */
TEST(tf_modules_one_hundred_parallel_modules_count_every_task) {
    for (unsigned W : {1u, 2u, 4u}) {
        std::vector<weft::taskflow> taskflows(100);
        weft::executor executor(W);
        weft::taskflow taskflow;
        std::atomic<int> counter{0};
        auto inc = [&] { counter.fetch_add(1, std::memory_order_relaxed); };
        for (auto &tf : taskflows) {
            for (size_t n = 0; n < 100; n++) {
                auto [A, B, C, D, E, F, G, H] = tf.emplace([&] { inc(); }, [&] { inc(); }, [&] { inc(); },
                                                           [&] { inc(); }, [&] { inc(); }, [&] { inc(); },
                                                           [&] { inc(); }, [&] { inc(); });
                (void)G, (void)H;
                A.precede(B);
                A.precede(C);
                D.precede(E);
                D.precede(F);
            }
            taskflow.composed_of(tf);
        }
        executor.run(taskflow).wait();
        ASSERT_EQ(counter.load(), 80000);
    }
}

/* test_modules.cpp: Module.AsyncLaunch: one module body launched from many
 * async tasks at once, each running a taskflow that composes it. */
TEST(tf_modules_a_body_composed_by_taskflows_run_from_async_tasks) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor executor(W);
        weft::taskflow body;
        std::atomic<int> counter{0};
        for (int i = 0; i < 10; i++) body.emplace([&] { counter++; });
        const int N = 50;
        std::vector<std::unique_ptr<weft::taskflow>> outers;
        for (int i = 0; i < N; i++) {
            outers.push_back(std::make_unique<weft::taskflow>());
            outers.back()->composed_of(body);
        }
        std::vector<weft::future<void>> fus;
        for (int i = 0; i < N; i++)
            fus.push_back(executor.async([&, i] { executor.corun(*outers[i]); }));
        for (auto &f : fus) f.get();
        ASSERT_EQ(counter.load(), 10 * N);
        /* and the same runs submitted from outside, concurrently */
        counter = 0;
        std::vector<weft::future<void>> runs;
        for (int i = 0; i < N; i++) runs.push_back(executor.run_n(*outers[i], 2));
        for (auto &f : runs) f.get();
        ASSERT_EQ(counter.load(), 10 * N * 2);
    }
}

/* ---------------------------------------------------------------- async */

/* test_asyncs.cpp: Async: 1000 async tasks with futures and silent ones, from
 * outside and from inside tasks (NestedAsync). */
TEST(tf_asyncs_async_values_silent_asyncs_and_nested_asyncs_all_run) {
    for (unsigned W : kWorkers) {
        weft::executor executor(W);
        std::atomic<int> counter{0};
        int N = 1000;
        std::vector<weft::future<int>> fus;
        for (int i = 0; i < N; ++i) {
            fus.push_back(executor.async([&, i] {
                counter.fetch_add(1, std::memory_order_relaxed);
                return i;
            }));
        }
        for (int i = 0; i < N; ++i) executor.silent_async([&] { counter.fetch_add(1, std::memory_order_relaxed); });
        executor.wait_for_all();
        ASSERT_EQ(counter.load(), 2 * N);
        for (int i = 0; i < N; ++i) ASSERT_EQ(fus[i].get(), i);
        /* NestedAsync: asyncs launched from asyncs, four levels */
        counter = 0;
        for (int i = 0; i < 100; ++i) {
            executor.silent_async([&] {
                counter++;
                executor.silent_async([&] {
                    counter++;
                    executor.silent_async([&] {
                        counter++;
                        executor.silent_async([&] { counter++; });
                    });
                });
            });
        }
        executor.wait_for_all();
        ASSERT_EQ(counter.load(), 400);
        /* an async's future waited for inside another async */
        auto outer = executor.async([&] {
            auto inner = executor.async([] { return 7; });
            return inner.get() * 6;
        });
        ASSERT_EQ(outer.get(), 42);
    }
}

/* test_asyncs.cpp: MixedAsync.NExecutors: asyncs on N executors, each
 * launching an async on another (no waits across executors: a wait from a
 * worker of another executor blocks that thread, core.h); this_worker_id is
 * a worker's on its own executor only. */
TEST(tf_asyncs_mixed_asyncs_across_several_executors_all_run) {
    for (size_t N : {1u, 2u, 4u, 8u}) {
        const size_t T = 1000;
        std::vector<weft::executor> executors;
        for (size_t e = 0; e < N; e++) executors.emplace_back(2);
        std::atomic<size_t> counter(0);
        std::atomic<int> bad{0};
        auto check_wid = [&](size_t e) {
            for (size_t i = 0; i < N; i++)
                if ((executors[i].this_worker_id() != -1) != (i == e)) bad++;
        };
        for (size_t j = 0; j < T; j++) {
            for (size_t i = 0; i < N; i++) {
                (void)executors[i].async([&, i, j] {
                    check_wid(i);
                    counter.fetch_add(1, std::memory_order_relaxed);
                    auto n = j % N;
                    (void)executors[n].async([&, n](weft::runtime &) {
                        check_wid(n);
                        counter.fetch_add(1, std::memory_order_relaxed);
                    });
                });
                executors[i].silent_async([&, i, j] {
                    check_wid(i);
                    counter.fetch_add(1, std::memory_order_relaxed);
                    auto n = (j + 1) % N;
                    executors[n].silent_async([&, n](weft::runtime &) {
                        check_wid(n);
                        counter.fetch_add(1, std::memory_order_relaxed);
                    });
                });
            }
        }
        while (counter.load() != 4 * T * N) std::this_thread::yield();
        for (auto &e : executors) e.wait_for_all();
        ASSERT_EQ(bad.load(), 0);
    }
}

/* test_asyncs.cpp: MixedAsync.Nthreads: async and silent_async launched from
 * the tasks of a 40000-task taskflow; wait_for_all waits for all of them. */
TEST(tf_asyncs_asyncs_launched_from_graph_tasks_are_waited_by_wait_for_all) {
    for (unsigned W : {1u, 2u, 4u, 8u}) {
        weft::taskflow taskflow;
        weft::executor executor(W);
        std::atomic<int> counter(0);
        const int N = 10000;
        for (int i = 0; i < N; i++) {
            auto inc = [&] { counter.fetch_add(1, std::memory_order_relaxed); };
            auto [A, B, C, D] = taskflow.emplace([&, inc] { (void)executor.async(inc); },
                                                 [&, inc] { (void)executor.async(inc); },
                                                 [&, inc] { executor.silent_async(inc); },
                                                 [&, inc] { executor.silent_async(inc); });
            A.precede(B, C);
            D.succeed(B, C);
        }
        (void)executor.run(taskflow);
        executor.wait_for_all();
        ASSERT_EQ(counter.load(), 4 * N);
    }
}

/* test_dependent_asyncs.cpp: LinearChain, SimpleGraph, BinaryTree,
 * CompleteLinearChain, IterativeFibonacci, FromRuntime. */
TEST(tf_dependent_asyncs_linear_chain_runs_in_order) {
    for (unsigned W : kWorkers) {
        weft::executor executor(W);
        const int N = 1000;
        std::vector<int> results(N);
        std::vector<weft::future<void>> fus;
        std::atomic<int> bad{0};
        for (int i = 0; i < N; i++) {
            if (i == 0) fus.push_back(executor.dependent_async([&, i] { results[i] = i + 1; }));
            else
                fus.push_back(executor.dependent_async(
                    [&, i] {
                        if (results[i - 1] != i) bad++;
                        results[i] = i + 1;
                    },
                    fus[i - 1]));
        }
        fus.back().get();
        executor.wait_for_all();
        ASSERT_EQ(bad.load(), 0);
        for (int i = 0; i < N; i++) ASSERT_EQ(results[i], i + 1);
    }
}

TEST(tf_dependent_asyncs_iterative_fibonacci_with_two_dependencies_each) {
    for (unsigned W : kWorkers) {
        weft::executor executor(W);
        const int N = 50;
        std::vector<long long> fib(N, 0);
        std::vector<weft::future<void>> fus;
        for (int i = 0; i < N; i++) {
            if (i < 2) fus.push_back(executor.dependent_async([&, i] { fib[i] = i; }));
            else fus.push_back(executor.dependent_async([&, i] { fib[i] = fib[i - 1] + fib[i - 2]; }, fus[i - 1], fus[i - 2]));
        }
        fus.back().get();
        ASSERT_EQ(fib[N - 1], 7778742049LL);
    }
}

/* DependentAsync.BinaryTree (through the C call, which takes an array): each
 * node depends on its parent; children verify the parent ran. */
TEST(tf_dependent_asyncs_binary_tree_runs_every_node_after_its_parent) {
    for (unsigned W : kWorkers) {
        weft::executor executor(W);
        const size_t N = 1023;
        std::vector<std::atomic<int>> data(N);
        for (auto &d : data) d = 0;
        std::vector<weft::future<void>> fus;
        std::atomic<int> bad{0};
        for (size_t i = 0; i < N; i++) {
            auto body = [&, i] {
                if (i > 0 && data[(i - 1) / 2].load() != 1) bad++;
                data[i] = 1;
            };
            if (i == 0) fus.push_back(executor.dependent_async(body));
            else fus.push_back(executor.dependent_async(body, fus[(i - 1) / 2]));
        }
        executor.wait_for_all();
        for (auto &f : fus) f.get();
        ASSERT_EQ(bad.load(), 0);
        for (auto &d : data) ASSERT_EQ(d.load(), 1);
    }
}

/* DependentAsync.FromRuntime: dependent asyncs made inside a task, waited for
 * there, the dependencies already done or not. */
TEST(tf_dependent_asyncs_made_and_waited_inside_a_task) {
    for (unsigned W : kWorkers) {
        weft::executor executor(W);
        weft::taskflow taskflow;
        std::atomic<int> counter{0}, bad{0};
        taskflow.emplace([&] {
            int base = counter.load();
            auto a = executor.dependent_async([&] { counter++; });
            auto b = executor.dependent_async([&] { counter++; }, a);
            auto c = executor.dependent_async(
                [&, base] {
                    if (counter.load() != base + 2) bad++;
                    counter++;
                },
                a, b);
            c.get();
            /* on a finished future */
            auto d = executor.dependent_async([&] { counter++; }, c);
            d.get();
        });
        executor.run_n(taskflow, 10).get();
        ASSERT_EQ(counter.load(), 40);
        ASSERT_EQ(bad.load(), 0);
    }
}

/* ---------------------------------------------------------------- pipelines */

namespace {
/* test_pipelines.cpp: pipeline_1P (serial): N = 0..maxN tokens, L lines,
 * checks the token order and line, and num_tokens after each of 4 run_until
 * iterations (tokens counted across runs: the stage stops at once later). */
void pipeline_1P(size_t L, unsigned w) {
    weft::executor executor(w);
    const size_t maxN = 100;
    std::vector<size_t> source(maxN);
    std::iota(source.begin(), source.end(), 0);
    for (size_t N = 0; N <= maxN; N++) {
        weft::taskflow taskflow;
        size_t j = 0;
        std::atomic<int> bad{0};
        weft::pipeline pl(L, weft::pipe{weft::pipe_type::serial, [L, N, &j, &source, &bad](weft::pipeflow &pf) {
                              if (j == N) {
                                  pf.stop();
                                  return;
                              }
                              if (j != source[j]) bad++;
                              if (pf.token() % L != pf.line()) bad++;
                              if (pf.token() != j) bad++;
                              j++;
                          }});
        auto pipeline = taskflow.composed_of(pl).name("module_of_pipeline");
        auto test = taskflow.emplace([&] {
                                if (j != N) bad++;
                                if (pl.num_tokens() != N) bad++;
                            })
                        .name("test");
        pipeline.precede(test);
        executor.run_until(taskflow, [counter = 3]() mutable { return counter-- == 0; }).get();
        ASSERT_EQ(bad.load(), 0);
        ASSERT_EQ(pl.num_tokens(), N);
    }
}

/* pipeline_2P(SP) / 3P(SPS): a serial first stage and parallel / serial
 * stages; every token reaches every stage once; serial stages in order. */
void pipeline_3P(size_t L, unsigned w, weft::pipe_type t2, weft::pipe_type t3) {
    weft::executor executor(w);
    const size_t maxN = 100;
    for (size_t N = 0; N <= maxN; N += 7) {
        std::vector<std::atomic<int>> seen2(N + 1), seen3(N + 1);
        for (size_t i = 0; i <= N; i++) seen2[i] = 0, seen3[i] = 0;
        std::vector<size_t> buf(L);
        std::atomic<int> bad{0};
        size_t next3 = 0;
        weft::taskflow taskflow;
        weft::pipeline pl(
            L,
            weft::pipe{weft::pipe_type::serial,
                       [&, N](weft::pipeflow &pf) {
                           if (pf.token() == N) {
                               pf.stop();
                               return;
                           }
                           buf[pf.line()] = pf.token();
                       }},
            weft::pipe{t2,
                       [&](weft::pipeflow &pf) {
                           if (buf[pf.line()] != pf.token()) bad++;
                           seen2[pf.token()]++;
                       }},
            weft::pipe{t3, [&, t3](weft::pipeflow &pf) {
                           if (buf[pf.line()] != pf.token()) bad++;
                           if (t3 == weft::pipe_type::serial) {
                               if (pf.token() != next3) bad++;
                               next3++;
                           }
                           seen3[pf.token()]++;
                       }});
        taskflow.composed_of(pl);
        executor.run(taskflow).get();
        ASSERT_EQ(bad.load(), 0);
        ASSERT_EQ(pl.num_tokens(), N);
        for (size_t i = 0; i < N; i++) {
            ASSERT_EQ(seen2[i].load(), 1);
            ASSERT_EQ(seen3[i].load(), 1);
        }
        ASSERT_EQ(seen2[N].load(), 0);
        /* a second run continues the token numbers (Taskflow's rule too);
         * reset() restarts them */
        pl.reset();
        for (size_t i = 0; i <= N; i++) seen2[i] = 0, seen3[i] = 0;
        next3 = 0;
        executor.run(taskflow).get();
        ASSERT_EQ(pl.num_tokens(), N);
        for (size_t i = 0; i < N; i++) ASSERT_EQ(seen3[i].load(), 1);
    }
}
} // namespace

TEST(tf_pipelines_one_serial_pipe_with_1_to_4_lines_sees_tokens_in_order) {
    for (size_t L : {1u, 2u, 3u, 4u})
        for (unsigned w : {1u, 2u, 4u}) pipeline_1P(L, w);
}

TEST(tf_pipelines_three_pipes_of_each_kind_see_every_token_once) {
    using weft::pipe_type;
    for (size_t L : {1u, 2u, 3u, 8u})
        for (unsigned w : {1u, 2u, 4u}) {
            pipeline_3P(L, w, pipe_type::serial, pipe_type::serial);
            pipeline_3P(L, w, pipe_type::serial, pipe_type::parallel);
            pipeline_3P(L, w, pipe_type::parallel, pipe_type::serial);
            pipeline_3P(L, w, pipe_type::parallel, pipe_type::parallel);
        }
}

/* test_pipelines.cpp: Three.Parallel.Pipelines / Three.Concatenated.Pipelines:
 * three pipelines in one taskflow, side by side and chained. */
TEST(tf_pipelines_three_pipelines_side_by_side_and_chained) {
    for (size_t L : {1u, 4u, 8u})
        for (unsigned w : {1u, 2u, 4u}) {
            weft::executor executor(w);
            const size_t N1 = 101, N2 = 211, N3 = 17;
            std::atomic<size_t> c1{0}, c2{0}, c3{0};
            auto mk = [L](size_t N, std::atomic<size_t> &c) {
                return weft::pipeline(
                    L, weft::pipe{weft::pipe_type::serial, [N](weft::pipeflow &pf) {
                                      if (pf.token() == N) pf.stop();
                                  }},
                    weft::pipe{weft::pipe_type::parallel, [&c](weft::pipeflow &) { c++; }});
            };
            weft::pipeline p1 = mk(N1, c1), p2 = mk(N2, c2), p3 = mk(N3, c3);
            weft::taskflow side, chain;
            side.composed_of(p1);
            side.composed_of(p2);
            side.composed_of(p3);
            executor.run(side).get();
            ASSERT_EQ(c1.load(), N1);
            ASSERT_EQ(c2.load(), N2);
            ASSERT_EQ(c3.load(), N3);
            p1.reset(), p2.reset(), p3.reset();
            auto t1 = chain.composed_of(p1), t2 = chain.composed_of(p2), t3 = chain.composed_of(p3);
            std::atomic<int> bad{0};
            auto check2 = chain.emplace([&] {
                if (c1.load() != 2 * N1 || c2.load() != N2) bad++;
            });
            t1.precede(check2);
            check2.precede(t2);
            t2.precede(t3);
            executor.run(chain).get();
            ASSERT_EQ(bad.load(), 0);
            ASSERT_EQ(c3.load(), 2 * N3);
        }
}

/* test_pipelines.cpp: Looping.Pipelines: a pipeline in a condition loop; each
 * iteration resets it and runs N tokens. */
TEST(tf_pipelines_pipeline_in_a_condition_loop_runs_each_iteration) {
    for (size_t L : {1u, 3u, 8u})
        for (unsigned w : {1u, 2u, 4u}) {
            weft::executor executor(w);
            const size_t N = 123;
            size_t total = 0;
            std::atomic<int> bad{0};
            size_t expect = 0;
            weft::pipeline pl(L, weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                                  if (pf.token() == N) {
                                      pf.stop();
                                      return;
                                  }
                                  if (pf.token() != expect) bad++;
                                  expect++;
                              }},
                              weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &) { total++; }});
            weft::taskflow taskflow;
            int iter = 0;
            auto init = taskflow.emplace([&] { iter = 0; });
            auto p = taskflow.composed_of(pl);
            auto cond = taskflow.emplace([&] {
                pl.reset();
                expect = 0;
                return ++iter < 5 ? 0 : 1;
            });
            auto done = taskflow.emplace([] {});
            init.precede(p);
            p.precede(cond);
            cond.precede(p, done);
            executor.run(taskflow).get();
            ASSERT_EQ(total, 5 * N);
            ASSERT_EQ(bad.load(), 0);
        }
}

/* ---------------------------------------------------------------- algorithms */

/* test_for_each.cpp: for_each and for_each_index on sizes 0, 1, 2, ... with
 * every partitioner, the free form and as a task; negative steps. */
TEST(tf_for_each_covers_every_element_for_small_and_empty_ranges) {
    std::vector<weft::partitioner> parts = {weft::partitioner{}, weft::static_partitioner(), weft::static_partitioner(1),
                                            weft::dynamic_partitioner(), weft::dynamic_partitioner(3),
                                            weft::guided_partitioner(), weft::guided_partitioner(7)};
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor ex(W);
        for (size_t n = 0; n < 300; n = n < 10 ? n + 1 : n * 2 + 1) {
            for (auto &p : parts) {
                std::vector<int> v(n, 0);
                weft::for_each(ex, v.begin(), v.end(), [](int &x) { x++; }, p);
                for (int x : v) ASSERT_EQ(x, 1);
                weft::taskflow tf;
                auto t1 = tf.for_each(v.begin(), v.end(), [](int &x) { x++; }, p);
                auto t2 = tf.for_each_index(0, static_cast<int>(n), 1, [&](int i) { v[static_cast<size_t>(i)]++; }, p);
                t1.precede(t2);
                ex.run(tf).get();
                for (int x : v) ASSERT_EQ(x, 3);
            }
            /* index ranges: step 2, negative step, empty in the wrong direction */
            std::vector<std::atomic<int>> hit(n + 1);
            for (auto &h : hit) h = 0;
            weft::for_each_index(ex, 0, static_cast<int>(n), 2, [&](int i) { hit[static_cast<size_t>(i)]++; });
            for (size_t i = 0; i <= n; i++) ASSERT_EQ(hit[i].load(), (i < n && i % 2 == 0) ? 1 : 0);
            for (auto &h : hit) h = 0;
            weft::for_each_index(ex, static_cast<int>(n), 0, -1, [&](int i) { hit[static_cast<size_t>(i)]++; });
            for (size_t i = 0; i <= n; i++) ASSERT_EQ(hit[i].load(), i >= 1 ? 1 : 0);
            std::atomic<int> calls{0};
            weft::for_each_index(ex, 0, static_cast<int>(n), -1, [&](int) { calls++; });
            weft::for_each_index(ex, static_cast<int>(n), 0, 1, [&](int) { calls++; });
            ASSERT_EQ(calls.load(), 0);
        }
    }
}

/* test_reduce.cpp: reduce with sum and min, transform_reduce, sizes 0..;
 * a reduce task uses the result's value at run time as init. */
TEST(tf_reduce_sum_min_and_transform_reduce_on_small_and_empty_ranges) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor ex(W);
        for (size_t n = 0; n < 2000; n = n < 10 ? n + 1 : n * 3 + 1) {
            std::vector<int> v(n);
            for (size_t i = 0; i < n; i++) v[i] = static_cast<int>((i * 7919) % 1000) - 500;
            int expect_sum = std::accumulate(v.begin(), v.end(), 100);
            ASSERT_EQ(weft::reduce(ex, v.begin(), v.end(), 100), expect_sum);
            int smin = std::numeric_limits<int>::max();
            for (int x : v) smin = std::min(smin, x);
            ASSERT_EQ(weft::reduce(ex, v.begin(), v.end(), std::numeric_limits<int>::max(),
                                   [](int a, int b) { return std::min(a, b); }),
                      smin);
            long long sq = weft::transform_reduce(ex, v.begin(), v.end(), 0LL, std::plus<long long>(),
                                                  [](int x) { return (long long)x * x; });
            long long sq2 = 0;
            for (int x : v) sq2 += (long long)x * x;
            ASSERT_EQ(sq, sq2);
            weft::taskflow tf;
            int result = 0;
            auto set = tf.emplace([&] { result = 100; });
            auto red = tf.reduce(v.begin(), v.end(), result, std::plus<int>());
            set.precede(red);
            ex.run(tf).get();
            ASSERT_EQ(result, expect_sum);
            ex.run(tf).get();
            ASSERT_EQ(result, expect_sum);
        }
        /* a non-commutative op: operands in order */
        std::vector<std::string> s = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"};
        ASSERT_TRUE(weft::reduce(ex, s.begin(), s.end(), std::string(">")) == ">abcdefghijk");
    }
}

/* test_transform.cpp: unary and binary transform, in place, empty, one. */
TEST(tf_transform_unary_binary_and_in_place_on_small_and_empty_ranges) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor ex(W);
        for (size_t n = 0; n < 1000; n = n < 5 ? n + 1 : n * 3) {
            std::vector<int> a(n), b(n), c(n, -1);
            std::iota(a.begin(), a.end(), 0);
            std::iota(b.begin(), b.end(), 1000);
            weft::transform(ex, a.begin(), a.end(), c.begin(), [](int x) { return x * 2; });
            for (size_t i = 0; i < n; i++) ASSERT_EQ(c[i], (int)i * 2);
            weft::transform(ex, a.begin(), a.end(), b.begin(), c.begin(), [](int x, int y) { return x + y; });
            for (size_t i = 0; i < n; i++) ASSERT_EQ(c[i], (int)(2 * i + 1000));
            weft::transform(ex, c.begin(), c.end(), c.begin(), [](int x) { return -x; });
            for (size_t i = 0; i < n; i++) ASSERT_EQ(c[i], -(int)(2 * i + 1000));
            weft::taskflow tf;
            std::vector<std::string> out(n);
            tf.transform(a.begin(), a.end(), out.begin(), [](int x) { return std::to_string(x); });
            ex.run(tf).get();
            for (size_t i = 0; i < n; i++) ASSERT_TRUE(out[i] == std::to_string(i));
        }
    }
}

/* test_sort.cpp: sort ints, doubles with std::greater, strings, a struct by a
 * key, sizes 0, 1, 2, ... up to a few thousand; as a task too. */
TEST(tf_sort_with_custom_comparators_on_small_and_empty_ranges) {
    for (unsigned W : {1u, 2u, 3u, 4u}) {
        weft::executor ex(W);
        uint64_t seed = 42;
        for (size_t n = 0; n < 5000; n = n < 16 ? n + 1 : n * 2 + 3) {
            std::vector<int> v(n);
            for (auto &x : v) x = static_cast<int>(test_rand(&seed) % 1000) - 500;
            auto w = v;
            weft::sort(ex, v.begin(), v.end());
            std::sort(w.begin(), w.end());
            ASSERT_TRUE(v == w);
            std::vector<double> d(n);
            for (auto &x : d) x = (double)(test_rand(&seed) % 100000) / 7.0;
            weft::sort(ex, d.begin(), d.end(), std::greater<double>());
            ASSERT_TRUE(std::is_sorted(d.begin(), d.end(), std::greater<double>()));
            std::vector<std::string> s(n);
            for (auto &x : s) x = std::to_string(test_rand(&seed) % 997);
            auto s2 = s;
            weft::sort(ex, s.begin(), s.end(), [](const std::string &a, const std::string &b) { return a < b; });
            std::sort(s2.begin(), s2.end());
            ASSERT_TRUE(s == s2);
            struct P {
                int key;
                size_t idx;
            };
            std::vector<P> ps(n);
            for (size_t i = 0; i < n; i++) ps[i] = P{static_cast<int>(test_rand(&seed) % 10), i};
            weft::taskflow tf;
            tf.sort(ps.begin(), ps.end(), [](const P &a, const P &b) { return a.key < b.key; });
            ex.run(tf).get();
            for (size_t i = 1; i < n; i++) ASSERT_LE(ps[i - 1].key, ps[i].key);
            std::vector<char> seen(n, 0);
            for (auto &p : ps) seen[p.idx]++;
            for (char c : seen) ASSERT_EQ(c, 1);
        }
    }
}

/* test_scan.cpp: inclusive and exclusive scans, in place, with an init, sizes
 * 0, 1, 2, ...; as tasks too. */
TEST(tf_scan_inclusive_exclusive_and_in_place_on_small_and_empty_ranges) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor ex(W);
        for (size_t n = 0; n < 50000; n = n < 10 ? n + 1 : n * 5 + 3) {
            std::vector<long> in(n), out(n), golden(n);
            for (size_t i = 0; i < n; i++) in[i] = static_cast<long>(i % 13) - 6;
            std::partial_sum(in.begin(), in.end(), golden.begin());
            weft::inclusive_scan(ex, in.begin(), in.end(), out.begin());
            ASSERT_TRUE(out == golden);
            auto inplace = in;
            weft::inclusive_scan(ex, inplace.begin(), inplace.end(), inplace.begin(), std::plus<long>());
            ASSERT_TRUE(inplace == golden);
            /* exclusive with init 10, in place */
            inplace = in;
            weft::exclusive_scan(ex, inplace.begin(), inplace.end(), inplace.begin(), 10L);
            for (size_t i = 0; i < n; i++) ASSERT_EQ(inplace[i], 10 + (i ? golden[i - 1] : 0));
            /* as tasks: inclusive with init (Taskflow's overload), exclusive */
            weft::taskflow tf;
            std::vector<long> o1(n), o2(n);
            tf.inclusive_scan(in.begin(), in.end(), o1.begin(), std::plus<long>(), -5L);
            tf.exclusive_scan(in.begin(), in.end(), o2.begin(), -5L, std::plus<long>());
            ex.run(tf).get();
            for (size_t i = 0; i < n; i++) {
                ASSERT_EQ(o1[i], golden[i] - 5);
                ASSERT_EQ(o2[i], (i ? golden[i - 1] : 0) - 5);
            }
        }
        /* a non-commutative scan */
        std::vector<std::string> s = {"a", "b", "c", "d", "e"}, so(5);
        weft::inclusive_scan(ex, s.begin(), s.end(), so.begin());
        ASSERT_TRUE(so.back() == "abcde" && so[1] == "ab");
    }
}

/* test_find.cpp: find_if, find_if not found, min/max element with a custom
 * comparator (through the C calls: weft.hpp has no find), sizes 0, 1, .... */
TEST(tf_find_if_and_min_max_element_found_not_found_and_empty) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor ex(W);
        for (size_t n = 0; n < 5000; n = n < 10 ? n + 1 : n * 3) {
            std::vector<int> v(n);
            for (size_t i = 0; i < n; i++) v[i] = static_cast<int>((i * 31) % 1009);
            size_t idx = 12345;
            auto is5 = [](const void *e, void *) { return *static_cast<const int *>(e) == 5; };
            ASSERT_OK(weft_parallel_find_if(ex.native(), v.data(), n, sizeof(int), is5, nullptr, &idx, nullptr));
            size_t want = static_cast<size_t>(std::find(v.begin(), v.end(), 5) - v.begin());
            ASSERT_EQ(idx, want);
            auto never = [](const void *, void *) { return false; };
            idx = 12345;
            ASSERT_OK(weft_parallel_find_if(ex.native(), v.data(), n, sizeof(int), never, nullptr, &idx, nullptr));
            ASSERT_EQ(idx, n);
            /* the first of many matches */
            auto ge = [](const void *e, void *) { return *static_cast<const int *>(e) >= 500; };
            ASSERT_OK(weft_parallel_find_if(ex.native(), v.data(), n, sizeof(int), ge, nullptr, &idx, nullptr));
            ASSERT_EQ(idx, static_cast<size_t>(std::find_if(v.begin(), v.end(), [](int x) { return x >= 500; }) -
                                               v.begin()));
            /* min / max by a reversed comparator: the first of equal elements */
            auto rev = [](const void *a, void *b, void *) -> int {
                int x = *static_cast<const int *>(a), y = *static_cast<const int *>(b);
                return (y > x) - (y < x);
            };
            auto cmp = reinterpret_cast<weft_cmp_fn>(+rev);
            size_t mi = 777, ma = 777;
            ASSERT_OK(weft_parallel_min_element(ex.native(), v.data(), n, sizeof(int), cmp, nullptr, &mi, nullptr));
            ASSERT_OK(weft_parallel_max_element(ex.native(), v.data(), n, sizeof(int), cmp, nullptr, &ma, nullptr));
            auto gt = [](int a, int b) { return a > b; };
            ASSERT_EQ(mi, static_cast<size_t>(std::min_element(v.begin(), v.end(), gt) - v.begin()));
            ASSERT_EQ(ma, static_cast<size_t>(std::max_element(v.begin(), v.end(), gt) - v.begin()));
        }
    }
}

/* ---------------------------------------------------------------- semaphores */

/* test_semaphores.cpp: CriticalSection: 1000 tasks sharing a semaphore of 1;
 * four runs; never two inside; the semaphore whole afterwards. */
TEST(tf_semaphores_critical_section_of_1000_tasks_over_four_runs) {
    for (unsigned W : {1u, 2u, 3u, 7u, 11u, 16u}) {
        weft::taskflow taskflow;
        weft::executor executor(W);
        weft_semaphore *sema = weft_semaphore_create(1, nullptr);
        ASSERT_NOT_NULL(sema);
        ASSERT_EQ(weft_semaphore_value(sema), 1u);
        ASSERT_EQ(weft_semaphore_max(sema), 1u);
        int N = 1000;
        int counter = 0;
        std::atomic<int> inside{0}, overlap{0};
        for (int i = 0; i < N; ++i) {
            auto t = taskflow.emplace([&] {
                                 if (inside.fetch_add(1) != 0) overlap++;
                                 counter++;
                                 inside.fetch_sub(1);
                             })
                         .name(std::to_string(i));
            ASSERT_OK(weft_task_acquire(t.native(), sema));
            ASSERT_OK(weft_task_release(t.native(), sema));
        }
        executor.run(taskflow).wait();
        ASSERT_EQ(counter, N);
        (void)executor.run(taskflow);
        (void)executor.run(taskflow);
        (void)executor.run(taskflow);
        executor.wait_for_all();
        ASSERT_EQ(counter, 4 * N);
        ASSERT_EQ(overlap.load(), 0);
        ASSERT_EQ(weft_semaphore_value(sema), 1u);
        ASSERT_OK(weft_semaphore_destroy(sema));
    }
}

/* test_semaphores.cpp: Overlap: each task takes a semaphore of 1 and one of
 * 4; at most one inside. */
TEST(tf_semaphores_overlapping_semaphores_limit_to_the_smallest) {
    for (unsigned W : {1u, 2u, 4u, 8u}) {
        weft::executor executor(W);
        weft::taskflow taskflow;
        weft_semaphore *s1 = weft_semaphore_create(1, nullptr), *s4 = weft_semaphore_create(4, nullptr);
        int N = 1000, counter = 0;
        std::atomic<int> inside{0}, overlap{0};
        for (int i = 0; i < N; i++) {
            auto t = taskflow.emplace([&] {
                if (inside.fetch_add(1) != 0) overlap++;
                counter++;
                inside.fetch_sub(1);
            });
            ASSERT_OK(weft_task_acquire(t.native(), s1));
            ASSERT_OK(weft_task_acquire(t.native(), s4));
            ASSERT_OK(weft_task_release(t.native(), s1));
            ASSERT_OK(weft_task_release(t.native(), s4));
        }
        executor.run(taskflow).wait();
        ASSERT_EQ(counter, N);
        ASSERT_EQ(overlap.load(), 0);
        ASSERT_EQ(weft_semaphore_value(s1), 1u);
        ASSERT_EQ(weft_semaphore_value(s4), 4u);
        ASSERT_OK(weft_semaphore_destroy(s1));
        ASSERT_OK(weft_semaphore_destroy(s4));
    }
}

/* A semaphore of 3 over 300 tasks that dawdle: at most 3 inside, and with
 * several workers more than one at a time. */
TEST(tf_semaphores_a_semaphore_of_three_limits_concurrency_to_three) {
    for (unsigned W : {1u, 4u, 8u}) {
        weft::executor executor(W);
        weft::taskflow taskflow;
        weft_semaphore *s = weft_semaphore_create(3, nullptr);
        std::atomic<int> inside{0}, most{0}, ran{0};
        for (int i = 0; i < 300; i++) {
            auto t = taskflow.emplace([&] {
                int now = inside.fetch_add(1) + 1;
                int m = most.load();
                while (now > m && !most.compare_exchange_weak(m, now)) {
                }
                std::this_thread::sleep_for(std::chrono::microseconds(50));
                ran++;
                inside.fetch_sub(1);
            });
            ASSERT_OK(weft_task_acquire(t.native(), s));
            ASSERT_OK(weft_task_release(t.native(), s));
        }
        executor.run(taskflow).get();
        ASSERT_EQ(ran.load(), 300);
        ASSERT_LE(most.load(), 3);
        ASSERT_GE(most.load(), 1);
        ASSERT_EQ(weft_semaphore_value(s), 3u);
        ASSERT_OK(weft_semaphore_destroy(s));
    }
}

/* test_semaphores.cpp: ConflictGraph: A conflicts with B and C (semaphores
 * conflict_AB, conflict_AC); B and C may overlap. */
TEST(tf_semaphores_conflict_graph_keeps_conflicting_tasks_apart) {
    for (unsigned W : {1u, 2u, 3u, 4u}) {
        weft::executor executor(W);
        weft::taskflow taskflow;
        weft_semaphore *ab = weft_semaphore_create(1, nullptr), *ac = weft_semaphore_create(1, nullptr);
        std::atomic<int> in_a{0}, in_b{0}, in_c{0}, bad{0};
        int counter = 0;
        std::mutex m;
        auto A = taskflow.emplace([&] {
            in_a++;
            if (in_b.load() || in_c.load()) bad++;
            {
                std::lock_guard<std::mutex> g(m);
                counter++;
            }
            in_a--;
        });
        auto B = taskflow.emplace([&] {
            in_b++;
            if (in_a.load()) bad++;
            {
                std::lock_guard<std::mutex> g(m);
                counter++;
            }
            in_b--;
        });
        auto C = taskflow.emplace([&] {
            in_c++;
            if (in_a.load()) bad++;
            {
                std::lock_guard<std::mutex> g(m);
                counter++;
            }
            in_c--;
        });
        ASSERT_OK(weft_task_acquire(A.native(), ab));
        ASSERT_OK(weft_task_acquire(A.native(), ac));
        ASSERT_OK(weft_task_release(A.native(), ab));
        ASSERT_OK(weft_task_release(A.native(), ac));
        ASSERT_OK(weft_task_acquire(B.native(), ab));
        ASSERT_OK(weft_task_release(B.native(), ab));
        ASSERT_OK(weft_task_acquire(C.native(), ac));
        ASSERT_OK(weft_task_release(C.native(), ac));
        executor.run_n(taskflow, 100).get();
        ASSERT_EQ(counter, 300);
        ASSERT_EQ(bad.load(), 0);
        ASSERT_OK(weft_semaphore_destroy(ab));
        ASSERT_OK(weft_semaphore_destroy(ac));
    }
}

/* test_semaphores.cpp: Semaphore.Module: the same body with a critical
 * section composed several times into one taskflow; run many times. */
TEST(tf_semaphores_critical_section_inside_modules_run_many_times) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor executor(W);
        weft_semaphore *s = weft_semaphore_create(1, nullptr);
        weft::taskflow body, outer;
        int counter = 0;
        std::atomic<int> inside{0}, overlap{0};
        for (int i = 0; i < 100; i++) {
            auto t = body.emplace([&] {
                if (inside.fetch_add(1) != 0) overlap++;
                counter++;
                inside.fetch_sub(1);
            });
            ASSERT_OK(weft_task_acquire(t.native(), s));
            ASSERT_OK(weft_task_release(t.native(), s));
        }
        weft::taskflow body2;
        for (int i = 0; i < 100; i++) {
            auto t = body2.emplace([&] {
                if (inside.fetch_add(1) != 0) overlap++;
                counter++;
                inside.fetch_sub(1);
            });
            ASSERT_OK(weft_task_acquire(t.native(), s));
            ASSERT_OK(weft_task_release(t.native(), s));
        }
        outer.composed_of(body);
        outer.composed_of(body2);
        outer.composed_of(body);
        executor.run_n(outer, 10).get();
        ASSERT_EQ(counter, 3000);
        ASSERT_EQ(overlap.load(), 0);
        ASSERT_EQ(weft_semaphore_value(s), 1u);
        ASSERT_OK(weft_semaphore_destroy(s));
    }
}

/* test_exceptions.cpp: Exception.Semaphore: A acquires, B throws, D releases.
 * Taskflow leaves the unit taken (value 0, reset needed); weft gives it back
 * for a section within one taskflow (graph.h, weft_task_release). */
TEST(tf_semaphores_a_failed_run_between_acquire_and_release_leaves_it_whole) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor executor(W);
        weft::taskflow taskflow;
        weft_semaphore *s = weft_semaphore_create(1, nullptr);
        auto A = taskflow.emplace([] {});
        auto B = taskflow.emplace([] { throw std::runtime_error("exception"); });
        auto C = taskflow.emplace([] {});
        auto D = taskflow.emplace([] {});
        A.precede(B);
        B.precede(C);
        C.precede(D);
        ASSERT_OK(weft_task_acquire(A.native(), s));
        ASSERT_OK(weft_task_release(D.native(), s));
        ASSERT_EQ(weft_semaphore_value(s), 1u);
        ASSERT_THROWS(executor.run(taskflow).get(), std::runtime_error, e,
                      ASSERT_STREQ(e.what(), "exception"));
        ASSERT_EQ(weft_semaphore_value(s), 1u);
        ASSERT_THROWS(executor.run(taskflow).get(), std::runtime_error, e,
                      ASSERT_STREQ(e.what(), "exception"));
        ASSERT_EQ(weft_semaphore_value(s), 1u);
        ASSERT_OK(weft_semaphore_destroy(s));
    }
}

/* ---------------------------------------------------------------- cancellation */

/* test_cancellation.cpp: BasicCancellation (1000 tasks of 1 ms rather than
 * 10000 of 100 ms).  weft's get() on a cancelled run throws weft::error
 * (WEFT_ECANCELED) where Taskflow's returns: weft.hpp's future says so. */
TEST(tf_cancellation_cancel_a_running_taskflow_and_a_run_n) {
    weft::taskflow taskflow;
    weft::executor executor(4);
    std::atomic<int> counter{0};
    for (int i = 0; i < 1000; i++)
        taskflow.emplace([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            counter.fetch_add(1, std::memory_order_relaxed);
        });
    auto fu = executor.run(taskflow);
    ASSERT_TRUE(fu.cancel());
    ASSERT_THROWS(fu.get(), weft::error, e, ASSERT_EQ(e.status(), WEFT_ECANCELED));
    ASSERT_LT(counter.load(), 1000);
    counter = 0;
    fu = executor.run_n(taskflow, 100);
    ASSERT_TRUE(fu.cancel());
    ASSERT_THROWS(fu.get(), weft::error, e, ASSERT_EQ(e.status(), WEFT_ECANCELED));
    ASSERT_LT(counter.load(), 1000);
    /* the taskflow still runs afterwards */
    counter = 0;
    executor.run(taskflow).get();
    ASSERT_EQ(counter.load(), 1000);
    /* cancel on a finished run: false */
    ASSERT_FALSE(fu.cancel());
    weft::future<void> empty;
    ASSERT_FALSE(empty.valid());
    ASSERT_FALSE(empty.cancel());
}

/* test_cancellation.cpp: MultipleCancellations, CancelSubflow (joined and
 * implicit), CancelInfiniteLoop, CancelFromAnother, CancelFromAsync. */
TEST(tf_cancellation_subflows_infinite_loops_and_cancels_from_tasks) {
    weft::executor executor(4);
    std::atomic<int> counter{0};
    {
        weft::taskflow taskflow;
        for (int i = 0; i < 100; i++)
            taskflow.emplace([&, i](weft::subflow &sf) {
                for (int j = 0; j < 100; j++)
                    sf.emplace([&] {
                        std::this_thread::sleep_for(std::chrono::microseconds(200));
                        counter.fetch_add(1, std::memory_order_relaxed);
                    });
                if (i % 2) sf.join();
            });
        auto fu1 = executor.run(taskflow);
        auto fu2 = executor.run(taskflow);
        auto fu3 = executor.run(taskflow);
        ASSERT_TRUE(fu1.cancel());
        ASSERT_TRUE(fu2.cancel());
        ASSERT_TRUE(fu3.cancel());
        executor.wait_for_all();
        ASSERT_LT(counter.load(), 30000);
        /* Taskflow: wait_for(0) == ready.  weft's wait_for on a finished
         * run behaves as wait(): a cancelled run throws (weft.hpp). */
        ASSERT_TRUE(fu1.ready() && fu2.ready() && fu3.ready());
        ASSERT_THROWS(fu1.wait_for(std::chrono::milliseconds(0)), weft::error, e,
                      ASSERT_EQ(e.status(), WEFT_ECANCELED));
    }
    {
        weft::taskflow taskflow;
        for (int i = 0; i < 100; i++) {
            auto a = taskflow.emplace([] {});
            auto b = taskflow.emplace([] { return 0; });
            a.precede(b);
            b.precede(b);
        }
        auto fu = executor.run(taskflow);
        ASSERT_TRUE(fu.cancel());
        ASSERT_THROWS(fu.get(), weft::error, e, ASSERT_EQ(e.status(), WEFT_ECANCELED));
    }
    {
        weft::taskflow taskflow, another;
        auto a = taskflow.emplace([] {});
        auto b = taskflow.emplace([] { return 0; });
        a.precede(b);
        b.precede(b);
        auto fu = executor.run(taskflow);
        ASSERT_FALSE(fu.wait_for(std::chrono::milliseconds(50)));
        std::atomic<int> ok{0};
        another.emplace([&] { ok += fu.cancel() ? 1 : 0; });
        executor.run(another).wait();
        ASSERT_EQ(ok.load(), 1);
        ASSERT_THROWS(fu.wait(), weft::error, e, ASSERT_EQ(e.status(), WEFT_ECANCELED));
    }
    {
        weft::taskflow taskflow;
        auto a = taskflow.emplace([] {});
        auto b = taskflow.emplace([] { return 0; });
        a.precede(b);
        b.precede(b);
        std::atomic<int> ok{0};
        executor.silent_async([&] {
            auto fu = executor.run_n(taskflow, 100);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            ok += fu.cancel() ? 1 : 0;
        });
        executor.wait_for_all();
        ASSERT_EQ(ok.load(), 1);
    }
}

/* test_cancellation.cpp: CancelComposition: 100 runs of a taskflow of nested
 * modules (a body shared by two levels), all cancelled at once, 20 rounds. */
TEST(tf_cancellation_cancel_many_queued_runs_of_nested_modules) {
    weft::executor executor(4);
    weft::taskflow f1("F1"), f2("F2"), f3("F3"), f4("F4");
    f1.emplace([] {}).name("f1A");
    f1.emplace([] {}).name("f1B");
    auto f2A = f2.emplace([] {}).name("f2A");
    auto f2B = f2.emplace([] {}).name("f2B");
    auto f2C = f2.emplace([] {}).name("f2C");
    f2A.precede(f2C);
    f2B.precede(f2C);
    f2.composed_of(f1).name("module_of_f1");
    f3.composed_of(f2).name("module_of_f2");
    f3.emplace([] {}).name("f3A");
    auto m3 = f4.composed_of(f3).name("module_of_f3");
    auto m2 = f4.composed_of(f2).name("module_of_f2");
    m3.precede(m2);
    for (int r = 0; r < 20; r++) {
        std::vector<weft::future<void>> futures;
        for (int i = 0; i < 100; i++) futures.push_back(executor.run(f4));
        size_t success = 0;
        for (auto &fu : futures) success += fu.cancel() ? 1 : 0;
        executor.wait_for_all();
        ASSERT_LE(success, 100u);
        for (auto &fu : futures) ASSERT_TRUE(fu.ready());
    }
    /* and it runs to completion afterwards */
    executor.run(f4).get();
}

/* ---------------------------------------------------------------- exceptions */

/* test_exceptions.cpp: StaticTask, ConditionTask, MultiConditionTask,
 * SubflowTask, JoinedSubflow, ModuleTask, Async, ThreadSafety, ExecutorCorun. */
TEST(tf_exceptions_from_every_kind_of_task_reach_the_future_each_run) {
    for (unsigned W : {1u, 2u, 3u, 4u}) {
        weft::executor executor(W);
        {
            weft::taskflow taskflow;
            std::atomic<size_t> counter(0);
            std::vector<weft::task> t;
            for (int i = 0; i < 6; i++) t.push_back(taskflow.emplace([&, i] {
                if (i == 2 && counter.load() >= 1000) throw std::runtime_error("x");
                counter.fetch_add(1, std::memory_order_relaxed);
            }));
            for (int i = 0; i < 5; i++) t[i].precede(t[i + 1]);
            executor.run(taskflow).get();
            ASSERT_EQ(counter.load(), 6u);
            counter = 1000;
            ASSERT_THROWS(executor.run(taskflow).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "x"));
            ASSERT_EQ(counter.load(), 1002u);
            counter = 1000;
            ASSERT_THROWS(executor.run(taskflow).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "x"));
            ASSERT_EQ(counter.load(), 1002u);
        }
        {
            weft::taskflow taskflow;
            auto A = taskflow.emplace([] {});
            auto B = taskflow.emplace([]() -> int { throw std::runtime_error("cond"); });
            auto C = taskflow.emplace([]() -> weft::branches { throw std::runtime_error("multi"); });
            std::atomic<int> ran{0};
            auto D = taskflow.emplace([&] { ran++; });
            A.precede(B);
            B.precede(D);
            ASSERT_THROWS(executor.run(taskflow).get(), std::runtime_error, e,
                          ASSERT_TRUE(std::string(e.what()) == "cond" || std::string(e.what()) == "multi"));
            (void)C;
            ASSERT_EQ(ran.load(), 0);
        }
        {
            weft::taskflow taskflow;
            taskflow.emplace([](weft::subflow &sf) {
                sf.emplace([] {});
                throw std::runtime_error("sub");
            });
            ASSERT_THROWS(executor.run(taskflow).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "sub"));
            weft::taskflow t2;
            std::atomic<int> after{0};
            auto s = t2.emplace([](weft::subflow &sf) {
                for (int j = 0; j < 100; j++) sf.emplace([] { throw std::runtime_error("y"); });
                sf.join();
            });
            auto n = t2.emplace([&] { after++; });
            s.precede(n);
            ASSERT_THROWS(executor.run(t2).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "y"));
            ASSERT_EQ(after.load(), 0);
            /* nested: the throw three subflows deep */
            weft::taskflow t3;
            t3.emplace([](weft::subflow &a) {
                a.emplace([](weft::subflow &b) {
                    b.emplace([](weft::subflow &c) { c.emplace([] { throw std::runtime_error("deep"); }); });
                });
            });
            ASSERT_THROWS(executor.run_n(t3, 3).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "deep"));
        }
        {
            weft::taskflow body, outer;
            body.emplace([] { throw std::runtime_error("module"); });
            auto m = outer.composed_of(body);
            std::atomic<int> after{0};
            auto n = outer.emplace([&] { after++; });
            m.precede(n);
            ASSERT_THROWS(executor.run(outer).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "module"));
            ASSERT_EQ(after.load(), 0);
            ASSERT_THROWS(executor.run(body).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "module"));
        }
        {
            auto f = executor.async([]() -> int { throw std::runtime_error("async"); });
            ASSERT_THROWS(f.get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "async"));
            auto g = executor.async([] {});
            auto h = executor.dependent_async([] { throw std::runtime_error("dep"); }, g);
            ASSERT_THROWS(h.get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "dep"));
        }
        {
            weft::taskflow taskflow;
            for (int i = 0; i < 1000; i++) taskflow.emplace([] { throw std::runtime_error("x"); });
            ASSERT_THROWS(executor.run(taskflow).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "x"));
        }
        {
            weft::taskflow t1, t2;
            t1.emplace([] { throw std::runtime_error("x"); });
            std::atomic<int> caught{0};
            t2.emplace([&] {
                try {
                    executor.corun(t1);
                } catch (const std::runtime_error &e) {
                    if (std::string(e.what()) == "x") caught++;
                }
            });
            executor.run(t2).get();
            ASSERT_EQ(caught.load(), 1);
            /* uncaught: the corun's exception fails the outer run */
            weft::taskflow t3;
            t3.emplace([&] { executor.corun(t1); });
            ASSERT_THROWS(executor.run(t3).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "x"));
        }
        {
            /* Exception.Algorithm: a throw in a for_each body, a task and free */
            std::vector<int> v(1000);
            weft::taskflow taskflow;
            taskflow.for_each(v.begin(), v.end(), [](int &) { throw std::runtime_error("algo"); });
            ASSERT_THROWS(executor.run(taskflow).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "algo"));
            ASSERT_THROWS(weft::for_each(executor, v.begin(), v.end(), [](int &) { throw std::runtime_error("free"); }),
                          std::runtime_error, e, ASSERT_STREQ(e.what(), "free"));
        }
    }
}

/* A pipeline stage that throws fails its run with the exception; the pipeline
 * runs again afterwards. */
TEST(tf_exceptions_from_a_pipeline_stage_reach_the_run_and_it_reruns) {
    weft::executor executor(4);
    std::atomic<int> seen{0};
    bool fail = true;
    weft::pipeline pl(3, weft::pipe{weft::pipe_type::serial, [](weft::pipeflow &pf) {
                          if (pf.token() % 50 == 49) pf.stop();
                      }},
                      weft::pipe{weft::pipe_type::parallel, [&](weft::pipeflow &pf) {
                          if (fail && pf.token() == 10) throw std::runtime_error("stage");
                          seen++;
                      }});
    weft::taskflow tf;
    tf.composed_of(pl);
    ASSERT_THROWS(executor.run(tf).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "stage"));
    fail = false;
    pl.reset();
    seen = 0;
    executor.run(tf).get();
    ASSERT_EQ(seen.load(), 49);
}

/* ---------------------------------------------------------------- runtime, task group */

/* test_task_group.cpp / test_runtimes.cpp: Fibonacci with a task group; the
 * runtime's worker id and executor. */
namespace {
size_t fib_tg(size_t n) {
    if (n < 2) return n;
    size_t a = 0, b = 0;
    weft::task_group tg;
    tg.silent_async([n, &a] { a = fib_tg(n - 1); });
    b = fib_tg(n - 2);
    tg.corun();
    return a + b;
}
} // namespace

TEST(tf_task_group_fibonacci_from_a_task_and_from_run_root) {
    for (unsigned W : {1u, 2u, 4u, 8u}) {
        weft::executor executor(W);
        weft::taskflow taskflow;
        size_t res = 0;
        std::atomic<int> bad{0};
        taskflow.emplace([&](weft::runtime &rt) {
            if (rt.native_executor() != executor.native()) bad++;
            if (rt.worker_id() < 0 || rt.worker_id() >= (int)W) bad++;
            res = fib_tg(20);
        });
        executor.run(taskflow).get();
        ASSERT_EQ(res, 6765u);
        ASSERT_EQ(bad.load(), 0);
        ASSERT_EQ(executor.run_root([] { return fib_tg(18); }), 2584u);
        /* a task group outside a task is an error, not a crash */
        ASSERT_THROWS(weft::task_group tg, weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    }
}

/* test_exceptions.cpp: Exception.TaskGroup: a child's throw comes back from
 * corun, after every child finished or was skipped (children that had not
 * started when it threw are skipped, Taskflow's rule since its TaskGroup:
 * cpp_hunt42). */
TEST(tf_task_group_rethrows_a_child_exception_after_all_children) {
    weft::executor executor(4);
    std::atomic<int> done{0};
    int caught = executor.run_root([&] {
        weft::task_group tg;
        for (int i = 0; i < 100; i++)
            tg.silent_async([&, i] {
                if (i == 50) throw std::runtime_error("tg");
                done++;
            });
        try {
            tg.corun();
        } catch (const std::runtime_error &e) {
            return std::string(e.what()) == "tg" ? 1 : 2;
        }
        return 0;
    });
    ASSERT_EQ(caught, 1);
    ASSERT_LE(done.load(), 99);
}

/* ---------------------------------------------------------------- traversals */

namespace {
struct TNode {
    size_t level = 0;
    std::atomic<int> visited{0};
    std::atomic<size_t> dependents{0};
    std::atomic<size_t> done_preds{0};
    std::vector<TNode *> successors;
};
} // namespace

/* test_traversals.cpp: StaticTraversal / ParallelTraversal: a random DAG of
 * 1000 nodes (out-degree up to 4); each node runs once, after all its
 * predecessors; several taskflows of it run at once. */
TEST(tf_traversals_every_node_of_a_dag_runs_once_after_its_predecessors) {
    for (unsigned W : {1u, 2u, 4u, 8u}) {
        const size_t num_nodes = 1000, max_degree = 4;
        std::vector<std::unique_ptr<std::vector<TNode>>> graphs;
        std::vector<std::unique_ptr<weft::taskflow>> flows;
        std::atomic<int> bad{0};
        for (int g = 0; g < 4; g++) {
            graphs.push_back(std::make_unique<std::vector<TNode>>(num_nodes));
            auto &nodes = *graphs.back();
            flows.push_back(std::make_unique<weft::taskflow>());
            auto &tf = *flows.back();
            std::vector<weft::task> tasks;
            for (size_t i = 0; i < num_nodes; i++) {
                TNode *n = &nodes[i];
                tasks.push_back(tf.emplace([n, &bad] {
                    if (n->done_preds.load() != n->dependents.load()) bad++;
                    if (n->visited.fetch_add(1) != 0) bad++;
                    for (TNode *s : n->successors) s->done_preds++;
                }));
            }
            for (size_t i = 0; i < num_nodes; i++) {
                size_t degree = 0;
                for (size_t j = i + 1; j < num_nodes && degree < max_degree; j++) {
                    if ((j * 7 + i) % 3 == 1) {
                        nodes[i].successors.push_back(&nodes[j]);
                        nodes[j].dependents++;
                        tasks[i].precede(tasks[j]);
                        degree++;
                    }
                }
            }
        }
        weft::executor executor(W);
        std::vector<weft::future<void>> fus;
        for (auto &f : flows) fus.push_back(executor.run(*f));
        for (auto &f : fus) f.get();
        ASSERT_EQ(bad.load(), 0);
        for (auto &g : graphs)
            for (auto &n : *g) ASSERT_EQ(n.visited.load(), 1);
    }
}

/* ---------------------------------------------------------------- movable */

namespace {
struct CountOnDestruction {
    explicit CountOnDestruction(std::atomic<int> &c) : counter{&c} {}
    CountOnDestruction(const CountOnDestruction &rhs) : counter{rhs.counter} { rhs.counter = nullptr; }
    CountOnDestruction(CountOnDestruction &&rhs) noexcept : counter{rhs.counter} { rhs.counter = nullptr; }
    ~CountOnDestruction() {
        if (counter) counter->fetch_add(1, std::memory_order_relaxed);
    }
    mutable std::atomic<int> *counter{nullptr};
};
} // namespace

/* test_movable.cpp: moved_run / moved_taskflows: a moved taskflow runs, its
 * captures are destroyed once, on clear or destruction; the moved-from one
 * throws weft::error (weft's rule, guide-cpp.md) and can be assigned anew.
 * (run(std::move(tf)) is not in weft: guide-cpp.md lists it as missing.) */
TEST(tf_movable_a_moved_taskflow_runs_and_destroys_captures_once) {
    const int N = 10000;
    std::atomic<int> counter{0};
    weft::executor executor(4);
    weft::taskflow taskflow;
    auto make = [&](weft::taskflow &tf) {
        for (int i = 0; i < N; i++)
            tf.emplace([&, c = CountOnDestruction{counter}] { counter.fetch_add(1, std::memory_order_relaxed); });
    };
    make(taskflow);
    ASSERT_EQ(counter.load(), 0);
    executor.run_until(taskflow, [repeat = 2]() mutable { return repeat-- == 0; }).wait();
    ASSERT_EQ(counter.load(), 2 * N);
    weft::taskflow moved(std::move(taskflow));
    ASSERT_EQ(moved.num_tasks(), (size_t)N);
    ASSERT_THROWS((void)taskflow.num_tasks(), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    executor.run(moved).wait();
    ASSERT_EQ(counter.load(), 3 * N);
    moved.clear(); /* destroys the N captures */
    ASSERT_EQ(counter.load(), 4 * N);
    ASSERT_EQ(moved.num_tasks(), 0u);
    executor.run(moved).wait();
    ASSERT_EQ(counter.load(), 4 * N);
    taskflow = weft::taskflow();
    make(taskflow);
    {
        weft::taskflow other = std::move(taskflow);
        auto fu = executor.run(other);
        (void)fu; /* the destructor waits for the run */
    }
    ASSERT_EQ(counter.load(), 6 * N);
    /* a vector of taskflows that grows (moves them) with runs in between */
    std::vector<weft::taskflow> flows;
    std::atomic<int> runs{0};
    for (int i = 0; i < 20; i++) {
        flows.emplace_back();
        flows.back().emplace([&] { runs++; });
        for (auto &f : flows) executor.run(f).get();
    }
    ASSERT_EQ(runs.load(), 20 * 21 / 2);
}

/* ---------------------------------------------------------------- workers */

/* test_workers.cpp: Worker.Identifier: every worker id 0..W-1 appears and
 * num_workers is W; the default executor has at least one. */
TEST(tf_workers_ids_cover_zero_to_w_minus_one) {
    for (unsigned W : {1u, 2u, 3u, 4u, 8u}) {
        weft::executor executor(W);
        ASSERT_EQ(executor.num_workers(), W);
        std::vector<std::atomic<int>> seen(W);
        for (auto &s : seen) s = 0;
        std::atomic<int> bad{0}, arrived{0};
        weft::taskflow tf;
        /* W tasks that wait for each other: each on its own worker */
        for (unsigned i = 0; i < W; i++)
            tf.emplace([&] {
                int id = executor.this_worker_id();
                if (id < 0 || id >= (int)W) {
                    bad++;
                    return;
                }
                seen[static_cast<size_t>(id)]++;
                arrived++;
                auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
                while (arrived.load() < (int)W && std::chrono::steady_clock::now() < until) std::this_thread::yield();
            });
        executor.run(tf).get();
        ASSERT_EQ(bad.load(), 0);
        for (auto &s : seen) ASSERT_EQ(s.load(), 1);
    }
    ASSERT_GE(weft::executor::default_executor().num_workers(), 1u);
}

/* ---------------------------------------------------------------- priorities */

namespace {
void prio(const weft::task &t, weft_priority p) { ASSERT_OK(weft_task_set_priority(t.native(), p)); }
} // namespace

/* test_priorities.cpp: SimplePriority.Sequential: one worker; B HIGH, D
 * NORMAL, C LOW after A: B, D, C in that order, 100 iterations. */
TEST(tf_priorities_one_worker_runs_high_normal_low_in_order_every_iteration) {
    weft::executor executor(1);
    weft::taskflow taskflow;
    int counter = 0;
    std::atomic<int> bad{0};
    auto [A, B, C, D, E] = taskflow.emplace([&] { counter = 0; },
                                            [&] {
                                                if (counter != 0) bad++;
                                                counter++;
                                            },
                                            [&] {
                                                if (counter != 2) bad++;
                                                counter++;
                                            },
                                            [&] {
                                                if (counter != 1) bad++;
                                                counter++;
                                            },
                                            [] {});
    A.precede(B, C, D);
    E.succeed(B, C, D);
    ASSERT_EQ(weft_task_get_priority(B.native()), WEFT_PRIORITY_NORMAL);
    prio(B, WEFT_PRIORITY_HIGH);
    prio(C, WEFT_PRIORITY_LOW);
    prio(D, WEFT_PRIORITY_NORMAL);
    ASSERT_EQ(weft_task_get_priority(B.native()), WEFT_PRIORITY_HIGH);
    ASSERT_EQ(weft_task_get_priority(C.native()), WEFT_PRIORITY_LOW);
    ASSERT_EQ(weft_task_get_priority(D.native()), WEFT_PRIORITY_NORMAL);
    executor.run_n(taskflow, 100).wait();
    ASSERT_EQ(bad.load(), 0);
    ASSERT_EQ(counter, 3);
}

/* test_priorities.cpp: RandomPriority.Sequential / .Parallel: 10000 tasks of
 * random levels between a source and a sink all run. */
TEST(tf_priorities_ten_thousand_tasks_of_random_levels_all_run) {
    for (unsigned W : {1u, 4u}) {
        weft::executor executor(W);
        weft::taskflow taskflow;
        const weft_priority levels[4] = {WEFT_PRIORITY_LOW, WEFT_PRIORITY_NORMAL, WEFT_PRIORITY_HIGH,
                                         WEFT_PRIORITY_CRITICAL};
        auto beg = taskflow.emplace([] {});
        auto end = taskflow.emplace([] {});
        std::atomic<size_t> counters[4];
        size_t priorities[4] = {0, 0, 0, 0};
        for (auto &c : counters) c = 0;
        uint64_t seed = 7;
        for (size_t i = 0; i < 10000; i++) {
            unsigned p = static_cast<unsigned>(test_rand(&seed) % 4);
            auto t = taskflow.emplace([p, &counters] { counters[p]++; });
            prio(t, levels[p]);
            t.succeed(beg);
            t.precede(end);
            priorities[p]++;
        }
        executor.run_n(taskflow, 2).wait();
        for (unsigned p = 0; p < 4; p++) ASSERT_EQ(counters[p].load(), 2 * priorities[p]);
    }
}

/* test_graph_priorities.cpp: QueueOrdering, DiamondSingleThread, LinearChain,
 * DynamicChange: one worker, siblings readied together start by level. */
TEST(tf_priorities_siblings_readied_together_start_by_level_and_changes_apply) {
    weft::executor executor(1);
    {
        weft::taskflow taskflow;
        std::vector<int> order;
        auto start = taskflow.emplace([] {});
        auto low1 = taskflow.emplace([&] { order.push_back(0); });
        auto high1 = taskflow.emplace([&] { order.push_back(1); });
        auto normal1 = taskflow.emplace([&] { order.push_back(2); });
        auto high2 = taskflow.emplace([&] { order.push_back(3); });
        auto low2 = taskflow.emplace([&] { order.push_back(4); });
        prio(low1, WEFT_PRIORITY_LOW);
        prio(high1, WEFT_PRIORITY_HIGH);
        prio(normal1, WEFT_PRIORITY_NORMAL);
        prio(high2, WEFT_PRIORITY_HIGH);
        prio(low2, WEFT_PRIORITY_LOW);
        start.precede(low1, high1, normal1, high2, low2);
        executor.run(taskflow).wait();
        ASSERT_EQ(order.size(), 5u);
        ASSERT_TRUE((order[0] == 1 || order[0] == 3) && (order[1] == 1 || order[1] == 3));
        ASSERT_EQ(order[2], 2);
        ASSERT_TRUE((order[3] == 0 || order[3] == 4) && (order[4] == 0 || order[4] == 4));
    }
    {
        weft::taskflow taskflow;
        std::vector<std::string> order;
        auto A = taskflow.emplace([&] { order.push_back("A"); });
        auto B = taskflow.emplace([&] { order.push_back("B"); });
        auto C = taskflow.emplace([&] { order.push_back("C"); });
        auto D = taskflow.emplace([&] { order.push_back("D"); });
        A.precede(B, C);
        B.precede(D);
        C.precede(D);
        prio(A, WEFT_PRIORITY_HIGH);
        prio(B, WEFT_PRIORITY_HIGH);
        prio(C, WEFT_PRIORITY_LOW);
        prio(D, WEFT_PRIORITY_NORMAL);
        executor.run(taskflow).wait();
        ASSERT_TRUE((order == std::vector<std::string>{"A", "B", "C", "D"}));
    }
    {
        weft::taskflow taskflow;
        std::vector<int> order;
        auto start = taskflow.emplace([] {});
        auto t0 = taskflow.emplace([&] { order.push_back(0); });
        auto t1 = taskflow.emplace([&] { order.push_back(1); });
        start.precede(t0, t1);
        prio(t0, WEFT_PRIORITY_HIGH);
        prio(t1, WEFT_PRIORITY_LOW);
        executor.run(taskflow).wait();
        ASSERT_TRUE((order == std::vector<int>{0, 1}));
        order.clear();
        prio(t0, WEFT_PRIORITY_LOW);
        prio(t1, WEFT_PRIORITY_HIGH);
        executor.run(taskflow).wait();
        ASSERT_TRUE((order == std::vector<int>{1, 0}));
    }
}

/* test_graph_priorities.cpp: Subflow: inside a subflow on one worker, the two
 * HIGH children run before the LOW one. */
TEST(tf_priorities_apply_to_the_tasks_of_a_subflow) {
    weft::executor executor(1);
    weft::taskflow taskflow;
    std::atomic<int> counter{0}, order{0};
    int s1 = -1, s2 = -1, s3 = -1;
    auto A = taskflow.emplace([&](weft::subflow &sf) {
        prio(sf.emplace([&] {
            counter++;
            s1 = order.fetch_add(1);
        }),
             WEFT_PRIORITY_HIGH);
        prio(sf.emplace([&] {
            counter++;
            s2 = order.fetch_add(1);
        }),
             WEFT_PRIORITY_LOW);
        prio(sf.emplace([&] {
            counter++;
            s3 = order.fetch_add(1);
        }),
             WEFT_PRIORITY_HIGH);
    });
    prio(A, WEFT_PRIORITY_HIGH);
    auto B = taskflow.emplace([&] { counter++; });
    prio(B, WEFT_PRIORITY_LOW);
    A.precede(B);
    for (int r = 0; r < 10; r++) {
        counter = 0;
        order = 0;
        executor.run(taskflow).wait();
        ASSERT_EQ(counter.load(), 4);
        ASSERT_LT(s1, s2);
        ASSERT_LT(s3, s2);
    }
}

/* ---------------------------------------------------------------- more awkward paths */

/* A module body also run directly, from several threads, while modules of it
 * run: runs of one taskflow never overlap (flow.h), every count exact. */
TEST(tf_modules_a_body_run_directly_and_as_modules_at_once_never_overlaps) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor executor(W);
        weft::taskflow body, outer1, outer2;
        std::atomic<int> inside{0}, overlap{0}, count{0};
        auto a = body.emplace([&] {
            if (inside.fetch_add(1) != 0) overlap++;
        });
        auto b = body.emplace([&] {
            count++;
            std::this_thread::yield();
        });
        auto c = body.emplace([&] { inside.fetch_sub(1); });
        a.precede(b);
        b.precede(c);
        outer1.composed_of(body);
        auto m = outer2.composed_of(body);
        auto m2 = outer2.composed_of(outer1);
        m.precede(m2);
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; t++)
            threads.emplace_back([&, t] {
                for (int i = 0; i < 25; i++) {
                    if (t == 0) executor.run(body).get();
                    else if (t == 1) executor.run(outer1).get();
                    else executor.run_n(outer2, 2).get();
                }
            });
        for (auto &t : threads) t.join();
        ASSERT_EQ(overlap.load(), 0);
        ASSERT_EQ(count.load(), 25 + 25 + 2 * (2 * 25 * 2));
    }
}

/* A module inside a subflow (Taskflow's sf.composed_of), with the subflow in a
 * condition loop and run_n. */
TEST(tf_modules_a_module_inside_a_subflow_in_a_loop_runs_each_time) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor executor(W);
        weft::taskflow body, tf;
        std::atomic<int> count{0};
        for (int i = 0; i < 10; i++) body.emplace([&] { count++; });
        int iter = 0;
        auto init = tf.emplace([&] { iter = 0; });
        auto sub = tf.emplace([&](weft::subflow &sf) {
            auto m1 = sf.composed_of(body);
            auto m2 = sf.composed_of(body);
            m1.precede(m2);
        });
        auto cond = tf.emplace([&] { return ++iter < 5 ? 0 : 1; });
        init.precede(sub);
        sub.precede(cond);
        cond.precede(sub);
        executor.run_n(tf, 3).get();
        ASSERT_EQ(count.load(), 3 * 5 * 2 * 10);
    }
}

/* run_until with a condition loop inside and a predicate that reads what the
 * graph computed; a throwing predicate stops the run and is rethrown. */
TEST(tf_run_until_with_a_condition_loop_inside_and_a_throwing_predicate) {
    weft::executor executor(4);
    weft::taskflow tf;
    int inner = 0, total = 0;
    auto init = tf.emplace([&] { inner = 0; });
    auto body = tf.emplace([&] {
        inner++;
        total++;
    });
    auto cond = tf.emplace([&] { return inner < 7 ? 0 : 1; });
    init.precede(body);
    body.precede(cond);
    cond.precede(body);
    auto fu = executor.run_until(tf, [&] { return total >= 70; });
    fu.get();
    ASSERT_EQ(total, 70);
    ASSERT_EQ(fu.info().iterations, 10u);
    total = 0;
    int calls = 0;
    ASSERT_THROWS(executor.run_until(tf, [&]() -> bool {
                              if (++calls == 3) throw std::logic_error("pred");
                              return false;
                          })
                      .get(),
                  std::logic_error, e, ASSERT_STREQ(e.what(), "pred"));
    ASSERT_EQ(total, 14);
    ASSERT_EQ(calls, 3);
    /* and runs normally again */
    total = 0;
    executor.run_until(tf, [&] { return total >= 7; }).get();
    ASSERT_EQ(total, 7);
}

/* A detached subflow in a module, in run_n: each iteration's graph finishes
 * before the module's run ends (flow.h: it joins the module run's end). */
TEST(tf_subflows_detached_inside_a_module_finish_within_each_iteration) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor executor(W);
        weft::taskflow body, outer;
        std::atomic<int> det{0}, bad{0};
        std::atomic<int> iter_seen{0};
        body.emplace([&](weft::subflow &sf) {
            for (int i = 0; i < 50; i++)
                sf.emplace([&] {
                    std::this_thread::yield();
                    det++;
                });
            sf.detach();
        });
        auto m = outer.composed_of(body);
        auto after = outer.emplace([&] {
            int it = iter_seen.fetch_add(1) + 1;
            if (det.load() != 50 * it) bad++;
        });
        m.precede(after);
        executor.run_n(outer, 20).get();
        ASSERT_EQ(det.load(), 1000);
        ASSERT_EQ(bad.load(), 0);
    }
}

/* A task that coruns its own taskflow (or, from a module's body, the taskflow
 * composing it) gets weft::error EDEADLK (weft.hpp) and leaves no run
 * behind, as weft_run_and_wait refuses before submitting (graph.h).  corun
 * submitted the run and then threw: the run executed once the caller's had
 * ended, its task coruns again, and so on for ever (thousands of runs by the
 * time the test looked, on and on after it). */
TEST(tf_basics_corun_of_its_own_taskflow_from_a_task_throws_edeadlk_and_runs_nothing_later) {
    weft::executor executor(2);
    weft::taskflow tf;
    std::atomic<int> got{0}, ran{0};
    tf.emplace([&] {
        ran++;
        try {
            executor.corun(tf);
        } catch (const weft::error &e) {
            if (e.status() == WEFT_EDEADLK) got++;
        } catch (...) {
        }
    });
    executor.run(tf).get();
    ASSERT_EQ(got.load(), 1);
    executor.wait_for_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(ran.load(), 1);
    ASSERT_EQ(got.load(), 1);
    /* through a module: the body's task coruns the outer taskflow */
    weft::taskflow body, outer;
    body.emplace([&] {
        ran++;
        try {
            executor.corun(outer);
        } catch (const weft::error &e) {
            if (e.status() == WEFT_EDEADLK) got++;
        } catch (...) {
        }
    });
    outer.composed_of(body);
    executor.run(outer).get();
    executor.wait_for_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(got.load(), 2);
    ASSERT_EQ(ran.load(), 2);
    /* and both still run normally */
    weft::taskflow plain;
    plain.composed_of(body);
    executor.run(tf).get();
    ASSERT_EQ(ran.load(), 3);
    ASSERT_EQ(got.load(), 3);
}

/* A pipeline with one line and parallel stages runs tokens one at a time;
 * with many lines (more than workers), at most `lines` in flight. */
TEST(tf_pipelines_one_line_runs_one_token_at_a_time_and_lines_bound_flight) {
    for (size_t L : {1u, 2u, 16u})
        for (unsigned W : {1u, 2u, 4u}) {
            weft::executor executor(W);
            std::atomic<int> in_flight{0}, most{0}, done{0};
            const size_t N = 300;
            weft::pipeline pl(
                L, weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                                  if (pf.token() == N) {
                                      pf.stop();
                                      return;
                                  }
                                  int now = in_flight.fetch_add(1) + 1;
                                  int m = most.load();
                                  while (now > m && !most.compare_exchange_weak(m, now)) {
                                  }
                              }},
                weft::pipe{weft::pipe_type::parallel, [&](weft::pipeflow &) { std::this_thread::yield(); }},
                weft::pipe{weft::pipe_type::parallel, [&](weft::pipeflow &) {
                               done++;
                               in_flight.fetch_sub(1);
                           }});
            weft::taskflow tf;
            tf.composed_of(pl);
            executor.run(tf).get();
            ASSERT_EQ(done.load(), (int)N);
            ASSERT_LE(most.load(), (int)L);
            ASSERT_EQ(pl.num_lines(), L);
            ASSERT_EQ(pl.num_pipes(), 3u);
        }
}

/* A pipeline stage stopping at token 0: the pipeline ends with no token; a
 * pipeline in run_n continues its token numbers. */
TEST(tf_pipelines_stop_at_the_first_token_and_token_numbers_across_run_n) {
    weft::executor executor(4);
    std::atomic<int> later{0};
    weft::pipeline p0(4, weft::pipe{weft::pipe_type::serial, [](weft::pipeflow &pf) { pf.stop(); }},
                      weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &) { later++; }});
    weft::taskflow t0;
    t0.composed_of(p0);
    executor.run_n(t0, 5).get();
    ASSERT_EQ(p0.num_tokens(), 0u);
    ASSERT_EQ(later.load(), 0);
    /* 10 tokens per iteration, numbers continuing: 0..9, 10..19, 20..29 */
    std::vector<size_t> firsts;
    size_t made = 0;
    weft::pipeline p1(3, weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                          if (made == 10) {
                              made = 0;
                              pf.stop();
                              return;
                          }
                          if (made == 0) firsts.push_back(pf.token());
                          made++;
                      }});
    weft::taskflow t1;
    t1.composed_of(p1);
    executor.run_n(t1, 3).get();
    ASSERT_TRUE((firsts == std::vector<size_t>{0, 10, 20}));
    ASSERT_EQ(p1.num_tokens(), 30u);
}

/* for_each_by_index over an index_range (Taskflow's IndexRange): the
 * sub-ranges cover it once; negative steps; empty. */
TEST(tf_for_each_by_index_subranges_cover_the_range_once) {
    weft::executor ex(4);
    for (int n : {0, 1, 2, 7, 100, 1001}) {
        for (int step : {1, 3, -1, -4}) {
            int first = step > 0 ? 0 : n, last = step > 0 ? n : 0;
            weft::index_range<int> r(first, last, step);
            std::vector<std::atomic<int>> hit(static_cast<size_t>(n) + 1);
            for (auto &h : hit) h = 0;
            weft::for_each_by_index(ex, r, [&](weft::index_range<int> sub) {
                if (step > 0)
                    for (int i = sub.begin(); i < sub.end(); i += sub.step_size()) hit[static_cast<size_t>(i)]++;
                else
                    for (int i = sub.begin(); i > sub.end(); i += sub.step_size()) hit[static_cast<size_t>(i)]++;
            });
            size_t total = 0;
            for (int i = 0; i <= n; i++) {
                bool in = step > 0 ? (i < n && i % step == 0) : (i > 0 && (n - i) % (-step) == 0);
                ASSERT_EQ(hit[static_cast<size_t>(i)].load(), in ? 1 : 0);
                total += in;
            }
            ASSERT_EQ(r.size(), total);
        }
    }
}

/* Prioritised tasks readied every other way (by a condition, a
 * multi-condition, a subflow's graph, a module's body, a semaphore's
 * release), in run_n and run_until on one and on several workers: every
 * iteration completes and counts exactly. */
TEST(tf_priorities_tasks_readied_by_conditions_subflows_modules_and_semaphores_in_run_n) {
    const weft_priority levels[3] = {WEFT_PRIORITY_LOW, WEFT_PRIORITY_HIGH, WEFT_PRIORITY_CRITICAL};
    for (unsigned W : {1u, 2u, 4u})
        for (weft_priority lv : levels) {
            weft::executor executor(W);
            weft::taskflow body, tf;
            std::atomic<int> n_body{0}, n_loop{0}, n_multi{0}, n_sub{0}, n_sem{0};
            prio(body.emplace([&] { n_body++; }), lv);
            auto bsrc = body.emplace([] {});
            auto bsucc = body.emplace([&] { n_body++; });
            prio(bsucc, lv);
            bsrc.precede(bsucc);
            weft_semaphore *s = weft_semaphore_create(1, nullptr);
            int iter = 0;
            auto init = tf.emplace([&] { iter = 0; });
            auto loop = tf.emplace([&] { n_loop++; });
            prio(loop, lv);
            auto cond = tf.emplace([&] { return ++iter < 3 ? 0 : 1; });
            prio(cond, lv);
            auto multi = tf.emplace([&]() -> weft::branches { return {0, 1}; });
            auto m0 = tf.emplace([&] { n_multi++; });
            auto m1 = tf.emplace([&] { n_multi++; });
            prio(m0, lv);
            auto sub = tf.emplace([&](weft::subflow &sf) {
                auto a = sf.emplace([&] { n_sub++; });
                auto b = sf.emplace([&] { n_sub++; });
                prio(b, lv);
                a.precede(b);
            });
            prio(sub, lv);
            auto mod = tf.composed_of(body);
            prio(mod, lv);
            std::vector<weft::task> sems;
            for (int i = 0; i < 4; i++) {
                auto t = tf.emplace([&] { n_sem++; });
                prio(t, i % 2 ? lv : WEFT_PRIORITY_NORMAL);
                ASSERT_OK(weft_task_acquire(t.native(), s));
                ASSERT_OK(weft_task_release(t.native(), s));
                sems.push_back(t);
            }
            auto done = tf.emplace([] {});
            init.precede(loop);
            loop.precede(cond);
            cond.precede(loop, multi);
            multi.precede(m0, m1);
            m0.precede(sub);
            sub.precede(mod);
            mod.precede(done);
            for (auto &t : sems) t.precede(done);
            auto fu = executor.run_n(tf, 20);
            ASSERT_TRUE(fu.wait_for(std::chrono::seconds(20)));
            fu.get();
            int k = 0;
            auto fu2 = executor.run_until(tf, [&] { return ++k > 5; });
            ASSERT_TRUE(fu2.wait_for(std::chrono::seconds(20)));
            const int R = 25;
            ASSERT_EQ(n_loop.load(), 3 * R);
            ASSERT_EQ(n_multi.load(), 2 * R);
            ASSERT_EQ(n_sub.load(), 2 * R);
            ASSERT_EQ(n_body.load(), 2 * R);
            ASSERT_EQ(n_sem.load(), 4 * R);
            ASSERT_EQ(weft_semaphore_value(s), 1u);
            ASSERT_OK(weft_semaphore_destroy(s));
        }
}

/* A pipeline queued at a priority (weft_pipeline_set_priority, spread) in
 * run_n, and runs with priorities cancelled while their tasks wait in the
 * priority queue: every run ends, counts exact where it completed. */
TEST(tf_priorities_pipelines_at_a_level_in_run_n_and_cancelled_prioritised_runs_end) {
    for (unsigned W : {1u, 2u, 4u}) {
        weft::executor executor(W);
        std::atomic<int> seen{0};
        int made = 0; /* per iteration: token numbers go on across runs */
        weft::pipeline pl(4, weft::pipe{weft::pipe_type::serial, [&made](weft::pipeflow &pf) {
                              if (made++ == 99) {
                                  made = 0;
                                  pf.stop();
                              }
                          }},
                          weft::pipe{weft::pipe_type::parallel, [&](weft::pipeflow &) { seen++; }});
        ASSERT_OK(weft_pipeline_set_scheduling(pl.native(), WEFT_PIPELINE_SPREAD));
        ASSERT_OK(weft_pipeline_set_priority(pl.native(), WEFT_PRIORITY_HIGH));
        weft::taskflow tf;
        auto a = tf.emplace([] {});
        auto p = tf.composed_of(pl);
        prio(p, WEFT_PRIORITY_LOW);
        a.precede(p);
        auto fu = executor.run_n(tf, 10);
        ASSERT_TRUE(fu.wait_for(std::chrono::seconds(20)));
        ASSERT_EQ(seen.load(), 990);
        /* cancelled runs with prioritised tasks */
        weft::taskflow big;
        std::atomic<int> ran{0};
        auto src = big.emplace([] {});
        for (int i = 0; i < 2000; i++) {
            auto t = big.emplace([&] {
                ran++;
                std::this_thread::yield();
            });
            prio(t, i % 3 == 0 ? WEFT_PRIORITY_LOW : i % 3 == 1 ? WEFT_PRIORITY_HIGH : WEFT_PRIORITY_NORMAL);
            src.precede(t);
        }
        for (int r = 0; r < 10; r++) {
            auto f1 = executor.run_n(big, 5);
            std::this_thread::sleep_for(std::chrono::microseconds(200 * r));
            (void)f1.cancel();
            weft_status st = weft_future_wait_for(f1.native(), 20ull * 1000 * 1000 * 1000);
            ASSERT_TRUE(st == WEFT_OK || st == WEFT_ECANCELED);
        }
        ran = 0;
        executor.run(big).get();
        ASSERT_EQ(ran.load(), 2000);
    }
}
