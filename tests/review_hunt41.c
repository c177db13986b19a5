/* Session 41 review (h41-9): attacks on the session's riskiest changes, one
 * test per suspicion:
 *  - cc0a61d (a module built in a running subflow holds its body): the holds
 *    are given back once, and only once, on every path: a module emplaced
 *    after a weft_subflow_join that failed to start (its cycle) included;
 *  - 8888bb0 (weft_composition_destroy refuses a busy graph) with cc0a61d: a
 *    composition's graph used as a module body built in a running subflow
 *    is busy until that run ends, then destroyable;
 *  - 7561359 (removing a callback running further up the thread): a
 *    callback registered on the same token inside its callback (it runs at
 *    once) removes the outer one's handle: no wait, no leak;
 *  - 84bd7f9 (GPU stream guards counted): threads opening and closing
 *    guards on a small pool leave every count at zero: afterwards each
 *    stream is reserved once by as many begins;
 *  - daf6f6e (placeholders counted as run): in subflow graphs, module
 *    bodies and under semaphores, each counts once;
 *  - dc6cc41 with 195d636 (the two fairness flips): on one worker a NORMAL
 *    handle chain, a flooded injector and main's submitter queue all progress.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <weft.h>
#include <weft/gpu.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static int noop(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}

/* ---- cc0a61d: subflow module holds ------------------------------------------- */

static weft_taskflow *R_body1, *R_body2;
static weft_status R_join;

/* Emplaces a module of body1 and a cycle, joins (refused: the cycle), then
 * emplaces a module of body2 and returns 0: the graph's start fails again. */
static int r_build_after_failed_join(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx, (void)arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    if (weft_task_is_null(weft_emplace_module(g, R_body1))) return 100;
    weft_task a = weft_emplace(g, noop, NULL), b = weft_emplace(g, noop, NULL);
    if (weft_task_is_null(a) || weft_task_is_null(b)) return 101;
    if (weft_precede(a, b) != WEFT_OK || weft_precede(b, a) != WEFT_OK) return 102;
    R_join = weft_subflow_join(sf);
    if (weft_task_is_null(weft_emplace_module(g, R_body2))) return 103;
    return 0;
}

TEST(a_subflow_module_emplaced_after_a_failed_join_leaves_every_body_free_after_the_run) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = weft_taskflow_create("outer", NULL);
    R_body1 = weft_taskflow_create("body1", NULL);
    R_body2 = weft_taskflow_create("body2", NULL);
    ASSERT_NOT_NULL(tf);
    ASSERT_NOT_NULL(R_body1);
    ASSERT_NOT_NULL(R_body2);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(R_body1, noop, NULL)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace(R_body2, noop, NULL)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, r_build_after_failed_join, NULL)));
    R_join = WEFT_OK;
    ASSERT_NE(weft_run_and_wait(ex, tf), WEFT_OK); /* the cycle */
    ASSERT_NE(R_join, WEFT_OK);                     /* the join was refused */
    /* The run has ended: both bodies are free.  Without the fix the first
     * one's hold was given back twice: its count wrapped, busy for ever. */
    ASSERT_OK(weft_taskflow_clear(R_body1));
    ASSERT_OK(weft_taskflow_clear(R_body2));
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(R_body1));
    ASSERT_OK(weft_taskflow_destroy(R_body2));
    weft_executor_destroy(ex);
}

/* ---- 8888bb0 with cc0a61d: a composition as a subflow module's body ----------- */

static weft_composition *C_comp;
static weft_status C_busy;

static int c_build(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx, (void)arg;
    if (weft_task_is_null(weft_emplace_module(weft_subflow_graph(sf), weft_composition_graph(C_comp)))) return 100;
    /* The module is built and not run yet: the composition is busy. */
    C_busy = weft_composition_destroy(C_comp);
    return 0;
}

TEST(a_composition_whose_graph_a_running_subflow_module_uses_refuses_its_destroy_until_the_run_ends) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    C_comp = weft_composition_create("comp", NULL);
    ASSERT_NOT_NULL(C_comp);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(weft_composition_graph(C_comp), noop, NULL)));
    weft_taskflow *tf = weft_taskflow_create("outer", NULL);
    ASSERT_NOT_NULL(tf);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, c_build, NULL)));
    for (int i = 0; i < 3; i++) {
        C_busy = WEFT_OK;
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(C_busy, WEFT_EBUSY);
    }
    ASSERT_OK(weft_composition_destroy(C_comp));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- 7561359: a callback on the same token removes the outer one ------------- */

static weft_cancel_token *K_t;
static weft_cancel_callback *K_outer, *K_inner;
static int K_removed = -1, K_inner_ran, K_outer_after;

static void k_inner(void *arg, const char *reason) {
    (void)arg, (void)reason;
    K_inner_ran++;
    K_removed = weft_cancel_callback_remove(K_outer); /* runs further up: no wait */
}

static void k_outer(void *arg, const char *reason) {
    (void)arg, (void)reason;
    /* t is cancelled: the new callback runs at once, inside this one. */
    if (weft_cancel_token_on_cancel(K_t, k_inner, NULL, &K_inner) != WEFT_OK) return;
    K_outer_after++;
}

TEST(a_callback_registered_inside_a_callback_of_the_same_token_may_remove_the_outer_one) {
    alarm(10); /* a wait for the outer callback never ends: fail, do not hang */
    K_t = weft_cancel_token_create(NULL, NULL);
    ASSERT_NOT_NULL(K_t);
    ASSERT_OK(weft_cancel_token_on_cancel(K_t, k_outer, NULL, &K_outer));
    ASSERT_OK(weft_cancel_token_cancel(K_t));
    ASSERT_EQ(K_inner_ran, 1);
    ASSERT_EQ(K_removed, 0); /* it was running: false */
    ASSERT_EQ(K_outer_after, 1);
    ASSERT_FALSE(weft_cancel_callback_remove(K_inner));
    /* Re-armed, the token runs neither again. */
    ASSERT_OK(weft_cancel_token_reset(K_t));
    ASSERT_OK(weft_cancel_token_cancel(K_t));
    ASSERT_EQ(K_inner_ran, 1);
    ASSERT_EQ(K_outer_after, 1);
    weft_cancel_token_destroy(K_t);
    alarm(0);
}

/* ---- 84bd7f9: GPU stream guards counted ------------------------------------- */

enum { G_THREADS = 4, G_ROUNDS = 3000, G_STREAMS = 2 };
static weft_gpu_stream_pool *G_pool;
static atomic_int G_bad;

static void *g_churn(void *arg) {
    (void)arg;
    for (int i = 0; i < G_ROUNDS; i++) {
        weft_gpu_stream_guard g1, g2;
        weft_gpu_stream *a = weft_gpu_stream_begin(G_pool, &g1);
        weft_gpu_stream *b = (i & 1) ? weft_gpu_stream_begin(G_pool, &g2) : NULL;
        if (!a || ((i & 1) && !b)) atomic_fetch_add(&G_bad, 1);
        if (b && weft_gpu_stream_end(&g2) != WEFT_OK) atomic_fetch_add(&G_bad, 1);
        if (weft_gpu_stream_end(&g1) != WEFT_OK) atomic_fetch_add(&G_bad, 1);
        /* A second end of a closed guard is refused and gives nothing back. */
        if (weft_gpu_stream_end(&g1) != WEFT_EINVAL) atomic_fetch_add(&G_bad, 1);
    }
    return NULL;
}

TEST(threads_sharing_and_reserving_gpu_streams_leave_every_stream_free_at_the_end) {
    weft_status st;
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 1}, &st);
    if (!d) SKIP("no GPU emulator");
    G_pool = weft_gpu_stream_pool_create(d, G_STREAMS, &st);
    ASSERT_OK(st);
    pthread_t th[G_THREADS];
    for (int i = 0; i < G_THREADS; i++) ASSERT_EQ(pthread_create(&th[i], NULL, g_churn, NULL), 0);
    for (int i = 0; i < G_THREADS; i++) pthread_join(th[i], NULL);
    ASSERT_EQ(atomic_load(&G_bad), 0);
    /* Every count is back at zero: G_STREAMS begins reserve G_STREAMS
     * different streams, whatever the rotation. */
    for (int r = 0; r < 3; r++) {
        weft_gpu_stream_guard g[G_STREAMS];
        weft_gpu_stream *s[G_STREAMS];
        for (int i = 0; i < G_STREAMS; i++) s[i] = weft_gpu_stream_begin(G_pool, &g[i]);
        ASSERT_TRUE(s[0] != s[1]);
        for (int i = 0; i < G_STREAMS; i++) ASSERT_OK(weft_gpu_stream_end(&g[i]));
    }
    weft_gpu_stream_pool_destroy(G_pool);
    weft_gpu_close(d);
}

/* ---- daf6f6e: placeholders counted in nested graphs and under semaphores ----- */

static int p_sub(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx, (void)arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task a = weft_placeholder(g), b = weft_placeholder(g);
    if (weft_task_is_null(a) || weft_task_is_null(b)) return 100;
    return weft_precede(a, b) == WEFT_OK ? 0 : 101;
}

TEST(placeholders_in_subflows_module_bodies_and_under_semaphores_count_once_each_as_run) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = weft_taskflow_create("outer", NULL), *body = weft_taskflow_create("body", NULL);
    ASSERT_NOT_NULL(tf);
    ASSERT_NOT_NULL(body);
    weft_semaphore *sem = weft_semaphore_create(1, NULL);
    ASSERT_NOT_NULL(sem);
    /* body: a placeholder, then a task. */
    weft_task bp = weft_placeholder(body), bt = weft_emplace(body, noop, NULL);
    ASSERT_OK(weft_precede(bp, bt));
    /* tf: a subflow of 2 placeholders -> a module of body -> a placeholder
     * holding the semaphore; and a second placeholder holding it too. */
    weft_task s = weft_emplace_subflow(tf, p_sub, NULL), m = weft_emplace_module(tf, body);
    weft_task p = weft_placeholder(tf), q = weft_placeholder(tf);
    ASSERT_FALSE(weft_task_is_null(s) || weft_task_is_null(m) || weft_task_is_null(p) || weft_task_is_null(q));
    ASSERT_OK(weft_precede(s, m));
    ASSERT_OK(weft_precede(m, p));
    ASSERT_OK(weft_task_acquire(p, sem));
    ASSERT_OK(weft_task_release(p, sem));
    ASSERT_OK(weft_task_acquire(q, sem));
    ASSERT_OK(weft_task_release(q, sem));
    /* The subflow's call and its 2, the body's 2 (not the module), p, q. */
    const uint64_t want = 1 + 2 + 2 + 1 + 1;
    for (int round = 0; round < 5; round++) {
        ASSERT_OK(weft_metrics_enable(ex, true));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        weft_metrics mt;
        ASSERT_OK(weft_executor_metrics(ex, &mt, NULL, 0));
        ASSERT_EQ(mt.total.tasks, want);
        ASSERT_EQ(mt.total.succeeded, want);
        ASSERT_EQ(mt.total.skipped, 0u);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
    ASSERT_OK(weft_semaphore_destroy(sem));
    weft_executor_destroy(ex);
}

/* ---- dc6cc41 with 195d636: both fairness flips at once ------------------------ */

/* One worker, three shares of work that each never run empty: NORMAL tasks
 * that requeue themselves with handles (sched/'s queue), other threads that
 * keep the injector full, and main's submitter queue.  Each of the two flips
 * alone was tested; together one could cancel the other (the look that puts
 * the others first always landing on the injector, say).  Every share
 * progresses: main's silent task runs, and so do the flood and the chain. */
static atomic_int F_stop, F_waiting, F_flood_ran, F_chain_ran, F_main_ran;

static int f_chain(weft_ctx *ctx, void *arg) {
    (void)arg;
    atomic_fetch_add(&F_chain_ran, 1);
    if (atomic_load(&F_stop)) return 0;
    weft_sched_handle h;
    weft_async_options o = {.priority = WEFT_PRIORITY_NORMAL, .handle = &h};
    if (weft_async_with(weft_ctx_executor(ctx), f_chain, NULL, &o, NULL) != WEFT_OK) abort();
    return 0;
}

static int f_flood(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    for (volatile int i = 0; i < 2000; i++) {
    }
    atomic_fetch_add(&F_flood_ran, 1);
    atomic_fetch_sub(&F_waiting, 1);
    return 0;
}

static void *f_flooder(void *arg) {
    weft_executor *ex = arg;
    while (!atomic_load(&F_stop)) {
        if (atomic_load(&F_waiting) >= 3 * 4096) {
            sched_yield();
            continue;
        }
        atomic_fetch_add(&F_waiting, 1);
        weft_future *f;
        if (weft_async(ex, f_flood, NULL, &f) != WEFT_OK) abort();
        weft_future_destroy(f);
    }
    return NULL;
}

static int f_main(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    atomic_store(&F_main_ran, 1);
    return 0;
}

TEST(handle_chains_a_flooded_injector_and_mains_queue_all_progress_on_one_worker) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    ASSERT_NOT_NULL(ex);
    atomic_store(&F_stop, 0);
    ASSERT_OK(weft_silent_async(ex, f_chain, NULL));
    pthread_t th[3];
    for (int i = 0; i < 3; i++) ASSERT_EQ(pthread_create(&th[i], NULL, f_flooder, ex), 0);
    usleep(20000); /* the injector full, the chain going */
    int flood0 = atomic_load(&F_flood_ran), chain0 = atomic_load(&F_chain_ran);
    ASSERT_OK(weft_silent_async(ex, f_main, NULL));
    int ran = 0;
    for (int i = 0; i < 400 && !(ran = atomic_load(&F_main_ran)); i++) usleep(5000);
    usleep(20000);
    int flood1 = atomic_load(&F_flood_ran), chain1 = atomic_load(&F_chain_ran);
    atomic_store(&F_stop, 1);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_executor_destroy(ex);
    if (getenv("REVIEW_VERBOSE")) printf("flood %d->%d chain %d->%d\n", flood0, flood1, chain0, chain1);
    ASSERT_TRUE(ran);           /* main's submitter queue */
    ASSERT_TRUE(flood1 > flood0); /* the injector */
    ASSERT_TRUE(chain1 > chain0); /* the source's NORMAL work */
}

/* ---- cc0a61d: more paths of a subflow module's hold --------------------------- */

enum { H_DETACH, H_CLEAR_REBUILD, H_CANCEL_FIRST, H_NESTED_BODIES, H_WAYS };
static weft_taskflow *H_body, *H_inner;
static int H_way;

static int h_fail(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 7;
}

static int h_build(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx, (void)arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task m = weft_emplace_module(g, H_body);
    if (weft_task_is_null(m)) return 100;
    switch (H_way) {
    case H_DETACH:
        if (weft_subflow_detach(sf) != WEFT_OK) return 101;
        break;
    case H_CLEAR_REBUILD: /* gives the hold back, then takes it again */
        if (weft_taskflow_clear(g) != WEFT_OK) return 102;
        if (weft_task_is_null(weft_emplace_module(g, H_body))) return 103;
        if (weft_task_is_null(weft_emplace_module(g, H_body))) return 104;
        break;
    case H_CANCEL_FIRST: { /* a failing task ahead of the module: it is skipped */
        weft_task f = weft_emplace(g, h_fail, NULL);
        if (weft_task_is_null(f) || weft_precede(f, m) != WEFT_OK) return 105;
        break;
    }
    case H_NESTED_BODIES: /* body -> inner, twice through the graph */
        if (weft_task_is_null(weft_emplace_module(g, H_inner))) return 106;
        break;
    }
    return 0;
}

TEST(a_subflow_modules_bodies_are_free_after_detached_cleared_failing_and_nested_runs) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    for (H_way = 0; H_way < H_WAYS; H_way++) {
        weft_taskflow *tf = weft_taskflow_create("outer", NULL);
        H_body = weft_taskflow_create("body", NULL);
        H_inner = weft_taskflow_create("inner", NULL);
        ASSERT_NOT_NULL(tf);
        ASSERT_NOT_NULL(H_body);
        ASSERT_NOT_NULL(H_inner);
        ASSERT_FALSE(weft_task_is_null(weft_emplace(H_inner, noop, NULL)));
        ASSERT_FALSE(weft_task_is_null(weft_emplace_module(H_body, H_inner)));
        ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, h_build, NULL)));
        for (int r = 0; r < 3; r++) {
            weft_status st = weft_run_and_wait(ex, tf);
            if (H_way == H_CANCEL_FIRST) ASSERT_NE(st, WEFT_OK);
            else ASSERT_OK(st);
            /* The run has ended: every body is free. */
            ASSERT_OK(weft_taskflow_set_name(H_body, "body"));
            ASSERT_OK(weft_taskflow_set_name(H_inner, "inner"));
        }
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_taskflow_destroy(H_body));
        ASSERT_OK(weft_taskflow_destroy(H_inner));
    }
    weft_executor_destroy(ex);
}

/* ---- 7561359: the last reference dropped by a remove inside a callback -------- */

/* cancel.h allows a callback to drop a reference of its token that is not
 * the last (its handle holds one) and to remove its own handle, or, since
 * 7561359, the handle of a callback further up the same thread.  The remove
 * drops the handle's reference: the token's last one, while its cancel was
 * still running its callbacks (ASan: heap-use-after-free in run_unlocked). */
static weft_cancel_token *L_t1, *L_t2;
static weft_cancel_callback *L_h1, *L_h2;
static int L_way, L_inner_ran;

static void l_teardown(void) {
    weft_cancel_token_destroy(L_t1);          /* the owner's: not the last, the handle holds one */
    (void)weft_cancel_callback_remove(L_h1);  /* running (here, or further up): false, drops the last */
}

static void l_inner(void *arg, const char *reason) {
    (void)arg, (void)reason;
    L_inner_ran++;
    l_teardown();
}

static void l_outer(void *arg, const char *reason) {
    (void)arg, (void)reason;
    if (L_way == 0) l_teardown();                       /* its own handle */
    else (void)weft_cancel_token_cancel(L_t2);          /* t2's callback tears t1 down */
}

TEST(a_callback_that_drops_its_tokens_owner_reference_and_removes_a_running_handle_leaves_the_cancel_sound) {
    for (L_way = 0; L_way < 2; L_way++) {
        L_inner_ran = 0;
        L_t1 = weft_cancel_token_create(NULL, NULL);
        L_t2 = weft_cancel_token_create(NULL, NULL);
        ASSERT_NOT_NULL(L_t1);
        ASSERT_NOT_NULL(L_t2);
        ASSERT_OK(weft_cancel_token_on_cancel(L_t1, l_outer, NULL, &L_h1));
        ASSERT_OK(weft_cancel_token_on_cancel(L_t2, l_inner, NULL, &L_h2));
        /* The caller's pointer is the owner's reference, which the callback
         * drops: the cancel must not touch the token after its last one. */
        ASSERT_OK(weft_cancel_token_cancel(L_t1));
        ASSERT_EQ(L_inner_ran, L_way);
        if (L_way == 0) ASSERT_TRUE(weft_cancel_callback_remove(L_h2)); /* never ran */
        else ASSERT_FALSE(weft_cancel_callback_remove(L_h2));
        weft_cancel_token_destroy(L_t2);
    }
}

/* ---- 7561359 under threads: nested removes while other threads remove ------- */

/* Thread A cancels t1; t1's callback cancels t2, whose callback removes t1's
 * handle (running further up: false at once).  Thread B removes t2's handle
 * meanwhile: it waits for t2's callback if that is running on A, else takes
 * it off.  Repeated: no hang, no handle freed twice, each callback at most
 * once, and when B's remove says true the inner callback never ran. */
static struct {
    weft_cancel_token *t1, *t2;
    weft_cancel_callback *h1, *h2;
    atomic_int inner, outer, h1_result, go;
} N;

static void n_inner(void *arg, const char *reason) {
    (void)arg, (void)reason;
    atomic_fetch_add(&N.inner, 1);
    atomic_store(&N.h1_result, weft_cancel_callback_remove(N.h1) ? 1 : 0);
}

static void n_outer(void *arg, const char *reason) {
    (void)arg, (void)reason;
    atomic_fetch_add(&N.outer, 1);
    (void)weft_cancel_token_cancel(N.t2);
}

static void *n_remover(void *arg) {
    (void)arg;
    while (!atomic_load(&N.go)) {
    }
    return (void *)(intptr_t)(weft_cancel_callback_remove(N.h2) ? 1 : 0);
}

TEST(nested_removes_race_with_removes_from_other_threads_without_a_hang_or_a_double_free) {
    alarm(30);
    for (int i = 0; i < 300; i++) {
        N.t1 = weft_cancel_token_create(NULL, NULL);
        N.t2 = weft_cancel_token_create(NULL, NULL);
        ASSERT_NOT_NULL(N.t1);
        ASSERT_NOT_NULL(N.t2);
        atomic_store(&N.inner, 0);
        atomic_store(&N.outer, 0);
        atomic_store(&N.h1_result, -1);
        atomic_store(&N.go, 0);
        ASSERT_OK(weft_cancel_token_on_cancel(N.t1, n_outer, NULL, &N.h1));
        ASSERT_OK(weft_cancel_token_on_cancel(N.t2, n_inner, NULL, &N.h2));
        pthread_t b;
        ASSERT_EQ(pthread_create(&b, NULL, n_remover, NULL), 0);
        atomic_store(&N.go, 1);
        ASSERT_OK(weft_cancel_token_cancel(N.t1));
        void *removed;
        pthread_join(b, &removed);
        ASSERT_EQ(atomic_load(&N.outer), 1);
        if (removed) {
            ASSERT_EQ(atomic_load(&N.inner), 0); /* taken off before it ran */
            ASSERT_FALSE(weft_cancel_callback_remove(N.h1)); /* it ran: false, freed */
        } else {
            ASSERT_EQ(atomic_load(&N.inner), 1);
            ASSERT_EQ(atomic_load(&N.h1_result), 0); /* h1 was running further up */
        }
        weft_cancel_token_destroy(N.t1);
        weft_cancel_token_destroy(N.t2);
    }
    alarm(0);
}
