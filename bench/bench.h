/* weft-bench — shared declarations.  SPDX-License-Identifier: MIT
 *
 * The program is a table of benchmarks (bench_def) crossed with a set of
 * implementations (bench_impl).  A benchmark owns its data (bench_work: create,
 * reset, verify) so every implementation does exactly the same work per task and
 * is checked the same way; an implementation only supplies the code that builds
 * and runs the task graph (bench_ops).  Adding a benchmark means adding one
 * bench_work, one bench_ops per implementation that supports it, and one row in
 * registry.c.  This header is included from C and C++.
 */
#ifndef WEFT_BENCH_H
#define WEFT_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The implementations, in the order they are run and printed. */
typedef enum bench_impl_id {
    BENCH_WEFT,
    BENCH_OMP,
    BENCH_TBB,
    BENCH_TF,           /* Taskflow (optional: TASKFLOW_DIR), *_tf.cpp */
    BENCH_LACE,         /* Lace (optional: LACE_DIR, fork-join only), *_lace.c */
    BENCH_SERIAL,
    BENCH_CPP,          /* weft through include/weft.hpp (graph benchmarks only) */
    BENCH_IMPL_COUNT
} bench_impl_id;

/* One implementation's per-thread-count environment: set up once before its
 * benchmarks run (outside every timer: executors and thread pools are long-lived
 * in real programs) and torn down after. */
typedef struct bench_impl {
    const char *name;           /* "weft", "omp", ... as printed in impl= */
    const char *unavailable;    /* NULL, or why it was not compiled in */
    unsigned max_threads;       /* 0: any; serial is 1 */
    /* Returns 0 and sets *env, or prints why and returns -1. */
    int (*init)(unsigned threads, void **env);
    void (*fini)(void *env);
} bench_impl;

/* How one implementation runs one benchmark.  All return 0, or print the reason
 * to stderr and return -1.  `data` is the benchmark's bench_work data. */
typedef struct bench_ops {
    /* Build the graph, run it once, tear it down: the timed unit of the plain
     * (build + run) variant, as in Taskflow's suite. */
    int (*oneshot)(void *env, void *data);
    /* For the _rerun variant: build once (untimed), run many times (each run
     * timed), destroy (untimed).  NULL build: the implementation has no
     * reusable graph (OpenMP, serial) and the rerun variant times oneshot. */
    int (*build)(void *env, void *data, void **graph);
    int (*run)(void *env, void *graph);
    void (*destroy)(void *env, void *graph);
} bench_ops;

/* A benchmark's data, shared by all implementations. */
typedef struct bench_work {
    /* Number of tasks actually in the graph for a requested size (e.g. a binary
     * tree rounds down to 2^D - 1).  Always >= 1. */
    size_t (*shape)(size_t requested);
    /* Allocates the data for `tasks` tasks (a value returned by shape).  NULL
     * when out of memory. */
    void *(*create)(size_t tasks);
    /* Puts the data back to its pre-run state; called before every timed rep so
     * that every rep is verified on its own. */
    void (*reset)(void *data);
    /* 0 if the run computed the right answer, else writes a reason to msg. */
    int (*verify)(const void *data, char *msg, size_t msg_len);
    void (*destroy)(void *data);
} bench_work;

/* One row of the benchmark table. */
typedef struct bench_def {
    const char *name;
    size_t default_size;        /* requested size before --size-scale / --quick */
    bool has_rerun;             /* also offer NAME_rerun */
    const bench_work *work;
    const bench_ops *ops[BENCH_IMPL_COUNT];  /* NULL: not implemented there */
} bench_def;

/* registry.c */
extern const bench_def bench_table[];
extern const size_t bench_table_len;
extern const bench_impl *const bench_impls[BENCH_IMPL_COUNT];

/* Per-implementation exports (bench_<impl>.c).  Declared unconditionally; the
 * registry only references the optional ones when they were compiled. */
#define BENCH_DECLARE_IMPL(impl)                                   \
    extern const bench_impl bench_impl_##impl;                     \
    extern const bench_ops bench_##impl##_linear_chain;            \
    extern const bench_ops bench_##impl##_binary_tree;             \
    extern const bench_ops bench_##impl##_wavefront;               \
    extern const bench_ops bench_##impl##_graph_traversal;         \
    extern const bench_ops bench_##impl##_embarrassing_parallelism;
BENCH_DECLARE_IMPL(weft)
BENCH_DECLARE_IMPL(omp)
BENCH_DECLARE_IMPL(tbb)
BENCH_DECLARE_IMPL(serial)
BENCH_DECLARE_IMPL(tf)
#undef BENCH_DECLARE_IMPL

/* Taskflow (*_tf.cpp), each written as the same benchmark in Taskflow's own
 * benchmarks/ folder; compiled only when CMake found TASKFLOW_DIR. */
extern const bench_ops bench_tf_fib, bench_tf_fib_spawn2, bench_tf_skynet, bench_tf_nqueens, bench_tf_async_task;
extern const bench_ops bench_tf_for_each, bench_tf_transform, bench_tf_reduce_sum, bench_tf_sort,
    bench_tf_inclusive_scan;
extern const bench_ops bench_tf_pipeline_sps, bench_tf_pipeline_parse, bench_tf_cond_loop, bench_tf_subflow_spawn;
/* Lace (fj_lace.c), as Lace's own benchmarks/ (fib, queens); only with LACE_DIR. */
extern const bench_impl bench_impl_lace;
extern const bench_ops bench_lace_fib, bench_lace_fib_spawn2, bench_lace_skynet, bench_lace_nqueens;

/* flow_cpp.cc: the C++ layer, where a C++ compiler was found. */
extern const bench_impl bench_impl_cpp;
extern const bench_ops bench_cpp_linear_chain, bench_cpp_binary_tree;

/* observe_weft.c: weft with the profiler on (bench=NAME_profiled). */
extern const bench_ops bench_weft_linear_chain_profiled;
extern const bench_ops bench_weft_binary_tree_profiled;
/* Control flow (issue 4): condition loop and subflow spawning. */
extern const bench_ops bench_weft_cond_loop, bench_omp_cond_loop, bench_tbb_cond_loop, bench_serial_cond_loop;
extern const bench_ops bench_weft_subflow_spawn, bench_omp_subflow_spawn, bench_tbb_subflow_spawn,
    bench_serial_subflow_spawn;

#ifdef __cplusplus
}
#endif
#endif
