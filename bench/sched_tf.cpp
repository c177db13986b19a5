// weft-bench — sched_latency for Taskflow (issue 18).  SPDX-License-Identifier: MIT
//
// The same measurement as sched_weft.c's sched_latency (see sched_tbb.cpp for
// the shape).  Taskflow says "priority" with tf::Task::priority
// (tf::TaskPriority::HIGH / NORMAL / LOW), which takes effect only when
// Taskflow is compiled with TF_ENABLE_TASK_PRIORITY: then each worker's queue
// is a BoundedPriorityWSQ (one sub-queue per level, the highest served
// first), and a finished task's successors are cached by level.  Each LOW task
// is a one-task taskflow of priority LOW and the probe a one-task taskflow of
// priority HIGH, run from the main thread with executor.run(std::move(flow)),
// as weft's row submits its async tasks from the main thread.  What this
// measures about Taskflow: work submitted from outside the workers goes to
// the executor's shared buffers, which are FIFO whatever the level; the
// levels order only what workers push to their own queues.
//
// TF_ENABLE_TASK_PRIORITY changes the layout of tf::Node and tf::Worker, so it
// cannot share a program with the other *_tf.cpp files' Taskflow as such: this
// file renames the namespace (tf -> weft_tfprio) before including it, so its
// Taskflow is a separate set of types and symbols (no ODR clash).  Its
// executor is this row's own, with as many workers as the environment's
// (bench_tf_workers, sched_env_tf.cpp), made outside the samples.
#define TF_ENABLE_TASK_PRIORITY 1
#define tf weft_tfprio
#include <taskflow/taskflow.hpp>
#undef tf

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>
#include <vector>

#include "bench.h"

extern "C" unsigned bench_tf_workers(void *env);  // sched_env_tf.cpp

namespace {

struct counters {  // bench_work_sem's data (graph2_weft.c)
    size_t n;
    uint32_t *count;
};

uint64_t now_ns() {
    return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void nap_us(unsigned us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

void spin_until(uint64_t t) {
    while (now_ns() < t) {
    }
}

template <class Fn> void run_one(weft_tfprio::Executor &ex, weft_tfprio::TaskPriority p, Fn fn) {
    weft_tfprio::Taskflow f;
    f.emplace(std::move(fn)).priority(p);
    ex.run(std::move(f));
}

int latency(void *env, counters *d) {
    unsigned workers = bench_tf_workers(env);
    weft_tfprio::Executor ex(workers);
    std::atomic<int> backlog{0};
    std::vector<uint64_t> lat(d->n);
    for (size_t i = 0; i < d->n; i++) {
        while (backlog.load() < 12 * (int)workers) {  // keep every worker busy with LOW work
            backlog.fetch_add(1);
            run_one(ex, weft_tfprio::TaskPriority::LOW, [&backlog] {
                spin_until(now_ns() + 100000);
                backlog.fetch_sub(1);
            });
        }
        nap_us(400);
        std::atomic<uint64_t> started{0};
        uint64_t submitted = now_ns();
        run_one(ex, weft_tfprio::TaskPriority::HIGH, [&started] { started.store(now_ns()); });
        while (started.load() == 0) nap_us(20);
        lat[i] = started.load() - submitted;
        d->count[i] = 1;
    }
    ex.wait_for_all();
    std::sort(lat.begin(), lat.end());
    std::fprintf(stderr,
                 "sched_latency (tf, TaskPriority HIGH vs LOW, TF_ENABLE_TASK_PRIORITY): %zu samples, CRITICAL "
                 "start after submit: median %.1f us, p99 %.1f us, max %.1f us (LOW tasks: 100 us)\n",
                 d->n, lat[d->n / 2] / 1e3, lat[d->n * 99 / 100] / 1e3, lat[d->n - 1] / 1e3);
    return 0;
}

int latency_oneshot(void *env, void *data) {
    try {
        return latency(env, static_cast<counters *>(data));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "tf: sched_latency: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "tf: sched_latency: unknown exception\n");
    }
    return -1;
}

}  // namespace

extern "C" const bench_ops bench_tf_sched_latency = {latency_oneshot, nullptr, nullptr, nullptr};
