/* weft-bench — benchmark data: shapes, allocation, reset and result checks.
 * SPDX-License-Identifier: MIT
 *
 * Everything here runs outside the timers.
 */
#include "bench_work.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- linear_chain ------------------------------------------------------------ */

static size_t chain_shape(size_t req) { return req ? req : 1; }

static void *chain_create(size_t n) {
    chain_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->v = calloc(n + 1, sizeof *d->v);
    if (!d->v) { free(d); return NULL; }
    return d;
}

static void chain_reset(void *data) {
    chain_data *d = data;
    memset(d->v, 0, (d->n + 1) * sizeof *d->v);
}

static int chain_verify(const void *data, char *msg, size_t len) {
    const chain_data *d = data;
    for (size_t i = 0; i < d->n; ++i) {
        if (*chain_cell(d, i) != (uint32_t)(i + 1)) {
            snprintf(msg, len, "chain link %zu holds %u, expected %zu", i, *chain_cell(d, i), i + 1);
            return -1;
        }
    }
    return 0;
}

static void chain_destroy(void *data) {
    chain_data *d = data;
    if (d) free(d->v);
    free(d);
}

const bench_work bench_work_linear_chain = {
    chain_shape, chain_create, chain_reset, chain_verify, chain_destroy,
};

/* ---- binary_tree ------------------------------------------------------------- */

/* The largest complete tree that fits: 2^D - 1 <= req, D >= 1. */
static size_t tree_shape(size_t req) {
    size_t n = 1;
    while (n * 2 + 1 <= req && n < ((size_t)1 << 30)) n = n * 2 + 1;
    return n;
}

static void *tree_create(size_t n) {
    tree_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->cell = calloc(n + 1, sizeof *d->cell);
    if (!d->cell) { free(d); return NULL; }
    /* The offsets never change, so they are set once here rather than in reset. */
    for (size_t i = 1; i <= n; ++i) d->cell[i].parent = (int32_t)(i / 2) - (int32_t)i;
    return d;
}

static void tree_reset(void *data) {
    tree_data *d = data;
    for (size_t i = 0; i <= d->n; ++i) d->cell[i].depth = 0;
}

static int tree_verify(const void *data, char *msg, size_t len) {
    const tree_data *d = data;
    uint32_t depth = 0;
    for (size_t i = 1; i <= d->n; ++i) {
        if ((i & (i - 1)) == 0) ++depth;        /* a new level starts at each power of two */
        if (d->cell[i].depth != depth) {
            snprintf(msg, len, "tree node %zu has depth %u, expected %u", i, d->cell[i].depth, depth);
            return -1;
        }
    }
    return 0;
}

static void tree_destroy(void *data) {
    tree_data *d = data;
    if (d) free(d->cell);
    free(d);
}

const bench_work bench_work_binary_tree = {
    tree_shape, tree_create, tree_reset, tree_verify, tree_destroy,
};

/* ---- wavefront --------------------------------------------------------------- */

static size_t wave_side(size_t req) {
    size_t m = (size_t)sqrt((double)req);
    while (m * m > req) --m;                    /* guard against sqrt rounding up */
    while ((m + 1) * (m + 1) <= req) ++m;
    return m ? m : 1;
}

static size_t wave_shape(size_t req) {
    size_t m = wave_side(req);
    return m * m;
}

static void *wave_create(size_t n) {
    wave_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->m = wave_side(n);
    size_t cells = (d->m + 1) * (d->m + 1);
    d->cell = calloc(cells, sizeof *d->cell);
    if (!d->cell) { free(d); return NULL; }
    for (size_t k = 0; k < cells; ++k) d->cell[k].up = -(int32_t)(d->m + 1);
    return d;
}

static void wave_reset(void *data) {
    wave_data *d = data;
    size_t cells = (d->m + 1) * (d->m + 1);
    for (size_t k = 0; k < cells; ++k) d->cell[k].value = 0;
}

static int wave_verify(const void *data, char *msg, size_t len) {
    const wave_data *d = data;
    for (size_t i = 0; i < d->m; ++i) {
        for (size_t j = 0; j < d->m; ++j) {
            uint32_t v = wave_at(d, i, j)->value;
            if (v != (uint32_t)(i + j + 1)) {
                snprintf(msg, len, "wavefront cell (%zu,%zu) holds %u, expected %zu", i, j, v, i + j + 1);
                return -1;
            }
        }
    }
    return 0;
}

static void wave_destroy(void *data) {
    wave_data *d = data;
    if (d) free(d->cell);
    free(d);
}

const bench_work bench_work_wavefront = {
    wave_shape, wave_create, wave_reset, wave_verify, wave_destroy,
};

/* ---- graph_traversal --------------------------------------------------------- */

/* splitmix64: a fixed seed gives the same graph on every run and machine. */
static uint64_t trav_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void trav_shuffle(uint32_t *a, size_t n, uint64_t *s) {
    for (size_t i = n; i > 1; --i) {
        size_t j = (size_t)(trav_rand(s) % i);
        uint32_t t = a[i - 1]; a[i - 1] = a[j]; a[j] = t;
    }
}

static size_t trav_shape(size_t req) { return req ? req : 1; }

static void trav_destroy(void *data) {
    trav_data *d = data;
    if (!d) return;
    free(d->succ_off); free(d->succ); free(d->pred_off); free(d->pred);
    free(d->roots); free(d->visited);
    free(d);
}

/* Follows Taskflow's benchmarks/graph_traversal/levelgraph.hpp: for each level,
 * walk a shuffled list of the next level's nodes, giving each node the next
 * 1 + rand % 4 of them (fewer at the end of the list, which is then reshuffled).
 * Edges of one node are therefore distinct, and every node of the next level
 * gets an edge once the walk has passed over it. */
static void *trav_create(size_t n) {
    trav_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    size_t w = (size_t)ceil(sqrt((double)n));
    d->width = w ? w : 1;
    /* At most 4 edges per node: size the edge arrays for the worst case. */
    d->succ_off = calloc(n + 1, sizeof *d->succ_off);
    d->succ = malloc(4 * n * sizeof *d->succ);
    d->pred_off = calloc(n + 1, sizeof *d->pred_off);
    d->pred = malloc(4 * n * sizeof *d->pred);
    d->roots = malloc(n * sizeof *d->roots);
    d->visited = calloc(n, sizeof *d->visited);
    uint32_t *perm = malloc(d->width * sizeof *perm);
    if (!d->succ_off || !d->succ || !d->pred_off || !d->pred || !d->roots || !d->visited || !perm) {
        free(perm);
        trav_destroy(d);
        return NULL;
    }

    uint64_t seed = 0x5eed5eedull;
    size_t e = 0;
    for (size_t first = 0; first < n; first += d->width) {
        size_t width = n - first < d->width ? n - first : d->width;
        size_t next = first + width;
        size_t next_width = n - next < d->width ? n - next : d->width;  /* 0 at the last level */
        for (size_t k = 0; k < next_width; ++k) perm[k] = (uint32_t)k;
        trav_shuffle(perm, next_width, &seed);
        size_t start = 0;
        for (size_t i = first; i < next; ++i) {
            d->succ_off[i] = (uint32_t)e;
            if (next_width == 0) continue;
            size_t k = 1 + (size_t)(trav_rand(&seed) % 4);
            size_t end = start + k >= next_width ? next_width : start + k;
            for (size_t x = start; x < end; ++x) d->succ[e++] = (uint32_t)(next + perm[x]);
            if (end == next_width) {
                trav_shuffle(perm, next_width, &seed);
                start = 0;
            } else {
                start = end;
            }
        }
    }
    d->succ_off[n] = (uint32_t)e;
    d->edges = e;

    /* Predecessor lists: count, prefix-sum, fill. */
    for (size_t k = 0; k < e; ++k) d->pred_off[d->succ[k] + 1]++;
    for (size_t i = 0; i < n; ++i) d->pred_off[i + 1] += d->pred_off[i];
    free(perm);
    uint32_t *cursor = malloc(n * sizeof *cursor);  /* next free slot of each pred list */
    if (!cursor) { trav_destroy(d); return NULL; }
    memcpy(cursor, d->pred_off, n * sizeof *cursor);
    for (size_t i = 0; i < n; ++i)
        for (uint32_t k = d->succ_off[i]; k < d->succ_off[i + 1]; ++k)
            d->pred[cursor[d->succ[k]]++] = (uint32_t)i;
    free(cursor);

    for (size_t i = 0; i < n; ++i)
        if (d->pred_off[i] == d->pred_off[i + 1]) d->roots[d->nroots++] = (uint32_t)i;
    return d;
}

static void trav_reset(void *data) {
    trav_data *d = data;
    memset(d->visited, 0, d->n * sizeof *d->visited);
}

static int trav_verify(const void *data, char *msg, size_t len) {
    const trav_data *d = data;
    for (size_t i = 0; i < d->n; ++i) {
        if (d->visited[i] != 1) {
            snprintf(msg, len, "graph node %zu visited %u times, expected once", i, d->visited[i]);
            return -1;
        }
    }
    return 0;
}

const bench_work bench_work_graph_traversal = {
    trav_shape, trav_create, trav_reset, trav_verify, trav_destroy,
};

/* ---- embarrassing_parallelism ------------------------------------------------ */

static size_t emb_shape(size_t req) { return req ? req : 1; }

static void *emb_create(size_t n) {
    emb_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->out = malloc(n * sizeof *d->out);
    if (!d->out) { free(d); return NULL; }
    return d;
}

static void emb_reset(void *data) {
    emb_data *d = data;
    for (size_t i = 0; i < d->n; ++i) d->out[i] = i + 1;   /* mix(0) == 0 would hide a rerun */
}

static int emb_verify(const void *data, char *msg, size_t len) {
    const emb_data *d = data;
    for (size_t i = 0; i < d->n; ++i) {
        if (d->out[i] != emb_mix(i + 1)) {
            snprintf(msg, len, "task %zu produced %llx, expected %llx (not run, or run twice)", i,
                     (unsigned long long)d->out[i], (unsigned long long)emb_mix(i + 1));
            return -1;
        }
    }
    return 0;
}

static void emb_destroy(void *data) {
    emb_data *d = data;
    if (d) free(d->out);
    free(d);
}

const bench_work bench_work_embarrassing_parallelism = {
    emb_shape, emb_create, emb_reset, emb_verify, emb_destroy,
};
