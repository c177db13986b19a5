/* weft-bench — the OpenMP peer of black_scholes, as Taskflow's
 * benchmarks/black_scholes/omp.cpp: NUM_RUNS `parallel for schedule(static)`
 * loops over the options.  The thread count is set once by bench_omp.c
 * (omp_set_num_threads).  linear_pipeline has none: Taskflow's
 * benchmarks/linear_pipeline/omp.cpp times a chain of num_lines (8) tasks with
 * depend clauses, each incrementing a counter, and ignores the size; it is not
 * a pipeline.
 * SPDX-License-Identifier: MIT */
#include "tfsuite2_work.h"

#include <omp.h>

static int omp_black_scholes(void *env, void *data) {
    bs_data *d = data;
    int n = d->n;
    (void)env;
    for (int j = 0; j < d->runs; j++) {
        #pragma omp parallel for schedule(static)
        for (int i = 0; i < n; i++) bs_option(d, i);
    }
    return 0;
}
const bench_ops bench_omp_black_scholes = {omp_black_scholes, NULL, NULL, NULL};
