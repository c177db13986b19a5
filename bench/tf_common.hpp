// weft-bench — shared by the Taskflow peers (*_tf.cpp).  SPDX-License-Identifier: MIT
//
// The environment of impl=tf is one tf::Executor with `threads` workers, made in
// bench_tf.cpp's init outside every timer (Taskflow's benchmarks keep a static
// executor per thread count the same way).  The calling thread (main) is not one
// of its workers: it waits on the run's future, as in Taskflow's benchmarks.
#ifndef WEFT_BENCH_TF_COMMON_HPP
#define WEFT_BENCH_TF_COMMON_HPP

#include <cstdio>
#include <exception>
#include <memory>

#include <taskflow/taskflow.hpp>

inline tf::Executor &tf_executor(void *env) { return *static_cast<tf::Executor *>(env); }

/* Taskflow reports failure (bad_alloc, a task that threw) with exceptions; none
 * may cross into C.  Runs fn(); 0, or -1 after printing what went wrong. */
template <class Fn> inline int tf_guarded(const char *what, Fn fn) {
    try {
        fn();
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "tf: %s: %s\n", what, e.what());
    } catch (...) {
        std::fprintf(stderr, "tf: %s: unknown exception\n", what);
    }
    return -1;
}

/* A taskflow kept between runs (the _rerun variants): built once, then each run
 * is executor.run(flow).get() on the same object. */
struct tf_graph {
    tf::Taskflow flow;
};

/* Adds a benchmark's tasks to a taskflow. */
using tf_builder = void (*)(tf::Taskflow &, void *data);

/* Build + run + destroy, all timed (Taskflow's benchmarks time the same). */
inline int tf_graph_oneshot(void *env, void *data, tf_builder build) {
    return tf_guarded("build + run", [&] {
        tf::Taskflow f;
        build(f, data);
        tf_executor(env).run(f).get();
    });
}
inline int tf_graph_build(void *data, tf_builder build, void **graph) {
    return tf_guarded("build", [&] {
        std::unique_ptr<tf_graph> g(new tf_graph);
        build(g->flow, data);
        *graph = g.release();
    });
}
inline int tf_graph_run(void *env, void *graph) {
    return tf_guarded("run", [&] { tf_executor(env).run(static_cast<tf_graph *>(graph)->flow).get(); });
}
inline void tf_graph_destroy(void *, void *graph) { delete static_cast<tf_graph *>(graph); }

/* bench_tf_NAME from build_NAME(tf::Taskflow &, void *). */
#define TF_GRAPH_OPS(name)                                                                             \
    static int name##_oneshot(void *env, void *data) { return tf_graph_oneshot(env, data, build_##name); } \
    static int name##_build(void *, void *data, void **graph) { return tf_graph_build(data, build_##name, graph); } \
    extern "C" const bench_ops bench_tf_##name = { name##_oneshot, name##_build, tf_graph_run, tf_graph_destroy };

#endif
