/* Semaphores: graph tasks and async tasks acquiring and releasing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "graph2_util.h"

#include <weft/async.h>

struct gauge {
    atomic_int inside, max, total;
};

static int guarded(weft_ctx *cx, void *arg) {
    (void)cx;
    struct gauge *g = arg;
    int now = atomic_fetch_add(&g->inside, 1) + 1;
    int m = atomic_load(&g->max);
    while (now > m && !atomic_compare_exchange_weak(&g->max, &m, now)) {
    }
    sleep_us(50);
    atomic_fetch_sub(&g->inside, 1);
    atomic_fetch_add(&g->total, 1);
    return 0;
}

static weft_semaphore *make_sem(size_t k) {
    weft_status st;
    weft_semaphore *s = weft_semaphore_create(k, &st);
    if (!s) TEST_FAIL_("weft_semaphore_create: %s", weft_errname(st));
    return s;
}

/* n independent tasks, each holding s while it runs. */
static weft_taskflow *guarded_flow(weft_semaphore *s, struct gauge *g, int n) {
    weft_taskflow *tf = make_taskflow("sem");
    for (int i = 0; i < n; i++) {
        weft_task t = must_emplace(tf, guarded, g);
        ASSERT_OK(weft_task_acquire(t, s));
        ASSERT_OK(weft_task_release(t, s));
    }
    return tf;
}

TEST(semaphore_never_admits_more_than_k) {
    weft_executor *ex = make_executor(4);
    weft_semaphore *s = make_sem(3);
    struct gauge g = {0};
    weft_taskflow *tf = guarded_flow(s, &g, 64);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&g.total), 64);
    ASSERT_LE(atomic_load(&g.max), 3);
    ASSERT_GE(atomic_load(&g.max), 1);
    ASSERT_EQ(weft_semaphore_value(s), 3);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}

TEST(semaphore_of_one_with_more_waiters_than_workers_never_deadlocks) {
    weft_executor *ex = make_executor(2);
    weft_semaphore *s = make_sem(1);
    struct gauge g = {0};
    weft_taskflow *tf = guarded_flow(s, &g, 100);
    weft_future *f;
    ASSERT_OK(weft_run_n(ex, tf, 3, &f));
    ASSERT_OK(weft_future_wait_for(f, 20 * SEC)); /* a hang times out instead */
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&g.total), 300);
    ASSERT_EQ(atomic_load(&g.max), 1);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}

TEST(semaphore_shared_by_tasks_of_two_executors) {
    weft_executor *e1 = make_executor(2), *e2 = make_executor(2);
    weft_semaphore *s = make_sem(1);
    struct gauge g = {0};
    weft_taskflow *t1 = guarded_flow(s, &g, 40), *t2 = guarded_flow(s, &g, 40);
    weft_future *f1, *f2;
    ASSERT_OK(weft_run(e1, t1, &f1));
    ASSERT_OK(weft_run(e2, t2, &f2));
    ASSERT_OK(weft_future_wait_for(f1, 20 * SEC));
    ASSERT_OK(weft_future_wait_for(f2, 20 * SEC));
    weft_future_destroy(f1), weft_future_destroy(f2);
    ASSERT_EQ(atomic_load(&g.total), 80);
    ASSERT_EQ(atomic_load(&g.max), 1);
    weft_taskflow_destroy(t1), weft_taskflow_destroy(t2);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(e1), weft_executor_destroy(e2);
}

static int nop(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    return 0;
}

TEST(semaphore_release_without_acquire_fails_the_run) {
    weft_executor *ex = make_executor(2);
    weft_semaphore *s = make_sem(2);
    weft_taskflow *tf = make_taskflow("rel");
    weft_task t = must_emplace(tf, nop, NULL);
    ASSERT_OK(weft_task_set_name(t, "releaser"));
    ASSERT_OK(weft_task_release(t, s));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STATUS(info.task_code, WEFT_EINVAL);
    ASSERT_STREQ(info.failed_task, "releaser");
    weft_future_destroy(f);
    ASSERT_EQ(weft_semaphore_value(s), 2); /* never above max */
    ASSERT_STATUS(weft_task_acquire(t, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_task_acquire(WEFT_TASK_NULL, s), WEFT_EINVAL);
    ASSERT_EQ(weft_semaphore_create(0, NULL), NULL);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}

/* A critical section over two tasks: a acquires, b (after a) releases. */
TEST(semaphore_section_spanning_two_tasks) {
    weft_executor *ex = make_executor(4);
    weft_semaphore *s = make_sem(1);
    struct gauge g = {0};
    weft_taskflow *tf = make_taskflow("span");
    for (int i = 0; i < 16; i++) {
        weft_task a = must_emplace(tf, guarded, &g), b = must_emplace(tf, guarded, &g);
        ASSERT_OK(weft_precede(a, b));
        ASSERT_OK(weft_task_acquire(a, s));
        ASSERT_OK(weft_task_release(b, s));
    }
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&g.total), 32);
    ASSERT_EQ(atomic_load(&g.max), 1);
    ASSERT_EQ(weft_semaphore_value(s), 1);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}

TEST(async_tasks_with_semaphores_never_exceed_k) {
    weft_executor *ex = make_executor(4);
    weft_semaphore *s = make_sem(2), *t = make_sem(5);
    struct gauge g = {0};
    weft_semaphore *both[] = {t, s, t};
    weft_future *f[48];
    for (int i = 0; i < 48; i++) ASSERT_OK(weft_async_acquire(ex, guarded, &g, both, 3, &f[i]));
    for (int i = 0; i < 48; i++) {
        ASSERT_OK(weft_future_wait_for(f[i], 20 * SEC));
        weft_future_destroy(f[i]);
    }
    ASSERT_EQ(atomic_load(&g.total), 48);
    ASSERT_LE(atomic_load(&g.max), 2);
    ASSERT_STATUS(weft_async_acquire(ex, guarded, &g, NULL, 1, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_semaphore_destroy(s));
    ASSERT_OK(weft_semaphore_destroy(t));
    weft_executor_destroy(ex);
}

TEST(semaphore_destroy_refuses_while_held) {
    weft_semaphore *s = make_sem(1);
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow("held");
    weft_task a = must_emplace(tf, nop, NULL);
    ASSERT_OK(weft_task_acquire(a, s)); /* never released */
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(weft_semaphore_value(s), 0);
    ASSERT_STATUS(weft_semaphore_destroy(s), WEFT_EBUSY);
    ASSERT_OK(weft_semaphore_reset(s));
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}

/* ---- awkward paths ----------------------------------------------------------- */

static int mark(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_store((atomic_int *)arg, 1);
    return 0;
}

/* A semaphore with a task parked on it is in use: destroy refuses (and frees
 * nothing), as does reset; once the holder releases, the parked task runs and
 * the semaphore can go. */
TEST(semaphore_destroy_refuses_while_a_task_is_parked_on_it) {
    weft_executor *ex = make_executor(2);
    weft_semaphore *s = make_sem(1);
    weft_taskflow *tf = make_taskflow("parked");
    atomic_int gate = 0, waiter_ran = 0;
    weft_task holder = must_emplace(tf, wait_gate, &gate), waiter = must_emplace(tf, mark, &waiter_ran);
    ASSERT_OK(weft_task_acquire(holder, s));
    ASSERT_OK(weft_task_release(holder, s));
    ASSERT_OK(weft_task_acquire(waiter, s));
    ASSERT_OK(weft_task_release(waiter, s));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    /* One of the two holds the unit; the other is parked (or about to be). */
    double deadline = now_s() + 10;
    while (weft_semaphore_value(s) != 0 && now_s() < deadline) sleep_us(100);
    ASSERT_STATUS(weft_semaphore_destroy(s), WEFT_EBUSY);
    sleep_us(20000); /* let the second task reach the semaphore */
    ASSERT_STATUS(weft_semaphore_destroy(s), WEFT_EBUSY);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait_for(f, 20 * SEC));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&waiter_ran), 1);
    ASSERT_EQ(weft_semaphore_value(s), 1);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}

static int fail_after_gate(weft_ctx *cx, void *arg) {
    (void)cx;
    wait_flag(arg, 1, 10.0);
    return 3;
}

/* Sections spanning two tasks (a_i acquires, b_i after it releases), k = 1:
 * a_1 fails while a_2 is parked waiting for the unit.  b_1 is skipped; the
 * run must still end (with a_1's failure), not wait for ever on a_2, and the
 * semaphore must come out whole. */
TEST(semaphore_section_cut_by_a_failure_still_ends_the_run) {
    weft_executor *ex = make_executor(2);
    weft_semaphore *s = make_sem(1);
    weft_taskflow *tf = make_taskflow("cut");
    atomic_int gate = 0, ran = 0;
    weft_task a1 = must_emplace(tf, fail_after_gate, &gate), b1 = must_emplace(tf, count_task, &ran);
    weft_task a2 = must_emplace(tf, count_task, &ran), b2 = must_emplace(tf, count_task, &ran);
    ASSERT_OK(weft_precede(a1, b1));
    ASSERT_OK(weft_precede(a2, b2));
    ASSERT_OK(weft_task_acquire(a1, s));
    ASSERT_OK(weft_task_release(b1, s));
    ASSERT_OK(weft_task_acquire(a2, s));
    ASSERT_OK(weft_task_release(b2, s));
    ASSERT_OK(weft_task_set_name(a1, "a1"));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    /* a2 runs first or parks behind a1; either way a1 fails holding the unit
     * or after a2's section ended. */
    sleep_us(20000);
    atomic_store(&gate, 1);
    ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STREQ(info.failed_task, "a1");
    weft_future_destroy(f);
    ASSERT_EQ(weft_semaphore_value(s), 1);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}

TEST(parallel_run_n_refuses_tasks_with_semaphores) {
    weft_executor *ex = make_executor(1);
    weft_semaphore *s = make_sem(1);
    weft_taskflow *tf = make_taskflow("psem");
    weft_task t = must_emplace(tf, nop, NULL);
    ASSERT_OK(weft_task_acquire(t, s));
    ASSERT_STATUS(weft_run_n_parallel(ex, tf, 2, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_task_erase(t)); /* its semaphore goes with it */
    ASSERT_OK(weft_run_n_parallel(ex, tf, 2, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}

static int guarded_brief(weft_ctx *cx, void *arg) {
    (void)cx;
    struct gauge *g = arg;
    int now = atomic_fetch_add(&g->inside, 1) + 1;
    int m = atomic_load(&g->max);
    while (now > m && !atomic_compare_exchange_weak(&g->max, &m, now)) {
    }
    atomic_fetch_sub(&g->inside, 1);
    atomic_fetch_add(&g->total, 1);
    return 0;
}

/* Units taken and given back without the lock while nobody waits, and handed
 * over under it once someone does: with tasks this short the two paths meet
 * all the time (acquirers about to park, releases finding them not yet
 * queued).  Never more than k inside, no task lost, every unit back. */
TEST(semaphore_churn_of_short_tasks_never_admits_more_than_k) {
    weft_executor *ex = make_executor(4);
    const int n = (int)test_scale(2000) + 50;
    for (size_t k = 1; k <= 3; k++) {
        weft_semaphore *s = make_sem(k);
        struct gauge g = {0};
        weft_taskflow *tf = make_taskflow("churn");
        for (int i = 0; i < n; i++) {
            weft_task t = must_emplace(tf, guarded_brief, &g);
            ASSERT_OK(weft_task_acquire(t, s));
            ASSERT_OK(weft_task_release(t, s));
        }
        weft_future *f[8];
        for (int i = 0; i < 8; i++) ASSERT_OK(weft_async_acquire(ex, guarded_brief, &g, &s, 1, &f[i]));
        ASSERT_OK(weft_run_n(ex, tf, 3, NULL));
        ASSERT_OK(weft_executor_wait_all(ex));
        for (int i = 0; i < 8; i++) {
            ASSERT_OK(weft_future_wait(f[i]));
            weft_future_destroy(f[i]);
        }
        ASSERT_EQ(atomic_load(&g.total), 3 * n + 8);
        ASSERT_LE(atomic_load(&g.max), (int)k);
        ASSERT_EQ(weft_semaphore_value(s), k);
        weft_taskflow_destroy(tf);
        ASSERT_OK(weft_semaphore_destroy(s));
    }
    weft_executor_destroy(ex);
}

struct seen_free {
    weft_semaphore *s;
    atomic_int low; /* times a successor found the unit still taken */
};

static int check_free(weft_ctx *cx, void *arg) {
    (void)cx;
    struct seen_free *f = arg;
    if (weft_semaphore_value(f->s) != 1) atomic_fetch_add(&f->low, 1);
    return 0;
}

/* weft_task_release's contract: the unit is back before the task's
 * successors can see it finish, however many successors it has (with two or
 * more, they are queued where other workers can take them). */
TEST(semaphore_is_released_before_any_successor_starts) {
    weft_executor *ex = make_executor(4);
    weft_semaphore *s = make_sem(1);
    struct seen_free f = {s, 0};
    weft_taskflow *tf = make_taskflow("order");
    weft_task a = must_emplace(tf, nop, NULL);
    ASSERT_OK(weft_task_acquire(a, s));
    ASSERT_OK(weft_task_release(a, s));
    for (int i = 0; i < 8; i++) ASSERT_OK(weft_precede(a, must_emplace(tf, check_free, &f)));
    weft_future *fut;
    /* Not scaled down under sanitizers: the window is a few instructions, and
     * 20000 runs of 9 tasks take a third of a second under TSan. */
    ASSERT_OK(weft_run_n(ex, tf, 20000, &fut));
    ASSERT_OK(weft_future_wait(fut));
    weft_future_destroy(fut);
    ASSERT_EQ(atomic_load(&f.low), 0);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}
