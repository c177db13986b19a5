/* Executors on paths the other executor tests do not take (session 46):
 * weft_executor_wait_all from every kind of code a worker runs, an executor
 * destroyed from another executor's task with its work still queued, config
 * fields at their edges, and executors made and destroyed from several
 * threads while they share the default one. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* core.h: wait_all returns WEFT_EDEADLK "when called from one of ex's own
 * workers".  From an async task, a graph task, a then-callback run on the
 * worker that completed the task, a weft_run_until predicate, a pipeline
 * stage, a subflow's function and a fork-join child: WEFT_EDEADLK each time,
 * at once (no hang); and the same code on another executor's worker waits
 * and returns WEFT_OK. */
static atomic_int deadlk46, waited_ok46, gate46e;
static int held46e(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    while (!atomic_load(&gate46e)) sleep_us(100);
    return 0;
}
static weft_executor *other46;
static void note46(weft_executor *ex) {
    weft_status st = weft_executor_wait_all(ex);
    if (st == WEFT_EDEADLK) atomic_fetch_add(&deadlk46, 1);
    if (other46 && weft_executor_wait_all(other46) == WEFT_OK) atomic_fetch_add(&waited_ok46, 1);
}
static int in_task46(weft_ctx *cx, void *p) {
    (void)p;
    note46(weft_ctx_executor(cx));
    return 0;
}
static void in_then46(weft_future *f, weft_status st, void *arg) {
    (void)f, (void)st;
    note46(arg);
}
static bool in_pred46(void *arg) {
    note46(arg);
    return true;
}
static int in_stage46(weft_pipeflow *pf, void *arg) {
    note46(arg);
    return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 1;
}
static int in_subflow46(weft_ctx *cx, weft_subflow *sf, void *arg) {
    (void)sf, (void)arg;
    note46(weft_ctx_executor(cx));
    return 0;
}
static int in_fj_root46(weft_ctx *cx, void *arg) {
    if (weft_spawn(cx, in_task46, arg) != WEFT_OK) return 1;
    return weft_sync(cx);
}
TEST(wait_all_from_every_kind_of_code_a_worker_runs_is_edeadlk_on_its_own_executor) {
    watchdog_start(30);
    weft_executor *ex = make_executor(2);
    other46 = make_executor(1);
    atomic_store(&deadlk46, 0);
    atomic_store(&waited_ok46, 0);
    weft_future *f = NULL;
    ASSERT_OK(weft_async(ex, in_task46, NULL, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    int expected = 1;
    weft_taskflow *tf = make_taskflow("wa46");
    must_emplace(tf, in_task46, NULL);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, in_subflow46, NULL)));
    weft_stage st = {WEFT_STAGE_SERIAL, in_stage46, ex, "s"};
    weft_pipeline *p = weft_pipeline_create(1, &st, 1, NULL);
    ASSERT_NOT_NULL(p);
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    expected += 3;
    ASSERT_OK(weft_run_until(ex, tf, in_pred46, ex, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    expected += 1;
    ASSERT_EQ(weft_run_root(ex, in_fj_root46, NULL), 0);
    expected += 1;
    /* a then-callback registered before the task ends runs on the worker */
    atomic_store(&gate46e, 0);
    ASSERT_OK(weft_async(ex, held46e, NULL, &f));
    ASSERT_OK(weft_future_then(f, in_then46, ex));
    atomic_store(&gate46e, 1);
    ASSERT_OK(weft_future_wait(f));
    ASSERT_OK(weft_executor_wait_all(ex)); /* the callback has returned */
    weft_future_destroy(f);
    expected += 1;
    ASSERT_EQ(atomic_load(&deadlk46), expected);
    ASSERT_EQ(atomic_load(&waited_ok46), expected);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(ex);
    weft_executor_destroy(other46);
    other46 = NULL;
    watchdog_stop();
}

/* core.h: destroy from "a thread that is not one of its workers" is allowed,
 * a worker of another executor included, and runs still queued run to
 * completion.  Executor B, with 2000 silent tasks and a graph run queued,
 * destroyed from a task of A: every task runs once before the destroy
 * returns. */
struct victim46 {
    weft_executor *b;
    atomic_int ran;
};
static int slow_bump46(weft_ctx *cx, void *p) {
    (void)cx;
    struct victim46 *v = p;
    if ((atomic_fetch_add(&v->ran, 1) & 255) == 0) sleep_us(200);
    return 0;
}
static int destroy_b46(weft_ctx *cx, void *p) {
    (void)cx;
    struct victim46 *v = p;
    weft_executor_destroy(v->b);
    return atomic_load(&v->ran) == 2000 + 50 ? 0 : 1;
}
TEST(an_executor_destroyed_from_another_executors_task_runs_its_queued_work_first) {
    for (int rep = 0; rep < 5; rep++) {
        weft_executor *a = make_executor(1);
        struct victim46 v = {make_executor(1 + rep % 2), 0};
        weft_taskflow *tf = make_taskflow("victim46");
        for (int i = 0; i < 50; i++) must_emplace(tf, slow_bump46, &v);
        for (int i = 0; i < 2000; i++) ASSERT_OK(weft_silent_async(v.b, slow_bump46, &v));
        ASSERT_OK(weft_run(v.b, tf, NULL));
        weft_future *f = NULL;
        ASSERT_OK(weft_async(a, destroy_b46, &v, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        ASSERT_EQ(atomic_load(&v.ran), 2050);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(a);
    }
}

/* Config fields at their edges run work correctly: deque_capacity 1 with
 * 10000 tasks pushed from a worker (the deque grows), local_queue_capacity 1
 * (rounded up to 16: the rest overflow to the shared queue), fork_join_frames
 * 1 (raised to 16) with 1000 spawns in a flat loop, steal_batch 256,
 * yield_rounds none, the largest steal_rounds, steal_attempts 1 each; and
 * one past each maximum is WEFT_EINVAL naming the field. */
static int fan_out46(weft_ctx *cx, void *p) {
    for (int i = 0; i < 10000; i++)
        if (weft_silent_async(weft_ctx_executor(cx), bump, p) != WEFT_OK) return 1;
    return 0;
}
static int fj_flat46(weft_ctx *cx, void *p) {
    for (int i = 0; i < 1000; i++)
        if (weft_spawn(cx, bump, p) != WEFT_OK) return 1;
    return weft_sync(cx);
}
TEST(config_fields_at_their_edges_run_every_task_once_and_one_past_the_maximum_is_named) {
    weft_executor_config cfgs[] = {
        {.workers = 2, .deque_capacity = 1},
        {.workers = 2, .local_queue_capacity = 1},
        {.workers = 2, .fork_join_frames = 1},
        {.workers = 2, .steal_batch = 256},
        {.workers = 2, .yield_rounds = WEFT_YIELD_ROUNDS_NONE, .steal_rounds = WEFT_SEARCH_ROUNDS_MAX},
        {.workers = 2, .steal_attempts = {1, 1, 1}},
        {.workers = 1, .deque_capacity = (size_t)1 << 20, .local_queue_capacity = (size_t)1 << 30},
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++) {
        weft_status err = WEFT_EAGAIN;
        weft_executor *ex = weft_executor_create(&cfgs[c], &err);
        if (!ex) TEST_FAIL_("config %zu refused: %s (%s)", c, weft_errname(err), weft_last_error_message());
        atomic_int n = 0;
        weft_future *f = NULL;
        ASSERT_OK(weft_async(ex, fan_out46, &n, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(atomic_load(&n), 10000);
        ASSERT_EQ(weft_run_root(ex, fj_flat46, &n), 0);
        ASSERT_EQ(atomic_load(&n), 11000);
        weft_executor_destroy(ex);
    }
    struct {
        weft_executor_config c;
        const char *field;
    } bad[] = {
        {{.workers = 4097}, "workers"},
        {{.deque_capacity = ((size_t)1 << 30) + 1}, "deque_capacity"},
        {{.local_queue_capacity = ((size_t)1 << 30) + 1}, "local_queue_capacity"},
        {{.steal_batch = 257}, "steal_batch"},
        {{.fork_join_frames = WEFT_FORK_JOIN_FRAMES_MAX + 1}, "fork_join_frames"},
        {{.steal_rounds = WEFT_SEARCH_ROUNDS_MAX + 1}, "steal_rounds"},
        {{.yield_rounds = WEFT_YIELD_ROUNDS_NONE - 1}, "yield_rounds"},
        {{.steal_attempts = {0, 0, WEFT_SEARCH_ROUNDS_MAX + 1}}, "steal_attempts[2]"},
        {{.affinity = (weft_affinity)3}, "affinity"},
        {{.stack_size = 1}, "stack_size"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        weft_status err = WEFT_OK;
        weft_executor *ex = weft_executor_create(&bad[i].c, &err);
        if (ex) TEST_FAIL_("config with a bad %s was accepted", bad[i].field);
        ASSERT_STATUS(err, WEFT_EINVAL);
        if (!strstr(weft_last_error_message(), bad[i].field))
            TEST_FAIL_("message for a bad %s: %s", bad[i].field, weft_last_error_message());
    }
}

/* Executors made, used and destroyed in a loop from four threads at once,
 * while each thread also submits to one executor they share and to the
 * default one: every task runs once, nothing is lost. */
struct churn46 {
    weft_executor *shared;
    atomic_int *count;
    int bad;
};
static void *churn46(void *p) {
    struct churn46 *c = p;
    for (int i = 0; i < 25; i++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1 + i % 2}, NULL);
        if (!ex) {
            c->bad = 1;
            return NULL;
        }
        weft_future *f = NULL;
        if (weft_async(ex, bump, c->count, &f) != WEFT_OK) c->bad = 2;
        if (weft_silent_async(ex, bump, c->count) != WEFT_OK) c->bad = 3;
        if (weft_silent_async(c->shared, bump, c->count) != WEFT_OK) c->bad = 4;
        if (weft_silent_async(NULL, bump, c->count) != WEFT_OK) c->bad = 5;
        if (i & 1) weft_future_destroy(f); /* detached: destroy still runs it */
        weft_executor_destroy(ex);
        if (!(i & 1)) {
            if (weft_future_wait(f) != WEFT_OK) c->bad = 6; /* waiting after destroy is allowed */
            weft_future_destroy(f);
        }
    }
    return NULL;
}
TEST(executors_made_and_destroyed_from_four_threads_while_sharing_two_lose_no_task) {
    atomic_int count = 0;
    weft_executor *shared = make_executor(2);
    struct churn46 c[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        c[i] = (struct churn46){shared, &count, 0};
        ASSERT_EQ(pthread_create(&th[i], NULL, churn46, &c[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) ASSERT_EQ(c[i].bad, 0);
    ASSERT_OK(weft_executor_wait_all(shared));
    ASSERT_OK(weft_executor_wait_all(weft_default_executor()));
    ASSERT_EQ(atomic_load(&count), 4 * 25 * 4);
    weft_executor_destroy(shared);
}

/* core.h: at most 4096 workers.  An executor of exactly 4096 (small
 * stacks) is created, runs async tasks from outside and from a task, a graph
 * and a fork-join root, every task exactly once, and is destroyed. */
static int spawn_many46(weft_ctx *cx, void *p) {
    for (int i = 0; i < 100; i++)
        if (weft_spawn(cx, bump, p) != WEFT_OK) return 1;
    for (int i = 0; i < 1000; i++)
        if (weft_silent_async(weft_ctx_executor(cx), bump, p) != WEFT_OK) return 2;
    return weft_sync(cx);
}
TEST(an_executor_of_4096_workers_runs_every_kind_of_work_exactly_once) {
#ifdef UNDER_TSAN
    /* Its vector clocks grow with the threads: 104 s here, against 0.8 s
     * plain and 1.7 s under ASan. */
    SKIP("ThreadSanitizer's cost per synchronisation grows with 4096 threads (about 100 s)");
#endif
    weft_status err = WEFT_EAGAIN;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 4096, .stack_size = 64 * 1024}, &err);
    if (!ex && (err == WEFT_ENOMEM || err == WEFT_ESYS)) SKIP("this machine cannot start 4096 threads");
    ASSERT_NOT_NULL(ex);
    ASSERT_EQ(weft_executor_workers(ex), 4096);
    atomic_int n = 0;
    for (int i = 0; i < 5000; i++) ASSERT_OK(weft_silent_async(ex, bump, &n));
    weft_taskflow *tf = make_taskflow("w4096");
    for (int i = 0; i < 3000; i++) must_emplace(tf, bump, &n);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(weft_run_root(ex, spawn_many46, &n), 0);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&n), 5000 + 3000 + 100 + 1000);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* core.h: executors may be created and destroyed from any thread, a worker
 * of another executor included.  Tasks of A (on 2 workers at once) each
 * create an executor, run a graph, async tasks and a fork-join root on it,
 * wait for all and destroy it, ten times: every task runs once. */
static int bump_root46(weft_ctx *cx, void *p) {
    if (weft_spawn(cx, bump, p) != WEFT_OK) return 1;
    return weft_sync(cx);
}
static int make_use_destroy46(weft_ctx *cx, void *p) {
    (void)cx;
    for (int k = 0; k < 10; k++) {
        weft_executor *b = weft_executor_create(&(weft_executor_config){.workers = 1 + k % 2}, NULL);
        if (!b) return 1;
        weft_taskflow *tf = weft_taskflow_create("inner46", NULL);
        if (!tf) return 2;
        for (int i = 0; i < 5; i++)
            if (weft_task_is_null(weft_emplace(tf, bump, p))) return 3;
        if (weft_run_and_wait(b, tf) != WEFT_OK) return 4;
        for (int i = 0; i < 5; i++)
            if (weft_silent_async(b, bump, p) != WEFT_OK) return 5;
        if (weft_run_root(b, bump_root46, p) != 0) return 6;
        if (weft_executor_wait_all(b) != WEFT_OK) return 7;
        if (weft_taskflow_destroy(tf) != WEFT_OK) return 8;
        weft_executor_destroy(b);
    }
    return 0;
}
TEST(executors_made_used_and_destroyed_inside_tasks_of_another_run_everything_once) {
    weft_executor *a = make_executor(2);
    atomic_int n = 0;
    weft_future *f[4];
    for (int i = 0; i < 4; i++) ASSERT_OK(weft_async(a, make_use_destroy46, &n, &f[i]));
    for (int i = 0; i < 4; i++) {
        ASSERT_OK(weft_future_wait(f[i]));
        weft_future_destroy(f[i]);
    }
    ASSERT_EQ(atomic_load(&n), 4 * 10 * (5 + 5 + 1));
    weft_executor_destroy(a);
}
