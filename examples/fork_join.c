/* fork_join: weft_spawn / weft_sync, typed tasks, a task group, and weft_run_root.
 * SPDX-License-Identifier: MIT
 *
 * fib(30) with one spawned child per node (untyped, then as a typed task) and
 * the sum of an array by a task group per level, all entered from main with
 * weft_run_root, and checked.
 */
#include <weft.h>

#include <stdio.h>

struct fib {
    int n;
    long r;
};

static int fib(weft_ctx *cx, void *p) {
    struct fib *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    struct fib x = {a->n - 1, 0}, y = {a->n - 2, 0};
    weft_spawn(cx, fib, &x); /* x lives on this stack frame until the sync */
    fib(cx, &y);             /* the other half: a plain call */
    int st = weft_sync(cx);  /* runs x here unless another worker took it */
    a->r = x.r + y.r;
    return st;
}

/* The same recursion as a typed task: the frame stack's top stays in a register
 * and an unstolen child is synced by a direct call (about 2x faster). */
WEFT_FJ_TASK(long, fib_typed, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(fib_typed) x;
    WEFT_FJ_SPAWN(fib_typed, &x, n - 1);
    long b = WEFT_FJ_CALL(fib_typed, n - 2);
    return WEFT_FJ_SYNC(fib_typed, &x) + b;
}

struct typed_job {
    int n;
    long r;
};
static int fib_typed_root(weft_ctx *cx, void *p) {
    struct typed_job *j = p;
    j->r = WEFT_FJ_RUN(cx, fib_typed, j->n);
    return 0;
}

/* Sums v[0..n) in four parts per level, with a task group. */
struct part {
    const long *v;
    size_t n;
    long sum;
};

static int sum(weft_ctx *cx, void *p) {
    struct part *a = p;
    if (a->n <= 1000) {
        a->sum = 0;
        for (size_t i = 0; i < a->n; i++) a->sum += a->v[i];
        return 0;
    }
    struct part q[4];
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (size_t k = 0; k < 4; k++) {
        size_t lo = a->n * k / 4, hi = a->n * (k + 1) / 4;
        q[k] = (struct part){a->v + lo, hi - lo, 0};
        weft_task_group_spawn(&g, sum, &q[k]);
    }
    int st = weft_task_group_wait(&g); /* all four are done after this */
    a->sum = q[0].sum + q[1].sum + q[2].sum + q[3].sum;
    return st;
}

int main(void) {
    weft_status st;
    weft_executor *ex = weft_executor_create(NULL, &st);
    if (!ex) {
        fprintf(stderr, "weft_executor_create: %s\n", weft_strerror(st));
        return 1;
    }
    struct fib f = {30, 0};
    int rc = weft_run_root(ex, fib, &f);
    printf("fib(30) = %ld on %u workers (status %d)\n", f.r, weft_executor_workers(ex), rc);

    struct typed_job t = {30, 0};
    rc |= weft_run_root(ex, fib_typed_root, &t);
    printf("fib(30) = %ld again, as a typed task\n", t.r);

    static long v[1000000];
    for (size_t i = 0; i < 1000000; i++) v[i] = (long)i;
    struct part all = {v, 1000000, 0};
    rc |= weft_run_root(ex, sum, &all);
    printf("sum(0 .. 999999) = %ld\n", all.sum);

    weft_executor_destroy(ex);
    return rc == 0 && f.r == 832040 && t.r == 832040 && all.sum == 499999500000L ? 0 : 1;
}
