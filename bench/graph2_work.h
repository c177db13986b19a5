/* weft-bench — issue 25's benchmarks (graph2_weft.c): parallel run_n against N
 * copies, and semaphore acquire/release.  weft only.  SPDX-License-Identifier: MIT */
#ifndef WEFT_BENCH_GRAPH2_WORK_H
#define WEFT_BENCH_GRAPH2_WORK_H

#include "bench_work.h"

/* N instances of a 1000-node DAG; size = N * 1000 tasks. */
extern const bench_work bench_work_instances;
extern const bench_ops bench_weft_run_n_parallel, bench_weft_run_n_copies;
/* n independent tasks; with no semaphore, an uncontended one, one of max 1. */
extern const bench_work bench_work_sem;
extern const bench_ops bench_weft_sem_free, bench_weft_sem_uncontended, bench_weft_sem_k1;

#endif
