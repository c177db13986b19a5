/* weft-bench — the data and per-task work of each benchmark.
 * SPDX-License-Identifier: MIT
 *
 * Every implementation calls the same inline kernel on the same cell, so they
 * differ only in how they schedule tasks.  Each kernel takes a single pointer (a
 * weft task gets one `void *arg`); where a task must read a predecessor's cell,
 * the cell stores the offset to it.  Kernels read what their predecessors wrote,
 * so a task that runs too early computes a wrong value and verify() catches a
 * broken dependency, not only a lost or duplicated task.
 *
 * Included from C and C++.
 */
#ifndef WEFT_BENCH_WORK_H
#define WEFT_BENCH_WORK_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- linear_chain: task i (0..n-1) works on v[i + 1]; v[0] is a constant 0.
 * Each task increments the counter value its predecessor left, so v[i + 1] ends
 * as i + 1.  One task = one chain link. */
typedef struct chain_data {
    size_t n;
    uint32_t *v;                /* n + 1 entries */
} chain_data;

static inline void chain_kernel(uint32_t *p) { p[0] = p[-1] + 1; }
static inline uint32_t *chain_cell(const chain_data *d, size_t i) { return &d->v[i + 1]; }

/* ---- binary_tree: nodes 1..n in heap order (children of i are 2i and 2i+1),
 * n = 2^D - 1; cell[0] is a constant-0 sentinel the root reads.  Each node sets
 * its depth to its parent's depth + 1.  One task = one tree node. */
typedef struct tree_cell {
    uint32_t depth;
    int32_t parent;             /* offset from this cell to its parent's cell */
} tree_cell;

typedef struct tree_data {
    size_t n;
    tree_cell *cell;            /* n + 1 entries */
} tree_data;

static inline void tree_kernel(tree_cell *c) { c->depth = c[c->parent].depth + 1; }

/* ---- wavefront: an m x m grid; cell (i, j) becomes max(up, left) + 1 = i + j + 1.
 * The grid is stored (m + 1) x (m + 1) with a zero row and column in front, so
 * edge cells need no special case.  One task = one grid cell. */
typedef struct wave_cell {
    uint32_t value;
    int32_t up;                 /* offset to the cell above: -(m + 1) */
} wave_cell;

typedef struct wave_data {
    size_t n;                   /* m * m */
    size_t m;
    wave_cell *cell;            /* (m + 1) * (m + 1) entries */
} wave_data;

static inline void wave_kernel(wave_cell *c) {
    uint32_t u = c[c->up].value, l = c[-1].value;
    c->value = (u > l ? u : l) + 1;
}
static inline wave_cell *wave_at(const wave_data *d, size_t i, size_t j) {
    return &d->cell[(i + 1) * (d->m + 1) + (j + 1)];
}

/* ---- graph_traversal: a random level-structured DAG built like Taskflow's
 * LevelGraph: levels of width w = ceil(sqrt(n)); each node gets 1..4 edges to
 * distinct nodes of the next level, taken from a shuffled walk over that level.
 * Nodes are numbered level by level, so index order is a topological order.
 * Each node marks itself visited (an increment, so a node run twice shows).
 * One task = one graph node. */
typedef struct trav_data {
    size_t n;
    size_t width;
    size_t edges;
    uint32_t *succ_off, *succ;  /* CSR successors: succ[succ_off[i] .. succ_off[i+1]) */
    uint32_t *pred_off, *pred;  /* CSR predecessors (OpenMP depend lists) */
    uint32_t *roots;            /* nodes without predecessors */
    size_t nroots;
    uint32_t *visited;          /* n entries */
} trav_data;

static inline void trav_kernel(uint32_t *visited) { ++*visited; }

/* ---- embarrassing_parallelism: n independent tasks; task i scrambles out[i]
 * (which starts as i + 1) with EMB_ROUNDS rounds of a 64-bit mix: a few ns of work
 * that cannot be folded away.  One task = one independent task. */
#define EMB_ROUNDS 8
typedef struct emb_data {
    size_t n;
    uint64_t *out;
} emb_data;

static inline uint64_t emb_mix(uint64_t x) {
    for (int r = 0; r < EMB_ROUNDS; ++r) {
        x ^= x >> 31;
        x *= 0x9E3779B97F4A7C15ull;
    }
    return x;
}
static inline void emb_kernel(uint64_t *p) { *p = emb_mix(*p); }

/* The bench_work instances (bench_work.c). */
extern const bench_work bench_work_linear_chain;
extern const bench_work bench_work_binary_tree;
extern const bench_work bench_work_wavefront;
extern const bench_work bench_work_graph_traversal;
extern const bench_work bench_work_embarrassing_parallelism;

/* ---- cond_loop (control flow): a loop of three tasks, A -> B -> C, where C is a
 * condition task looping back to A until n iterations are done.  A and B update
 * two sums so a skipped or repeated task shows.  One "task" = one iteration. */
typedef struct cond_loop_data {
    size_t n;
    uint64_t a, b, iter;
} cond_loop_data;

static inline void cond_loop_a(cond_loop_data *d) { d->a += 1; }
static inline void cond_loop_b(cond_loop_data *d) { d->b += d->a; }
/* 0: go round again; 1: leave the loop. */
static inline int cond_loop_c(cond_loop_data *d) { return ++d->iter < d->n ? 0 : 1; }

/* ---- subflow_spawn (control flow): one task spawns n children at run time and
 * joins them; child i increments hit[i].  One "task" = one child. */
typedef struct spawn_data {
    size_t n;
    uint8_t *hit;
} spawn_data;

static inline void spawn_kernel(uint8_t *hit) { ++*hit; }

extern const bench_work bench_work_cond_loop;
extern const bench_work bench_work_subflow_spawn;

#ifdef __cplusplus
}
#endif

#include "algo_work.h" /* the parallel-algorithm benchmarks */
#endif
