/* weft-bench — the OpenMP peers of the algorithm benchmarks: `parallel for`
 * (default static schedule), `reduction(+)`, and an `inscan` reduction for the
 * scan.  OpenMP has no sort; that row has no omp entry.
 * SPDX-License-Identifier: MIT */
#include "bench_work.h"

#define OMP_ALGO_OPS(name) const bench_ops bench_omp_##name = { omp_##name, NULL, NULL, NULL };

static int omp_for_each(void *env, void *p) {
    algo_data *d = p;
    double *v = d->in;
    long n = (long)d->n;
    (void)env;
    #pragma omp parallel for
    for (long i = 0; i < n; i++) v[i] = fe_kernel(v[i]);
    return 0;
}
OMP_ALGO_OPS(for_each)

static int omp_transform(void *env, void *p) {
    algo_data *d = p;
    const double *in = d->in;
    double *out = d->out;
    long n = (long)d->n;
    (void)env;
    #pragma omp parallel for
    for (long i = 0; i < n; i++) out[i] = tr_kernel(in[i]);
    return 0;
}
OMP_ALGO_OPS(transform)

static int omp_reduce_sum(void *env, void *p) {
    algo_data *d = p;
    const double *in = d->in;
    long n = (long)d->n;
    double s = 0;
    (void)env;
    #pragma omp parallel for reduction(+ : s)
    for (long i = 0; i < n; i++) s += in[i];
    d->sum = s;
    return 0;
}
OMP_ALGO_OPS(reduce_sum)

static int omp_inclusive_scan(void *env, void *p) {
    algo_data *d = p;
    const uint64_t *in = d->uin;
    uint64_t *out = d->uout, acc = 0;
    long n = (long)d->n;
    (void)env;
    #pragma omp parallel for reduction(inscan, + : acc)
    for (long i = 0; i < n; i++) {
        acc += in[i];
        #pragma omp scan inclusive(acc)
        out[i] = acc;
    }
    return 0;
}
OMP_ALGO_OPS(inclusive_scan)
