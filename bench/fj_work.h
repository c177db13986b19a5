/* weft-bench — fork-join and async benchmarks: data, kernels, and the ops each
 * implementation provides (fj_weft.c, fj_omp.c, fj_tbb.cpp, fj_work.c for serial).
 * SPDX-License-Identifier: MIT
 *
 * One "task" is one spawned child (fib, skynet, nqueens) or one async task
 * (async_task); ns_per_task is the median over that count.  The serial fib makes
 * every node a real, non-inlined call, so ns per spawn on one worker is
 * (T_weft(1) - T_serial) / tasks.  Included from C and C++.
 */
#ifndef WEFT_BENCH_FJ_WORK_H
#define WEFT_BENCH_FJ_WORK_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* fib(n): spawn-one (fib) or spawn-both (fib_spawn2).  tasks: spawns made. */
typedef struct fib_data {
    int n;
    size_t tasks;
    long result;
} fib_data;

/* skynet: a 10-ary tree; every leaf returns its index, every node the sum of its
 * children.  tasks: nodes below the root. */
#define SKYNET_FANOUT 10
typedef struct skynet_data {
    int depth;
    size_t tasks;
    long result;
} skynet_data;

/* nqueens(n): count the placements, one child per safe square of each row.
 * tasks: nodes below the root. */
typedef struct nqueens_data {
    int n;
    size_t tasks;
    long result;
} nqueens_data;

/* A safe-square test on the columns chosen so far (shared by every impl). */
static inline int nq_safe(const signed char *cols, int row, int col) {
    for (int r = 0; r < row; r++) {
        int d = cols[r] - col;
        if (d == 0 || d == row - r || d == r - row) return 0;
    }
    return 1;
}

/* async_task: n independent tasks; task i scrambles out[i] (emb_mix). */
typedef struct async_data {
    size_t n;
    uint64_t *out;
} async_data;

extern const bench_work bench_work_fib;
extern const bench_work bench_work_fib_spawn2;
extern const bench_work bench_work_skynet;
extern const bench_work bench_work_nqueens;
extern const bench_work bench_work_async_task;

#define BENCH_DECLARE_FJ(impl)                                                     \
    extern const bench_ops bench_##impl##_fib;                                     \
    extern const bench_ops bench_##impl##_fib_spawn2;                              \
    extern const bench_ops bench_##impl##_skynet;                                  \
    extern const bench_ops bench_##impl##_nqueens;                                 \
    extern const bench_ops bench_##impl##_async_task;
BENCH_DECLARE_FJ(weft)
BENCH_DECLARE_FJ(omp)
BENCH_DECLARE_FJ(tbb)
BENCH_DECLARE_FJ(serial)
#undef BENCH_DECLARE_FJ
extern const bench_ops bench_weft_async_task_in_task; /* submitted from a root task */
/* fib_typed: weft's typed fork-join (WEFT_FJ_TASK) and a plain direct-call serial
 * fib; the peers run their fib (already direct calls). */
extern const bench_ops bench_weft_fib_typed;
extern const bench_ops bench_serial_fib_typed;

#ifdef __cplusplus
}
#endif
#endif
