/* weft-bench — the table of benchmarks and implementations.
 * SPDX-License-Identifier: MIT
 *
 * To add a benchmark: write its bench_work (bench_work.c) and a bench_ops in each
 * implementation that supports it, then add a row below (NULL where an
 * implementation has none).  Later benchmarks that are not task graphs (fork-join
 * fib, pipelines, parallel algorithms) fit the same shape: bench_ops.oneshot is
 * the timed unit, and has_rerun says whether "NAME_rerun" makes sense.
 */
#include "bench_work.h"
#include "pipe_work.h"
#include "fj_work.h"
#include "graph2_work.h"
#include "gpu_work.h"
#include "tfsuite_work.h"
#include "tfsuite2_work.h"

/* cancel_weft.c (issue 19): token polling, an attached token never fired,
 * cancel-to-skip, deadline lateness. */
extern const bench_work bench_work_cancel_poll, bench_work_cancel_skip, bench_work_cancel_late;
extern const bench_ops bench_weft_cancel_is_cancelled, bench_weft_linear_chain_token, bench_weft_binary_tree_token,
    bench_weft_cancel_to_skip, bench_weft_fanout_run, bench_weft_deadline_1ms, bench_weft_deadline_10ms,
    bench_weft_deadline_100ms;

/* pipe_weft.c: pipeline_sps with WEFT_PIPELINE_SPREAD (peers: pipeline_sps's code). */
extern const bench_ops bench_weft_pipeline_sps_spread;

/* OpenMP and oneTBB are optional: CMake defines these when it compiled them. */
#ifdef WEFT_BENCH_HAVE_OMP
#  define OMP_OPS(name) &bench_omp_##name
#  define OMP_IMPL (&bench_impl_omp)
#else
#  define OMP_OPS(name) NULL
static const bench_impl omp_missing = { "omp", "OpenMP not found", 0, NULL, NULL };
#  define OMP_IMPL (&omp_missing)
#endif

#ifdef WEFT_BENCH_HAVE_TBB
#  define TBB_OPS(name) &bench_tbb_##name
#  define TBB_IMPL (&bench_impl_tbb)
#else
#  define TBB_OPS(name) NULL
static const bench_impl tbb_missing = { "tbb", "oneTBB not found", 0, NULL, NULL };
#  define TBB_IMPL (&tbb_missing)
#endif

#ifdef WEFT_BENCH_HAVE_CPP
#  define CPP_OPS(name) &bench_cpp_##name
#  define CPP_IMPL (&bench_impl_cpp)
#else
#  define CPP_OPS(name) NULL
static const bench_impl cpp_missing = { "cpp", "no C++ compiler", 0, NULL, NULL };
#  define CPP_IMPL (&cpp_missing)
#endif

/* Taskflow and Lace are optional peers found through TASKFLOW_DIR / LACE_DIR
 * (bench/CMakeLists.txt); CMake says why when one is missing. */
#ifdef WEFT_BENCH_HAVE_TF
#  define TF_OPS(name) &bench_tf_##name
#  define TF_IMPL (&bench_impl_tf)
#else
#  define TF_OPS(name) NULL
#  ifndef WEFT_BENCH_TF_WHY
#    define WEFT_BENCH_TF_WHY "TASKFLOW_DIR not set"
#  endif
static const bench_impl tf_missing = { "tf", WEFT_BENCH_TF_WHY, 0, NULL, NULL };
#  define TF_IMPL (&tf_missing)
#endif

#ifdef WEFT_BENCH_HAVE_LACE
#  define LACE_OPS(name) &bench_lace_##name
#  define LACE_IMPL (&bench_impl_lace)
#else
#  define LACE_OPS(name) NULL
#  ifndef WEFT_BENCH_LACE_WHY
#    define WEFT_BENCH_LACE_WHY "LACE_DIR not set"
#  endif
static const bench_impl lace_missing = { "lace", WEFT_BENCH_LACE_WHY, 0, NULL, NULL };
#  define LACE_IMPL (&lace_missing)
#endif

/* sched_weft.c (issue 18): priorities used and not, CRITICAL latency, handles. */
extern const bench_ops bench_weft_async_plain, bench_weft_async_prio, bench_weft_sched_latency, bench_weft_sched_reprio,
    bench_weft_binary_tree_prio;
/* sched_tbb.cpp, sched_tf.cpp: sched_latency with the peers' own priorities. */
extern const bench_ops bench_tbb_sched_latency, bench_tf_sched_latency;

/* Indexed by bench_impl_id. */
const bench_impl *const bench_impls[BENCH_IMPL_COUNT] = {
    [BENCH_WEFT] = &bench_impl_weft,
    [BENCH_OMP] = OMP_IMPL,
    [BENCH_TBB] = TBB_IMPL,
    [BENCH_TF] = TF_IMPL,
    [BENCH_LACE] = LACE_IMPL,
    [BENCH_SERIAL] = &bench_impl_serial,
    [BENCH_CPP] = CPP_IMPL,
};

#define ALL_OPS(name)                                                              \
    {                                                                              \
        [BENCH_WEFT] = &bench_weft_##name, [BENCH_OMP] = OMP_OPS(name),            \
        [BENCH_TBB] = TBB_OPS(name), [BENCH_SERIAL] = &bench_serial_##name,        \
        [BENCH_TF] = TF_OPS(name),                                                 \
    }
/* ALL_OPS plus the C++ layer's (weft.hpp) version. */
#define ALL_OPS_CPP(name)                                                          \
    {                                                                              \
        [BENCH_WEFT] = &bench_weft_##name, [BENCH_OMP] = OMP_OPS(name),            \
        [BENCH_TBB] = TBB_OPS(name), [BENCH_SERIAL] = &bench_serial_##name,        \
        [BENCH_CPP] = CPP_OPS(name), [BENCH_TF] = TF_OPS(name),                    \
    }
/* ALL_OPS plus Lace's (fork-join benchmarks). */
#define FJ_OPS(name)                                                               \
    {                                                                              \
        [BENCH_WEFT] = &bench_weft_##name, [BENCH_OMP] = OMP_OPS(name),            \
        [BENCH_TBB] = TBB_OPS(name), [BENCH_SERIAL] = &bench_serial_##name,        \
        [BENCH_TF] = TF_OPS(name), [BENCH_LACE] = LACE_OPS(name),                  \
    }

/* Default sizes are the issue's: ~1M tasks, 2^19 nodes for the traversal.  What
 * one "task" is for each benchmark is documented in bench_work.h. */
const bench_def bench_table[] = {
    { "linear_chain", (size_t)1 << 20, true, &bench_work_linear_chain, ALL_OPS_CPP(linear_chain) },
    { "binary_tree", ((size_t)1 << 20) - 1, true, &bench_work_binary_tree, ALL_OPS_CPP(binary_tree) },
    { "wavefront", (size_t)1024 * 1024, true, &bench_work_wavefront, ALL_OPS(wavefront) },
    { "graph_traversal", (size_t)1 << 19, true, &bench_work_graph_traversal,
      ALL_OPS(graph_traversal) },
    { "embarrassing_parallelism", (size_t)1 << 20, true, &bench_work_embarrassing_parallelism,
      ALL_OPS(embarrassing_parallelism) },
    /* Fork-join and async (fj_*.c, fj_tbb.cpp): sizes are spawns, fib(30) and
     * skynet depth 6 by default. */
    { "fib", 1346268, false, &bench_work_fib, FJ_OPS(fib) },
    { "fib_spawn2", 2692536, false, &bench_work_fib_spawn2, FJ_OPS(fib_spawn2) },
    { "fib_typed", 1346268, false, &bench_work_fib,
      { [BENCH_WEFT] = &bench_weft_fib_typed, [BENCH_OMP] = OMP_OPS(fib), [BENCH_TBB] = TBB_OPS(fib),
        [BENCH_TF] = TF_OPS(fib), [BENCH_LACE] = LACE_OPS(fib), [BENCH_SERIAL] = &bench_serial_fib_typed } },
    { "skynet", 1111110, false, &bench_work_skynet, FJ_OPS(skynet) },
    { "nqueens", 1000000, false, &bench_work_nqueens, FJ_OPS(nqueens) },
    /* async_task submits from main, as the peers' do; _in_task from a root task. */
    { "async_task", 1000000, false, &bench_work_async_task, ALL_OPS(async_task) },
    { "async_task_in_task", 1000000, false, &bench_work_async_task,
      { [BENCH_WEFT] = &bench_weft_async_task_in_task, [BENCH_SERIAL] = &bench_serial_async_task } },
    /* The profiler's cost: weft only, compare with linear_chain / binary_tree. */
    { "linear_chain_profiled", (size_t)1 << 20, true, &bench_work_linear_chain,
      { [BENCH_WEFT] = &bench_weft_linear_chain_profiled } },
    { "binary_tree_profiled", ((size_t)1 << 20) - 1, true, &bench_work_binary_tree,
      { [BENCH_WEFT] = &bench_weft_binary_tree_profiled } },
    /* Control flow: size = loop iterations (3 tasks each) / subflow children. */
    { "cond_loop", (size_t)1000000, true, &bench_work_cond_loop,
      { [BENCH_WEFT] = &bench_weft_cond_loop, [BENCH_OMP] = OMP_OPS(cond_loop),
        [BENCH_TBB] = TBB_OPS(cond_loop), [BENCH_TF] = TF_OPS(cond_loop), [BENCH_SERIAL] = &bench_serial_cond_loop } },
    { "subflow_spawn", (size_t)1000000, true, &bench_work_subflow_spawn,
      { [BENCH_WEFT] = &bench_weft_subflow_spawn, [BENCH_OMP] = OMP_OPS(subflow_spawn),
        [BENCH_TBB] = TBB_OPS(subflow_spawn), [BENCH_TF] = TF_OPS(subflow_spawn), [BENCH_SERIAL] = &bench_serial_subflow_spawn } },
    /* Pipelines (pipe_work.h): size = tokens. */
    { "pipeline_sps", (size_t)1 << 20, true, &bench_work_pipeline_sps,
      { [BENCH_WEFT] = &bench_weft_pipeline_sps, [BENCH_OMP] = OMP_OPS(pipeline_sps), [BENCH_TBB] = TBB_OPS(pipeline_sps),
        [BENCH_TF] = TF_OPS(pipeline_sps),
        [BENCH_SERIAL] = &bench_serial_pipeline_sps } },
    { "pipeline_sps_spread", (size_t)1 << 20, true, &bench_work_pipeline_sps,
      { [BENCH_WEFT] = &bench_weft_pipeline_sps_spread, [BENCH_OMP] = OMP_OPS(pipeline_sps),
        [BENCH_TBB] = TBB_OPS(pipeline_sps), [BENCH_TF] = TF_OPS(pipeline_sps) } },
    { "pipeline_parse", (size_t)1 << 18, true, &bench_work_pipeline_parse,
      { [BENCH_WEFT] = &bench_weft_pipeline_parse, [BENCH_OMP] = OMP_OPS(pipeline_parse),
        [BENCH_TBB] = TBB_OPS(pipeline_parse), [BENCH_TF] = TF_OPS(pipeline_parse),
        [BENCH_SERIAL] = &bench_serial_pipeline_parse } },
    /* Parallel algorithms (algo_*.c); sort has no OpenMP peer, the _generic rows
     * time weft's function-pointer API against the serial loop / qsort. */
    { "for_each", 10000000, false, &bench_work_algo_for_each, ALL_OPS(for_each) },
    { "transform", 10000000, false, &bench_work_algo_transform, ALL_OPS(transform) },
    { "reduce_sum", 10000000, false, &bench_work_algo_reduce_sum, ALL_OPS(reduce_sum) },
    { "reduce_sum_generic", 10000000, false, &bench_work_algo_reduce_sum,
      { [BENCH_WEFT] = &bench_weft_reduce_sum_generic, [BENCH_SERIAL] = &bench_serial_reduce_sum_generic } },
    { "sort", 10000000, false, &bench_work_algo_sort,
      { [BENCH_WEFT] = &bench_weft_sort, [BENCH_TBB] = TBB_OPS(sort), [BENCH_TF] = TF_OPS(sort),
        [BENCH_SERIAL] = &bench_serial_sort } },
    { "sort_generic", 10000000, false, &bench_work_algo_sort,
      { [BENCH_WEFT] = &bench_weft_sort_generic, [BENCH_SERIAL] = &bench_serial_sort_generic } },
    { "inclusive_scan", 10000000, false, &bench_work_algo_scan, ALL_OPS(inclusive_scan) },
    /* Taskflow's application benchmarks (tfsuite_*.c): size = the interval's end v
     * (integrate), pixels (mandelbrot, N x N), elements, numbers tested (primes)
     * and output cells (N x N).  Each is the largest size of Taskflow's sweep that
     * runs in 5-50 ms serially here (weft-bench's serial row; mandelbrot: its smallest,
     * N = 100, ~33 ms; primes: 10^6, ~40 ms). */
    { "integrate", 1200, false, &bench_work_integrate, ALL_OPS(integrate) },
    { "mandelbrot", 100 * 100, false, &bench_work_mandelbrot, ALL_OPS(mandelbrot) },
    { "merge_sort", 100000, false, &bench_work_merge_sort, ALL_OPS(merge_sort) },
    { "primes", 1000000, false, &bench_work_primes, ALL_OPS(primes) },
    { "matrix_multiplication", 448 * 448, false, &bench_work_matrix_multiplication,
      ALL_OPS(matrix_multiplication) },
    /* Two more (tfsuite2_*.c): size = options (black_scholes prices N options N
     * times over: Taskflow's NUM_RUNS = N; N = 1000, its sweep's smallest) and
     * tokens (linear_pipeline: 8 lines, 8 serial pipes, each a 10 us sleep; no
     * OpenMP peer, see tfsuite2_omp.c). */
    { "tfsuite_black_scholes", 1000, false, &bench_work_black_scholes, ALL_OPS(black_scholes) },
    { "tfsuite_linear_pipeline", 64, false, &bench_work_linear_pipeline,
      { [BENCH_WEFT] = &bench_weft_linear_pipeline, [BENCH_TBB] = TBB_OPS(linear_pipeline),
        [BENCH_SERIAL] = &bench_serial_linear_pipeline, [BENCH_TF] = TF_OPS(linear_pipeline) } },
    /* Issue 18 (sched_weft.c), weft only: size = async tasks / latency samples / queued handles. */
    { "async_plain", 1000000, false, &bench_work_sem, { [BENCH_WEFT] = &bench_weft_async_plain } },
    { "async_prio", 1000000, false, &bench_work_sem, { [BENCH_WEFT] = &bench_weft_async_prio } },
    /* Peers: oneTBB's task_arena priorities, Taskflow's TaskPriority (sched_tbb.cpp, sched_tf.cpp). */
    { "sched_latency", 500, false, &bench_work_sem,
      { [BENCH_WEFT] = &bench_weft_sched_latency, [BENCH_TBB] = TBB_OPS(sched_latency),
        [BENCH_TF] = TF_OPS(sched_latency) } },
    { "sched_reprio", 1000, false, &bench_work_sem, { [BENCH_WEFT] = &bench_weft_sched_reprio } },
    { "sched_reprio_1m", 1000000, false, &bench_work_sem, { [BENCH_WEFT] = &bench_weft_sched_reprio } },
    /* binary_tree with a random priority on every task (weft only): compare with binary_tree. */
    { "binary_tree_prio", ((size_t)1 << 20) - 1, true, &bench_work_binary_tree,
      { [BENCH_WEFT] = &bench_weft_binary_tree_prio } },
    /* Issue 25 (graph2_weft.c), weft only: size = instances * 1000 tasks / tasks. */
#define INSTANCES(n)                                                                                           \
    { "run_n_parallel_" #n, (n) * 1000, true, &bench_work_instances, { [BENCH_WEFT] = &bench_weft_run_n_parallel } }, \
    { "run_n_copies_" #n, (n) * 1000, true, &bench_work_instances, { [BENCH_WEFT] = &bench_weft_run_n_copies } }
    INSTANCES(1), INSTANCES(2), INSTANCES(64),
#undef INSTANCES
    { "sem_free", 100000, true, &bench_work_sem, { [BENCH_WEFT] = &bench_weft_sem_free } },
    { "sem_uncontended", 100000, true, &bench_work_sem, { [BENCH_WEFT] = &bench_weft_sem_uncontended } },
    { "sem_k1", 100000, true, &bench_work_sem, { [BENCH_WEFT] = &bench_weft_sem_k1 } },
    /* Issue 21 (gpu_weft.c): GPU task overhead vs launches by hand (serial), stream overlap. */
    { "gpu_tasks", 2000, true, &bench_work_gpu_tasks, { [BENCH_WEFT] = &bench_weft_gpu_tasks, [BENCH_SERIAL] = &bench_serial_gpu_tasks } },
    { "gpu_busy", 200, true, &bench_work_gpu_busy, { [BENCH_WEFT] = &bench_weft_gpu_tasks, [BENCH_SERIAL] = &bench_serial_gpu_tasks } },
    { "gpu_overlap_1", 16, false, &bench_work_gpu_overlap, { [BENCH_WEFT] = &bench_weft_gpu_overlap_1 } },
    { "gpu_overlap_4", 16, false, &bench_work_gpu_overlap, { [BENCH_WEFT] = &bench_weft_gpu_overlap_4 } },
    /* Issue 19 (cancel_weft.c), weft only: size = calls / tasks / tasks / deadlines per rep. */
    { "cancel_is_cancelled", 10000000, false, &bench_work_cancel_poll, { [BENCH_WEFT] = &bench_weft_cancel_is_cancelled } },
    { "linear_chain_token", (size_t)1 << 20, true, &bench_work_linear_chain, { [BENCH_WEFT] = &bench_weft_linear_chain_token } },
    { "binary_tree_token", ((size_t)1 << 20) - 1, true, &bench_work_binary_tree, { [BENCH_WEFT] = &bench_weft_binary_tree_token } },
    { "cancel_to_skip", 1000000, true, &bench_work_cancel_skip, { [BENCH_WEFT] = &bench_weft_cancel_to_skip } },
    { "fanout_run", 1000000, true, &bench_work_cancel_skip, { [BENCH_WEFT] = &bench_weft_fanout_run } },
    { "deadline_1ms", 100, false, &bench_work_cancel_late, { [BENCH_WEFT] = &bench_weft_deadline_1ms } },
    { "deadline_10ms", 100, false, &bench_work_cancel_late, { [BENCH_WEFT] = &bench_weft_deadline_10ms } },
    { "deadline_100ms", 20, false, &bench_work_cancel_late, { [BENCH_WEFT] = &bench_weft_deadline_100ms } },
};

const size_t bench_table_len = sizeof bench_table / sizeof bench_table[0];
