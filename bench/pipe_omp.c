/* weft-bench — an OpenMP rendering of the pipeline benchmarks.
 * SPDX-License-Identifier: MIT
 *
 * OpenMP has no pipeline construct; the usual way to write one is tasks with
 * depend clauses, created by one thread (omp single).  Each token is three tasks,
 * one per stage:
 *   stage 0  depend(inout: turn[0]), depend(inout: line slot)   serial, in order
 *   stage 1  depend(inout: line slot)                            parallel
 *   stage 2  depend(inout: turn[2]), depend(inout: line slot)    serial, in order
 * The line slot (token % PIPE_LINES) chains a token's stages and makes token
 * t + PIPE_LINES wait for token t to leave stage 2: PIPE_LINES tokens in flight,
 * as for weft and oneTBB.  The stream length is known up front, so the creating
 * loop plays the part of the first stage's stop.  Compiled with -fopenmp.
 */
#include "pipe_work.h"

#include <omp.h>

static int omp_pipeline_sps(void *env, void *data) {
    (void)env;
    sps_data *d = data;
    char turn[3], line[PIPE_LINES]; /* only named in depend clauses */
    (void)turn;
    (void)line;
    uint64_t slot[PIPE_LINES];
    #pragma omp parallel
    #pragma omp single
    for (uint64_t t = 0; t < d->n; ++t) {
        size_t l = (size_t)(t % PIPE_LINES);
        #pragma omp task firstprivate(t, l) depend(inout: turn[0], line[l]) shared(slot)
        slot[l] = t;
        #pragma omp task firstprivate(l) depend(inout: line[l]) shared(slot)
        slot[l] += 0;
        #pragma omp task firstprivate(l) depend(inout: turn[2], line[l]) shared(slot)
        sps_sink(d, slot[l]);
    }
    return 0;
}

static int omp_pipeline_parse(void *env, void *data) {
    (void)env;
    parse_data *d = data;
    char turn[3], line[PIPE_LINES]; /* only named in depend clauses */
    (void)turn;
    (void)line;
    parse_line text[PIPE_LINES];
    uint64_t value[PIPE_LINES];
    #pragma omp parallel
    #pragma omp single
    for (size_t t = 0; t < d->n; ++t) {
        size_t l = t % PIPE_LINES;
        #pragma omp task firstprivate(t, l) depend(inout: turn[0], line[l]) shared(text)
        text[l] = parse_get(d, t);
        #pragma omp task firstprivate(l) depend(inout: line[l]) shared(text, value)
        value[l] = parse_kernel(text[l]);
        #pragma omp task firstprivate(l) depend(inout: turn[2], line[l]) shared(value)
        d->hash = parse_fold(d->hash, value[l]);
    }
    return 0;
}

const bench_ops bench_omp_pipeline_sps = { omp_pipeline_sps, NULL, NULL, NULL };
const bench_ops bench_omp_pipeline_parse = { omp_pipeline_parse, NULL, NULL, NULL };
