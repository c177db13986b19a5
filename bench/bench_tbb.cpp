/* weft-bench — the oneTBB implementation: a flow graph of continue_nodes.
 * SPDX-License-Identifier: MIT
 *
 * Modelled on Taskflow's benchmarks/<name>/tbb.cpp: one continue_node per task,
 * make_edge per dependency, try_put on the sources, graph::wait_for_all.  The
 * thread count is set with tbb::global_control(max_allowed_parallelism) once per
 * thread count, outside the timers.  A continue_node re-arms after firing, so the
 * _rerun variant keeps the graph and repeats try_put + wait_for_all.
 */
#include "bench_work.h"
#include "tbb_guard.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <vector>

#include <tbb/flow_graph.h>
#include <tbb/global_control.h>

namespace {

using msg_t = tbb::flow::continue_msg;
using node_t = tbb::flow::continue_node<msg_t>;

/* One built graph.  The graph is declared first so it is destroyed last: a node
 * unregisters from its graph in its destructor.  A deque grows without moving
 * its nodes (make_edge keeps pointers to them) and without one allocation per
 * node, which can only help TBB. */
struct flow {
    tbb::flow::graph g;
    std::deque<node_t> nodes;
    std::vector<node_t *> sources;  /* nodes to try_put; empty: every node */

    template <class Body> node_t &add(Body body) {
        nodes.emplace_back(g, body);
        return nodes.back();
    }

    void run() {
        if (sources.empty()) {
            for (node_t &n : nodes) n.try_put(msg_t());
        } else {
            for (node_t *n : sources) n->try_put(msg_t());
        }
        g.wait_for_all();
    }
};

/* ---- builders ------------------------------------------------------------------ */

void build_linear_chain(flow &f, void *data) {
    const chain_data *d = static_cast<const chain_data *>(data);
    node_t *prev = nullptr;
    for (size_t i = 0; i < d->n; ++i) {
        uint32_t *p = chain_cell(d, i);
        node_t &n = f.add([p](const msg_t &) { chain_kernel(p); });
        if (prev) tbb::flow::make_edge(*prev, n);
        prev = &n;
    }
    f.sources.push_back(&f.nodes.front());
}

/* benchmarks/binary_tree/tbb.cpp: every node made first, then the edges to
 * the left and right child of each inner node. */
void build_binary_tree(flow &f, void *data) {
    const tree_data *d = static_cast<const tree_data *>(data);
    std::vector<node_t *> node(d->n + 1);
    for (size_t i = 1; i <= d->n; ++i) {
        tree_cell *c = &d->cell[i];
        node[i] = &f.add([c](const msg_t &) { tree_kernel(c); });
    }
    for (size_t i = 1; 2 * i + 1 <= d->n; ++i) {
        tbb::flow::make_edge(*node[i], *node[2 * i]);
        tbb::flow::make_edge(*node[i], *node[2 * i + 1]);
    }
    f.sources.push_back(node[1]);
}

/* benchmarks/wavefront/tbb.cpp: from the last cell back to the first, each
 * node made and joined to the cell below, then to its right neighbour. */
void build_wavefront(flow &f, void *data) {
    const wave_data *d = static_cast<const wave_data *>(data);
    const size_t m = d->m;
    std::vector<node_t *> node(m * m);
    for (size_t i = m; i-- > 0;) {
        for (size_t j = m; j-- > 0;) {
            wave_cell *c = wave_at(d, i, j);
            node_t &n = f.add([c](const msg_t &) { wave_kernel(c); });
            node[i * m + j] = &n;
            if (i + 1 < m) tbb::flow::make_edge(n, *node[(i + 1) * m + j]);
            if (j + 1 < m) tbb::flow::make_edge(n, *node[i * m + j + 1]);
        }
    }
    f.sources.push_back(node[0]);
}

/* benchmarks/graph_traversal/tbb.cpp: the last level made first, then each
 * level from the second-to-last back to the first, each node joined to its
 * successors at once; one empty source node joined to every node of the
 * first level is the only node try_put. */
void build_graph_traversal(flow &f, void *data) {
    const trav_data *d = static_cast<const trav_data *>(data);
    std::vector<node_t *> node(d->n);
    for (size_t first = (d->n - 1) / d->width * d->width;; first -= d->width) {
        size_t last = std::min(first + d->width, d->n);
        for (size_t i = first; i < last; ++i) {
            uint32_t *v = &d->visited[i];
            node[i] = &f.add([v](const msg_t &) { trav_kernel(v); });
            for (uint32_t e = d->succ_off[i]; e < d->succ_off[i + 1]; ++e)
                tbb::flow::make_edge(*node[i], *node[d->succ[e]]);
        }
        if (first == 0) break;
    }
    node_t &source = f.add([](const msg_t &) {});
    for (size_t r = 0; r < d->nroots; ++r) tbb::flow::make_edge(source, *node[d->roots[r]]);
    f.sources.push_back(&source);
}

/* Every node is a source (flow.sources stays empty), as in Taskflow's tbb.cpp. */
void build_embarrassing_parallelism(flow &f, void *data) {
    const emb_data *d = static_cast<const emb_data *>(data);
    for (size_t i = 0; i < d->n; ++i) {
        uint64_t *p = &d->out[i];
        f.add([p](const msg_t &) { emb_kernel(p); });
    }
}

/* ---- plumbing ------------------------------------------------------------------ */


using builder_t = void (*)(flow &, void *);

int tbb_oneshot(void *data, builder_t build) {
    return tbb_guarded("build + run", [&] {
        flow f;
        build(f, data);
        f.run();
    });
}

int tbb_build(void *data, builder_t build, void **graph) {
    return tbb_guarded("build", [&] {
        std::unique_ptr<flow> f(new flow);
        build(*f, data);
        *graph = f.release();
    });
}

int tbb_run(void *env, void *graph) {
    (void)env;
    return tbb_guarded("run", [&] { static_cast<flow *>(graph)->run(); });
}

void tbb_destroy(void *env, void *graph) {
    (void)env;
    delete static_cast<flow *>(graph);
}

int tbb_env_init(unsigned threads, void **env) {
    return tbb_guarded("init", [&] {
        auto *gc = new tbb::global_control(tbb::global_control::max_allowed_parallelism, threads);
        *env = gc;
        /* Wake the workers once so the first timed run does not start them. */
        flow f;
        for (unsigned i = 0; i < 4 * threads; ++i) f.add([](const msg_t &) {});
        f.run();
    });
}

void tbb_env_fini(void *env) { delete static_cast<tbb::global_control *>(env); }

}  // namespace

#define TBB_BENCH_OPS(name)                                                              \
    static int name##_oneshot(void *env, void *data) {                                   \
        (void)env;                                                                       \
        return tbb_oneshot(data, build_##name);                                          \
    }                                                                                    \
    static int name##_build(void *env, void *data, void **graph) {                       \
        (void)env;                                                                       \
        return tbb_build(data, build_##name, graph);                                     \
    }                                                                                    \
    extern "C" const bench_ops bench_tbb_##name = { name##_oneshot, name##_build, tbb_run, \
                                                    tbb_destroy };

TBB_BENCH_OPS(linear_chain)
TBB_BENCH_OPS(binary_tree)
TBB_BENCH_OPS(wavefront)
TBB_BENCH_OPS(graph_traversal)
TBB_BENCH_OPS(embarrassing_parallelism)

extern "C" const bench_impl bench_impl_tbb = { "tbb", nullptr, 0, tbb_env_init, tbb_env_fini };
