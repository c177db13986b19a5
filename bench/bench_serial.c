/* weft-bench — the serial baseline: the same kernels called in a plain loop, in
 * an order that respects every dependency (index order is a topological order in
 * every benchmark).  It shows the cost of the work itself, so
 * ns_per_task(impl) - ns_per_task(serial) is roughly the runtime's overhead.
 * SPDX-License-Identifier: MIT
 */
#include "bench_work.h"

static int serial_env_init(unsigned threads, void **env) {
    (void)threads;
    *env = NULL;
    return 0;
}

static void serial_env_fini(void *env) { (void)env; }

/* max_threads = 1: a loop does not get faster with more threads. */
const bench_impl bench_impl_serial = { "serial", NULL, 1, serial_env_init, serial_env_fini };

#define SERIAL_BENCH_OPS(name) const bench_ops bench_serial_##name = { serial_##name, NULL, NULL, NULL };

static int serial_linear_chain(void *env, void *data) {
    (void)env;
    const chain_data *d = data;
    for (size_t i = 0; i < d->n; ++i) chain_kernel(chain_cell(d, i));
    return 0;
}
SERIAL_BENCH_OPS(linear_chain)

static int serial_binary_tree(void *env, void *data) {
    (void)env;
    const tree_data *d = data;
    for (size_t i = 1; i <= d->n; ++i) tree_kernel(&d->cell[i]);
    return 0;
}
SERIAL_BENCH_OPS(binary_tree)

static int serial_wavefront(void *env, void *data) {
    (void)env;
    const wave_data *d = data;
    for (size_t i = 0; i < d->m; ++i)
        for (size_t j = 0; j < d->m; ++j) wave_kernel(wave_at(d, i, j));
    return 0;
}
SERIAL_BENCH_OPS(wavefront)

static int serial_graph_traversal(void *env, void *data) {
    (void)env;
    const trav_data *d = data;
    for (size_t i = 0; i < d->n; ++i) trav_kernel(&d->visited[i]);
    return 0;
}
SERIAL_BENCH_OPS(graph_traversal)

static int serial_embarrassing_parallelism(void *env, void *data) {
    (void)env;
    const emb_data *d = data;
    for (size_t i = 0; i < d->n; ++i) emb_kernel(&d->out[i]);
    return 0;
}
SERIAL_BENCH_OPS(embarrassing_parallelism)
