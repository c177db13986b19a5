/* weft-bench — the parallel-algorithm benchmarks: data, kernels, declarations.
 * SPDX-License-Identifier: MIT
 *
 * One element = one "task" in the output line.  Every implementation runs the
 * same inline kernel per element; they differ only in how the range is split.
 *   for_each        v[i] = v[i] * FE_MUL + FE_ADD            (10^7 doubles, in place)
 *   transform       out[i] = in[i] * in[i] + 1               (10^7 doubles)
 *   reduce_sum      sum of in[i]                             (10^7 doubles)
 *   sort            ascending sort                           (10^7 random doubles)
 *   inclusive_scan  out[i] = in[0] + ... + in[i]             (10^7 uint64)
 * The _generic rows time weft's function-pointer API (one call per element or
 * comparison) against the serial equivalent (qsort for sort). */
#ifndef WEFT_BENCH_ALGO_WORK_H
#define WEFT_BENCH_ALGO_WORK_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FE_MUL 1.0000001
#define FE_ADD 0.5

typedef struct algo_data {
    size_t n;
    double *in, *out, *orig; /* orig: pristine input, copied back by reset */
    uint64_t *uin, *uout;
    double sum;              /* reduce_sum's result */
    double want_sum;
} algo_data;

static inline double fe_kernel(double x) { return x * FE_MUL + FE_ADD; }
static inline double tr_kernel(double x) { return x * x + 1.0; }

extern const bench_work bench_work_algo_for_each;
extern const bench_work bench_work_algo_transform;
extern const bench_work bench_work_algo_reduce_sum;
extern const bench_work bench_work_algo_sort;
extern const bench_work bench_work_algo_scan;

#define ALGO_DECLARE_OPS(impl)                                   \
    extern const bench_ops bench_##impl##_for_each;              \
    extern const bench_ops bench_##impl##_transform;             \
    extern const bench_ops bench_##impl##_reduce_sum;            \
    extern const bench_ops bench_##impl##_sort;                  \
    extern const bench_ops bench_##impl##_inclusive_scan;
ALGO_DECLARE_OPS(weft)
ALGO_DECLARE_OPS(omp)
ALGO_DECLARE_OPS(tbb)
ALGO_DECLARE_OPS(serial)
#undef ALGO_DECLARE_OPS
extern const bench_ops bench_weft_reduce_sum_generic;
extern const bench_ops bench_weft_sort_generic;
extern const bench_ops bench_serial_reduce_sum_generic;
extern const bench_ops bench_serial_sort_generic;

#ifdef __cplusplus
}
#endif
#endif
