/* What a task sees while it runs as one of many sources.  A wide taskflow's
 * plain sources run in a range (src/graph/sources.c) that makes one weft_ctx
 * and changes only its task per source: each task must still see its own
 * identity, a frame stack of its own (a neighbour's unsynced spawns, also
 * past the stack's 65536 frames, are not its own), and its own run; and the
 * counts a run ends with (weft_run_info, the executor's metrics) must agree
 * whatever stopped it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ---- identity, fork-join and waits from sources of a range ---- */

enum { SPILL = 66000 }; /* spawns past the frame stack (65536 frames) */

struct probe {
    weft_task self;
    size_t idx;
    int mode;
    weft_executor *ex;
    weft_taskflow *own, *other;
    atomic_long *bad, *kids;
    const weft_future *_Atomic *seen_run;
};

static int kid(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add((atomic_long *)arg, 1);
    return 0;
}

WEFT_FJ_TASK(long, fib37, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(fib37) x;
    WEFT_FJ_SPAWN(fib37, &x, n - 1);
    long b = WEFT_FJ_CALL(fib37, n - 2);
    return WEFT_FJ_SYNC(fib37, &x) + b;
}

static int async_noop(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    return 0;
}

/* What every probe checks before and after its own work. */
static bool probe_identity(weft_ctx *ctx, const struct probe *p) {
    char name[32];
    snprintf(name, sizeof name, "p%zu", p->idx);
    weft_task t = weft_ctx_task(ctx);
    const weft_future *expect = NULL, *mine = weft_ctx_run(ctx);
    /* Every task of the run names the same run (the first one sets it). */
    if (!atomic_compare_exchange_strong(p->seen_run, &expect, mine) && expect != mine) return false;
    return weft_current_ctx() == ctx && same_task(t, p->self) && weft_task_index(t) == p->idx &&
           weft_task_data(t) == p && strcmp(weft_task_name(t), name) == 0 && !weft_ctx_cancelled(ctx) &&
           weft_ctx_check(ctx) == WEFT_OK && weft_ctx_worker_id(ctx) == weft_executor_worker_id(p->ex);
}

static int probe_task(weft_ctx *ctx, void *arg) {
    struct probe *p = arg;
    int r = 0;
    if (!probe_identity(ctx, p)) atomic_fetch_add(p->bad, 1);
    /* The source before may have left spawns unsynced: they are not ours. */
    if (weft_sync_status(ctx, &r) != WEFT_EINVAL) atomic_fetch_add(p->bad, 1);
    switch (p->mode) {
    case 1: /* one spawn left unsynced */
        (void)weft_spawn(ctx, kid, p->kids);
        break;
    case 2: /* past the frame stack, left unsynced */
        for (int i = 0; i < SPILL; i++) (void)weft_spawn(ctx, kid, p->kids);
        break;
    case 3:
        if (WEFT_FJ_RUN(ctx, fib37, 12) != 144) atomic_fetch_add(p->bad, 1);
        break;
    case 4: {
        weft_task_group g;
        weft_task_group_init(&g, ctx);
        for (int i = 0; i < 3; i++) (void)weft_task_group_spawn(&g, kid, p->kids);
        if (weft_task_group_wait(&g) != 0) atomic_fetch_add(p->bad, 1);
        break;
    }
    case 5:
        if (weft_run_and_wait(p->ex, p->other) != WEFT_OK) atomic_fetch_add(p->bad, 1);
        break;
    case 6: {
        weft_future *f;
        if (weft_async(p->ex, async_noop, NULL, &f) != WEFT_OK || weft_future_wait(f) != WEFT_OK)
            atomic_fetch_add(p->bad, 1);
        weft_future_destroy(f);
        break;
    }
    case 7: /* waits that would deadlock are refused */
        if (weft_run_and_wait(p->ex, p->own) != WEFT_EDEADLK) atomic_fetch_add(p->bad, 1);
        if (weft_future_wait((weft_future *)weft_ctx_run(ctx)) != WEFT_EDEADLK) atomic_fetch_add(p->bad, 1);
        break;
    }
    if (!probe_identity(ctx, p)) atomic_fetch_add(p->bad, 1);
    return 0;
}

static int other_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add((atomic_long *)arg, 1);
    return 0;
}

TEST(sources_of_a_range_each_see_their_own_task_frames_and_run) {
    enum { N = 400, MODES = 8 };
    static struct probe probes[N];
    for (unsigned workers = 1; workers <= 4; workers *= 2) {
        atomic_long bad = 0, kids = 0, other_runs = 0;
        const weft_future *_Atomic seen = NULL;
        weft_executor *ex = make_executor(workers);
        weft_taskflow *tf = make_taskflow("probes"), *other = make_taskflow("other");
        for (int i = 0; i < 20; i++) must_emplace(other, other_task, &other_runs);
        long want_kids = 0, nested = 0;
        for (size_t i = 0; i < N; i++) {
            struct probe *p = &probes[i];
            /* Two sources spill past the frame stack; the rest cycle the modes. */
            int mode = (int)(i % MODES) == 2 && i >= 2 * MODES ? 0 : (int)(i % MODES);
            *p = (struct probe){must_emplace(tf, probe_task, p), i, mode, ex, tf, other, &bad, &kids, &seen};
            char name[32];
            snprintf(name, sizeof name, "p%zu", i);
            ASSERT_OK(weft_task_set_name(p->self, name));
            ASSERT_OK(weft_task_set_data(p->self, p));
            want_kids += mode == 1 ? 1 : mode == 2 ? SPILL : mode == 4 ? 3 : 0;
            nested += mode == 5;
        }
        for (int it = 0; it < 2; it++) {
            atomic_store(&seen, NULL);
            weft_future *f;
            ASSERT_OK(weft_run(ex, tf, &f));
            ASSERT_OK(weft_future_wait(f));
            ASSERT_TRUE(atomic_load(&seen) == f);
            weft_future_destroy(f);
        }
        ASSERT_EQ(atomic_load(&bad), 0);
        ASSERT_EQ(atomic_load(&kids), 2 * want_kids);
        ASSERT_EQ(atomic_load(&other_runs), 2 * nested * 20);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_taskflow_destroy(other));
        weft_executor_destroy(ex);
    }
}

/* ---- counts a stopped run ends with ---- */

static int child_noop(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    return 0;
}

/* Builds its graph, then cancels its own run: the graph starts stopped. */
static int build_then_cancel(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    int n = *(int *)arg;
    for (int i = 0; i < n; i++) weft_emplace(weft_subflow_graph(sf), child_noop, NULL);
    (void)weft_future_cancel((weft_future *)weft_ctx_run(ctx));
    return 0;
}

TEST(a_subflow_graph_that_starts_after_its_run_stopped_counts_its_tasks_skipped_in_the_metrics) {
    /* 3 children start one by one, 40 as a range: both are counted alike. */
    static int sizes[] = {3, 40};
    for (int k = 0; k < 2; k++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1, .metrics = true}, NULL);
        ASSERT_NOT_NULL(ex);
        weft_taskflow *tf = make_taskflow("cancels");
        ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, build_then_cancel, &sizes[k])));
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.skipped, (uint64_t)sizes[k]);
        weft_metrics m;
        ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
        ASSERT_EQ(m.total.skipped, info.skipped); /* was 0 */
        ASSERT_EQ(m.total.tasks, 1u);             /* the subflow task's own call */
        weft_future_destroy(f);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

static int fail3(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    return 3;
}

TEST(a_failed_parallel_run_counts_its_skipped_tasks_in_the_metrics) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1, .metrics = true}, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = make_taskflow("parallel");
    weft_task a = must_emplace(tf, fail3, NULL), b = must_emplace(tf, child_noop, NULL);
    ASSERT_OK(weft_precede(a, b));
    weft_future *f;
    ASSERT_OK(weft_run_n_parallel(ex, tf, 4, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_GT(info.skipped, 0u);
    ASSERT_EQ(m.total.skipped, info.skipped); /* was 0 */
    ASSERT_EQ(m.total.tasks + info.skipped, 8u); /* 4 instances of 2 tasks */
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* A wide run stopped part way, by a failing source or a cancel from one:
 * every task is run or skipped, and the metrics say the same. */
struct stopper {
    int how; /* 0: fail, 1: weft_future_cancel, 2: a token */
    size_t at;
    weft_cancel_token *tok;
    atomic_long ran;
    atomic_int attached; /* the token is attached to the run */
};

struct stop_item {
    struct stopper *s;
    size_t idx;
};

static int stop_task(weft_ctx *ctx, void *arg) {
    struct stop_item *it = arg;
    atomic_fetch_add(&it->s->ran, 1);
    if (it->idx != it->s->at) return 0;
    if (it->s->how == 0) return 9;
    if (it->s->how == 1) (void)weft_future_cancel((weft_future *)weft_ctx_run(ctx));
    else {
        if (!wait_flag(&it->s->attached, 1, 10.0)) return 1;
        (void)weft_cancel_token_cancel(it->s->tok);
    }
    return weft_ctx_check(ctx) == WEFT_ECANCELED ? 0 : 1;
}

TEST(a_wide_run_stopped_by_one_of_its_sources_counts_every_task_once) {
    enum { N = 3000 };
    static struct stop_item items[N];
    for (unsigned workers = 1; workers <= 4; workers *= 2) {
        for (int how = 0; how < 3; how++) {
            weft_executor *ex =
                weft_executor_create(&(weft_executor_config){.workers = workers, .metrics = true}, NULL);
            ASSERT_NOT_NULL(ex);
            struct stopper s = {how, N / 3, weft_cancel_token_create(NULL, NULL), 0, 0};
            ASSERT_NOT_NULL(s.tok);
            weft_taskflow *tf = make_taskflow("stopped");
            for (size_t i = 0; i < N; i++) {
                items[i] = (struct stop_item){&s, i};
                must_emplace(tf, stop_task, &items[i]);
            }
            weft_future *f;
            ASSERT_OK(weft_run(ex, tf, &f));
            ASSERT_OK(weft_cancel_attach(s.tok, f));
            atomic_store(&s.attached, 1);
            ASSERT_STATUS(weft_future_wait(f), how == 0 ? WEFT_ETASK : WEFT_ECANCELED);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            ASSERT_EQ(info.task_code, how == 0 ? 9 : 0);
            ASSERT_EQ((uint64_t)atomic_load(&s.ran) + info.skipped, (uint64_t)N);
            weft_metrics m;
            ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
            ASSERT_EQ(m.total.tasks, (uint64_t)atomic_load(&s.ran));
            ASSERT_EQ(m.total.skipped, info.skipped);
            ASSERT_EQ(m.total.failed, how == 0 ? 1u : 0u);
            weft_future_destroy(f);
            weft_cancel_token_destroy(s.tok);
            ASSERT_OK(weft_taskflow_destroy(tf));
            weft_executor_destroy(ex);
        }
    }
}

/* A profile recorded from the executor's creation (weft_executor_config.profile)
 * is as one weft_profiler_start began: stopping it switches off the metrics it
 * alone switched on, their counts kept. */
TEST(stopping_a_profile_begun_at_create_stops_the_metrics_it_switched_on) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1, .profile = true}, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = make_taskflow("profiled");
    for (int i = 0; i < 40; i++) must_emplace(tf, child_noop, NULL);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_profiler_stop(ex));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_FALSE(m.enabled);
    ASSERT_EQ(m.total.tasks, 40u); /* the profiled run's: was 80, still counting */
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
