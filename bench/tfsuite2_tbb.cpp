// weft-bench — the oneTBB peers of black_scholes and linear_pipeline, as
// Taskflow's benchmarks/<name>/tbb.cpp: NUM_RUNS calls of
// tbb::parallel_for(0, n, 1, f) (default partitioner); a
// tbb::parallel_pipeline of 8 tokens in flight and 8 serial_in_order filters
// (MyInputFunc, MyTransformFunc1..6, MyOutputFunc).  Taskflow's make a
// global_control inside the timed function; here bench_tbb.cpp's is made once
// per thread count, outside the timer, as for the other benchmarks.  The
// filters pass the token's number (Taskflow's pass an int each transforms with
// a shift or an add, and drop), so that the last seven can record what they saw.
// SPDX-License-Identifier: MIT
#include "tbb_guard.hpp"
#include "tfsuite2_work.h"

#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>

namespace {

int tbb_black_scholes(void *, void *data) {
    bs_data *d = static_cast<bs_data *>(data);
    return tbb_guarded("black_scholes", [&] {
        for (int j = 0; j < d->runs; j++) tbb::parallel_for(0, d->n, 1, [d](int i) { bs_option(d, i); });
    });
}

tbb::filter<size_t, size_t> middle(lp_data *d, int pipe) {
    return tbb::make_filter<size_t, size_t>(tbb::filter_mode::serial_in_order, [d, pipe](size_t t) {
        lp_filter(d, pipe, t);
        return t;
    });
}

int tbb_linear_pipeline(void *, void *data) {
    lp_data *d = static_cast<lp_data *>(data);
    return tbb_guarded("linear_pipeline", [&] {
        tbb::parallel_pipeline(
            LP_LINES,
            tbb::make_filter<void, size_t>(tbb::filter_mode::serial_in_order,
                                           [d](tbb::flow_control &fc) {
                                               size_t t;
                                               if (lp_input(d, &t)) fc.stop();
                                               return t;
                                           }) &
                middle(d, 1) & middle(d, 2) & middle(d, 3) & middle(d, 4) & middle(d, 5) & middle(d, 6) &
                tbb::make_filter<size_t, void>(tbb::filter_mode::serial_in_order,
                                               [d](size_t t) { lp_filter(d, 7, t); }));
    });
}

} // namespace

extern "C" {
const bench_ops bench_tbb_black_scholes = {tbb_black_scholes, nullptr, nullptr, nullptr};
const bench_ops bench_tbb_linear_pipeline = {tbb_linear_pipeline, nullptr, nullptr, nullptr};
}
