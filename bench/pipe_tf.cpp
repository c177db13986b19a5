/* weft-bench — the Taskflow peer of the pipeline benchmarks: a tf::Pipeline of
 * PIPE_LINES lines and three pipes (SERIAL, PARALLEL, SERIAL) composed into a
 * taskflow, as Taskflow's benchmarks/linear_pipeline; a token's value travels
 * in a per-line buffer, as in Taskflow's pipeline examples.  The pipeline is a
 * reusable graph: the _rerun variant builds it once and each run resets it
 * (pl.reset(), a few stores) and runs the same taskflow again.
 * SPDX-License-Identifier: MIT
 */
#include "pipe_work.h"
#include "tf_common.hpp"

#include <memory>

#include <taskflow/algorithm/pipeline.hpp>

namespace {

constexpr tf::PipeType S = tf::PipeType::SERIAL, P = tf::PipeType::PARALLEL;

/* The pipes are named callables (Taskflow's benchmark uses structs Input and
 * Filter the same way), so every call is direct, as with a lambda. */
template <class St, void (St::*Fn)(tf::Pipeflow &)> struct stage {
    St *st;
    void operator()(tf::Pipeflow &pf) const { (st->*Fn)(pf); }
};

/* pipeline_sps: the first pipe hands out 0, 1, .. n-1, the middle one passes the
 * token on, the last one checks the order (sps_sink). */
struct sps_flow {
    sps_data *d;
    uint64_t next = 0;
    uint64_t buf[PIPE_LINES];
    void in(tf::Pipeflow &pf) {
        if (next == d->n) {
            pf.stop();
            return;
        }
        buf[pf.line()] = next++;
    }
    void mid(tf::Pipeflow &) {}
    void out(tf::Pipeflow &pf) { sps_sink(d, buf[pf.line()]); }
    using in_t = stage<sps_flow, &sps_flow::in>;
    using mid_t = stage<sps_flow, &sps_flow::mid>;
    using out_t = stage<sps_flow, &sps_flow::out>;
    tf::Pipeline<tf::Pipe<in_t>, tf::Pipe<mid_t>, tf::Pipe<out_t>> pl{
        PIPE_LINES, tf::Pipe<in_t>{S, in_t{this}}, tf::Pipe<mid_t>{P, mid_t{this}}, tf::Pipe<out_t>{S, out_t{this}}};
    tf::Taskflow flow;
    explicit sps_flow(void *data) : d(static_cast<sps_data *>(data)) { flow.composed_of(pl); }
    void reset() {
        next = 0;
        pl.reset();
    }
};

/* pipeline_parse: the first pipe hands out lines, the middle one parses, the
 * last one folds in token order. */
struct parse_flow {
    parse_data *d;
    size_t next = 0;
    parse_line line[PIPE_LINES];
    uint64_t value[PIPE_LINES];
    void in(tf::Pipeflow &pf) {
        if (next == d->n) {
            pf.stop();
            return;
        }
        line[pf.line()] = parse_get(d, next++);
    }
    void mid(tf::Pipeflow &pf) { value[pf.line()] = parse_kernel(line[pf.line()]); }
    void out(tf::Pipeflow &pf) { d->hash = parse_fold(d->hash, value[pf.line()]); }
    using in_t = stage<parse_flow, &parse_flow::in>;
    using mid_t = stage<parse_flow, &parse_flow::mid>;
    using out_t = stage<parse_flow, &parse_flow::out>;
    tf::Pipeline<tf::Pipe<in_t>, tf::Pipe<mid_t>, tf::Pipe<out_t>> pl{
        PIPE_LINES, tf::Pipe<in_t>{S, in_t{this}}, tf::Pipe<mid_t>{P, mid_t{this}}, tf::Pipe<out_t>{S, out_t{this}}};
    tf::Taskflow flow;
    explicit parse_flow(void *data) : d(static_cast<parse_data *>(data)) { flow.composed_of(pl); }
    void reset() {
        next = 0;
        pl.reset();
    }
};

template <class F> int pipe_build(void *, void *data, void **graph) {
    return tf_guarded("pipeline build", [&] {
        std::unique_ptr<F> f(new F(data));
        *graph = f.release();
    });
}
template <class F> int pipe_run(void *env, void *graph) {
    return tf_guarded("pipeline run", [&] {
        F *f = static_cast<F *>(graph);
        f->reset();
        tf_executor(env).run(f->flow).get();
    });
}
template <class F> void pipe_destroy(void *, void *graph) { delete static_cast<F *>(graph); }
template <class F> int pipe_oneshot(void *env, void *data) {
    void *g = nullptr;
    if (pipe_build<F>(env, data, &g) != 0) return -1;
    int rc = pipe_run<F>(env, g);
    pipe_destroy<F>(env, g);
    return rc;
}

}  // namespace

extern "C" const bench_ops bench_tf_pipeline_sps = { pipe_oneshot<sps_flow>, pipe_build<sps_flow>, pipe_run<sps_flow>,
                                                     pipe_destroy<sps_flow> };
extern "C" const bench_ops bench_tf_pipeline_parse = { pipe_oneshot<parse_flow>, pipe_build<parse_flow>,
                                                       pipe_run<parse_flow>, pipe_destroy<parse_flow> };
