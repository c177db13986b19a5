/* weft-bench — linear_chain and binary_tree with the profiler on.
 * SPDX-License-Identifier: MIT
 *
 * The same graphs and kernels as bench_weft.c (built through its bench_ops), run
 * on the same executor with weft_profiler_start before each timed run and
 * weft_profiler_stop after it: the timed unit includes recording one span per
 * task.  Compare bench=linear_chain_profiled with bench=linear_chain (profiler
 * off) at the same size and thread count; the difference per task is the
 * profiler's cost.  Starting clears the spans but keeps the buffers, so after
 * the warm-up run no rep allocates.
 */
#include "bench_work.h"

#include <stdio.h>

#include <weft.h>

static int start(void *env) {
    weft_status st = weft_profiler_start(env);
    if (st != WEFT_OK) fprintf(stderr, "weft: weft_profiler_start: %s\n", weft_strerror(st));
    return st == WEFT_OK ? 0 : -1;
}

static int stop(void *env, int rc) {
    if (weft_profiler_stop(env) != WEFT_OK) return -1;
    return rc;
}

/* Wraps a plain weft bench_ops with the profiler on around every run. */
#define PROFILED_OPS(name)                                                                     \
    static int name##_prof_oneshot(void *env, void *data) {                                    \
        if (start(env) != 0) return -1;                                                        \
        return stop(env, bench_weft_##name.oneshot(env, data));                                \
    }                                                                                          \
    static int name##_prof_run(void *env, void *graph) {                                       \
        if (start(env) != 0) return -1;                                                        \
        return stop(env, bench_weft_##name.run(env, graph));                                   \
    }                                                                                          \
    static int name##_prof_build(void *env, void *data, void **graph) {                        \
        return bench_weft_##name.build(env, data, graph);                                      \
    }                                                                                          \
    static void name##_prof_destroy(void *env, void *graph) { bench_weft_##name.destroy(env, graph); } \
    const bench_ops bench_weft_##name##_profiled = { name##_prof_oneshot, name##_prof_build,  \
                                                     name##_prof_run, name##_prof_destroy };

PROFILED_OPS(linear_chain)
PROFILED_OPS(binary_tree)
