/* weft-bench — the Taskflow implementation of the task-graph benchmarks.
 * SPDX-License-Identifier: MIT
 *
 * Written as Taskflow's own benchmarks/<name>/taskflow.cpp: one
 * taskflow.emplace per task, precede per dependency, executor.run(taskflow)
 * and wait on its future; the build + run variant creates and destroys the
 * tf::Taskflow inside the timer.  The _rerun variant keeps the taskflow and
 * repeats executor.run(taskflow).get().  Compiled only when CMake was given
 * TASKFLOW_DIR (a Taskflow checkout; scripts/fetch-peers.sh).
 */
#include "bench_work.h"
#include "tf_common.hpp"

#include <memory>
#include <vector>

namespace {

/* ---- builders ------------------------------------------------------------------ */

void build_linear_chain(tf::Taskflow &f, void *data) {
    const chain_data *d = static_cast<const chain_data *>(data);
    tf::Task prev;
    for (size_t i = 0; i < d->n; ++i) {
        uint32_t *p = chain_cell(d, i);
        tf::Task t = f.emplace([p] { chain_kernel(p); });
        if (i > 0) prev.precede(t);
        prev = t;
    }
}

void build_binary_tree(tf::Taskflow &f, void *data) {
    const tree_data *d = static_cast<const tree_data *>(data);
    std::vector<tf::Task> node(d->n + 1);
    for (size_t i = 1; i <= d->n; ++i) {
        tree_cell *c = &d->cell[i];
        node[i] = f.emplace([c] { tree_kernel(c); });
        if (i > 1) node[i / 2].precede(node[i]);
    }
}

void build_wavefront(tf::Taskflow &f, void *data) {
    const wave_data *d = static_cast<const wave_data *>(data);
    std::vector<tf::Task> row(d->m);   /* previous row, then this row up to j - 1 */
    for (size_t i = 0; i < d->m; ++i) {
        for (size_t j = 0; j < d->m; ++j) {
            wave_cell *c = wave_at(d, i, j);
            tf::Task t = f.emplace([c] { wave_kernel(c); });
            if (i > 0) row[j].precede(t);
            if (j > 0) row[j - 1].precede(t);
            row[j] = t;
        }
    }
}

void build_graph_traversal(tf::Taskflow &f, void *data) {
    const trav_data *d = static_cast<const trav_data *>(data);
    std::vector<tf::Task> node(d->n);
    for (size_t i = 0; i < d->n; ++i) {
        uint32_t *v = &d->visited[i];
        node[i] = f.emplace([v] { trav_kernel(v); });
    }
    for (size_t i = 0; i < d->n; ++i)
        for (uint32_t e = d->succ_off[i]; e < d->succ_off[i + 1]; ++e) node[i].precede(node[d->succ[e]]);
}

void build_embarrassing_parallelism(tf::Taskflow &f, void *data) {
    const emb_data *d = static_cast<const emb_data *>(data);
    for (size_t i = 0; i < d->n; ++i) {
        uint64_t *p = &d->out[i];
        f.emplace([p] { emb_kernel(p); });
    }
}

/* ---- plumbing ------------------------------------------------------------------ */

int tf_env_init(unsigned threads, void **env) {
    return tf_guarded("init", [&] {
        std::unique_ptr<tf::Executor> ex(new tf::Executor(threads));
        /* Wake the workers once so the first timed run does not start them. */
        tf::Taskflow f;
        for (unsigned i = 0; i < 4 * threads; ++i) f.emplace([] {});
        ex->run(f).get();
        *env = ex.release();
    });
}

void tf_env_fini(void *env) { delete static_cast<tf::Executor *>(env); }

}  // namespace

TF_GRAPH_OPS(linear_chain)
TF_GRAPH_OPS(binary_tree)
TF_GRAPH_OPS(wavefront)
TF_GRAPH_OPS(graph_traversal)
TF_GRAPH_OPS(embarrassing_parallelism)

extern "C" const bench_impl bench_impl_tf = { "tf", nullptr, 0, tf_env_init, tf_env_fini };
