/* weft-bench — the Taskflow peers of the control-flow benchmarks.
 * SPDX-License-Identifier: MIT
 *
 * cond_loop: S -> A -> B -> C where C is a condition task (it returns the index
 * of the successor to run) with one successor, A: returning 0 goes round
 * again, 1 leaves the loop (no such successor).  S is an empty entry task: in
 * this Taskflow a task whose only in-edge is a condition's is not a source, so
 * the loop needs a strong edge into A (Taskflow's examples/condition.cpp has
 * the same shape); one extra task per run, not per iteration.  subflow_spawn: one task that spawns
 * n children in its tf::Subflow and joins them.  Both taskflows are reusable,
 * so the _rerun variants keep them and run them again.
 */
#include "bench_work.h"
#include "tf_common.hpp"

namespace {

void build_cond_loop(tf::Taskflow &f, void *data) {
    auto *d = static_cast<cond_loop_data *>(data);
    tf::Task s = f.emplace([] {});
    tf::Task a = f.emplace([d] { cond_loop_a(d); });
    tf::Task b = f.emplace([d] { cond_loop_b(d); });
    tf::Task c = f.emplace([d]() -> int { return cond_loop_c(d); });
    s.precede(a);
    a.precede(b);
    b.precede(c);
    c.precede(a);
}

void build_subflow_spawn(tf::Taskflow &f, void *data) {
    const auto *d = static_cast<const spawn_data *>(data);
    f.emplace([d](tf::Subflow &sf) {
        for (size_t i = 0; i < d->n; ++i) {
            uint8_t *h = &d->hit[i];
            sf.emplace([h] { spawn_kernel(h); });
        }
        sf.join();
    });
}

}  // namespace

TF_GRAPH_OPS(cond_loop)
TF_GRAPH_OPS(subflow_spawn)
