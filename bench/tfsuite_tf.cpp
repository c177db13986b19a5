// weft-bench — the Taskflow peers of integrate, mandelbrot, merge_sort, primes
// and matrix_multiplication, as Taskflow's benchmarks/<name>/taskflow.cpp:
// integrate and merge_sort fork with executor.task_group() (silent_async one
// half, recurse into the other, corun) under executor.async(..).get();
// mandelbrot is taskflow.for_each_index with DynamicPartitioner(1); primes
// taskflow.reduce_by_index with DynamicPartitioner(10); matrix_multiplication
// four for_each_index tasks (default partitioner), the product succeeding the
// three inits.  Every taskflow is made and destroyed inside the timer.
//
// One change: Taskflow's merge_sort wraps the sort in a second
// executor.async(..).wait() issued from inside the first async task.  That
// wait is a std::future's: it blocks the worker, so with one worker it never
// returns and with two one worker sits idle.  Here the first async task makes
// the buffer and sorts.
// SPDX-License-Identifier: MIT
#include "tf_common.hpp"
#include "tfsuite_work.h"

#include <functional>
#include <new>
#include <optional>

#include <taskflow/algorithm/for_each.hpp>
#include <taskflow/algorithm/reduce.hpp>

namespace {

double integrate(double x1, double y1, double x2, double y2, double area, tf::Executor &ex) {
    integ_split s;
    double r;
    if (integ_step(x1, y1, x2, y2, area, &s, &r)) return r;
    double left = s.left, right = s.right;
    tf::TaskGroup tg = ex.task_group();
    tg.silent_async([x1, y1, x0 = s.x0, y0 = s.y0, &left, &ex] { left = integrate(x1, y1, x0, y0, left, ex); });
    right = integrate(s.x0, s.y0, x2, y2, right, ex);
    tg.corun();
    return left + right;
}

int tf_integrate(void *env, void *data) {
    integ_data *d = static_cast<integ_data *>(data);
    tf::Executor &ex = tf_executor(env);
    return tf_guarded("integrate", [&] {
        d->result = ex.async([d, &ex] { return integrate(0, integ_fn(0), d->v, integ_fn(d->v), 0.0, ex); }).get();
    });
}

int tf_mandelbrot(void *env, void *data) {
    mandel_data *d = static_cast<mandel_data *>(data);
    return tf_guarded("mandelbrot", [&] {
        tf::Taskflow taskflow;
        taskflow.for_each_index(0, d->h, 1, [d](int i) { mandel_column(d, i); }, tf::DynamicPartitioner(1));
        tf_executor(env).run(taskflow).wait();
    });
}

void msort(tf::Executor &ex, double *v, double *buf, size_t lo, size_t hi) {
    size_t n = hi - lo;
    if (n <= MS_CUTOFF) {
        msort_leaf(v, lo, hi);
        return;
    }
    size_t mid = lo + n / 2;
    tf::TaskGroup tg = ex.task_group();
    tg.silent_async([=, &ex] { msort(ex, v, buf, mid, hi); });
    msort(ex, v, buf, lo, mid);
    tg.corun();
    msort_merge(v, buf, lo, mid, hi);
}

int tf_merge_sort(void *env, void *data) {
    msort_data *d = static_cast<msort_data *>(data);
    tf::Executor &ex = tf_executor(env);
    return tf_guarded("merge_sort", [&] {
        ex.async([d, &ex] {
              double *buf = msort_buffer(d->n);
              if (!buf) throw std::bad_alloc();
              msort(ex, d->v, buf, 0, d->n);
              msort_buffer_free(buf);
          }).get();
    });
}

int tf_primes(void *env, void *data) {
    primes_data *d = static_cast<primes_data *>(data);
    return tf_guarded("primes", [&] {
        tf::Taskflow taskflow;
        size_t sum = 0;
        taskflow.reduce_by_index(
            tf::IndexRange<size_t>(1, d->value, 1), sum,
            [](tf::IndexRange<size_t> sub, std::optional<size_t> running) {
                return (running ? *running : 0) + primes_count(sub.begin(), sub.end());
            },
            std::plus<size_t>{}, tf::DynamicPartitioner{PRIMES_CHUNK});
        tf_executor(env).run(taskflow).wait();
        d->result = sum;
    });
}

int tf_matrix_multiplication(void *env, void *data) {
    mm_data *d = static_cast<mm_data *>(data);
    return tf_guarded("matrix_multiplication", [&] {
        tf::Taskflow taskflow;
        const int n = d->n;
        auto init_a = taskflow.for_each_index(0, n, 1, [d](int i) { mm_init_a(d, i); });
        auto init_b = taskflow.for_each_index(0, n, 1, [d](int i) { mm_init_b(d, i); });
        auto init_c = taskflow.for_each_index(0, n, 1, [d](int i) { mm_init_c(d, i); });
        auto comp_c = taskflow.for_each_index(0, n, 1, [d](int i) { mm_row(d, i); });
        comp_c.succeed(init_a, init_b, init_c);
        tf_executor(env).run(taskflow).get();
    });
}

} // namespace

extern "C" {
const bench_ops bench_tf_integrate = {tf_integrate, nullptr, nullptr, nullptr};
const bench_ops bench_tf_mandelbrot = {tf_mandelbrot, nullptr, nullptr, nullptr};
const bench_ops bench_tf_merge_sort = {tf_merge_sort, nullptr, nullptr, nullptr};
const bench_ops bench_tf_primes = {tf_primes, nullptr, nullptr, nullptr};
const bench_ops bench_tf_matrix_multiplication = {tf_matrix_multiplication, nullptr, nullptr, nullptr};
}
