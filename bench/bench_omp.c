/* weft-bench — the OpenMP implementation: explicit tasks with depend clauses.
 * SPDX-License-Identifier: MIT
 *
 * Modelled on Taskflow's benchmarks/<name>/omp.cpp: one thread of a parallel
 * region creates every task (omp single) with depend clauses naming the cells a
 * task reads (in) and writes (out); the region's closing barrier waits for them.
 * OpenMP has no graph to keep, so the _rerun variant times this same code path
 * (bench_ops.build is NULL).  Compiled with -fopenmp; nothing else is.
 */
#include "bench_work.h"

#include <stdio.h>

#include <omp.h>

/* ---- environment ------------------------------------------------------------- */

static int omp_env_init(unsigned threads, void **env) {
    omp_set_num_threads((int)threads);
    /* Start the thread pool now so the first timed region does not pay for it. */
    int got = 0;
    #pragma omp parallel
    {
        #pragma omp single
        got = omp_get_num_threads();
    }
    if (got != (int)threads) {
        fprintf(stderr, "omp: asked for %u threads, the parallel region got %d\n", threads, got);
        return -1;
    }
    *env = NULL;
    return 0;
}

static void omp_env_fini(void *env) { (void)env; }

const bench_impl bench_impl_omp = { "omp", NULL, 0, omp_env_init, omp_env_fini };

#define OMP_BENCH_OPS(name) const bench_ops bench_omp_##name = { omp_##name, NULL, NULL, NULL };

/* ---- linear_chain: task i reads v[i] and writes v[i + 1]. -------------------- */

static int omp_linear_chain(void *env, void *data) {
    (void)env;
    const chain_data *d = data;
    #pragma omp parallel
    #pragma omp single
    for (size_t i = 0; i < d->n; ++i) {
        uint32_t *p = chain_cell(d, i);
        #pragma omp task firstprivate(p) depend(in: p[-1]) depend(out: p[0])
        chain_kernel(p);
    }
    return 0;
}
OMP_BENCH_OPS(linear_chain)

/* ---- binary_tree: a node reads its parent's cell. ---------------------------- */

static int omp_binary_tree(void *env, void *data) {
    (void)env;
    const tree_data *d = data;
    #pragma omp parallel
    #pragma omp single
    for (size_t i = 1; i <= d->n; ++i) {
        tree_cell *c = &d->cell[i];
        #pragma omp task firstprivate(c) depend(in: c[c->parent]) depend(out: c[0])
        tree_kernel(c);
    }
    return 0;
}
OMP_BENCH_OPS(binary_tree)

/* ---- wavefront: a cell reads the cells above and to the left.  Tasks are
 * created one anti-diagonal at a time (i + j = k, i falling), as Taskflow's
 * benchmarks/wavefront/omp.cpp does: each task is created after both of its
 * predecessors, so the creating thread rarely meets an unfinished dependency.
 * (Row-major creation, this file's order until session 35, is another
 * definition: GNU OpenMP then defers most tasks behind their dependencies.) -- */

static int omp_wavefront(void *env, void *data) {
    (void)env;
    const wave_data *d = data;
    const size_t m = d->m;
    #pragma omp parallel
    #pragma omp single
    {
        for (size_t k = 0; k + 1 < 2 * m; ++k) {
            size_t i = k < m ? k : m - 1, j = k - i;
            for (;; --i, ++j) {
                wave_cell *c = wave_at(d, i, j);
                #pragma omp task firstprivate(c) depend(in: c[c->up], c[-1]) depend(out: c[0])
                wave_kernel(c);
                if (i == 0 || j + 1 == m) break;
            }
        }
        #pragma omp taskwait
    }
    return 0;
}
OMP_BENCH_OPS(wavefront)

/* ---- graph_traversal: a node depends on each predecessor's visited flag.  The
 * OpenMP 5.0 depend iterator takes a variable-length list; Taskflow's omp.cpp
 * spells out every (in-degree, out-degree) pair instead, to the same effect. --- */

static int omp_graph_traversal(void *env, void *data) {
    (void)env;
    const trav_data *d = data;
    uint32_t *visited = d->visited;
    const uint32_t *pred = d->pred;
    #pragma omp parallel
    #pragma omp single
    for (size_t i = 0; i < d->n; ++i) {
        int first = (int)d->pred_off[i], last = (int)d->pred_off[i + 1];
        (void)first; (void)last;    /* gcc 12 misses their use inside iterator() */
        #pragma omp task firstprivate(i) depend(iterator(k = first:last), in: visited[pred[k]]) \
                         depend(out: visited[i])
        trav_kernel(&visited[i]);
    }
    return 0;
}
OMP_BENCH_OPS(graph_traversal)

/* ---- embarrassing_parallelism: independent tasks, no depend clause. ---------- */

static int omp_embarrassing_parallelism(void *env, void *data) {
    (void)env;
    const emb_data *d = data;
    #pragma omp parallel
    #pragma omp single
    {
        for (size_t i = 0; i < d->n; ++i) {
            uint64_t *p = &d->out[i];
            #pragma omp task firstprivate(p)
            emb_kernel(p);
        }
        #pragma omp taskwait    /* as Taskflow's omp.cpp: the single waits, then the barrier */
    }
    return 0;
}
OMP_BENCH_OPS(embarrassing_parallelism)
