// weft-bench — sched_latency for oneTBB (issue 18).  SPDX-License-Identifier: MIT
//
// The same measurement as sched_weft.c's sched_latency: every worker kept busy
// by LOW tasks of 100 us (a backlog of 12 per worker, refilled from the main
// thread), a CRITICAL task submitted every ~400 us, its start minus its
// submission one sample; median and p99 go to stderr.  oneTBB says "priority"
// with task_arena's: the LOW tasks are enqueued into an arena of
// priority::low, the probe into one of priority::high (both from the main
// thread, fire-and-forget, as weft_async_with).  oneTBB has no per-task
// priority: a worker leaves the low arena for the high one between two tasks,
// when the market re-balances; no task is preempted.
//
// Workers: the main thread only submits and naps, as in weft's row, so it must
// not count as one of the `threads`.  The environment's global_control
// (bench_tbb.cpp) says max_allowed_parallelism = threads, which oneTBB reads
// as threads - 1 workers plus the main thread; for this row it is replaced,
// in place, by threads + 1 (so `threads` workers) and put back after.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <new>
#include <thread>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "bench.h"
#include "tbb_guard.hpp"

namespace {

struct counters {  // bench_work_sem's data (graph2_weft.c)
    size_t n;
    uint32_t *count;
};

using clk = std::chrono::steady_clock;

uint64_t now_ns() {
    return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now().time_since_epoch()).count();
}

void nap_us(unsigned us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

void spin_until(uint64_t t) {
    while (now_ns() < t) {
    }
}

// Replaces the environment's parallelism limit in place for this row's life.
struct workers_for_row {
    tbb::global_control *gc;
    size_t threads;
    explicit workers_for_row(void *env)
        : gc(static_cast<tbb::global_control *>(env)),
          threads(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)) {
        gc->~global_control();
        new (gc) tbb::global_control(tbb::global_control::max_allowed_parallelism, threads + 1);
    }
    ~workers_for_row() {
        gc->~global_control();
        new (gc) tbb::global_control(tbb::global_control::max_allowed_parallelism, threads);
    }
};

int latency_oneshot(void *env, void *data) {
    auto *d = static_cast<counters *>(data);
    return tbb_guarded("sched_latency", [&] {
        workers_for_row row(env);
        int workers = (int)row.threads;
        tbb::task_arena low(workers, 0, tbb::task_arena::priority::low);
        tbb::task_arena high(workers, 0, tbb::task_arena::priority::high);
        low.initialize();
        high.initialize();
        std::atomic<int> backlog{0};
        std::vector<uint64_t> lat(d->n);
        for (size_t i = 0; i < d->n; i++) {
            while (backlog.load() < 12 * workers) {  // keep every worker busy with LOW work
                backlog.fetch_add(1);
                low.enqueue([&backlog] {
                    spin_until(now_ns() + 100000);
                    backlog.fetch_sub(1);
                });
            }
            nap_us(400);
            std::atomic<uint64_t> started{0};
            uint64_t submitted = now_ns();
            high.enqueue([&started] { started.store(now_ns()); });
            while (started.load() == 0) nap_us(20);
            lat[i] = started.load() - submitted;
            d->count[i] = 1;
        }
        while (backlog.load() != 0) nap_us(100);  // the LOW tasks reference `backlog`
        std::sort(lat.begin(), lat.end());
        std::fprintf(stderr,
                     "sched_latency (tbb, task_arena priority high vs low): %zu samples, CRITICAL start after "
                     "submit: median %.1f us, p99 %.1f us, max %.1f us (LOW tasks: 100 us)\n",
                     d->n, lat[d->n / 2] / 1e3, lat[d->n * 99 / 100] / 1e3, lat[d->n - 1] / 1e3);
    });
}

}  // namespace

extern "C" const bench_ops bench_tbb_sched_latency = {latency_oneshot, nullptr, nullptr, nullptr};
