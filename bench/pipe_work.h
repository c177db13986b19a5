/* weft-bench — the pipeline benchmarks' data and per-token work.
 * SPDX-License-Identifier: MIT
 *
 * pipeline_sps: a serial -> parallel -> serial pipeline of empty stages; the
 * first stage makes `n` tokens, the last counts them (and checks their order),
 * so the time per token is the pipeline's own overhead.
 *
 * pipeline_parse: real work on text.  The data is `n` lines of PARSE_FIELDS
 * comma-separated decimal numbers.  Stage 1 (serial) hands out the next line,
 * stage 2 (parallel) parses its numbers and mixes them into one value, stage 3
 * (serial) folds the values in token order into an order-sensitive hash, which
 * verify() compares with a serial computation made when the data was created.
 *
 * Every implementation (weft, oneTBB, OpenMP tasks) uses PIPE_LINES tokens in flight.  Included from C and C++.
 */
#ifndef WEFT_BENCH_PIPE_WORK_H
#define WEFT_BENCH_PIPE_WORK_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PIPE_LINES 8
#define PARSE_FIELDS 8

typedef struct sps_data {
    size_t n;
    uint64_t next;   /* the last stage's count: the next token it expects */
    uint64_t bad;    /* tokens the last stage saw out of order */
} sps_data;

/* The last (serial) stage of pipeline_sps. */
static inline void sps_sink(sps_data *d, uint64_t token) {
    d->bad += token != d->next;
    d->next = token + 1;
}

/* A line of the text: where it starts and its length (without the newline). */
typedef struct parse_line {
    const char *text;
    uint32_t len;
} parse_line;

typedef struct parse_data {
    size_t n;
    char *text;
    uint64_t *start;  /* n + 1 offsets into text: line i is [start[i], start[i+1] - 1) */
    uint64_t hash;    /* the last stage's fold */
    uint64_t expect;  /* the right fold */
} parse_data;

static inline parse_line parse_get(const parse_data *d, size_t i) {
    parse_line l = { d->text + d->start[i], (uint32_t)(d->start[i + 1] - d->start[i] - 1) };
    return l;
}

static inline uint64_t parse_mix(uint64_t x) {
    for (int r = 0; r < 4; ++r) {
        x ^= x >> 29;
        x *= 0xbf58476d1ce4e5b9ull;
    }
    return x;
}

/* Stage 2: parse the numbers of one line and mix them into one value. */
static inline uint64_t parse_kernel(parse_line l) {
    uint64_t acc = 0, x = 0;
    for (uint32_t i = 0; i <= l.len; ++i) {
        char c = i < l.len ? l.text[i] : ',';
        if (c >= '0' && c <= '9') {
            x = x * 10 + (uint64_t)(c - '0');
        } else {
            acc = acc * 31 + parse_mix(x);
            x = 0;
        }
    }
    return acc;
}

/* Stage 3: an order-sensitive fold. */
static inline uint64_t parse_fold(uint64_t h, uint64_t v) { return h * 1000003u + v; }

extern const bench_work bench_work_pipeline_sps;
extern const bench_work bench_work_pipeline_parse;

extern const bench_ops bench_weft_pipeline_sps, bench_weft_pipeline_parse;
extern const bench_ops bench_omp_pipeline_sps, bench_omp_pipeline_parse;
extern const bench_ops bench_tbb_pipeline_sps, bench_tbb_pipeline_parse;
extern const bench_ops bench_serial_pipeline_sps, bench_serial_pipeline_parse;

#ifdef __cplusplus
}
#endif
#endif
