/* weft-bench — two more application benchmarks of Taskflow's suite
 * (taskflow/benchmarks/{black_scholes,linear_pipeline}): data, kernels, and the
 * ops each implementation provides (tfsuite2_weft.c, tfsuite2_omp.c,
 * tfsuite2_tbb.cpp, tfsuite2_tf.cpp; serial in tfsuite2_work.c).
 * SPDX-License-Identifier: MIT
 *
 * As in tfsuite_work.h, the kernels (one option's price, one pipe's work) are
 * out of line in tfsuite2_work.c, so that every implementation runs the same
 * machine code and only the scheduling differs.  Included from C and C++.
 */
#ifndef WEFT_BENCH_TFSUITE2_WORK_H
#define WEFT_BENCH_TFSUITE2_WORK_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- black_scholes: N European options (PARSEC's blackscholes, as Taskflow's
 * common.hpp: float, CNDF by Hull's polynomial), priced NUM_RUNS = N times over:
 * run j is a parallel loop over the N options writing prices[i].  The inputs are
 * Taskflow's generate_options(N): glibc rand() from its default seed 1, in
 * Taskflow's order of calls.  size = N (options, and runs). */
typedef struct bs_data {
    int n;          /* options */
    int runs;       /* NUM_RUNS = n */
    float *sptprice, *strike, *rate, *volatility, *otime;
    int *otype;     /* 1 put, 0 call */
    float *prices;
    float *want;    /* the serial prices */
} bs_data;
void bs_option(const bs_data *d, int i); /* prices[i] = BlkSchlsEqEuroNoDiv(option i) */

/* ---- linear_pipeline: Taskflow's defaults, 8 lines and 8 serial pipes
 * ("ssssssss"); every pipe's work is std::this_thread::sleep_for(10 us) (here
 * nanosleep of 10 us); the first pipe stops on its (size+1)-th call, so `size`
 * tokens pass through all 8 pipes.  The calls record which token each pipe saw,
 * in order, for the check.  size = tokens. */
#define LP_LINES 8
#define LP_PIPES 8
typedef struct lp_data {
    size_t n;                  /* tokens */
    size_t made;               /* first-pipe calls (Taskflow's Input::i) */
    size_t seen[LP_PIPES];     /* tokens each later pipe saw */
    size_t bad;                /* tokens seen out of order */
} lp_data;
/* The first pipe: the work, then the token's number (d->made++), and 1 when it
 * is the stopping call (number == n). */
int lp_input(lp_data *d, size_t *token);
/* Pipe `pipe` (1..7) for `token`: the work, and the in-order record (the pipes
 * are serial, so one call at a time per pipe). */
void lp_filter(lp_data *d, int pipe, size_t token);

extern const bench_work bench_work_black_scholes, bench_work_linear_pipeline;

#define BENCH_DECLARE_TFSUITE2(impl) \
    extern const bench_ops bench_##impl##_black_scholes, bench_##impl##_linear_pipeline;
BENCH_DECLARE_TFSUITE2(weft)
BENCH_DECLARE_TFSUITE2(omp)
BENCH_DECLARE_TFSUITE2(tbb)
BENCH_DECLARE_TFSUITE2(tf)
BENCH_DECLARE_TFSUITE2(serial)
#undef BENCH_DECLARE_TFSUITE2

#ifdef __cplusplus
}
#endif
#endif
