/* Async tasks: results, silent tasks, nested and isolated waits, cancellation,
 * bad arguments, out of memory. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

static int ret_arg(weft_ctx *cx, void *p) { return (int)(intptr_t)p; }

TEST(async_future_reports_status_and_task_code) {
    weft_executor *ex = make_executor(2);
    weft_future *ok = NULL, *bad = NULL;
    ASSERT_OK(weft_async(ex, ret_arg, (void *)0, &ok));
    ASSERT_OK(weft_async(ex, ret_arg, (void *)7, &bad));
    ASSERT_OK(weft_future_wait(ok));
    ASSERT_STATUS(weft_future_wait(bad), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(bad, &info));
    ASSERT_EQ(info.task_code, 7);
    weft_future_destroy(ok);
    weft_future_destroy(bad);
    weft_executor_destroy(ex);
}

TEST(async_silent_tasks_all_run_before_wait_all_returns) {
    weft_executor *ex = make_executor(3);
    atomic_int count = 0;
    int n = (int)test_scale(100000);
    for (int i = 0; i < n; i++) ASSERT_OK(weft_silent_async(ex, bump, &count));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&count), n);
    weft_executor_destroy(ex);
}

/* A burst of silent tasks from inside a task: records are carved from blocks the
 * worker keeps, counted in the metrics, and reused by the next burst. */
struct burst {
    int n;
    atomic_int *count;
};
static int submit_burst(weft_ctx *cx, void *p) {
    struct burst *b = p;
    for (int i = 0; i < b->n; i++) ASSERT_OK(weft_silent_async(weft_ctx_executor(cx), bump, b->count));
    return 0;
}

TEST(async_silent_burst_reuses_the_worker_blocks_and_counts_them) {
    weft_executor *ex = make_executor(1);
    atomic_int count = 0;
    struct burst b = {(int)test_scale(100000), &count};
    if (b.n < 1000) b.n = 1000;
    weft_metrics m0, m1, m2;
    ASSERT_OK(weft_executor_metrics(ex, &m0, NULL, 0));
    ASSERT_OK(weft_run_root(ex, submit_burst, &b));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&count), b.n);
    ASSERT_OK(weft_executor_metrics(ex, &m1, NULL, 0));
    /* Every record of the burst was live at once (one worker runs them after
     * the submitting task): at least 48 bytes each are held now. */
    if (m1.bytes < m0.bytes + (size_t)b.n * 48)
        TEST_FAIL_("held %zu bytes after %d silent tasks, was %zu", m1.bytes, b.n, m0.bytes);
    ASSERT_OK(weft_run_root(ex, submit_burst, &b));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&count), 2 * b.n);
    ASSERT_OK(weft_executor_metrics(ex, &m2, NULL, 0));
    if (m2.bytes != m1.bytes) TEST_FAIL_("the second burst grew the held bytes: %zu -> %zu", m1.bytes, m2.bytes);
    weft_executor_destroy(ex);
}

/* Inside a task: submit async children (from the worker's free list) and wait. */
static int fan_out(weft_ctx *cx, void *p) {
    atomic_int *count = p;
    weft_future *f[64];
    for (int i = 0; i < 64; i++) ASSERT_OK(weft_async(weft_ctx_executor(cx), bump, count, &f[i]));
    int st = 0;
    for (int i = 0; i < 64; i++) {
        int s = weft_future_wait(f[i]);
        if (!st) st = s;
        weft_future_destroy(f[i]);
    }
    return st;
}

/* Each level waits for async tasks of the next one: on 1 worker the waits must
 * run the awaited tasks instead of blocking. */
static int nested(weft_ctx *cx, void *p) {
    int depth = (int)(intptr_t)p;
    if (depth == 0) return 0;
    weft_future *f[2];
    for (int i = 0; i < 2; i++) ASSERT_OK(weft_async(weft_ctx_executor(cx), nested, (void *)(intptr_t)(depth - 1), &f[i]));
    int st = weft_future_wait(f[1]) | weft_future_wait(f[0]);
    weft_future_destroy(f[0]);
    weft_future_destroy(f[1]);
    return st;
}

TEST(async_nested_waits_on_one_worker_do_not_deadlock) {
    weft_executor *ex = make_executor(1);
    atomic_int count = 0;
    for (int rep = 0; rep < 20; rep++) {
        weft_future *f = NULL;
        ASSERT_OK(weft_async(ex, fan_out, &count, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
    }
    ASSERT_EQ(atomic_load(&count), 20 * 64);
    weft_future *f = NULL;
    ASSERT_OK(weft_async(ex, nested, (void *)(intptr_t)8, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    weft_executor_destroy(ex);
}

/* The isolation test: the waiting task "holds a lock"; an unrelated task queued on
 * the same worker must not run inside the wait, the awaited one must. */
static _Thread_local int holding_lock;
static atomic_int unrelated_ran_under_lock, unrelated_ran;

static int unrelated(weft_ctx *cx, void *p) {
    if (holding_lock) atomic_fetch_add(&unrelated_ran_under_lock, 1);
    atomic_fetch_add(&unrelated_ran, 1);
    return 0;
}

static int awaited(weft_ctx *cx, void *p) {
    *(int *)p = holding_lock; /* it runs inside the wait, on the same thread */
    return 0;
}

static int lock_and_wait(weft_ctx *cx, void *p) {
    weft_executor *ex = weft_ctx_executor(cx);
    weft_future *f = NULL;
    /* The unrelated task is queued last, on top of this worker's deque: a plain
     * wait would pop it first (see the control test below). */
    ASSERT_OK(weft_async(ex, awaited, p, &f));
    ASSERT_OK(weft_silent_async(ex, unrelated, NULL));
    holding_lock = 1;
    int st = weft_future_wait_isolated(f);
    holding_lock = 0;
    weft_future_destroy(f);
    return st;
}

TEST(async_isolated_wait_does_not_run_an_unrelated_task) {
    weft_executor *ex = make_executor(1);
    for (int rep = 0; rep < 50; rep++) {
        int ran_inside = -1;
        weft_future *f = NULL;
        ASSERT_OK(weft_async(ex, lock_and_wait, &ran_inside, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        ASSERT_EQ(ran_inside, 1);
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&unrelated_ran), 50);
    ASSERT_EQ(atomic_load(&unrelated_ran_under_lock), 0);
    weft_executor_destroy(ex);
}

/* Control for the test above: a plain wait does pick up the unrelated task. */
static int lock_and_wait_plain(weft_ctx *cx, void *p) {
    weft_executor *ex = weft_ctx_executor(cx);
    weft_future *f = NULL;
    ASSERT_OK(weft_async(ex, ret_arg, NULL, &f));
    ASSERT_OK(weft_silent_async(ex, unrelated, NULL));
    holding_lock = 1;
    int st = weft_future_wait(f); /* pops the newer, unrelated task first */
    holding_lock = 0;
    weft_future_destroy(f);
    return st;
}

TEST(async_plain_wait_may_run_an_unrelated_task) {
    weft_executor *ex = make_executor(1);
    atomic_store(&unrelated_ran, 0);
    weft_future *f = NULL;
    ASSERT_OK(weft_async(ex, lock_and_wait_plain, NULL, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&unrelated_ran), 1);
    ASSERT_EQ(atomic_load(&unrelated_ran_under_lock), 1);
    weft_executor_destroy(ex);
}

static int block_until(weft_ctx *cx, void *p) {
    while (!atomic_load((atomic_int *)p)) sleep_us(100);
    return 0;
}

TEST(async_cancel_before_start_skips_the_task) {
    weft_executor *ex = make_executor(1);
    atomic_int go = 0, count = 0;
    weft_future *blocker = NULL, *f = NULL;
    ASSERT_OK(weft_async(ex, block_until, &go, &blocker));
    ASSERT_OK(weft_async(ex, bump, &count, &f));
    ASSERT_OK(weft_future_cancel(f));
    atomic_store(&go, 1);
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    ASSERT_OK(weft_future_wait(blocker));
    ASSERT_EQ(atomic_load(&count), 0);
    weft_future_destroy(f);
    weft_future_destroy(blocker);
    weft_executor_destroy(ex);
}

TEST(async_bad_arguments_are_rejected) {
    weft_executor *ex = make_executor(1);
    weft_future *f = (weft_future *)1;
    ASSERT_STATUS(weft_async(ex, NULL, NULL, &f), WEFT_EINVAL); /* a NULL executor is the default one */
    ASSERT_NULL(f);
    ASSERT_STATUS(weft_async(ex, NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_silent_async(ex, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_dependent_async(ex, bump, NULL, NULL, 2, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_future_wait_isolated(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_future_then(NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_future_fd(NULL, NULL), WEFT_EINVAL);
    weft_executor_destroy(ex);
}

/* A failing allocator: fails every allocation after the first `budget`. */
static atomic_long budget;
static void *fail_alloc(void *ctx, size_t n) { return atomic_fetch_sub(&budget, 1) > 0 ? malloc(n) : NULL; }
static void *fail_realloc(void *ctx, void *p, size_t o, size_t n) {
    return atomic_fetch_sub(&budget, 1) > 0 ? realloc(p, n) : NULL;
}
static void plain_free(void *ctx, void *p, size_t n) { free(p); }

TEST(async_out_of_memory_queues_nothing_and_recovers) {
    weft_executor *ex = make_executor(1);
    weft_future *dep = NULL;
    ASSERT_OK(weft_async(ex, ret_arg, NULL, &dep));
    ASSERT_OK(weft_future_wait(dep));
    atomic_store(&budget, 0);
    weft_set_allocator(&(weft_allocator){fail_alloc, fail_realloc, plain_free, NULL});
    weft_future *f = (weft_future *)1;
    ASSERT_STATUS(weft_async(ex, ret_arg, NULL, &f), WEFT_ENOMEM);
    ASSERT_NULL(f);
    ASSERT_STATUS(weft_silent_async(ex, ret_arg, NULL), WEFT_ENOMEM);
    atomic_store(&budget, 1); /* the record, but not its edge array */
    ASSERT_STATUS(weft_dependent_async(ex, ret_arg, NULL, &dep, 1, &f), WEFT_ENOMEM);
    ASSERT_NULL(f);
    weft_set_allocator(NULL);
    ASSERT_OK(weft_dependent_async(ex, ret_arg, NULL, &dep, 1, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    weft_future_destroy(dep);
    weft_executor_destroy(ex);
}

/* ---- an isolated wait on a dependent right after its dependency ---- */

static int short_spin(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < 2000) {
    }
    return 0;
}

static int dependent_after_dependency(weft_ctx *ctx, void *arg) {
    int *eagain = arg;
    weft_executor *ex = weft_ctx_executor(ctx);
    for (int i = 0; i < 300; i++) {
        weft_future *d, *f;
        ASSERT_OK(weft_async(ex, short_spin, NULL, &d));
        ASSERT_OK(weft_dependent_async(ex, short_spin, NULL, &d, 1, &f));
        ASSERT_OK(weft_future_wait_isolated(d));
        ASSERT_TRUE(weft_future_ready(d));
        weft_status st = weft_future_wait_isolated(f);
        if (st == WEFT_EAGAIN) {
            (*eagain)++;
            st = weft_future_wait(f);
        }
        ASSERT_OK(st);
        weft_future_destroy(f);
        weft_future_destroy(d);
    }
    return 0;
}

/* "WEFT_EAGAIN (a dependent task whose dependencies have not all finished:
 * wait for those first)": before, it came after the caller had waited for the
 * dependency and seen it ready, as the dependency's future became ready just
 * before it released its dependents (a helper: 800-1600 of 2000 tries). */
TEST(isolated_wait_on_a_dependent_after_its_dependency_finished_is_not_eagain) {
    weft_executor *ex = make_executor(2);
    int eagain = 0;
    ASSERT_EQ(weft_run_root(ex, dependent_after_dependency, &eagain), 0);
    ASSERT_EQ(eagain, 0);
    weft_executor_destroy(ex);
}
