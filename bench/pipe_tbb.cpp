/* weft-bench — the oneTBB peer of the pipeline benchmarks: tbb::parallel_pipeline
 * with PIPE_LINES live tokens and the same three stages as weft (serial_in_order,
 * parallel, serial_in_order).  oneTBB has no reusable pipeline object, so the
 * _rerun variant times the same call.  SPDX-License-Identifier: MIT
 */
#include "pipe_work.h"
#include "tbb_guard.hpp"

#include <cstdio>

#include <tbb/parallel_pipeline.h>

namespace {


void run_sps(void *data) {
    sps_data *d = static_cast<sps_data *>(data);
    uint64_t next = 0;
    tbb::parallel_pipeline(
        PIPE_LINES,
        tbb::make_filter<void, uint64_t>(tbb::filter_mode::serial_in_order,
                                         [&](tbb::flow_control &fc) -> uint64_t {
                                             if (next == d->n) {
                                                 fc.stop();
                                                 return 0;
                                             }
                                             return next++;
                                         }) &
            tbb::make_filter<uint64_t, uint64_t>(tbb::filter_mode::parallel, [](uint64_t t) { return t; }) &
            tbb::make_filter<uint64_t, void>(tbb::filter_mode::serial_in_order,
                                             [d](uint64_t t) { sps_sink(d, t); }));
}

void run_parse(void *data) {
    parse_data *d = static_cast<parse_data *>(data);
    size_t next = 0;
    tbb::parallel_pipeline(
        PIPE_LINES,
        tbb::make_filter<void, parse_line>(tbb::filter_mode::serial_in_order,
                                           [&](tbb::flow_control &fc) -> parse_line {
                                               if (next == d->n) {
                                                   fc.stop();
                                                   return parse_line{nullptr, 0};
                                               }
                                               return parse_get(d, next++);
                                           }) &
            tbb::make_filter<parse_line, uint64_t>(tbb::filter_mode::parallel,
                                                   [](parse_line l) { return parse_kernel(l); }) &
            tbb::make_filter<uint64_t, void>(tbb::filter_mode::serial_in_order,
                                             [d](uint64_t v) { d->hash = parse_fold(d->hash, v); }));
}

int sps_oneshot(void *, void *data) { return tbb_guarded("pipeline_sps", [data] { run_sps(data); }); }
int parse_oneshot(void *, void *data) { return tbb_guarded("pipeline_parse", [data] { run_parse(data); }); }

}  // namespace

extern "C" const bench_ops bench_tbb_pipeline_sps = { sps_oneshot, nullptr, nullptr, nullptr };
extern "C" const bench_ops bench_tbb_pipeline_parse = { parse_oneshot, nullptr, nullptr, nullptr };
