/* weft-bench — data of the parallel-algorithm benchmarks and their serial
 * baselines.  SPDX-License-Identifier: MIT */
#include "bench_work.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static size_t algo_shape(size_t requested) { return requested ? requested : 1; }

static void algo_destroy(void *p) {
    algo_data *d = p;
    if (!d) return;
    free(d->in), free(d->out), free(d->orig), free(d->uin), free(d->uout);
    free(d);
}

static void *algo_create(size_t n) {
    algo_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->in = malloc(n * sizeof *d->in), d->out = malloc(n * sizeof *d->out);
    d->orig = malloc(n * sizeof *d->orig);
    d->uin = malloc(n * sizeof *d->uin), d->uout = malloc(n * sizeof *d->uout);
    if (!d->in || !d->out || !d->orig || !d->uin || !d->uout) {
        algo_destroy(d);
        return NULL;
    }
    uint64_t s = 12345;
    for (size_t i = 0; i < n; i++) {
        d->orig[i] = (double)(mix64(&s) >> 11) * 0x1p-53 * 2e6 - 1e6;
        d->uin[i] = mix64(&s) & 0xffff;
        d->want_sum += d->orig[i];
    }
    return d;
}

static void algo_reset(void *p) {
    algo_data *d = p;
    memcpy(d->in, d->orig, d->n * sizeof *d->in);
    memset(d->out, 0, d->n * sizeof *d->out);
    memset(d->uout, 0, d->n * sizeof *d->uout);
    d->sum = 0;
}

static int fail(char *msg, size_t len, const char *what, size_t i) {
    snprintf(msg, len, "%s wrong at element %zu", what, i);
    return -1;
}

static int verify_for_each(const void *p, char *msg, size_t len) {
    const algo_data *d = p;
    for (size_t i = 0; i < d->n; i++)
        if (d->in[i] != fe_kernel(d->orig[i])) return fail(msg, len, "for_each", i);
    return 0;
}

static int verify_transform(const void *p, char *msg, size_t len) {
    const algo_data *d = p;
    for (size_t i = 0; i < d->n; i++)
        if (d->out[i] != tr_kernel(d->orig[i])) return fail(msg, len, "transform", i);
    return 0;
}

/* Different implementations add in different orders: compare with a tolerance. */
static int verify_reduce(const void *p, char *msg, size_t len) {
    const algo_data *d = p;
    if (fabs(d->sum - d->want_sum) <= 1e-6 * (double)d->n) return 0;
    snprintf(msg, len, "reduce_sum %.17g, want %.17g", d->sum, d->want_sum);
    return -1;
}

/* Sorted, and the same multiset: the sum of the bit patterns is order-free. */
static int verify_sort(const void *p, char *msg, size_t len) {
    const algo_data *d = p;
    uint64_t a = 0, b = 0;
    for (size_t i = 0; i < d->n; i++) {
        uint64_t x, y;
        memcpy(&x, &d->in[i], 8), memcpy(&y, &d->orig[i], 8);
        a += x * 0x9E3779B97F4A7C15u, b += y * 0x9E3779B97F4A7C15u;
        if (i && d->in[i - 1] > d->in[i]) return fail(msg, len, "sort order", i);
    }
    if (a != b) return fail(msg, len, "sort (not a permutation)", 0);
    return 0;
}

static int verify_scan(const void *p, char *msg, size_t len) {
    const algo_data *d = p;
    uint64_t acc = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->uout[i] != (acc += d->uin[i])) return fail(msg, len, "inclusive_scan", i);
    return 0;
}

#define ALGO_WORK(name, verify)                                                            \
    const bench_work bench_work_algo_##name = { algo_shape, algo_create, algo_reset, verify, \
                                                algo_destroy };
ALGO_WORK(for_each, verify_for_each)
ALGO_WORK(transform, verify_transform)
ALGO_WORK(reduce_sum, verify_reduce)
ALGO_WORK(sort, verify_sort)
ALGO_WORK(scan, verify_scan)

/* ---- serial baselines ---------------------------------------------------------- */

#define SERIAL_OPS(name) const bench_ops bench_serial_##name = { serial_##name, NULL, NULL, NULL };

static int serial_for_each(void *env, void *p) {
    algo_data *d = p;
    (void)env;
    for (size_t i = 0; i < d->n; i++) d->in[i] = fe_kernel(d->in[i]);
    return 0;
}
SERIAL_OPS(for_each)

static int serial_transform(void *env, void *p) {
    algo_data *d = p;
    (void)env;
    for (size_t i = 0; i < d->n; i++) d->out[i] = tr_kernel(d->in[i]);
    return 0;
}
SERIAL_OPS(transform)

static int serial_reduce_sum(void *env, void *p) {
    algo_data *d = p;
    double s = 0;
    (void)env;
    for (size_t i = 0; i < d->n; i++) s += d->in[i];
    d->sum = s;
    return 0;
}
SERIAL_OPS(reduce_sum)
const bench_ops bench_serial_reduce_sum_generic = { serial_reduce_sum, NULL, NULL, NULL };

static int serial_inclusive_scan(void *env, void *p) {
    algo_data *d = p;
    uint64_t acc = 0;
    (void)env;
    for (size_t i = 0; i < d->n; i++) d->uout[i] = acc += d->uin[i];
    return 0;
}
SERIAL_OPS(inclusive_scan)

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The serial sort is libc's qsort: what a C program would call. */
static int serial_sort(void *env, void *p) {
    algo_data *d = p;
    (void)env;
    qsort(d->in, d->n, sizeof *d->in, cmp_double);
    return 0;
}
SERIAL_OPS(sort)
const bench_ops bench_serial_sort_generic = { serial_sort, NULL, NULL, NULL };
