/* weft-bench — integrate, mandelbrot, merge_sort, primes and
 * matrix_multiplication on weft, written as a weft user would port Taskflow's
 * benchmarks/<name>/taskflow.cpp: fork-join with weft_spawn / weft_sync under
 * weft_run_root where Taskflow uses a TaskGroup (silent_async + corun) under
 * executor.async(..).get(); weft_parallel_for_range / weft_parallel_reduce_range
 * with the partitioner Taskflow names; weft_emplace_for tasks in a taskflow for
 * the matrix product.  The executor comes from bench_weft.c (outside the timer).
 * SPDX-License-Identifier: MIT */
#include "tfsuite_work.h"

#include <stdio.h>

#include <weft.h>

static int report(const char *what, weft_status st) {
    if (st != WEFT_OK) fprintf(stderr, "weft: %s: %s\n", what, weft_errname(st));
    return st ? -1 : 0;
}

/* ---- integrate: spawn the left half, recurse into the right, sync ---------------- */

struct integ_arg {
    double x1, y1, x2, y2, area, r;
};

static int integrate(weft_ctx *cx, void *p) {
    struct integ_arg *a = p;
    integ_split s;
    if (integ_step(a->x1, a->y1, a->x2, a->y2, a->area, &s, &a->r)) return 0;
    struct integ_arg left = {a->x1, a->y1, s.x0, s.y0, s.left, 0};
    struct integ_arg right = {s.x0, s.y0, a->x2, a->y2, s.right, 0};
    weft_spawn(cx, integrate, &left);
    integrate(cx, &right);
    int st = weft_sync(cx);
    a->r = left.r + right.r;
    return st;
}

static int weft_integrate(void *env, void *data) {
    integ_data *d = data;
    struct integ_arg a = {0, integ_fn(0), d->v, integ_fn(d->v), 0.0, 0};
    int st = report("weft_run_root(integrate)", weft_run_root(env, integrate, &a));
    d->result = a.r;
    return st;
}
const bench_ops bench_weft_integrate = {weft_integrate, NULL, NULL, NULL};

/* ---- mandelbrot: one column per index, chunks of 1 taken dynamically ----------- */

static void mandel_body(size_t lo, size_t hi, void *arg) {
    for (size_t i = lo; i < hi; i++) mandel_column(arg, (int)i);
}

static int weft_mandelbrot(void *env, void *data) {
    mandel_data *d = data;
    weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1};
    return report("mandelbrot", weft_parallel_for_range(env, 0, (size_t)d->h, 1, mandel_body, d, &cfg));
}
const bench_ops bench_weft_mandelbrot = {weft_mandelbrot, NULL, NULL, NULL};

/* ---- merge_sort: spawn the right half, recurse into the left, sync, merge ------- */

struct msort_arg {
    double *v, *buf;
    size_t lo, hi;
};

static int msort(weft_ctx *cx, void *p) {
    struct msort_arg *a = p;
    size_t n = a->hi - a->lo;
    if (n <= MS_CUTOFF) {
        msort_leaf(a->v, a->lo, a->hi);
        return 0;
    }
    size_t mid = a->lo + n / 2;
    struct msort_arg right = {a->v, a->buf, mid, a->hi};
    struct msort_arg left = {a->v, a->buf, a->lo, mid};
    weft_spawn(cx, msort, &right);
    msort(cx, &left);
    int st = weft_sync(cx);
    msort_merge(a->v, a->buf, a->lo, mid, a->hi);
    return st;
}

/* The buffer is made inside the root task, as Taskflow's msort(executor, data)
 * makes its std::vector inside executor.async. */
static int msort_root(weft_ctx *cx, void *p) {
    msort_data *d = p;
    double *buf = msort_buffer(d->n);
    if (!buf) return WEFT_ENOMEM;
    struct msort_arg a = {d->v, buf, 0, d->n};
    int st = msort(cx, &a);
    msort_buffer_free(buf);
    return st;
}

static int weft_merge_sort(void *env, void *data) {
    return report("weft_run_root(merge_sort)", weft_run_root(env, msort_root, data));
}
const bench_ops bench_weft_merge_sort = {weft_merge_sort, NULL, NULL, NULL};

/* ---- primes: a range reduction over 1 .. value-1, dynamic chunks of 10 ------------ */

static void primes_body(size_t lo, size_t hi, void *acc, void *arg) {
    (void)arg;
    *(size_t *)acc = primes_count(lo + 1, hi + 1);
}
static void add_size(void *acc, const void *x, void *arg) {
    (void)arg;
    *(size_t *)acc += *(const size_t *)x;
}

static int weft_primes(void *env, void *data) {
    primes_data *d = data;
    weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = PRIMES_CHUNK};
    size_t sum = 0;
    int st = report("primes", weft_parallel_reduce_range(env, d->value - 1, sizeof sum, &sum, primes_body,
                                                          add_size, NULL, &cfg));
    d->result = sum;
    return st;
}
const bench_ops bench_weft_primes = {weft_primes, NULL, NULL, NULL};

/* ---- matrix_multiplication: four loop tasks, the product after the three inits ---- */

#define MM_BODY(name, row)                                                          \
    static void name(size_t lo, size_t hi, void *arg) {                            \
        for (size_t i = lo; i < hi; i++) row(arg, (int)i);                         \
    }
MM_BODY(mm_a_body, mm_init_a)
MM_BODY(mm_b_body, mm_init_b)
MM_BODY(mm_c_body, mm_init_c)
MM_BODY(mm_body, mm_row)

static int weft_matrix_multiplication(void *env, void *data) {
    mm_data *d = data;
    size_t n = (size_t)d->n;
    weft_for_desc init_a = {0, n, 1, mm_a_body, d, {0}}, init_b = {0, n, 1, mm_b_body, d, {0}},
                  init_c = {0, n, 1, mm_c_body, d, {0}}, comp_c = {0, n, 1, mm_body, d, {0}};
    weft_status st = WEFT_OK;
    weft_taskflow *tf = weft_taskflow_create("matrix_multiplication", &st);
    if (!tf) return report("weft_taskflow_create", st);
    weft_task ta = weft_emplace_for(tf, &init_a), tb = weft_emplace_for(tf, &init_b),
              tc = weft_emplace_for(tf, &init_c), tm = weft_emplace_for(tf, &comp_c);
    if (weft_task_is_null(ta) || weft_task_is_null(tb) || weft_task_is_null(tc) || weft_task_is_null(tm)) {
        st = weft_taskflow_last_error(tf);
    } else {
        weft_task before[3] = {ta, tb, tc};
        st = weft_succeed_many(tm, before, 3);
    }
    if (st == WEFT_OK) st = weft_run_and_wait(env, tf);
    weft_status dst = weft_taskflow_destroy(tf);
    return report("matrix_multiplication", st != WEFT_OK ? st : dst);
}
const bench_ops bench_weft_matrix_multiplication = {weft_matrix_multiplication, NULL, NULL, NULL};
