// weft-bench — the oneTBB peers of integrate, mandelbrot, merge_sort, primes and
// matrix_multiplication, as Taskflow's benchmarks/<name>/tbb.cpp: a
// tbb::task_group per fork (run + wait), tbb::parallel_for(0, n, 1, f) with the
// default partitioner, tbb::parallel_reduce over a blocked_range of grain 10,
// and a flow graph of a source and four continue_nodes each running a
// parallel_for.  Taskflow's make a global_control (and primes a task_arena)
// inside the timed function; here the global_control of bench_tbb.cpp is made
// once per thread count, outside the timer, as for the other benchmarks.
// SPDX-License-Identifier: MIT
#include "tbb_guard.hpp"
#include "tfsuite_work.h"

#include <functional>
#include <new>

#include <tbb/blocked_range.h>
#include <tbb/flow_graph.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_group.h>

namespace {

double integrate(double x1, double y1, double x2, double y2, double area) {
    integ_split s;
    double r;
    if (integ_step(x1, y1, x2, y2, area, &s, &r)) return r;
    double left = s.left, right = s.right;
    tbb::task_group g;
    g.run([&] { left = integrate(x1, y1, s.x0, s.y0, left); });
    right = integrate(s.x0, s.y0, x2, y2, right);
    g.wait();
    return left + right;
}

int tbb_integrate(void *, void *data) {
    integ_data *d = static_cast<integ_data *>(data);
    return tbb_guarded("integrate", [&] { d->result = integrate(0, integ_fn(0), d->v, integ_fn(d->v), 0.0); });
}

int tbb_mandelbrot(void *, void *data) {
    mandel_data *d = static_cast<mandel_data *>(data);
    return tbb_guarded("mandelbrot", [&] { tbb::parallel_for(0, d->h, 1, [d](int i) { mandel_column(d, i); }); });
}

void msort(double *v, double *buf, size_t lo, size_t hi) {
    size_t n = hi - lo;
    if (n <= MS_CUTOFF) {
        msort_leaf(v, lo, hi);
        return;
    }
    size_t mid = lo + n / 2;
    tbb::task_group g;
    g.run([=] { msort(v, buf, mid, hi); });
    msort(v, buf, lo, mid);
    g.wait();
    msort_merge(v, buf, lo, mid, hi);
}

int tbb_merge_sort(void *, void *data) {
    msort_data *d = static_cast<msort_data *>(data);
    return tbb_guarded("merge_sort", [&] {
        double *buf = msort_buffer(d->n);
        if (!buf) throw std::bad_alloc();
        try {
            msort(d->v, buf, 0, d->n);
        } catch (...) {
            msort_buffer_free(buf);
            throw;
        }
        msort_buffer_free(buf);
    });
}

int tbb_primes(void *, void *data) {
    primes_data *d = static_cast<primes_data *>(data);
    return tbb_guarded("primes", [&] {
        d->result = tbb::parallel_reduce(
            tbb::blocked_range<size_t>(1, d->value, PRIMES_CHUNK), size_t(0),
            [](const tbb::blocked_range<size_t> &r, size_t sum) { return sum + primes_count(r.begin(), r.end()); },
            std::plus<>());
    });
}

int tbb_matrix_multiplication(void *, void *data) {
    mm_data *d = static_cast<mm_data *>(data);
    using namespace tbb::flow;
    return tbb_guarded("matrix_multiplication", [&] {
        graph g;
        const int n = d->n;
        continue_node<continue_msg> src(g, [](const continue_msg &) {});
        continue_node<continue_msg> node1(g, [=](const continue_msg &) {
            tbb::parallel_for(0, n, 1, [=](int i) { mm_init_a(d, i); });
        });
        continue_node<continue_msg> node2(g, [=](const continue_msg &) {
            tbb::parallel_for(0, n, 1, [=](int i) { mm_init_b(d, i); });
        });
        continue_node<continue_msg> node3(g, [=](const continue_msg &) {
            tbb::parallel_for(0, n, 1, [=](int i) { mm_init_c(d, i); });
        });
        continue_node<continue_msg> final_node(g, [=](const continue_msg &) {
            tbb::parallel_for(0, n, 1, [=](int i) { mm_row(d, i); });
        });
        make_edge(src, node1);
        make_edge(src, node2);
        make_edge(src, node3);
        make_edge(node1, final_node);
        make_edge(node2, final_node);
        make_edge(node3, final_node);
        src.try_put(continue_msg());
        g.wait_for_all();
    });
}

} // namespace

extern "C" {
const bench_ops bench_tbb_integrate = {tbb_integrate, nullptr, nullptr, nullptr};
const bench_ops bench_tbb_mandelbrot = {tbb_mandelbrot, nullptr, nullptr, nullptr};
const bench_ops bench_tbb_merge_sort = {tbb_merge_sort, nullptr, nullptr, nullptr};
const bench_ops bench_tbb_primes = {tbb_primes, nullptr, nullptr, nullptr};
const bench_ops bench_tbb_matrix_multiplication = {tbb_matrix_multiplication, nullptr, nullptr, nullptr};
}
