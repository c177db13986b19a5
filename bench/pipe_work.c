/* weft-bench — data of the pipeline benchmarks (pipe_work.h) and their serial
 * baseline.  SPDX-License-Identifier: MIT */
#include "pipe_work.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static size_t pipe_shape(size_t req) { return req ? req : 1; }

/* ---- pipeline_sps ---------------------------------------------------------------- */

static void *sps_create(size_t n) {
    sps_data *d = calloc(1, sizeof *d);
    if (d) d->n = n;
    return d;
}

static void sps_reset(void *data) {
    sps_data *d = data;
    d->next = d->bad = 0;
}

static int sps_verify(const void *data, char *msg, size_t len) {
    const sps_data *d = data;
    if (d->next == d->n && d->bad == 0) return 0;
    snprintf(msg, len, "last stage saw %" PRIu64 " tokens (want %zu), %" PRIu64 " out of order", d->next, d->n,
             d->bad);
    return -1;
}

const bench_work bench_work_pipeline_sps = { pipe_shape, sps_create, sps_reset, sps_verify, free };

/* ---- pipeline_parse -------------------------------------------------------------- */

static void parse_destroy(void *data) {
    parse_data *d = data;
    if (!d) return;
    free(d->text);
    free(d->start);
    free(d);
}

/* Writes line i's numbers (deterministic, 1 to 9 digits each) at p. */
static size_t write_line(char *p, uint64_t *seed) {
    size_t k = 0;
    for (int f = 0; f < PARSE_FIELDS; ++f) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t digits = 1 + (*seed >> 60) % 9, v = (*seed >> 20) % 1000000000ull, mod = 1;
        for (uint64_t i = 0; i < digits; ++i) mod *= 10;
        k += (size_t)sprintf(p + k, f ? ",%" PRIu64 : "%" PRIu64, v % mod);
    }
    p[k++] = '\n';
    return k;
}

static void *parse_create(size_t n) {
    parse_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->text = malloc(n * (PARSE_FIELDS * 10 + 2));
    d->start = malloc((n + 1) * sizeof *d->start);
    if (!d->text || !d->start) return parse_destroy(d), NULL;
    uint64_t seed = 42, off = 0;
    for (size_t i = 0; i < n; ++i) {
        d->start[i] = off;
        off += write_line(d->text + off, &seed);
    }
    d->start[n] = off;
    for (size_t i = 0; i < n; ++i) d->expect = parse_fold(d->expect, parse_kernel(parse_get(d, i)));
    return d;
}

static void parse_reset(void *data) { ((parse_data *)data)->hash = 0; }

static int parse_verify(const void *data, char *msg, size_t len) {
    const parse_data *d = data;
    if (d->hash == d->expect) return 0;
    snprintf(msg, len, "fold is %016" PRIx64 ", want %016" PRIx64, d->hash, d->expect);
    return -1;
}

const bench_work bench_work_pipeline_parse = { pipe_shape, parse_create, parse_reset, parse_verify, parse_destroy };

/* ---- serial baseline: the same stages in one loop ------------------------------ */

static int serial_pipeline_sps(void *env, void *data) {
    (void)env;
    sps_data *d = data;
    for (uint64_t t = 0; t < d->n; ++t) sps_sink(d, t);
    return 0;
}

static int serial_pipeline_parse(void *env, void *data) {
    (void)env;
    parse_data *d = data;
    for (size_t i = 0; i < d->n; ++i) d->hash = parse_fold(d->hash, parse_kernel(parse_get(d, i)));
    return 0;
}

const bench_ops bench_serial_pipeline_sps = { serial_pipeline_sps, NULL, NULL, NULL };
const bench_ops bench_serial_pipeline_parse = { serial_pipeline_parse, NULL, NULL, NULL };
