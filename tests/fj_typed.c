/* Typed fork-join tasks (WEFT_FJ_TASK): values with 1-8 workers, exactly-once
 * under stealing, the frame stack's overflow, and mixing with untyped calls
 * through WEFT_FJ_CTX. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fj_util.h"

#include <limits.h>
#include <stdint.h>

static long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

WEFT_FJ_TASK(long, tfib, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(tfib) x;
    WEFT_FJ_SPAWN(tfib, &x, n - 1);
    long b = WEFT_FJ_CALL(tfib, n - 2);
    return WEFT_FJ_SYNC(tfib, &x) + b;
}

struct fib_job {
    int n;
    long r;
};
static int fib_root(weft_ctx *cx, void *p) {
    struct fib_job *j = p;
    j->r = WEFT_FJ_RUN(cx, tfib, j->n);
    return 0;
}

TEST(fj_typed_fib_is_right_with_1_to_8_workers) {
    for (unsigned w = 1; w <= 8; w++) {
        weft_executor *ex = make_executor(w);
        for (int n = 0; n <= 24; n += 6) {
            struct fib_job j = {n, -1};
            ASSERT_OK(weft_run_root(ex, fib_root, &j));
            ASSERT_EQ(j.r, fib_serial(n));
        }
        weft_executor_destroy(ex);
    }
}

/* A range split in two (or three) typed children; every leaf marked once; the
 * result is the number of leaves, summed from the children's results. */
struct range {
    unsigned lo, hi;
    atomic_uchar *hits;
};

WEFT_FJ_TASK(unsigned, ttree, struct range, r) {
    unsigned n = r.hi - r.lo;
    if (n == 1) {
        atomic_fetch_add_explicit(&r.hits[r.lo], 1, memory_order_relaxed);
        return 1;
    }
    unsigned k = (n % 2 && n >= 3) ? 3 : 2;
    WEFT_FJ_SLOT(ttree) part[2];
    for (unsigned i = 0; i + 1 < k; i++)
        WEFT_FJ_SPAWN(ttree, &part[i], ((struct range){r.lo + n * i / k, r.lo + n * (i + 1) / k, r.hits}));
    unsigned got = WEFT_FJ_CALL(ttree, ((struct range){r.lo + n * (k - 1) / k, r.hi, r.hits}));
    for (unsigned i = k - 1; i-- > 0;) got += WEFT_FJ_SYNC(ttree, &part[i]);
    return got;
}

struct tree_job {
    struct range r;
    unsigned got;
};
static int tree_root(weft_ctx *cx, void *p) {
    struct tree_job *j = p;
    j->got = WEFT_FJ_RUN(cx, ttree, j->r);
    return 0;
}

static void run_ttree(weft_executor *ex, unsigned leaves, atomic_uchar *hits) {
    struct tree_job j = {{0, leaves, hits}, 0};
    ASSERT_OK(weft_run_root(ex, tree_root, &j));
    ASSERT_EQ(j.got, leaves);
}

TEST(fj_typed_every_child_runs_once_and_returns_its_result_under_stealing) { check_every_leaf_once(run_ttree); }

/* More outstanding spawns in one task than the frame stack holds (65536): the
 * rest run at once, and every sync still returns its own child's result. */
WEFT_FJ_TASK(long, square, long, x) { return x * x; }

struct wide_job {
    long n, sum;
};
WEFT_FJ_TASK(long, wide_typed, long, n) {
    WEFT_FJ_SLOT(square) *slot = malloc((size_t)n * sizeof *slot);
    if (!slot) return -1;
    for (long i = 0; i < n; i++) WEFT_FJ_SPAWN(square, &slot[i], i);
    long sum = 0;
    for (long i = n; i-- > 0;) {
        long v = WEFT_FJ_SYNC(square, &slot[i]);
        if (v != i * i) sum = LONG_MIN / 2; /* a wrong child's result */
        sum += v;
    }
    free(slot);
    return sum;
}
static int wide_root(weft_ctx *cx, void *p) {
    struct wide_job *j = p;
    j->sum = WEFT_FJ_RUN(cx, wide_typed, j->n);
    return 0;
}

TEST(fj_typed_spawns_beyond_the_frame_stack_keep_their_results) {
    long n = 70000, want = 0;
    for (long i = 0; i < n; i++) want += i * i;
    for (unsigned w = 1; w <= 2; w++) {
        weft_executor *ex = make_executor(w);
        struct wide_job j = {n, 0};
        ASSERT_OK(weft_run_root(ex, wide_root, &j));
        ASSERT_EQ(j.sum, want);
        weft_executor_destroy(ex);
    }
}

/* Untyped fork-join inside a typed task, through WEFT_FJ_CTX, between a typed
 * spawn and its sync: the frame stack stays consistent for both. */
struct half {
    long n, r;
};
static int untyped_fib(weft_ctx *cx, void *p) {
    struct half *h = p;
    if (h->n < 2) {
        h->r = h->n;
        return 0;
    }
    struct half x = {h->n - 1, 0}, y = {h->n - 2, 0};
    ASSERT_OK(weft_spawn(cx, untyped_fib, &x));
    untyped_fib(cx, &y);
    int st = weft_sync(cx);
    h->r = x.r + y.r;
    return st;
}

WEFT_FJ_TASK(long, mixed, int, n) {
    if (n < 12) return fib_serial(n);
    WEFT_FJ_SLOT(mixed) a;
    WEFT_FJ_SPAWN(mixed, &a, n - 1);
    struct half h = {n - 2, 0};
    weft_task_group g;
    weft_task_group_init(&g, WEFT_FJ_CTX);
    weft_task_group_spawn(&g, untyped_fib, &h);
    int st = weft_task_group_wait(&g);
    long b = st == 0 ? h.r : -1000000;
    return WEFT_FJ_SYNC(mixed, &a) + b;
}
static int mixed_root(weft_ctx *cx, void *p) {
    struct fib_job *j = p;
    j->r = WEFT_FJ_RUN(cx, mixed, j->n);
    return 0;
}

TEST(fj_typed_tasks_mix_with_untyped_spawns_and_groups_through_the_ctx) {
    for (unsigned w = 1; w <= 4; w += 3) {
        weft_executor *ex = make_executor(w);
        struct fib_job j = {22, -1};
        ASSERT_OK(weft_run_root(ex, mixed_root, &j));
        ASSERT_EQ(j.r, fib_serial(22));
        weft_executor_destroy(ex);
    }
}

/* Out of memory when a typed task starts (no frame stack), memory again inside
 * it: the stack a spawn then allocates is left empty and usable. */
static atomic_long budget;
static void *fail_alloc(void *ctx, size_t n) {
    (void)ctx;
    return atomic_fetch_sub(&budget, 1) > 0 ? malloc(n) : NULL;
}
static void *fail_realloc(void *ctx, void *p, size_t old, size_t n) {
    (void)ctx, (void)old;
    return atomic_fetch_sub(&budget, 1) > 0 ? realloc(p, n) : NULL;
}
static void plain_free(void *ctx, void *p, size_t n) {
    (void)ctx, (void)n;
    free(p);
}

WEFT_FJ_TASK(long, late_stack, int, n) {
    atomic_store(&budget, 1000000); /* the body's first spawn allocates the stack */
    WEFT_FJ_SLOT(tfib) x;
    WEFT_FJ_SPAWN(tfib, &x, n - 1);
    long b = WEFT_FJ_CALL(tfib, n - 2);
    return WEFT_FJ_SYNC(tfib, &x) + b;
}

static int late_stack_root(weft_ctx *cx, void *p) {
    struct fib_job *j = p;
    atomic_store(&budget, 0);
    weft_set_allocator(&(weft_allocator){fail_alloc, fail_realloc, plain_free, NULL});
    j->r = WEFT_FJ_RUN(cx, late_stack, j->n);
    weft_set_allocator(NULL);
    /* Untyped fork-join on the same worker afterwards uses the new stack. */
    struct half h = {j->n, 0};
    int st = untyped_fib(cx, &h);
    return st ? st : (h.r == j->r ? 0 : 1);
}

TEST(fj_typed_task_whose_stack_appears_midway_leaves_it_empty) {
    weft_executor *ex = make_executor(1);
    struct fib_job j = {18, -1};
    ASSERT_OK(weft_run_root(ex, late_stack_root, &j));
    ASSERT_EQ(j.r, fib_serial(18));
    weft_executor_destroy(ex);
}
