/* weft-bench — the weft pipelines: a token pipeline for pipeline_sps and a data
 * pipeline for pipeline_parse, each run as the one task of a taskflow.
 * SPDX-License-Identifier: MIT
 *
 * The timed oneshot unit is create pipeline + taskflow, run, destroy both; the
 * _rerun variant builds once and times reset + weft_run_and_wait.
 */
#include "pipe_work.h"

#include <stdio.h>
#include <stdlib.h>

#include <weft.h>

typedef struct pipe_graph {
    weft_pipeline *p;
    weft_taskflow *tf;
} pipe_graph;

/* ---- pipeline_sps ---------------------------------------------------------------- */

static int sps_first(weft_pipeflow *pf, void *arg) {
    if (weft_pipeflow_token(pf) == ((sps_data *)arg)->n) weft_pipeflow_stop(pf);
    return 0;
}

static int sps_middle(weft_pipeflow *pf, void *arg) {
    (void)pf;
    (void)arg;
    return 0;
}

static int sps_last(weft_pipeflow *pf, void *arg) {
    sps_sink(arg, weft_pipeflow_token(pf));
    return 0;
}

static weft_pipeline *sps_pipeline(void *data, weft_status *err) {
    weft_stage st[] = { { WEFT_STAGE_SERIAL, sps_first, data, "first" },
                        { WEFT_STAGE_PARALLEL, sps_middle, data, "middle" },
                        { WEFT_STAGE_SERIAL, sps_last, data, "last" } };
    return weft_pipeline_create(PIPE_LINES, st, 3, err);
}

/* pipeline_sps_spread: the same pipeline, always spread (WEFT_PIPELINE_SPREAD):
 * the hand-off path that stages with real work take, measured on empty ones. */
static weft_pipeline *sps_spread_pipeline(void *data, weft_status *err) {
    weft_pipeline *p = sps_pipeline(data, err);
    if (p && (*err = weft_pipeline_set_scheduling(p, WEFT_PIPELINE_SPREAD)) != WEFT_OK) {
        (void)weft_pipeline_destroy(p);
        return NULL;
    }
    return p;
}

/* ---- pipeline_parse --------------------------------------------------------------- */

static int parse_first(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)in;
    const parse_data *d = arg;
    uint64_t t = weft_pipeflow_token(pf);
    if (t == d->n) return weft_pipeflow_stop(pf), 0;
    *(parse_line *)out = parse_get(d, (size_t)t);
    return 0;
}

static int parse_middle(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)pf;
    (void)arg;
    *(uint64_t *)out = parse_kernel(*(parse_line *)in);
    return 0;
}

static int parse_last(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)pf;
    (void)out;
    parse_data *d = arg;
    d->hash = parse_fold(d->hash, *(uint64_t *)in);
    return 0;
}

static weft_pipeline *parse_pipeline(void *data, weft_status *err) {
    weft_data_stage st[] = {
        { WEFT_STAGE_SERIAL, parse_first, data, "read", .WEFT_DATA_OUT(parse_line) },
        { WEFT_STAGE_PARALLEL, parse_middle, data, "parse", .WEFT_DATA_IN(parse_line), .WEFT_DATA_OUT(uint64_t) },
        { WEFT_STAGE_SERIAL, parse_last, data, "fold", .WEFT_DATA_IN(uint64_t) },
    };
    return weft_data_pipeline_create(PIPE_LINES, st, 3, err);
}

/* ---- shared plumbing --------------------------------------------------------------- */

typedef weft_pipeline *(*pipe_maker)(void *data, weft_status *err);

static void pipe_destroy(void *env, void *graph) {
    (void)env;
    pipe_graph *g = graph;
    if (weft_taskflow_destroy(g->tf) != WEFT_OK || weft_pipeline_destroy(g->p) != WEFT_OK)
        fprintf(stderr, "weft: pipeline teardown failed\n");
    free(g);
}

static int pipe_build(pipe_maker make, void *data, void **graph) {
    weft_status st = WEFT_OK;
    pipe_graph *g = calloc(1, sizeof *g);
    if (!g) return -1;
    g->p = make(data, &st);
    if (g->p) g->tf = weft_taskflow_create("pipeline", &st);
    if (!g->p || !g->tf || weft_task_is_null(weft_pipeline_emplace(g->tf, g->p))) {
        fprintf(stderr, "weft: building the pipeline failed: %s %s\n", weft_strerror(st), weft_pipeline_error_message());
        if (g->tf) (void)weft_taskflow_destroy(g->tf);
        (void)weft_pipeline_destroy(g->p);
        free(g);
        return -1;
    }
    *graph = g;
    return 0;
}

static int pipe_run(void *env, void *graph) {
    pipe_graph *g = graph;
    weft_status st = weft_pipeline_reset(g->p);
    if (st == WEFT_OK) st = weft_run_and_wait(env, g->tf);
    if (st != WEFT_OK) fprintf(stderr, "weft: pipeline run: %s\n", weft_strerror(st));
    return st == WEFT_OK ? 0 : -1;
}

static int pipe_oneshot(pipe_maker make, void *env, void *data) {
    void *g;
    if (pipe_build(make, data, &g) != 0) return -1;
    int rc = pipe_run(env, g);
    pipe_destroy(env, g);
    return rc;
}

#define PIPE_OPS(name, maker)                                                                  \
    static int name##_oneshot(void *env, void *data) { return pipe_oneshot(maker, env, data); } \
    static int name##_build(void *env, void *data, void **graph) {                            \
        (void)env;                                                                             \
        return pipe_build(maker, data, graph);                                                 \
    }                                                                                          \
    const bench_ops bench_weft_##name = { name##_oneshot, name##_build, pipe_run, pipe_destroy };

PIPE_OPS(pipeline_sps, sps_pipeline)
PIPE_OPS(pipeline_sps_spread, sps_spread_pipeline)
PIPE_OPS(pipeline_parse, parse_pipeline)
