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

#include <algorithm>
#include <memory>
#include <vector>

namespace {

/* ---- builders ------------------------------------------------------------------ */

/* benchmarks/linear_chain/taskflow.cpp: a std::vector<tf::Task> of every
 * task, then taskflow.linearize(tasks). */
void build_linear_chain(tf::Taskflow &f, void *data) {
    const chain_data *d = static_cast<const chain_data *>(data);
    std::vector<tf::Task> tasks(d->n);
    for (size_t i = 0; i < d->n; ++i) {
        uint32_t *p = chain_cell(d, i);
        tasks[i] = f.emplace([p] { chain_kernel(p); });
    }
    f.linearize(tasks);
}

/* benchmarks/binary_tree/taskflow.cpp: every node emplaced first, then
 * tasks[i].precede(tasks[l], tasks[r]) for each inner node. */
void build_binary_tree(tf::Taskflow &f, void *data) {
    const tree_data *d = static_cast<const tree_data *>(data);
    std::vector<tf::Task> node(d->n + 1);
    for (size_t i = 1; i <= d->n; ++i) {
        tree_cell *c = &d->cell[i];
        node[i] = f.emplace([c] { tree_kernel(c); });
    }
    for (size_t i = 1; 2 * i + 1 <= d->n; ++i) node[i].precede(node[2 * i], node[2 * i + 1]);
}

/* benchmarks/wavefront/taskflow.cpp: an m x m matrix of placeholders made row
 * by row, then, from the last cell back to the first, each one given its work
 * and made to precede its right neighbour, then the cell below. */
void build_wavefront(tf::Taskflow &f, void *data) {
    const wave_data *d = static_cast<const wave_data *>(data);
    const size_t m = d->m;
    std::vector<std::vector<tf::Task>> node(m);
    for (auto &row : node)
        for (size_t j = 0; j < m; ++j) row.emplace_back(f.placeholder());
    for (size_t i = m; i-- > 0;) {
        for (size_t j = m; j-- > 0;) {
            wave_cell *c = wave_at(d, i, j);
            node[i][j].work([c] { wave_kernel(c); });
            if (j + 1 < m) node[i][j].precede(node[i][j + 1]);
            if (i + 1 < m) node[i][j].precede(node[i + 1][j]);
        }
    }
}

/* benchmarks/graph_traversal/taskflow.cpp: the last level emplaced first, then
 * each level from the second-to-last back to the first, each node emplaced
 * and made to precede its successors at once, in its edge order. */
void build_graph_traversal(tf::Taskflow &f, void *data) {
    const trav_data *d = static_cast<const trav_data *>(data);
    std::vector<tf::Task> node(d->n);
    for (size_t first = (d->n - 1) / d->width * d->width;; first -= d->width) {
        size_t last = std::min(first + d->width, d->n);
        for (size_t i = first; i < last; ++i) {
            uint32_t *v = &d->visited[i];
            node[i] = f.emplace([v] { trav_kernel(v); });
            for (uint32_t e = d->succ_off[i]; e < d->succ_off[i + 1]; ++e) node[i].precede(node[d->succ[e]]);
        }
        if (first == 0) break;
    }
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
