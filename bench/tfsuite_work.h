/* weft-bench — five application benchmarks of Taskflow's suite
 * (taskflow/benchmarks/{integrate,mandelbrot,merge_sort,primes,matrix_multiplication}):
 * data, kernels, and the ops each implementation provides (tfsuite_weft.c,
 * tfsuite_omp.c, tfsuite_tbb.cpp, tfsuite_tf.cpp; serial in tfsuite_work.c).
 * SPDX-License-Identifier: MIT
 *
 * The kernels are Taskflow's (integrate.hpp, mandel.hpp, merge_sort's
 * std::sort cutoff + std::merge + std::copy, primes.hpp, the i-j-k product of
 * matrix_multiplication), written once in C.  Those that do real work per call
 * (a mandelbrot column, a range of primes, a leaf sort, a merge, a matrix row)
 * are out of line in tfsuite_work.c, so that every implementation runs the same
 * machine code and only the scheduling differs; integrate's step is a few flops
 * per task and is inline.  Included from C and C++.
 */
#ifndef WEFT_BENCH_TFSUITE_WORK_H
#define WEFT_BENCH_TFSUITE_WORK_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- integrate: adaptive trapezoid quadrature of (x^2 + 1) x over [0, v].
 * A node halves its interval; if the two halves' area differs from the whole's
 * by less than INTEG_EPS it returns it, else it forks the left half and recurses
 * into the right one, then adds the two.  size = v (Taskflow's -v). */
#define INTEG_EPS 1.0e-9
static inline double integ_fn(double x) { return (x * x + 1.0) * x; }

typedef struct integ_data {
    double v;           /* upper bound of the interval */
    double result;
    double want;        /* the serial recursion's value (bit-exact target) */
    double exact;       /* the closed form, for the tolerance check */
} integ_data;

/* One node's arithmetic: 1 (and *out = the area) when the node is a leaf, else
 * 0 with the midpoint and both halves' areas (the children's `area`). */
typedef struct integ_split {
    double x0, y0, left, right;
} integ_split;
static inline int integ_step(double x1, double y1, double x2, double y2, double area, integ_split *s,
                             double *out) {
    double half = (x2 - x1) / 2;
    s->x0 = x1 + half;
    s->y0 = integ_fn(s->x0);
    s->left = (y1 + s->y0) / 2 * half;
    s->right = (s->y0 + y2) / 2 * half;
    double whole = s->left + s->right;
    if (whole - area < INTEG_EPS && area - whole < INTEG_EPS) {
        *out = whole;
        return 1;
    }
    return 0;
}

/* ---- mandelbrot: an N x N image of the escape time (at most MANDEL_MAX_ITER
 * iterations of z -> z^D + c with pow / cos / sin / atan2, as mandel.hpp),
 * coloured into RGB.  A task is column i (Taskflow's for_each_index over i,
 * writing RGB[3 (j W + i)] for j < H).  size = N * N pixels. */
#define MANDEL_MAX_ITER 200
typedef struct mandel_data {
    int w, h;
    unsigned char *rgb;         /* 3 w h */
    unsigned char *want;        /* the serial image */
} mandel_data;
void mandel_column(const mandel_data *d, int i);

/* ---- merge_sort: N random doubles; split in halves down to MS_CUTOFF, leaves
 * sorted, halves merged into a buffer of N (allocated and zeroed inside the
 * timer, as Taskflow's std::vector<T> buffer(n)) and copied back.
 * size = N. */
#define MS_CUTOFF 1024
typedef struct msort_data {
    size_t n;
    double *v, *orig, *want;
} msort_data;
double *msort_buffer(size_t n);                 /* zeroed, NULL if out of memory */
void msort_buffer_free(double *buf);
void msort_leaf(double *v, size_t lo, size_t hi);                       /* std::sort */
void msort_merge(double *v, double *buf, size_t lo, size_t mid, size_t hi); /* merge + copy */

/* ---- primes: how many of 1 .. value-1 are prime, by trial division (6k +- 1,
 * primes.hpp), in chunks of PRIMES_CHUNK.  size = value. */
#define PRIMES_CHUNK 10
typedef struct primes_data {
    size_t value;
    size_t result, want;
} primes_data;
size_t primes_count(size_t lo, size_t hi);      /* primes in [lo, hi) */

/* ---- matrix_multiplication: N x N matrices of rows (double **, one malloc a
 * row as Taskflow's): a[i][j] = i + j, b[i][j] = i j, c = 0, then
 * c[i][j] += a[i][k] b[k][j] for k < N; four parallel loops over rows, the last
 * after the other three.  size = N * N. */
typedef struct mm_data {
    int n;
    double **a, **b, **c;
} mm_data;
void mm_init_a(const mm_data *d, int i);
void mm_init_b(const mm_data *d, int i);
void mm_init_c(const mm_data *d, int i);
void mm_row(const mm_data *d, int i);

extern const bench_work bench_work_integrate, bench_work_mandelbrot, bench_work_merge_sort, bench_work_primes,
    bench_work_matrix_multiplication;

#define BENCH_DECLARE_TFSUITE(impl)                                                \
    extern const bench_ops bench_##impl##_integrate, bench_##impl##_mandelbrot,    \
        bench_##impl##_merge_sort, bench_##impl##_primes,                          \
        bench_##impl##_matrix_multiplication;
BENCH_DECLARE_TFSUITE(weft)
BENCH_DECLARE_TFSUITE(omp)
BENCH_DECLARE_TFSUITE(tbb)
BENCH_DECLARE_TFSUITE(tf)
BENCH_DECLARE_TFSUITE(serial)
#undef BENCH_DECLARE_TFSUITE

#ifdef __cplusplus
}
#endif
#endif
