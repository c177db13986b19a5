/* weft-bench — black_scholes and linear_pipeline on weft, written as a weft user
 * would port Taskflow's benchmarks/<name>/taskflow.cpp:
 *  - black_scholes: a taskflow of a placeholder, a loop task over the options
 *    (weft_emplace_for, WEFT_PARTITION_STATIC for tf::StaticPartitioner) and a
 *    condition task that sends the run back to the loop until it has run
 *    NUM_RUNS times; one weft_run_and_wait;
 *  - linear_pipeline: a token pipeline of 8 lines and 8 serial stages
 *    (weft_pipeline_create, the default scheduling), the first stage stopping
 *    on its (size+1)-th call, run as the one task of a taskflow.
 * Taskflows and pipelines are made and destroyed inside the timer, as
 * Taskflow's; the executor comes from bench_weft.c (outside the timer).
 * SPDX-License-Identifier: MIT */
#include "tfsuite2_work.h"

#include <stdio.h>

#include <weft.h>

static int report(const char *what, weft_status st) {
    if (st != WEFT_OK) fprintf(stderr, "weft: %s: %s\n", what, weft_errname(st));
    return st ? -1 : 0;
}

/* ---- black_scholes: placeholder -> loop <-> condition ---------------------------- */

struct bs_loop {
    bs_data *d;
    int i; /* runs done (the condition's `i`) */
};

static void bs_body(size_t lo, size_t hi, void *arg) {
    const bs_data *d = arg;
    for (size_t i = lo; i < hi; i++) bs_option(d, (int)i);
}

/* Successor 0 is the loop; 1 (no such successor) ends the run. */
static int bs_cond(weft_ctx *cx, void *arg) {
    struct bs_loop *l = arg;
    (void)cx;
    return ++l->i == l->d->runs ? 1 : 0;
}

static int weft_black_scholes(void *env, void *data) {
    bs_data *d = data;
    struct bs_loop l = {d, 0};
    weft_for_desc loop = {0, (size_t)d->n, 1, bs_body, d, {.partitioner = WEFT_PARTITION_STATIC}};
    weft_status st = WEFT_OK;
    weft_taskflow *tf = weft_taskflow_create("black_scholes", &st);
    if (!tf) return report("weft_taskflow_create", st);
    weft_task init = weft_placeholder(tf), body = weft_emplace_for(tf, &loop),
              cond = weft_emplace_condition(tf, bs_cond, &l);
    if (weft_task_is_null(init) || weft_task_is_null(body) || weft_task_is_null(cond)) {
        st = weft_taskflow_last_error(tf);
    } else if ((st = weft_precede(init, body)) == WEFT_OK && (st = weft_precede(body, cond)) == WEFT_OK) {
        st = weft_precede(cond, body);
    }
    if (st == WEFT_OK) st = weft_run_and_wait(env, tf);
    weft_status dst = weft_taskflow_destroy(tf);
    return report("black_scholes", st != WEFT_OK ? st : dst);
}
const bench_ops bench_weft_black_scholes = {weft_black_scholes, NULL, NULL, NULL};

/* ---- linear_pipeline: 8 lines, 8 serial stages ----------------------------------- */

static int lp_first(weft_pipeflow *pf, void *arg) {
    size_t t;
    if (lp_input(arg, &t)) weft_pipeflow_stop(pf);
    return 0;
}

#define LP_STAGE(k)                                                              \
    static int lp_stage##k(weft_pipeflow *pf, void *arg) {                       \
        lp_filter(arg, k, (size_t)weft_pipeflow_token(pf));                      \
        return 0;                                                                \
    }
LP_STAGE(1)
LP_STAGE(2)
LP_STAGE(3)
LP_STAGE(4)
LP_STAGE(5)
LP_STAGE(6)
LP_STAGE(7)

static int weft_linear_pipeline(void *env, void *data) {
    weft_stage_fn fns[LP_PIPES] = {lp_first, lp_stage1, lp_stage2, lp_stage3,
                                   lp_stage4, lp_stage5, lp_stage6, lp_stage7};
    weft_stage stages[LP_PIPES];
    for (int s = 0; s < LP_PIPES; s++) stages[s] = (weft_stage){WEFT_STAGE_SERIAL, fns[s], data, NULL};
    weft_status st = WEFT_OK;
    weft_pipeline *p = weft_pipeline_create(LP_LINES, stages, LP_PIPES, &st);
    if (!p) return report("weft_pipeline_create", st);
    weft_taskflow *tf = weft_taskflow_create("linear_pipeline", &st);
    if (tf) {
        if (weft_task_is_null(weft_pipeline_emplace(tf, p))) st = weft_taskflow_last_error(tf);
        else st = weft_run_and_wait(env, tf);
        weft_status dst = weft_taskflow_destroy(tf);
        if (st == WEFT_OK) st = dst;
    }
    weft_status pst = weft_pipeline_destroy(p);
    return report("linear_pipeline", st != WEFT_OK ? st : pst);
}
const bench_ops bench_weft_linear_pipeline = {weft_linear_pipeline, NULL, NULL, NULL};
