/* weft-bench — weft's parallel algorithms.  SPDX-License-Identifier: MIT
 *
 * The main rows use the fast forms a C user would pick: range bodies with the
 * kernel inlined (for_each, transform) and the typed instances of algo_typed.h
 * (reduce, sort, scan).  The _generic rows use the function-pointer API. */
#include "bench_work.h"

#include <stdio.h>

#include <weft.h>
#include <weft/algo_typed.h>

static int check(const char *what, weft_status st) {
    if (st == WEFT_OK) return 0;
    fprintf(stderr, "weft: %s: %s\n", what, weft_errname(st));
    return -1;
}

#define WEFT_OPS(name) const bench_ops bench_weft_##name = { weft_##name, NULL, NULL, NULL };

static void fe_body(size_t lo, size_t hi, void *arg) {
    double *v = ((algo_data *)arg)->in;
    for (size_t i = lo; i < hi; i++) v[i] = fe_kernel(v[i]);
}

static int weft_for_each(void *env, void *p) {
    algo_data *d = p;
    return check("for_each", weft_parallel_for_range(env, 0, d->n, 1, fe_body, d, NULL));
}
WEFT_OPS(for_each)

static void tr_body(size_t lo, size_t hi, void *arg) {
    algo_data *d = arg;
    for (size_t i = lo; i < hi; i++) d->out[i] = tr_kernel(d->in[i]);
}

static int weft_transform(void *env, void *p) {
    algo_data *d = p;
    return check("transform", weft_parallel_for_range(env, 0, d->n, 1, tr_body, d, NULL));
}
WEFT_OPS(transform)

static int weft_reduce_sum(void *env, void *p) {
    algo_data *d = p;
    d->sum = 0;
    return check("reduce_sum", weft_double_sum_reduce(env, d->in, d->n, &d->sum, NULL));
}
WEFT_OPS(reduce_sum)

static void add_double(void *acc, const void *x, void *arg) {
    (void)arg;
    *(double *)acc += *(const double *)x;
}

static int weft_reduce_sum_generic(void *env, void *p) {
    algo_data *d = p;
    d->sum = 0;
    return check("reduce_sum_generic",
                 weft_parallel_reduce(env, d->in, d->n, sizeof(double), &d->sum, add_double, NULL, NULL));
}
WEFT_OPS(reduce_sum_generic)

static int weft_sort(void *env, void *p) {
    algo_data *d = p;
    return check("sort", weft_double_sort(env, d->in, d->n, NULL));
}
WEFT_OPS(sort)

static int cmp_double(const void *a, const void *b, void *arg) {
    double x = *(const double *)a, y = *(const double *)b;
    (void)arg;
    return (x > y) - (x < y);
}

static int weft_sort_generic(void *env, void *p) {
    algo_data *d = p;
    return check("sort_generic", weft_parallel_sort(env, d->in, d->n, sizeof(double), cmp_double, NULL, NULL));
}
WEFT_OPS(sort_generic)

static int weft_inclusive_scan(void *env, void *p) {
    algo_data *d = p;
    return check("inclusive_scan", weft_u64_sum_inclusive_scan(env, d->uin, d->uout, d->n, NULL, NULL));
}
WEFT_OPS(inclusive_scan)
