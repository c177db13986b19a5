/* weft-bench — issue 18: what priorities cost when used, how fast a CRITICAL
 * task starts on saturated workers, and re-prioritise/remove per operation.
 * weft only.  SPDX-License-Identifier: MIT
 *
 * async_plain / async_prio: n async tasks submitted from the main thread, each
 *   incrementing its own counter (the data of sem_free), then wait_all: with
 *   weft_async_with and no options (the deques), and with a random priority
 *   each (the priority queue).  The difference per task is what priorities
 *   cost when used.
 * sched_latency: size samples; every worker is kept busy by LOW tasks of
 *   100 us (a backlog of 12 per worker, refilled: more than the 400 us nap
 *   and its oversleep, so that no worker is idle when the probe comes; with 4
 *   they often were, and the figure was a sleeping worker's wake-up), and
 *   every ~500 us a CRITICAL task is submitted; its start minus its submission is one sample.  Median
 *   and p99 go to stderr; the target is one LOW task's length (100 us).
 * sched_reprio: size LOW tasks queued behind held workers, each with a
 *   handle; then every handle re-prioritised once (random level) and removed
 *   once.  ns per op go to stderr (size 1000 and 10^6 show the O(log n) climb).
 */
#include "graph2_work.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <weft.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int fail(const char *what, weft_status st) {
    fprintf(stderr, "weft: %s: %s\n", what, weft_strerror(st));
    return -1;
}

typedef struct counters {
    size_t n;
    uint32_t *count;
} counters; /* bench_work_sem's data: n counters */

static int tick(weft_ctx *cx, void *arg) {
    (void)cx;
    ++*(uint32_t *)arg;
    return 0;
}

static uint64_t xs(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static int async_many(void *env, void *data, bool prio) {
    counters *d = data;
    uint64_t rng = 88172645463325252ull;
    for (size_t i = 0; i < d->n; i++) {
        weft_async_options o = {.priority = prio ? (weft_priority)((int)(xs(&rng) % 4) - 1) : WEFT_PRIORITY_NORMAL};
        weft_status st = weft_async_with(env, tick, &d->count[i], &o, NULL);
        if (st != WEFT_OK) return fail("weft_async_with", st);
    }
    weft_status st = weft_executor_wait_all(env);
    return st == WEFT_OK ? 0 : fail("weft_executor_wait_all", st);
}

static int plain_oneshot(void *env, void *data) { return async_many(env, data, false); }
static int prio_oneshot(void *env, void *data) { return async_many(env, data, true); }
const bench_ops bench_weft_async_plain = {plain_oneshot, NULL, NULL, NULL};
const bench_ops bench_weft_async_prio = {prio_oneshot, NULL, NULL, NULL};

/* ---- latency of a CRITICAL task on saturated workers ---- */

typedef struct sat {
    weft_executor *ex;
    _Atomic int stop;
    _Atomic int backlog;
} sat;

static void spin_until(uint64_t t) {
    while (now_ns() < t) {
    }
}

/* The main thread waits by sleeping: on a 2-CPU machine a spinning main
 * thread would take a CPU from the two workers it measures. */
static void nap_us(unsigned us) {
    struct timespec ts = {0, (long)us * 1000};
    nanosleep(&ts, NULL);
}

static int low_task(weft_ctx *cx, void *arg) {
    (void)cx;
    sat *s = arg;
    spin_until(now_ns() + 100000);
    atomic_fetch_sub(&s->backlog, 1);
    return 0;
}

typedef struct probe {
    uint64_t submitted;
    _Atomic uint64_t started;
} probe;

static int critical_task(weft_ctx *cx, void *arg) {
    (void)cx;
    probe *p = arg;
    atomic_store(&p->started, now_ns());
    return 0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int latency_oneshot(void *env, void *data) {
    counters *d = data;
    sat s = {.ex = env};
    int target = 12 * (int)weft_executor_workers(env); /* see the top */
    uint64_t *lat = malloc(d->n * sizeof *lat);
    if (!lat) return -1;
    for (size_t i = 0; i < d->n; i++) {
        while (atomic_load(&s.backlog) < target) { /* keep every worker busy with LOW work */
            atomic_fetch_add(&s.backlog, 1);
            weft_status st = weft_async_with(env, low_task, &s, &(weft_async_options){.priority = WEFT_PRIORITY_LOW},
                                             NULL);
            if (st != WEFT_OK) return free(lat), fail("weft_async_with", st);
        }
        nap_us(400);
        probe p = {.submitted = now_ns()};
        weft_status st = weft_async_with(env, critical_task, &p,
                                         &(weft_async_options){.priority = WEFT_PRIORITY_CRITICAL}, NULL);
        if (st != WEFT_OK) return free(lat), fail("weft_async_with", st);
        while (atomic_load(&p.started) == 0) nap_us(20);
        lat[i] = atomic_load(&p.started) - p.submitted;
        d->count[i] = 1;
    }
    (void)weft_executor_wait_all(env);
    qsort(lat, d->n, sizeof *lat, cmp_u64);
    fprintf(stderr, "sched_latency: %zu samples, CRITICAL start after submit: median %.1f us, p99 %.1f us, max %.1f us "
                    "(LOW tasks: 100 us)\n",
            d->n, lat[d->n / 2] / 1e3, lat[d->n * 99 / 100] / 1e3, lat[d->n - 1] / 1e3);
    free(lat);
    return 0;
}

const bench_ops bench_weft_sched_latency = {latency_oneshot, NULL, NULL, NULL};

/* ---- re-prioritise and remove ---- */

typedef struct holdall {
    _Atomic int open, entered;
} holdall;

static int hold_task(weft_ctx *cx, void *arg) {
    (void)cx;
    holdall *g = arg;
    atomic_fetch_add(&g->entered, 1);
    while (!atomic_load(&g->open)) {
    }
    return 0;
}

static int reprio_oneshot(void *env, void *data) {
    counters *d = data;
    weft_sched_handle *h = malloc(d->n * sizeof *h);
    if (!h) return -1;
    holdall g = {0};
    int workers = (int)weft_executor_workers(env);
    for (int i = 0; i < workers; i++)
        if (weft_silent_async(env, hold_task, &g) != WEFT_OK) return free(h), -1;
    while (atomic_load(&g.entered) < workers) nap_us(50); /* every worker held: nothing queued runs */
    for (size_t i = 0; i < d->n; i++) {
        weft_status st = weft_async_with(env, tick, &d->count[i],
                                         &(weft_async_options){.priority = WEFT_PRIORITY_LOW, .handle = &h[i]}, NULL);
        if (st != WEFT_OK) return free(h), fail("weft_async_with", st);
    }
    uint64_t rng = 2463534242u, t0 = now_ns();
    size_t bad = 0;
    for (size_t i = 0; i < d->n; i++)
        bad += weft_sched_reprioritize(env, h[xs(&rng) % d->n], (weft_priority)((int)(xs(&rng) % 4) - 1)) != WEFT_OK;
    uint64_t t1 = now_ns();
    for (size_t i = 0; i < d->n; i++) bad += weft_sched_remove(env, h[i]) != WEFT_OK;
    uint64_t t2 = now_ns();
    if (bad) fprintf(stderr, "sched_reprio: %zu operations failed\n", bad);
    atomic_store(&g.open, 1);
    (void)weft_executor_wait_all(env);
    for (size_t i = 0; i < d->n; i++) d->count[i] = 1; /* removed: never ran */
    fprintf(stderr, "sched_reprio: %zu queued: reprioritize %.0f ns/op, remove %.0f ns/op\n", d->n,
            (double)(t1 - t0) / d->n, (double)(t2 - t1) / d->n);
    free(h);
    return 0;
}

const bench_ops bench_weft_sched_reprio = {reprio_oneshot, NULL, NULL, NULL};

/* ---- binary_tree_prio: binary_tree's graph, every task a random priority ----
 * The same graph, kernel and check as binary_tree (bench_weft.c builds it);
 * then weft_task_set_priority on every task, LOW .. CRITICAL at random (a fixed
 * seed), inside the timed build for the build + run row.  Compare with
 * binary_tree / binary_tree_rerun: the difference per task is what a graph
 * whose every task has a priority costs (each goes through the priority queue
 * as it becomes ready). */

extern const bench_ops bench_weft_binary_tree;

static bool set_random(weft_task t, void *arg) {
    uint64_t *rng = arg;
    return weft_task_set_priority(t, (weft_priority)((int)(xs(rng) % 4) - 1)) == WEFT_OK;
}

static int prio_build(void *env, void *data, void **graph) {
    if (bench_weft_binary_tree.build(env, data, graph) != 0) return -1;
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    size_t before = weft_taskflow_num_tasks(*graph);
    weft_status st = weft_taskflow_for_each_task(*graph, set_random, &rng);
    if (st != WEFT_OK || before == 0) {
        bench_weft_binary_tree.destroy(env, *graph);
        return fail("weft_task_set_priority on every task", st);
    }
    return 0;
}

static int prio_tree_oneshot(void *env, void *data) {
    void *graph;
    if (prio_build(env, data, &graph) != 0) return -1;
    int rc = bench_weft_binary_tree.run(env, graph);
    bench_weft_binary_tree.destroy(env, graph);
    return rc;
}

static int prio_tree_run(void *env, void *graph) { return bench_weft_binary_tree.run(env, graph); }
static void prio_tree_destroy(void *env, void *graph) { bench_weft_binary_tree.destroy(env, graph); }

const bench_ops bench_weft_binary_tree_prio = {prio_tree_oneshot, prio_build, prio_tree_run, prio_tree_destroy};
