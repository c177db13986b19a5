/* weft-bench — data of the control-flow benchmarks (cond_loop, subflow_spawn):
 * allocation, reset and result checks, all outside the timers.
 * SPDX-License-Identifier: MIT
 */
#include "bench_work.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t flow_shape(size_t req) { return req ? req : 1; }

/* ---- cond_loop ---------------------------------------------------------------- */

static void *cond_loop_create(size_t n) {
    cond_loop_data *d = calloc(1, sizeof *d);
    if (d) d->n = n;
    return d;
}

static void cond_loop_reset(void *data) {
    cond_loop_data *d = data;
    d->a = d->b = d->iter = 0;
}

static int cond_loop_verify(const void *data, char *msg, size_t len) {
    const cond_loop_data *d = data;
    uint64_t n = d->n;
    if (d->iter == n && d->a == n && d->b == n * (n + 1) / 2) return 0;
    snprintf(msg, len, "after %llu iterations a=%llu b=%llu, expected %llu, %llu, %llu",
             (unsigned long long)d->iter, (unsigned long long)d->a, (unsigned long long)d->b,
             (unsigned long long)n, (unsigned long long)n, (unsigned long long)(n * (n + 1) / 2));
    return -1;
}

const bench_work bench_work_cond_loop = {
    flow_shape, cond_loop_create, cond_loop_reset, cond_loop_verify, free,
};

/* ---- subflow_spawn ------------------------------------------------------------ */

static void *spawn_create(size_t n) {
    spawn_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->hit = calloc(n, 1);
    if (!d->hit) {
        free(d);
        return NULL;
    }
    return d;
}

static void spawn_reset(void *data) {
    spawn_data *d = data;
    memset(d->hit, 0, d->n);
}

static int spawn_verify(const void *data, char *msg, size_t len) {
    const spawn_data *d = data;
    for (size_t i = 0; i < d->n; i++)
        if (d->hit[i] != 1) {
            snprintf(msg, len, "child %zu ran %u times", i, d->hit[i]);
            return -1;
        }
    return 0;
}

static void spawn_destroy(void *data) {
    spawn_data *d = data;
    if (d) free(d->hit);
    free(d);
}

const bench_work bench_work_subflow_spawn = {
    flow_shape, spawn_create, spawn_reset, spawn_verify, spawn_destroy,
};
