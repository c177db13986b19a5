/* Async tasks, futures and the wait's deadlock refusal on paths the other
 * async tests do not take (session 47): the async layer's dependent-wait
 * refusal (async.c, weft__async_waits_behind) for work of a running async
 * task that runs on another worker (a stolen fork-join child, an algorithm's
 * chunk), and the other paths an async task starts from. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* core.h: a wait from a task "returns WEFT_EDEADLK at once when the run could
 * only finish after a task running on this worker returns", and f being the
 * future of a dependent async task that waits for such a task is one such
 * case.  A fork-join child that a thief took runs for its spawner (its stop
 * word is the spawner's: a wait on the spawner's own future is refused,
 * core/future.c), and the spawner cannot return before the child does; so a
 * wait from the child for a dependent of its spawner can never end either.
 * Same for a chunk of a parallel algorithm the task called, run by another
 * worker. */
static struct {
    weft_future *_Atomic dep; /* the dependent of the spawner */
    pthread_t parent;
    atomic_int elsewhere; /* 0; 1: a child on another thread is waiting; 2: it has waited */
    atomic_int st;
} el47;

static void away_wait47(void) {
    if (pthread_equal(pthread_self(), el47.parent)) return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&el47.elsewhere, &expected, 1)) return;
    atomic_store(&el47.st, weft_future_wait_for(atomic_load(&el47.dep), 5 * SEC));
    atomic_store(&el47.elsewhere, 2);
}
static int fj_child47(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    away_wait47();
    return 0;
}
static int fj_parent47(weft_ctx *cx, void *p) {
    (void)p;
    el47.parent = pthread_self();
    while (!atomic_load(&el47.dep)) sleep_us(50);
    /* Spawn until a thief has taken a child (a thief's request makes the next
     * spawn share the frames), then sync them all. */
    unsigned n = 0;
    double give_up = now_s() + 60;
    while (atomic_load(&el47.elsewhere) == 0 && n < 20000 && now_s() < give_up) {
        if (weft_spawn(cx, fj_child47, NULL) != WEFT_OK) break;
        n++;
        sleep_us(20);
    }
    for (unsigned i = 0; i < n; i++) (void)weft_sync(cx);
    return 0;
}
static void index47(size_t i, void *arg) {
    (void)i, (void)arg;
    if (pthread_equal(pthread_self(), el47.parent)) {
        /* Hold the caller's thread in its chunks until another worker has
         * run one (bounded: the test fails if none ever does). */
        double give_up = now_s() + 60;
        while (atomic_load(&el47.elsewhere) != 2 && now_s() < give_up) sleep_us(50);
        return;
    }
    away_wait47();
}
static int algo_parent47(weft_ctx *cx, void *p) {
    (void)cx;
    el47.parent = pthread_self();
    while (!atomic_load(&el47.dep)) sleep_us(50);
    weft_executor *ex = p;
    return weft_parallel_for(ex, 0, 4096, 1, index47, NULL, NULL) == WEFT_OK ? 0 : 1;
}
TEST(work_of_a_running_async_task_on_another_worker_gets_edeadlk_waiting_on_its_dependent) {
    watchdog_start(120);
    int bad = 0;
    for (int kind = 0; kind < 2; kind++) {
        weft_executor *ex = make_executor(2);
        memset(&el47, 0, sizeof el47);
        weft_future *a = NULL, *d = NULL;
        ASSERT_OK(weft_async(ex, kind == 0 ? fj_parent47 : algo_parent47, ex, &a));
        ASSERT_OK(weft_dependent_async(ex, noop, NULL, &a, 1, &d));
        atomic_store(&el47.dep, d);
        ASSERT_OK(weft_future_wait(a));
        ASSERT_EQ(atomic_load(&el47.elsewhere), 2); /* a child / chunk did run on the other worker */
        if (atomic_load(&el47.st) != WEFT_EDEADLK) {
            fprintf(stderr, "%s on another worker waiting on its task's dependent: status %d, not WEFT_EDEADLK (%d)\n",
                    kind == 0 ? "a stolen fork-join child" : "an algorithm chunk", atomic_load(&el47.st),
                    (int)WEFT_EDEADLK);
            bad++;
        }
        ASSERT_OK(weft_future_wait(d));
        weft_future_destroy(a);
        weft_future_destroy(d);
        weft_executor_destroy(ex);
    }
    ASSERT_EQ(bad, 0);
    watchdog_stop();
}

/* async.h: weft_future_cancel before an async task starts means fn is not
 * called and its future is WEFT_ECANCELED.  A weft_async_acquire task
 * cancelled before a worker took it up still took its semaphore's unit, and
 * parked while the unit was held: so the unit's holder, waiting on the
 * cancelled task's future, waited for ever (its wait ran the task, which
 * parked behind the holder).  Skipped tasks neither acquire nor release, as
 * graph tasks (async.h, weft_semaphore_reset).  One worker: the holder runs
 * alone and its wait is what runs the cancelled task. */
static struct {
    weft_future *_Atomic victim;
    atomic_int holding, cancelled, ran;
    atomic_int st;
} sm47;
static int holder47(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    atomic_store(&sm47.holding, 1);
    while (!atomic_load(&sm47.cancelled)) sleep_us(50);
    atomic_store(&sm47.st, weft_future_wait_for(atomic_load(&sm47.victim), 5 * SEC));
    return 0;
}
static int victim47(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    atomic_fetch_add(&sm47.ran, 1);
    return 0;
}
TEST(a_semaphore_task_cancelled_before_it_started_neither_takes_nor_waits_for_a_unit) {
    watchdog_start(60);
    weft_executor *ex = make_executor(1);
    memset(&sm47, 0, sizeof sm47);
    weft_semaphore *s = weft_semaphore_create(1, NULL);
    ASSERT_TRUE(s != NULL);
    weft_future *h = NULL, *v = NULL;
    ASSERT_OK(weft_async_acquire(ex, holder47, NULL, &s, 1, &h));
    ASSERT_TRUE(wait_flag(&sm47.holding, 1, 30));
    ASSERT_OK(weft_async_acquire(ex, victim47, NULL, &s, 1, &v));
    atomic_store(&sm47.victim, v);
    ASSERT_OK(weft_future_cancel(v));
    atomic_store(&sm47.cancelled, 1);
    ASSERT_OK(weft_future_wait(h));
    if (atomic_load(&sm47.st) != WEFT_ECANCELED)
        TEST_FAIL_("the holder's wait on the cancelled task: status %d, not WEFT_ECANCELED (%d)",
                   atomic_load(&sm47.st), (int)WEFT_ECANCELED);
    ASSERT_STATUS(weft_future_wait(v), WEFT_ECANCELED);
    ASSERT_EQ(atomic_load(&sm47.ran), 0);
    ASSERT_EQ(weft_semaphore_value(s), 1u);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_future_destroy(h);
    weft_future_destroy(v);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
    watchdog_stop();
}

/* A then-callback runs on the worker that completes its future, before the
 * task releases its dependents (they must find it ready).  So a callback of
 * task A that waits on a dependent of A waits for what can only start after
 * the callback returns: WEFT_EDEADLK at once (core.h), not a wait that never
 * ends.  A dependent of another task is waited for as usual. */
static struct {
    weft_future *_Atomic dep, *_Atomic other;
    atomic_int go, done;
    atomic_int st, st_other;
} cb47;
static int gated47(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    while (!atomic_load(&cb47.go)) sleep_us(50);
    return 0;
}
static void then_waits47(weft_future *f, weft_status st, void *arg) {
    (void)f, (void)st, (void)arg;
    atomic_store(&cb47.st, weft_future_wait_for(atomic_load(&cb47.dep), 5 * SEC));
    atomic_store(&cb47.st_other, weft_future_wait_for(atomic_load(&cb47.other), 60 * SEC));
    atomic_store(&cb47.done, 1);
}
TEST(a_then_callback_waiting_on_a_dependent_of_its_own_task_gets_edeadlk) {
    watchdog_start(120);
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        memset(&cb47, 0, sizeof cb47);
        weft_future *a = NULL, *d = NULL, *b = NULL, *e = NULL;
        ASSERT_OK(weft_async(ex, gated47, NULL, &a));
        ASSERT_OK(weft_dependent_async(ex, noop, NULL, &a, 1, &d));
        ASSERT_OK(weft_async(ex, gated47, NULL, &b));
        ASSERT_OK(weft_dependent_async(ex, noop, NULL, &b, 1, &e));
        atomic_store(&cb47.dep, d);
        atomic_store(&cb47.other, e);
        ASSERT_OK(weft_future_then(a, then_waits47, NULL));
        atomic_store(&cb47.go, 1);
        ASSERT_OK(weft_future_wait(d));
        ASSERT_OK(weft_future_wait(e));
        ASSERT_EQ(atomic_load(&cb47.done), 1);
        if (atomic_load(&cb47.st) != WEFT_EDEADLK)
            TEST_FAIL_("%u worker(s): a then-callback of A waiting on A's dependent: status %d, not WEFT_EDEADLK (%d)",
                       workers, atomic_load(&cb47.st), (int)WEFT_EDEADLK);
        ASSERT_OK((weft_status)atomic_load(&cb47.st_other));
        weft_future *all[] = {a, d, b, e};
        for (int i = 0; i < 4; i++) weft_future_destroy(all[i]);
        weft_executor_destroy(ex);
    }
    watchdog_stop();
}

/* The refusal has no false positive there: a stolen child of A (and a chunk
 * of an algorithm A called) waiting on a dependent of another task B, still
 * unfinished when the wait starts, waits and gets WEFT_OK. */
static struct {
    weft_future *_Atomic other; /* a dependent of B */
    atomic_int go; /* B's gate */
} fp47;
static int gated_b47(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    while (!atomic_load(&fp47.go)) sleep_us(50);
    return 0;
}
static void away_wait_other47(void) {
    if (pthread_equal(pthread_self(), el47.parent)) return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&el47.elsewhere, &expected, 1)) return;
    atomic_store(&fp47.go, 1);
    atomic_store(&el47.st, weft_future_wait_for(atomic_load(&fp47.other), 60 * SEC));
    atomic_store(&el47.elsewhere, 2);
}
static int fp_child47(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    away_wait_other47();
    return 0;
}
static int fp_parent47(weft_ctx *cx, void *p) {
    (void)p;
    el47.parent = pthread_self();
    unsigned n = 0;
    double give_up = now_s() + 60;
    while (atomic_load(&el47.elsewhere) == 0 && n < 20000 && now_s() < give_up) {
        if (weft_spawn(cx, fp_child47, NULL) != WEFT_OK) break;
        n++;
        sleep_us(20);
    }
    for (unsigned i = 0; i < n; i++) (void)weft_sync(cx);
    return 0;
}
TEST(work_of_a_running_async_task_on_another_worker_waits_for_an_unrelated_dependent) {
    watchdog_start(120);
    weft_executor *ex = make_executor(3); /* B, A and the thief */
    memset(&el47, 0, sizeof el47);
    memset(&fp47, 0, sizeof fp47);
    weft_future *b = NULL, *e = NULL, *a = NULL;
    ASSERT_OK(weft_async(ex, gated_b47, NULL, &b));
    ASSERT_OK(weft_dependent_async(ex, noop, NULL, &b, 1, &e));
    atomic_store(&fp47.other, e);
    ASSERT_OK(weft_async(ex, fp_parent47, NULL, &a));
    ASSERT_OK(weft_future_wait(a));
    ASSERT_EQ(atomic_load(&el47.elsewhere), 2);
    ASSERT_OK((weft_status)atomic_load(&el47.st));
    ASSERT_OK(weft_future_wait(e));
    weft_future_destroy(a);
    weft_future_destroy(b);
    weft_future_destroy(e);
    weft_executor_destroy(ex);
    watchdog_stop();
}

/* Semaphore tasks cancelled while queued or parked, on 1 to 3 workers, with
 * two semaphores (max 1 and 2) held by a gated task: each one cancelled ends
 * WEFT_ECANCELED without running (a parked one once a unit reaches it, which
 * it gives back), every other runs once, and both semaphores are whole
 * again, then destroyed (nothing still counted as a user). */
static atomic_int sl_go47, sl_ran47;
static int sl_held47(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    while (!atomic_load(&sl_go47)) sleep_us(50);
    return 0;
}
static int sl_bump47(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    atomic_fetch_add(&sl_ran47, 1);
    return 0;
}
TEST(semaphore_tasks_cancelled_queued_or_parked_give_every_unit_back) {
    watchdog_start(120);
    for (int round = 0; round < 12; round++) {
        weft_executor *ex = make_executor(1 + (unsigned)round % 3);
        weft_semaphore *s[2] = {weft_semaphore_create(1, NULL), weft_semaphore_create(2, NULL)};
        ASSERT_TRUE(s[0] && s[1]);
        atomic_store(&sl_go47, 0);
        atomic_store(&sl_ran47, 0);
        weft_future *h = NULL;
        ASSERT_OK(weft_async_acquire(ex, sl_held47, NULL, s, 2, &h));
        enum { N = 64 };
        weft_future *f[N];
        for (int i = 0; i < N; i++) ASSERT_OK(weft_async_acquire(ex, sl_bump47, NULL, s, 1 + (size_t)(i & 1), &f[i]));
        int cancelled = 0;
        for (int i = 0; i < N; i += 2)
            if (weft_future_cancel(f[i]) == WEFT_OK) cancelled++;
        atomic_store(&sl_go47, 1);
        int ok = 0, can = 0;
        for (int i = 0; i < N; i++) {
            weft_status st = weft_future_wait(f[i]);
            if (st == WEFT_OK) ok++;
            else if (st == WEFT_ECANCELED) can++;
            else TEST_FAIL_("task %d: status %d", i, (int)st);
            weft_future_destroy(f[i]);
        }
        ASSERT_OK(weft_future_wait(h));
        weft_future_destroy(h);
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(ok + can, N);
        ASSERT_EQ(can, cancelled);
        ASSERT_EQ(atomic_load(&sl_ran47), ok);
        ASSERT_EQ(weft_semaphore_value(s[0]), 1u);
        ASSERT_EQ(weft_semaphore_value(s[1]), 2u);
        weft_executor_destroy(ex);
        ASSERT_OK(weft_semaphore_destroy(s[0]));
        ASSERT_OK(weft_semaphore_destroy(s[1]));
    }
    watchdog_stop();
}
