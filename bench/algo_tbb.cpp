/* weft-bench — the oneTBB peers of the algorithm benchmarks: parallel_for,
 * parallel_reduce, parallel_sort and parallel_scan with their default
 * (auto) partitioner.  The thread count comes from bench_tbb.cpp's
 * global_control.  SPDX-License-Identifier: MIT */
#include "bench_work.h"
#include "tbb_guard.hpp"

#include <cstdio>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_scan.h>
#include <tbb/parallel_sort.h>

namespace {

using range = tbb::blocked_range<size_t>;


int tbb_for_each(void *, void *p) {
    auto *d = static_cast<algo_data *>(p);
    return tbb_guarded("for_each", [&] {
        tbb::parallel_for(range(0, d->n), [d](const range &r) {
            for (size_t i = r.begin(); i < r.end(); ++i) d->in[i] = fe_kernel(d->in[i]);
        });
    });
}

int tbb_transform(void *, void *p) {
    auto *d = static_cast<algo_data *>(p);
    return tbb_guarded("transform", [&] {
        tbb::parallel_for(range(0, d->n), [d](const range &r) {
            for (size_t i = r.begin(); i < r.end(); ++i) d->out[i] = tr_kernel(d->in[i]);
        });
    });
}

int tbb_reduce_sum(void *, void *p) {
    auto *d = static_cast<algo_data *>(p);
    return tbb_guarded("reduce_sum", [&] {
        d->sum = tbb::parallel_reduce(
            range(0, d->n), 0.0,
            [d](const range &r, double s) {
                for (size_t i = r.begin(); i < r.end(); ++i) s += d->in[i];
                return s;
            },
            [](double a, double b) { return a + b; });
    });
}

int tbb_sort(void *, void *p) {
    auto *d = static_cast<algo_data *>(p);
    return tbb_guarded("sort", [&] { tbb::parallel_sort(d->in, d->in + d->n); });
}

int tbb_inclusive_scan(void *, void *p) {
    auto *d = static_cast<algo_data *>(p);
    return tbb_guarded("inclusive_scan", [&] {
        tbb::parallel_scan(
            range(0, d->n), uint64_t(0),
            [d](const range &r, uint64_t acc, bool final) {
                for (size_t i = r.begin(); i < r.end(); ++i) {
                    acc += d->uin[i];
                    if (final) d->uout[i] = acc;
                }
                return acc;
            },
            [](uint64_t a, uint64_t b) { return a + b; });
    });
}

}  // namespace

#define TBB_ALGO_OPS(name) extern "C" const bench_ops bench_tbb_##name = { tbb_##name, nullptr, nullptr, nullptr };
TBB_ALGO_OPS(for_each)
TBB_ALGO_OPS(transform)
TBB_ALGO_OPS(reduce_sum)
TBB_ALGO_OPS(sort)
TBB_ALGO_OPS(inclusive_scan)
