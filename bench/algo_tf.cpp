/* weft-bench — the Taskflow peers of the parallel-algorithm benchmarks.
 * SPDX-License-Identifier: MIT
 *
 * As Taskflow's benchmarks/for_each, reduce_sum, scan and sort: a tf::Taskflow
 * made inside the timer holding one algorithm task (for_each_by_index,
 * transform, reduce_by_index, inclusive_scan, sort, default partitioner), run
 * with executor.run(taskflow).get().  Same kernels and data as every impl.
 */
#include "bench_work.h"
#include "tf_common.hpp"

#include <functional>
#include <optional>

#include <taskflow/algorithm/for_each.hpp>
#include <taskflow/algorithm/reduce.hpp>
#include <taskflow/algorithm/scan.hpp>
#include <taskflow/algorithm/sort.hpp>
#include <taskflow/algorithm/transform.hpp>

namespace {

using index_range = tf::IndexRange<size_t>;

/* Builds one taskflow with `add`, runs it to the end on the executor. */
template <class Add> int run_flow(void *env, const char *what, Add add) {
    return tf_guarded(what, [&] {
        tf::Taskflow f;
        add(f);
        tf_executor(env).run(f).get();
    });
}

int tf_for_each(void *env, void *p) {
    auto *d = static_cast<algo_data *>(p);
    return run_flow(env, "for_each", [d](tf::Taskflow &f) {
        f.for_each_by_index(index_range(0, d->n, 1), [d](index_range r) {
            for (size_t i = r.begin(); i < r.end(); i += r.step_size()) d->in[i] = fe_kernel(d->in[i]);
        });
    });
}

int tf_transform(void *env, void *p) {
    auto *d = static_cast<algo_data *>(p);
    return run_flow(env, "transform", [d](tf::Taskflow &f) {
        f.transform(d->in, d->in + d->n, d->out, [](double x) { return tr_kernel(x); });
    });
}

int tf_reduce_sum(void *env, void *p) {
    auto *d = static_cast<algo_data *>(p);
    double result = 0.0;
    int rc = run_flow(env, "reduce_sum", [d, &result](tf::Taskflow &f) {
        f.reduce_by_index(
            index_range(0, d->n, 1), result,
            [d](index_range r, std::optional<double> running) {
                double s = running ? *running : 0.0;
                for (size_t i = r.begin(); i < r.end(); i += r.step_size()) s += d->in[i];
                return s;
            },
            std::plus<double>());
    });
    d->sum = result;
    return rc;
}

int tf_sort(void *env, void *p) {
    auto *d = static_cast<algo_data *>(p);
    return run_flow(env, "sort", [d](tf::Taskflow &f) { f.sort(d->in, d->in + d->n); });
}

int tf_inclusive_scan(void *env, void *p) {
    auto *d = static_cast<algo_data *>(p);
    return run_flow(env, "inclusive_scan", [d](tf::Taskflow &f) {
        f.inclusive_scan(d->uin, d->uin + d->n, d->uout, std::plus<uint64_t>{});
    });
}

}  // namespace

#define TF_ALGO_OPS(name) extern "C" const bench_ops bench_tf_##name = { tf_##name, nullptr, nullptr, nullptr };
TF_ALGO_OPS(for_each)
TF_ALGO_OPS(transform)
TF_ALGO_OPS(reduce_sum)
TF_ALGO_OPS(sort)
TF_ALGO_OPS(inclusive_scan)
