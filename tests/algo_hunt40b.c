/* Parallel algorithms called from graph tasks, adversarial round 40 (b).  A
 * job of the call that another worker (a thief) ran had no context of the
 * calling task's run there, as a pipeline stage had (3effb8e): a chunk's wait
 * for its own run hung instead of getting WEFT_EDEADLK, weft_current_ctx()
 * was NULL (or an unrelated task's), so it could not spawn, and it did not see
 * its run's cancellation (fixed in algo/par.c). */
#include "algo_test.h"

#include <string.h>

/* Makes the other workers take jobs: a chunk's element that sleeps now and
 * then gives them time to wake up and steal. */
static atomic_int g_tick;
static void now_and_then_sleep(void) {
    if (atomic_fetch_add(&g_tick, 1) % 64 == 0) sleep_us(100);
}

/* ---- a chunk that waits for its own run --------------------------------------
 *
 * A chunk that another worker runs waits for a run of its task's own
 * taskflow, of the taskflow its task is nested in (a module), and for the
 * run's future: from the calling worker those waits are refused with
 * WEFT_EDEADLK; from a thief they hung the run for ever. */
struct ownwait {
    weft_executor *ex;
    weft_taskflow *own, *parent;
    _Atomic(weft_future *) f;
    weft_for_desc d;
    atomic_int calls, deadlk, other;
    atomic_uint seen;
};
static struct ownwait g_ow;
static void ow_body(size_t lo, size_t hi, void *arg) {
    (void)arg;
    struct ownwait *t = &g_ow;
    for (size_t i = lo; i < hi; i++) {
        int id = weft_executor_worker_id(t->ex);
        if (id >= 0 && id < 32) atomic_fetch_or(&t->seen, 1u << id);
        sleep_us(300); /* time for the other workers to take the next jobs */
        weft_future *f;
        while (!(f = atomic_load(&t->f))) sleep_us(10); /* published by the test once weft_run returns */
        weft_status a = weft_run_and_wait(t->ex, t->own);
        weft_status b = t->parent ? weft_run_and_wait(t->ex, t->parent) : WEFT_EDEADLK;
        weft_status c = weft_future_wait(f);
        atomic_fetch_add(&t->calls, 1);
        if (a == WEFT_EDEADLK && b == WEFT_EDEADLK && c == WEFT_EDEADLK) atomic_fetch_add(&t->deadlk, 1);
        else atomic_fetch_add(&t->other, 1);
    }
}
static int ow_direct(weft_ctx *ctx, void *arg) {
    (void)arg;
    weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1};
    return weft_parallel_for_range(weft_ctx_executor(ctx), 0, 24, 1, ow_body, NULL, &cfg);
}
TEST(algo_a_chunk_run_by_another_worker_that_waits_for_its_own_run_gets_edeadlk_instead_of_hanging) {
    for (unsigned wk = 2; wk <= 4; wk += 2)
        for (int in_module = 0; in_module < 2; in_module++)
            for (int emplaced = 0; emplaced < 2; emplaced++) {
                memset(&g_ow, 0, sizeof g_ow);
                g_ow.ex = make_executor(wk);
                weft_taskflow *own = make_taskflow("algo-graph"), *top = own;
                if (in_module) {
                    top = make_taskflow("parent");
                    ASSERT_FALSE(weft_task_is_null(weft_emplace_module(top, own)));
                    g_ow.parent = top;
                }
                g_ow.own = own;
                g_ow.d = (weft_for_desc){0, 24, 1, ow_body, NULL, {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1}};
                if (emplaced) ASSERT_FALSE(weft_task_is_null(weft_emplace_for(own, &g_ow.d)));
                else must_emplace(own, ow_direct, NULL);
                watchdog_start(20);
                weft_future *f;
                ASSERT_OK(weft_run(g_ow.ex, top, &f));
                atomic_store(&g_ow.f, f);
                ASSERT_OK(weft_future_wait(f));
                watchdog_stop();
                weft_future_destroy(f);
                ASSERT_EQ(atomic_load(&g_ow.calls), 24);
                ASSERT_EQ(atomic_load(&g_ow.other), 0);
                ASSERT_EQ(atomic_load(&g_ow.deadlk), 24);
                /* Nothing was submitted by the refused waits: both graphs are idle. */
                ASSERT_OK(weft_taskflow_clear(own));
                if (in_module) ASSERT_OK(weft_taskflow_destroy(top));
                ASSERT_OK(weft_taskflow_destroy(own));
                weft_executor_destroy(g_ow.ex);
            }
}

/* ---- every algorithm's callbacks belong to their task's run -------------------
 *
 * Whatever worker runs them, the callbacks of a call made by a graph task find
 * a context (weft_current_ctx) of that task's run: a wait from them for the
 * run's future is refused (WEFT_EDEADLK), not timed out (a scan's operation,
 * which must not wait, only looks at its context), and the context is of the
 * executor running the call. */
struct inrun {
    weft_executor *ex;
    _Atomic(weft_future *) f;
    int which;
    atomic_long calls;
    atomic_int nullctx, wrong, foreign;
};
static struct inrun g_ir;
static void ir_check(void) {
    struct inrun *t = &g_ir;
    atomic_fetch_add(&t->calls, 1);
    now_and_then_sleep();
    weft_ctx *cx = weft_current_ctx();
    if (!cx) {
        atomic_fetch_add(&t->nullctx, 1);
        return;
    }
    if (weft_ctx_executor(cx) != t->ex) atomic_fetch_add(&t->foreign, 1);
    /* A scan's operation must not wait, even for no time (weft/algo.h). */
    weft_future *f = t->which == 3 ? NULL : atomic_load(&t->f);
    if (f && weft_future_wait_for(f, 0) != WEFT_EDEADLK) atomic_fetch_add(&t->wrong, 1);
}
static void ir_elem(void *e, void *arg) { (void)arg; ir_check(); (*(uint64_t *)e)++; }
static void ir_unary(const void *in, void *out, void *arg) {
    (void)arg;
    ir_check();
    *(uint64_t *)out = *(const uint64_t *)in * 3;
}
static void ir_add(void *acc, const void *x, void *arg) {
    (void)arg;
    ir_check();
    *(uint64_t *)acc += *(const uint64_t *)x;
}
static int ir_cmp(const void *a, const void *b, void *arg) {
    (void)arg;
    ir_check();
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}
static bool ir_pred(const void *e, void *arg) {
    (void)arg;
    ir_check();
    return *(const uint64_t *)e == UINT64_MAX; /* none: every element is looked at */
}
enum { IR_N = 3001, IR_KINDS = 7 };
static uint64_t g_in[IR_N], g_out[IR_N];
static int ir_task(weft_ctx *ctx, void *arg) {
    (void)arg;
    weft_executor *ex = weft_ctx_executor(ctx);
    weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 16};
    uint64_t r = 0;
    size_t idx = 0;
    switch (g_ir.which) {
    case 0: return weft_parallel_for_each(ex, g_out, IR_N, sizeof(uint64_t), ir_elem, NULL, &cfg);
    case 1: return weft_parallel_transform(ex, g_in, 8, g_out, 8, IR_N, ir_unary, NULL, &cfg);
    case 2: return weft_parallel_reduce(ex, g_in, IR_N, 8, &r, ir_add, NULL, &cfg);
    case 3: return weft_parallel_inclusive_scan(ex, g_in, g_out, IR_N, 8, NULL, ir_add, NULL, &cfg);
    case 4: return weft_parallel_sort(ex, g_out, IR_N, 8, ir_cmp, NULL, NULL);
    case 5: return weft_parallel_find_if(ex, g_in, IR_N, 8, ir_pred, NULL, &idx, &cfg);
    default: return weft_parallel_min_element(ex, g_in, IR_N, 8, ir_cmp, NULL, &idx, &cfg);
    }
}
TEST(algo_every_algorithms_callbacks_on_every_worker_run_in_a_context_of_their_tasks_run) {
    for (size_t wi = 0; wi < NWORKERS; wi++)
        for (int which = 0; which < IR_KINDS; which++) {
            memset(&g_ir, 0, sizeof g_ir);
            g_ir.ex = make_executor(WORKERS[wi]);
            g_ir.which = which;
            for (size_t i = 0; i < IR_N; i++) g_in[i] = g_out[i] = (i * 7919u) % IR_N;
            weft_taskflow *tf = make_taskflow("algo-in-run");
            must_emplace(tf, ir_task, NULL);
            watchdog_start(20);
            weft_future *f;
            ASSERT_OK(weft_run(g_ir.ex, tf, &f));
            atomic_store(&g_ir.f, f);
            ASSERT_OK(weft_future_wait(f));
            watchdog_stop();
            weft_future_destroy(f);
            ASSERT_TRUE(atomic_load(&g_ir.calls) > 0);
            ASSERT_EQ(atomic_load(&g_ir.nullctx), 0);
            ASSERT_EQ(atomic_load(&g_ir.foreign), 0);
            ASSERT_EQ(atomic_load(&g_ir.wrong), 0);
            ASSERT_OK(weft_taskflow_destroy(tf));
            weft_executor_destroy(g_ir.ex);
        }
}

/* ---- spawning from a chunk ---------------------------------------------------
 *
 * A chunk spawns children through weft_current_ctx() and syncs them, on every
 * worker.  One it leaves unsynced (a misuse: weft/algo.h says to sync before
 * returning) is still run once, before its task ends: on another worker it is
 * synced when the chunk's job ends, before the call returns (after that the
 * run may be gone). */
enum { SP_N = 400 };
struct spawnchunk {
    atomic_int kids[SP_N];
    atomic_int left[SP_N];
    atomic_int bad, nullctx, calls;
    weft_for_desc d;
};
static struct spawnchunk g_sc;
static int sc_kid(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add(&g_sc.kids[(uintptr_t)arg], 1);
    return 0;
}
static int sc_left(weft_ctx *ctx, void *arg) {
    (void)ctx;
    sleep_us(20);
    atomic_fetch_add(&g_sc.left[(uintptr_t)arg], 1);
    return 0;
}
static void sc_body(size_t lo, size_t hi, void *arg) {
    (void)arg;
    for (size_t i = lo; i < hi; i++) {
        atomic_fetch_add(&g_sc.calls, 1);
        now_and_then_sleep();
        weft_ctx *cx = weft_current_ctx();
        if (!cx) {
            atomic_fetch_add(&g_sc.nullctx, 1);
            continue;
        }
        if (weft_spawn(cx, sc_kid, (void *)(uintptr_t)i) != WEFT_OK ||
            weft_spawn(cx, sc_kid, (void *)(uintptr_t)i) != WEFT_OK) {
            atomic_fetch_add(&g_sc.bad, 1);
            continue;
        }
        int a = weft_sync(cx), b = weft_sync(cx);
        if (a != 0 || b != 0 || atomic_load(&g_sc.kids[i]) != 2) atomic_fetch_add(&g_sc.bad, 1);
    }
    /* One child per range left to the end of the job. */
    weft_ctx *cx = weft_current_ctx();
    if (cx && weft_spawn(cx, sc_left, (void *)(uintptr_t)lo) != WEFT_OK) atomic_fetch_add(&g_sc.bad, 1);
}
static int sc_direct(weft_ctx *ctx, void *arg) {
    (void)arg;
    weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 3};
    return weft_parallel_for_range(weft_ctx_executor(ctx), 0, SP_N, 1, sc_body, NULL, &cfg);
}
static int sc_after(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    for (size_t lo = 0; lo < SP_N; lo += 3)
        if (atomic_load(&g_sc.left[lo]) != 1) atomic_fetch_add(&g_sc.bad, 1);
    return 0;
}
TEST(algo_chunks_on_every_worker_spawn_and_sync_through_their_current_context) {
    for (size_t wi = 0; wi < NWORKERS; wi++)
        for (int emplaced = 0; emplaced < 2; emplaced++) {
            memset(&g_sc, 0, sizeof g_sc);
            weft_executor *ex = make_executor(WORKERS[wi]);
            weft_taskflow *tf = make_taskflow("spawning");
            g_sc.d = (weft_for_desc){0, SP_N, 1, sc_body, NULL, {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 3}};
            weft_task t = emplaced ? weft_emplace_for(tf, &g_sc.d) : must_emplace(tf, sc_direct, NULL);
            ASSERT_FALSE(weft_task_is_null(t));
            ASSERT_OK(weft_precede(t, must_emplace(tf, sc_after, NULL)));
            watchdog_start(20);
            ASSERT_OK(weft_run_and_wait(ex, tf));
            watchdog_stop();
            ASSERT_EQ(atomic_load(&g_sc.calls), SP_N);
            ASSERT_EQ(atomic_load(&g_sc.nullctx), 0);
            ASSERT_EQ(atomic_load(&g_sc.bad), 0);
            for (size_t i = 0; i < SP_N; i++) ASSERT_EQ(atomic_load(&g_sc.kids[i]), 2);
            ASSERT_OK(weft_taskflow_destroy(tf));
            weft_executor_destroy(ex);
        }
}

/* ---- cancellation seen from a chunk -------------------------------------------
 *
 * A call made directly by a graph task runs all its chunks (only an emplaced
 * call stops with its run), but a chunk that starts after the run was
 * cancelled sees it in its context, on every worker, and can stop early. */
struct cancelchunk {
    weft_future *f;
    atomic_int started, after_cancel, saw, missed;
};
static struct cancelchunk g_cc;
static void cc_body(size_t lo, size_t hi, void *arg) {
    (void)arg;
    for (size_t i = lo; i < hi; i++) {
        atomic_store(&g_cc.started, 1);
        sleep_us(100);
        if (atomic_load(&g_cc.after_cancel)) {
            weft_ctx *cx = weft_current_ctx();
            if (cx && weft_ctx_cancelled(cx)) atomic_fetch_add(&g_cc.saw, 1);
            else atomic_fetch_add(&g_cc.missed, 1);
        }
    }
}
static int cc_task(weft_ctx *ctx, void *arg) {
    (void)arg;
    weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1};
    return weft_parallel_for_range(weft_ctx_executor(ctx), 0, 300, 1, cc_body, NULL, &cfg);
}
TEST(algo_chunks_on_every_worker_see_their_runs_cancellation_in_their_current_context) {
    for (size_t wi = 1; wi < NWORKERS; wi++) {
        memset(&g_cc, 0, sizeof g_cc);
        weft_executor *ex = make_executor(WORKERS[wi]);
        weft_taskflow *tf = make_taskflow("cancelled");
        must_emplace(tf, cc_task, NULL);
        watchdog_start(20);
        ASSERT_OK(weft_run(ex, tf, &g_cc.f));
        ASSERT_TRUE(wait_flag(&g_cc.started, 1, 5));
        sleep_us(3000);
        ASSERT_OK(weft_future_cancel(g_cc.f));
        atomic_store(&g_cc.after_cancel, 1);
        ASSERT_STATUS(weft_future_wait(g_cc.f), WEFT_ECANCELED);
        watchdog_stop();
        weft_future_destroy(g_cc.f);
        ASSERT_EQ(atomic_load(&g_cc.missed), 0);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* ---- other callers: a chunk, a prioritised emplaced call, an async task, a
 *      pipeline stage ---------------------------------------------------------
 *
 * The context a job carries to another worker is its caller's, whatever that
 * is: a call nested in a chunk (itself on a thief), an emplaced call queued
 * at a priority (its jobs go through the scheduling layer), a call from an
 * async task (its future's own), or from a pipeline stage on any worker.  On
 * every worker the innermost callbacks find a context in which a wait for
 * the run's (or async task's) future is refused. */
struct others {
    weft_executor *ex;
    _Atomic(weft_future *) f;
    atomic_long calls;
    atomic_int nullctx, wrong;
    weft_for_desc d;
};
static struct others g_ot;
static void ot_inner(size_t lo, size_t hi, void *arg) {
    (void)arg;
    for (size_t i = lo; i < hi; i++) {
        atomic_fetch_add(&g_ot.calls, 1);
        now_and_then_sleep();
        weft_ctx *cx = weft_current_ctx();
        if (!cx) {
            atomic_fetch_add(&g_ot.nullctx, 1);
            continue;
        }
        weft_future *f;
        while (!(f = atomic_load(&g_ot.f))) sleep_us(10);
        if (weft_future_wait_for(f, 0) != WEFT_EDEADLK) atomic_fetch_add(&g_ot.wrong, 1);
    }
}
static void ot_outer(size_t lo, size_t hi, void *arg) {
    (void)arg;
    weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 4};
    for (size_t i = lo; i < hi; i++)
        if (weft_parallel_for_range(g_ot.ex, 0, 64, 1, ot_inner, NULL, &cfg) != WEFT_OK)
            atomic_fetch_add(&g_ot.wrong, 1);
}
static int ot_nested_task(weft_ctx *ctx, void *arg) {
    (void)arg;
    weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1};
    return weft_parallel_for_range(weft_ctx_executor(ctx), 0, 8, 1, ot_outer, NULL, &cfg);
}
static int ot_async(weft_ctx *ctx, void *arg) {
    (void)arg;
    weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 2};
    return weft_parallel_for_range(weft_ctx_executor(ctx), 0, 256, 1, ot_inner, NULL, &cfg);
}
static int ot_first(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) >= 16) return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 5;
    return 0;
}
static int ot_stage(weft_pipeflow *pf, void *arg) {
    (void)pf, (void)arg;
    weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 4};
    return weft_parallel_for_range(g_ot.ex, 0, 32, 1, ot_inner, NULL, &cfg) == WEFT_OK ? 0 : 7;
}
TEST(algo_nested_prioritised_async_and_stage_calls_callbacks_on_every_worker_belong_to_their_callers_run) {
    for (size_t wi = 0; wi < NWORKERS; wi++)
        for (int kind = 0; kind < 4; kind++) {
            memset(&g_ot, 0, sizeof g_ot);
            g_ot.ex = make_executor(WORKERS[wi]);
            weft_taskflow *tf = make_taskflow("callers");
            weft_pipeline *p = NULL;
            long want = 0;
            if (kind == 0) {
                must_emplace(tf, ot_nested_task, NULL);
                want = 8 * 64;
            } else if (kind == 1) {
                g_ot.d = (weft_for_desc){0, 300, 1, ot_inner, NULL, {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 2}};
                weft_task t = weft_emplace_for(tf, &g_ot.d);
                ASSERT_OK(weft_task_set_priority(t, WEFT_PRIORITY_HIGH));
                want = 300;
            } else if (kind == 3) {
                weft_stage st[2] = {{WEFT_STAGE_SERIAL, ot_first, NULL, "first"},
                                    {WEFT_STAGE_PARALLEL, ot_stage, NULL, "algo"}};
                p = weft_pipeline_create(4, st, 2, NULL);
                ASSERT_NOT_NULL(p);
                ASSERT_OK(weft_pipeline_set_scheduling(p, WEFT_PIPELINE_SPREAD));
                ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
                want = 16 * 32;
            }
            watchdog_start(20);
            weft_future *f;
            if (kind == 2) {
                ASSERT_OK(weft_async(g_ot.ex, ot_async, NULL, &f));
                want = 256;
            } else {
                ASSERT_OK(weft_run(g_ot.ex, tf, &f));
            }
            atomic_store(&g_ot.f, f);
            ASSERT_OK(weft_future_wait(f));
            watchdog_stop();
            weft_future_destroy(f);
            ASSERT_EQ(atomic_load(&g_ot.calls), want);
            ASSERT_EQ(atomic_load(&g_ot.nullctx), 0);
            ASSERT_EQ(atomic_load(&g_ot.wrong), 0);
            ASSERT_OK(weft_taskflow_destroy(tf));
            if (p) ASSERT_OK(weft_pipeline_destroy(p));
            weft_executor_destroy(g_ot.ex);
        }
}
