/* weft-bench — oneTBB peers of the control-flow benchmarks.
 * SPDX-License-Identifier: MIT
 *
 * cond_loop: a flow graph A -> B -> C of continue_nodes in which C's body is the
 * condition and, to go round again, puts a message back into A (a flow graph has
 * no condition edge; this is the usual way to loop in one).
 * subflow_spawn: a task that runs n child tasks in a task_group and waits for
 * them, the TBB form of a joined subflow.  Neither keeps a graph between runs, so
 * the _rerun variants time the same code (build is NULL).
 */
#include "bench_work.h"
#include "tbb_guard.hpp"

#include <cstdio>

#include <tbb/flow_graph.h>
#include <tbb/task_group.h>

namespace {

using msg_t = tbb::flow::continue_msg;
using node_t = tbb::flow::continue_node<msg_t>;


int tbb_cond_loop(void *env, void *data) {
    (void)env;
    auto *d = static_cast<cond_loop_data *>(data);
    return tbb_guarded("cond_loop", [&] {
        tbb::flow::graph g;
        node_t a(g, [d](const msg_t &) { cond_loop_a(d); });
        node_t b(g, [d](const msg_t &) { cond_loop_b(d); });
        node_t c(g, [d, &a](const msg_t &) {
            if (cond_loop_c(d) == 0) a.try_put(msg_t());
        });
        tbb::flow::make_edge(a, b);
        tbb::flow::make_edge(b, c);
        a.try_put(msg_t());
        g.wait_for_all();
    });
}

int tbb_subflow_spawn(void *env, void *data) {
    (void)env;
    const auto *d = static_cast<const spawn_data *>(data);
    return tbb_guarded("subflow_spawn", [&] {
        tbb::task_group outer;
        outer.run_and_wait([d] {
            tbb::task_group children;
            for (size_t i = 0; i < d->n; ++i) {
                uint8_t *h = &d->hit[i];
                children.run([h] { spawn_kernel(h); });
            }
            children.wait();
        });
    });
}

}  // namespace

extern "C" const bench_ops bench_tbb_cond_loop = { tbb_cond_loop, nullptr, nullptr, nullptr };
extern "C" const bench_ops bench_tbb_subflow_spawn = { tbb_subflow_spawn, nullptr, nullptr, nullptr };
