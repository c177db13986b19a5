/* weft-bench — fork-join and async benchmarks on weft: weft_run_root enters the
 * executor (created once per thread count by bench_weft.c), weft_spawn/weft_sync
 * and task groups do the rest.  SPDX-License-Identifier: MIT */
#include "bench_work.h"
#include "fj_work.h"

#include <stdio.h>

#include <weft.h>

static int report(const char *what, int st) {
    if (st != 0) fprintf(stderr, "weft: %s: %s\n", what, weft_errname(st));
    return st ? -1 : 0;
}

/* ---- fib: spawn one child, call the other ------------------------------------ */

struct fib_arg {
    int n;
    long r;
};

static int fib1(weft_ctx *cx, void *p) {
    struct fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    struct fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    weft_spawn(cx, fib1, &x);
    fib1(cx, &y);
    int st = weft_sync(cx);
    a->r = x.r + y.r;
    return st;
}

static int fib2(weft_ctx *cx, void *p) {
    struct fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    struct fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    weft_spawn(cx, fib2, &x);
    weft_spawn(cx, fib2, &y);
    int s1 = weft_sync(cx);
    int s2 = weft_sync(cx);
    a->r = x.r + y.r;
    return s1 ? s1 : s2;
}

static int run_fib(void *env, void *data, weft_task_fn fn) {
    fib_data *d = data;
    struct fib_arg a = {d->n, 0};
    int st = weft_run_root(env, fn, &a);
    d->result = a.r;
    return report("weft_run_root(fib)", st);
}
static int weft_fib(void *env, void *data) { return run_fib(env, data, fib1); }
static int weft_fib_spawn2(void *env, void *data) { return run_fib(env, data, fib2); }
const bench_ops bench_weft_fib = {weft_fib, NULL, NULL, NULL};
const bench_ops bench_weft_fib_spawn2 = {weft_fib_spawn2, NULL, NULL, NULL};

/* ---- fib_typed: the same recursion as a typed task (WEFT_FJ_TASK) ----------- */

WEFT_FJ_TASK(long, fib_t, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(fib_t) x;
    WEFT_FJ_SPAWN(fib_t, &x, n - 1);
    long b = WEFT_FJ_CALL(fib_t, n - 2);
    return WEFT_FJ_SYNC(fib_t, &x) + b;
}

static int fib_typed_root(weft_ctx *ctx, void *p) {
    fib_data *d = p;
    d->result = WEFT_FJ_RUN(ctx, fib_t, d->n);
    return 0;
}
static int weft_fib_typed(void *env, void *data) {
    return report("weft_run_root(fib_typed)", weft_run_root(env, fib_typed_root, data));
}
const bench_ops bench_weft_fib_typed = {weft_fib_typed, NULL, NULL, NULL};

/* ---- skynet: a task group of ten children per node ---------------------------- */

struct sky_arg {
    long num, size, sum;
};

static int skynet(weft_ctx *cx, void *p) {
    struct sky_arg *a = p;
    if (a->size == 1) {
        a->sum = a->num;
        return 0;
    }
    struct sky_arg kid[SKYNET_FANOUT];
    long sub = a->size / SKYNET_FANOUT;
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (long i = 0; i < SKYNET_FANOUT; i++) {
        kid[i] = (struct sky_arg){a->num + i * sub, sub, 0};
        weft_task_group_spawn(&g, skynet, &kid[i]);
    }
    int st = weft_task_group_wait(&g);
    a->sum = 0;
    for (int i = 0; i < SKYNET_FANOUT; i++) a->sum += kid[i].sum;
    return st;
}

static int weft_skynet(void *env, void *data) {
    skynet_data *d = data;
    long leaves = 1;
    for (int i = 0; i < d->depth; i++) leaves *= SKYNET_FANOUT;
    struct sky_arg a = {0, leaves, 0};
    int st = weft_run_root(env, skynet, &a);
    d->result = a.sum;
    return report("weft_run_root(skynet)", st);
}
const bench_ops bench_weft_skynet = {weft_skynet, NULL, NULL, NULL};

/* ---- nqueens: a task group of the safe squares of the next row ---------------- */

struct nq_arg {
    int n, row;
    signed char cols[32];
    long count;
};

static int nqueens(weft_ctx *cx, void *p) {
    struct nq_arg *a = p;
    if (a->row == a->n) {
        a->count = 1;
        return 0;
    }
    struct nq_arg kid[32];
    int k = 0;
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int c = 0; c < a->n; c++) {
        if (!nq_safe(a->cols, a->row, c)) continue;
        kid[k] = *a;
        kid[k].cols[a->row] = (signed char)c;
        kid[k].row = a->row + 1;
        weft_task_group_spawn(&g, nqueens, &kid[k]);
        k++;
    }
    int st = weft_task_group_wait(&g);
    a->count = 0;
    for (int i = 0; i < k; i++) a->count += kid[i].count;
    return st;
}

static int weft_nqueens(void *env, void *data) {
    nqueens_data *d = data;
    struct nq_arg a = {.n = d->n, .row = 0, .count = 0};
    int st = weft_run_root(env, nqueens, &a);
    d->result = a.count;
    return report("weft_run_root(nqueens)", st);
}
const bench_ops bench_weft_nqueens = {weft_nqueens, NULL, NULL, NULL};

/* ---- async_task: 10^6 silent async tasks submitted from main (a thread that
 * is not a worker), then wait for all of them: Taskflow's own async_task
 * benchmark (benchmarks/async_task: executor.silent_async in a loop on main,
 * then wait_for_all; oneTBB's is task_group::run from main + wait). ---------- */

static int async_one(weft_ctx *cx, void *p) {
    (void)cx;
    emb_kernel(p);
    return 0;
}

static int weft_async_task(void *env, void *data) {
    async_data *d = data;
    for (size_t i = 0; i < d->n; i++) {
        int st = weft_silent_async(env, async_one, &d->out[i]);
        if (st != 0) return report("weft_silent_async", st);
    }
    return report("weft_executor_wait_all", weft_executor_wait_all(env));
}
const bench_ops bench_weft_async_task = {weft_async_task, NULL, NULL, NULL};

/* ---- async_task_in_task: the same tasks submitted from inside a root task,
 * so their records come from the worker's free list (weft only). ----------- */

static int async_submit_all(weft_ctx *cx, void *p) {
    async_data *d = p;
    weft_executor *ex = weft_ctx_executor(cx);
    for (size_t i = 0; i < d->n; i++) {
        int st = weft_silent_async(ex, async_one, &d->out[i]);
        if (st != 0) return st;
    }
    return 0;
}

static int weft_async_task_in_task(void *env, void *data) {
    int st = weft_run_root(env, async_submit_all, data);
    if (st != 0) return report("weft_silent_async", st);
    return report("weft_executor_wait_all", weft_executor_wait_all(env));
}
const bench_ops bench_weft_async_task_in_task = {weft_async_task_in_task, NULL, NULL, NULL};
