/* Fork-join: values, task groups, root entry from outside and inside, errors. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

struct fib {
    int n;
    long r;
};

static long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

/* Spawn one child, call the other. */
static int fib_task(weft_ctx *cx, void *p) {
    struct fib *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    struct fib x = {a->n - 1, 0}, y = {a->n - 2, 0};
    ASSERT_OK(weft_spawn(cx, fib_task, &x));
    fib_task(cx, &y);
    int st = weft_sync(cx);
    a->r = x.r + y.r;
    return st;
}

/* Spawn both children. */
static int fib_both(weft_ctx *cx, void *p) {
    struct fib *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    struct fib x = {a->n - 1, 0}, y = {a->n - 2, 0};
    ASSERT_OK(weft_spawn(cx, fib_both, &x));
    ASSERT_OK(weft_spawn(cx, fib_both, &y));
    int s1 = weft_sync(cx), s2 = weft_sync(cx);
    a->r = x.r + y.r;
    return s1 ? s1 : s2;
}

TEST(fj_fib_is_right_with_1_to_8_workers) {
    for (unsigned w = 1; w <= 8; w++) {
        weft_executor *ex = make_executor(w);
        for (int n = 0; n <= 22; n += 11) {
            struct fib a = {n, -1}, b = {n, -1};
            ASSERT_OK(weft_run_root(ex, fib_task, &a));
            ASSERT_OK(weft_run_root(ex, fib_both, &b));
            ASSERT_EQ(a.r, fib_serial(n));
            ASSERT_EQ(b.r, fib_serial(n));
        }
        weft_executor_destroy(ex);
    }
}

/* Sum of i over [lo, hi) by binary splitting with a task group per level. */
struct range {
    long lo, hi, sum;
};
static int range_sum(weft_ctx *cx, void *p) {
    struct range *r = p;
    if (r->hi - r->lo <= 4) {
        r->sum = 0;
        for (long i = r->lo; i < r->hi; i++) r->sum += i;
        return 0;
    }
    long q = (r->hi - r->lo) / 4;
    struct range part[4];
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int k = 0; k < 4; k++) {
        part[k] = (struct range){r->lo + k * q, k == 3 ? r->hi : r->lo + (k + 1) * q, 0};
        ASSERT_OK(weft_task_group_spawn(&g, range_sum, &part[k]));
    }
    int st = weft_task_group_wait(&g);
    r->sum = part[0].sum + part[1].sum + part[2].sum + part[3].sum;
    return st;
}

TEST(fj_task_group_waits_for_all_children) {
    weft_executor *ex = make_executor(4);
    struct range r = {0, 100000, 0};
    ASSERT_OK(weft_run_root(ex, range_sum, &r));
    ASSERT_EQ(r.sum, 100000L * 99999L / 2);
    weft_executor_destroy(ex);
}

static int fail_if_odd(weft_ctx *cx, void *p) { return (int)(intptr_t)p & 1 ? 42 : 0; }

static int group_with_failure(weft_ctx *cx, void *p) {
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (intptr_t i = 0; i < 10; i++) ASSERT_OK(weft_task_group_spawn(&g, fail_if_odd, (void *)i));
    return weft_task_group_wait(&g);
}

TEST(fj_group_and_sync_report_a_failing_child) {
    weft_executor *ex = make_executor(2);
    ASSERT_EQ(weft_run_root(ex, group_with_failure, NULL), 42);
    ASSERT_EQ(weft_run_root(ex, fail_if_odd, (void *)1), 42);
    weft_executor_destroy(ex);
}

static int nested_root(weft_ctx *cx, void *p) {
    struct fib a = {15, 0};
    /* From inside a task: runs right here, no deadlock even on one worker. */
    int st = weft_run_root(weft_ctx_executor(cx), fib_task, &a);
    *(long *)p = a.r;
    return st;
}

TEST(fj_run_root_nests_inside_a_task_on_one_worker) {
    weft_executor *ex = make_executor(1);
    long r = 0;
    ASSERT_OK(weft_run_root(ex, nested_root, &r));
    ASSERT_EQ(r, 610);
    weft_executor_destroy(ex);
}

/* A chain: each level spawns the next and syncs it. */
static int chain(weft_ctx *cx, void *p) {
    long *left = p;
    if (*left == 0) return 0;
    long next = *left - 1;
    ASSERT_OK(weft_spawn(cx, chain, &next));
    int st = weft_sync(cx);
    *left = next + 1;
    return st;
}

TEST(fj_spawn_chain_10000_deep_works_with_defaults) {
    for (unsigned w = 1; w <= 2; w++) {
        weft_executor *ex = make_executor(w);
        long depth = 10000;
        ASSERT_OK(weft_run_root(ex, chain, &depth));
        ASSERT_EQ(depth, 10000);
        weft_executor_destroy(ex);
    }
}

/* Spawns more children than the frame stack holds: the rest run at once. */
static int wide(weft_ctx *cx, void *p) {
    atomic_int *count = p;
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int i = 0; i < 70000; i++) ASSERT_OK(weft_task_group_spawn(&g, bump, count));
    ASSERT_OK(weft_task_group_spawn(&g, fail_if_odd, (void *)1));
    return weft_task_group_wait(&g);
}

TEST(fj_spawn_beyond_the_frame_stack_runs_the_child_at_once) {
    weft_executor *ex = make_executor(2);
    atomic_int count = 0;
    ASSERT_EQ(weft_run_root(ex, wide, &count), 42);
    ASSERT_EQ(atomic_load(&count), 70000);
    weft_executor_destroy(ex);
}

static int leaves_unsynced(weft_ctx *cx, void *p) {
    for (int i = 0; i < 5; i++) ASSERT_OK(weft_spawn(cx, bump, p));
    return 0; /* weft_run_root syncs the five */
}

static int sync_without_spawn(weft_ctx *cx, void *p) { return weft_sync(cx); }

TEST(fj_bad_arguments_are_rejected) {
    weft_executor *ex = make_executor(2);
    ASSERT_STATUS(weft_run_root(ex, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_spawn(NULL, fib_task, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_sync(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_task_group_wait(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_root(ex, sync_without_spawn, NULL), WEFT_EINVAL);
    atomic_int count = 0;
    ASSERT_OK(weft_run_root(ex, leaves_unsynced, &count));
    ASSERT_EQ(atomic_load(&count), 5);
    weft_executor_destroy(ex);
}

static int root_from_threads(weft_ctx *cx, void *p) {
    struct fib *a = p;
    return fib_task(cx, a);
}

TEST(fj_run_root_from_outside_returns_after_the_work) {
    weft_executor *ex = make_executor(3);
    for (int i = 0; i < 50; i++) {
        struct fib a = {12, 0};
        ASSERT_OK(weft_run_root(ex, root_from_threads, &a));
        ASSERT_EQ(a.r, 144);
    }
    weft_executor_destroy(ex);
}

/* A sync whose child was stolen runs only the child's descendants: an unrelated
 * task queued on the syncing worker must not run inside the sync. */
static _Thread_local int in_sync;
static atomic_int unrelated_in_sync, child_started, child_stolen;

static int unrelated(weft_ctx *cx, void *p) {
    if (in_sync) atomic_fetch_add(&unrelated_in_sync, 1);
    return 0;
}

static int slow_child(weft_ctx *cx, void *p) {
    if (weft_ctx_worker_id(cx) != *(int *)p) {
        atomic_fetch_add(&child_stolen, 1);
        sleep_us(2000); /* let the parent reach its sync and leapfrog */
    }
    atomic_store(&child_started, 1);
    return 0;
}

static int sync_isolated(weft_ctx *cx, void *p) {
    int me = weft_ctx_worker_id(cx);
    atomic_store(&child_started, 0);
    ASSERT_OK(weft_silent_async(weft_ctx_executor(cx), unrelated, NULL));
    ASSERT_OK(weft_spawn(cx, slow_child, &me));
    /* Give a thief a chance to take the child (the result does not depend on it). */
    for (int i = 0; i < 2000 && !atomic_load(&child_started); i++) sleep_us(10);
    in_sync = 1;
    int st = weft_sync(cx);
    in_sync = 0;
    return st;
}

TEST(fj_sync_of_a_stolen_child_runs_no_unrelated_task) {
    weft_executor *ex = make_executor(2);
    for (int rep = 0; rep < 20; rep++) ASSERT_OK(weft_run_root(ex, sync_isolated, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&unrelated_in_sync), 0);
    printf("child stolen in %d of 20 runs\n", atomic_load(&child_stolen));
    weft_executor_destroy(ex);
}
