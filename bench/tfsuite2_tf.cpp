// weft-bench — the Taskflow peers of black_scholes and linear_pipeline, as
// Taskflow's benchmarks/<name>/taskflow.cpp: a placeholder, a for_each_index
// over the options with StaticPartitioner(), and a condition task that loops
// back to it NUM_RUNS times; a tf::Pipeline of 8 lines and 8 SERIAL pipes
// (Input, then seven Filters) composed into a taskflow.  Taskflows and the
// pipeline are made inside the timer, as Taskflow's.
// SPDX-License-Identifier: MIT
#include "tf_common.hpp"
#include "tfsuite2_work.h"

#include <taskflow/algorithm/for_each.hpp>
#include <taskflow/algorithm/pipeline.hpp>

namespace {

int tf_black_scholes(void *env, void *data) {
    bs_data *d = static_cast<bs_data *>(data);
    return tf_guarded("black_scholes", [&] {
        tf::Taskflow taskflow;
        auto init = taskflow.placeholder();
        auto loop = taskflow.for_each_index(0, d->n, 1, [d](int i) { bs_option(d, i); }, tf::StaticPartitioner());
        auto cond = taskflow.emplace([i = 0, runs = d->runs]() mutable { return ++i == runs ? -1 : 0; });
        init.precede(loop);
        loop.precede(cond);
        cond.precede(loop);
        tf_executor(env).run(taskflow).wait();
    });
}

struct Input {
    lp_data *d;
    void operator()(tf::Pipeflow &pf) {
        size_t t;
        if (lp_input(d, &t)) pf.stop();
    }
};

struct Filter {
    lp_data *d;
    int pipe;
    void operator()(tf::Pipeflow &pf) { lp_filter(d, pipe, pf.token()); }
};

int tf_linear_pipeline(void *env, void *data) {
    lp_data *d = static_cast<lp_data *>(data);
    static_assert(LP_PIPES == 8 && LP_LINES == 8, "Taskflow's defaults: 8 lines, ssssssss");
    return tf_guarded("linear_pipeline", [&] {
        tf::Taskflow taskflow;
        const auto S = tf::PipeType::SERIAL;
        tf::Pipeline pl(LP_LINES, tf::Pipe{S, Input{d}}, tf::Pipe{S, Filter{d, 1}}, tf::Pipe{S, Filter{d, 2}},
                        tf::Pipe{S, Filter{d, 3}}, tf::Pipe{S, Filter{d, 4}}, tf::Pipe{S, Filter{d, 5}},
                        tf::Pipe{S, Filter{d, 6}}, tf::Pipe{S, Filter{d, 7}});
        taskflow.composed_of(pl);
        tf_executor(env).run(taskflow).wait();
    });
}

} // namespace

extern "C" {
const bench_ops bench_tf_black_scholes = {tf_black_scholes, nullptr, nullptr, nullptr};
const bench_ops bench_tf_linear_pipeline = {tf_linear_pipeline, nullptr, nullptr, nullptr};
}
