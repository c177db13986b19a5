/* weft-bench — fork-join and async benchmark data, and their serial versions.
 * SPDX-License-Identifier: MIT */
#include "bench_work.h"
#include "fj_work.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- fib ------------------------------------------------------------------- */

static long fib_iter(int n) {
    long a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        long t = a + b;
        a = b;
        b = t;
    }
    return a;
}

/* Calls made by the recursion for fib(n): 2 fib(n+1) - 1. */
static size_t fib_nodes(int n) { return (size_t)(2 * fib_iter(n + 1) - 1); }

/* Largest n whose count (spawns) fits the requested size; at least fib(2). */
static int fib_pick(size_t req, int both) {
    int n = 2;
    while (n < 60) {
        size_t spawns = both ? fib_nodes(n + 1) - 1 : (size_t)fib_iter(n + 2) - 1;
        if (spawns > req) break;
        n++;
    }
    return n;
}

static size_t fib_spawns(int n, int both) { return both ? fib_nodes(n) - 1 : (size_t)fib_iter(n + 1) - 1; }

static size_t fib1_shape(size_t req) { return fib_spawns(fib_pick(req, 0), 0); }
static size_t fib2_shape(size_t req) { return fib_spawns(fib_pick(req, 1), 1); }

static void *fib_create_(size_t tasks, int both) {
    fib_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = 2;
    while (fib_spawns(d->n, both) < tasks) d->n++;
    d->tasks = tasks;
    return d;
}
static void *fib1_create(size_t tasks) { return fib_create_(tasks, 0); }
static void *fib2_create(size_t tasks) { return fib_create_(tasks, 1); }
static void fib_reset(void *data) { ((fib_data *)data)->result = -1; }
static int fib_verify(const void *data, char *msg, size_t len) {
    const fib_data *d = data;
    if (d->result == fib_iter(d->n)) return 0;
    snprintf(msg, len, "fib(%d) = %ld, want %ld", d->n, d->result, fib_iter(d->n));
    return -1;
}

const bench_work bench_work_fib = {fib1_shape, fib1_create, fib_reset, fib_verify, free};
const bench_work bench_work_fib_spawn2 = {fib2_shape, fib2_create, fib_reset, fib_verify, free};

/* Every node a real, non-inlined call with the same argument shape as the
 * parallel versions (a struct on the caller's stack, the result written through
 * the pointer), so that (T_weft(1) - T_serial) / tasks is the cost of a spawn
 * plus its sync and nothing else. */
struct fib_node {
    int n;
    long r;
};
__attribute__((noinline)) static int fib_serial_rec(void *ctx, void *p) {
    struct fib_node *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    struct fib_node x = {a->n - 1, 0}, y = {a->n - 2, 0};
    int st = fib_serial_rec(ctx, &y);
    st |= fib_serial_rec(ctx, &x);
    a->r = x.r + y.r;
    return st;
}
static int serial_fib(void *env, void *data) {
    fib_data *d = data;
    struct fib_node a = {d->n, 0};
    int st = fib_serial_rec(env, &a);
    d->result = a.r;
    return st;
}
const bench_ops bench_serial_fib = {serial_fib, NULL, NULL, NULL};
const bench_ops bench_serial_fib_spawn2 = {serial_fib, NULL, NULL, NULL};

/* The plain C recursion, direct calls the compiler may inline: the baseline of
 * fib_typed, whose non-stolen syncs are direct calls too. */
static long fib_plain(int n) { return n < 2 ? n : fib_plain(n - 1) + fib_plain(n - 2); }
static int serial_fib_typed(void *env, void *data) {
    fib_data *d = data;
    (void)env;
    d->result = fib_plain(d->n);
    return 0;
}
const bench_ops bench_serial_fib_typed = {serial_fib_typed, NULL, NULL, NULL};

/* ---- skynet ------------------------------------------------------------------ */

static size_t skynet_nodes_below(int depth) {
    size_t n = 0, level = 1;
    for (int d = 0; d < depth; d++) {
        level *= SKYNET_FANOUT;
        n += level;
    }
    return n;
}
static int skynet_pick(size_t req) {
    int d = 1;
    while (d < 9 && skynet_nodes_below(d + 1) <= req) d++;
    return d;
}
static size_t skynet_shape(size_t req) { return skynet_nodes_below(skynet_pick(req)); }
static void *skynet_create(size_t tasks) {
    skynet_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->depth = 1;
    while (skynet_nodes_below(d->depth) < tasks) d->depth++;
    d->tasks = tasks;
    return d;
}
static void skynet_reset(void *data) { ((skynet_data *)data)->result = -1; }
static int skynet_verify(const void *data, char *msg, size_t len) {
    const skynet_data *d = data;
    long leaves = 1;
    for (int i = 0; i < d->depth; i++) leaves *= SKYNET_FANOUT;
    long want = leaves * (leaves - 1) / 2;
    if (d->result == want) return 0;
    snprintf(msg, len, "skynet depth %d = %ld, want %ld", d->depth, d->result, want);
    return -1;
}
const bench_work bench_work_skynet = {skynet_shape, skynet_create, skynet_reset, skynet_verify, free};

__attribute__((noinline)) static long skynet_serial_rec(long num, long size) {
    if (size == 1) return num;
    long sum = 0, sub = size / SKYNET_FANOUT;
    for (long i = 0; i < SKYNET_FANOUT; i++) sum += skynet_serial_rec(num + i * sub, sub);
    return sum;
}
static int serial_skynet(void *env, void *data) {
    (void)env;
    skynet_data *d = data;
    long leaves = 1;
    for (int i = 0; i < d->depth; i++) leaves *= SKYNET_FANOUT;
    d->result = skynet_serial_rec(0, leaves);
    return 0;
}
const bench_ops bench_serial_skynet = {serial_skynet, NULL, NULL, NULL};

/* ---- nqueens ----------------------------------------------------------------- */

/* Returns solutions; adds the nodes below this one to *nodes. */
static long nq_serial_rec(signed char *cols, int n, int row, size_t *nodes) {
    if (row == n) return 1;
    long sum = 0;
    for (int c = 0; c < n; c++) {
        if (!nq_safe(cols, row, c)) continue;
        cols[row] = (signed char)c;
        ++*nodes;
        sum += nq_serial_rec(cols, n, row + 1, nodes);
    }
    return sum;
}
static size_t nq_nodes(int n, long *solutions) {
    signed char cols[32];
    size_t nodes = 0;
    long s = nq_serial_rec(cols, n, 0, &nodes);
    if (solutions) *solutions = s;
    return nodes;
}
static size_t nq_shape(size_t req) {
    int n = 4;
    while (n < 14 && nq_nodes(n + 1, NULL) <= req) n++;
    return nq_nodes(n, NULL);
}
static void *nq_create(size_t tasks) {
    nqueens_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = 4;
    while (nq_nodes(d->n, NULL) < tasks) d->n++;
    d->tasks = tasks;
    return d;
}
static void nq_reset(void *data) { ((nqueens_data *)data)->result = -1; }
static int nq_verify(const void *data, char *msg, size_t len) {
    const nqueens_data *d = data;
    static const long known[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596};
    if (d->n < 15 && d->result == known[d->n]) return 0;
    snprintf(msg, len, "nqueens(%d) = %ld", d->n, d->result);
    return -1;
}
const bench_work bench_work_nqueens = {nq_shape, nq_create, nq_reset, nq_verify, free};

static int serial_nqueens(void *env, void *data) {
    (void)env;
    nqueens_data *d = data;
    signed char cols[32];
    size_t nodes = 0;
    d->result = nq_serial_rec(cols, d->n, 0, &nodes);
    return 0;
}
const bench_ops bench_serial_nqueens = {serial_nqueens, NULL, NULL, NULL};

/* ---- async_task -------------------------------------------------------------- */

static size_t async_shape(size_t req) { return req ? req : 1; }
static void *async_create(size_t n) {
    async_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->out = malloc(n * sizeof *d->out);
    if (!d->out) {
        free(d);
        return NULL;
    }
    return d;
}
static void async_reset(void *data) {
    async_data *d = data;
    for (size_t i = 0; i < d->n; i++) d->out[i] = i + 1;
}
static int async_verify(const void *data, char *msg, size_t len) {
    const async_data *d = data;
    for (size_t i = 0; i < d->n; i++)
        if (d->out[i] != emb_mix(i + 1)) {
            snprintf(msg, len, "task %zu did not run exactly once", i);
            return -1;
        }
    return 0;
}
static void async_destroy(void *data) {
    async_data *d = data;
    free(d->out);
    free(d);
}
const bench_work bench_work_async_task = {async_shape, async_create, async_reset, async_verify, async_destroy};

static int serial_async(void *env, void *data) {
    (void)env;
    async_data *d = data;
    for (size_t i = 0; i < d->n; i++) emb_kernel(&d->out[i]);
    return 0;
}
const bench_ops bench_serial_async_task = {serial_async, NULL, NULL, NULL};
