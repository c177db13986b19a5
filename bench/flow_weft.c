/* weft-bench — weft control-flow benchmarks: a condition loop (three tasks per
 * iteration: A -> B -> C, C a condition task with a weak edge back to A) and a
 * subflow task spawning n children that join it.
 * SPDX-License-Identifier: MIT
 */
#include "bench_work.h"

#include <stdio.h>

#include <weft.h>

static int run_graph(void *env, void *graph) {
    weft_status st = weft_run_and_wait(env, graph);
    if (st != WEFT_OK) fprintf(stderr, "weft: run: %s %s\n", weft_errname(st), weft_taskflow_error_message(graph));
    return st == WEFT_OK ? 0 : -1;
}

static void destroy_graph(void *env, void *graph) {
    (void)env;
    if (weft_taskflow_destroy(graph) != WEFT_OK) fprintf(stderr, "weft: destroy failed\n");
}

static int failed(weft_taskflow *tf, const char *what) {
    fprintf(stderr, "weft: %s: %s\n", what, weft_taskflow_error_message(tf));
    (void)weft_taskflow_destroy(tf);
    return -1;
}

/* ---- cond_loop ---------------------------------------------------------------- */

static int loop_a(weft_ctx *ctx, void *arg) {
    (void)ctx;
    cond_loop_a(arg);
    return 0;
}
static int loop_b(weft_ctx *ctx, void *arg) {
    (void)ctx;
    cond_loop_b(arg);
    return 0;
}
static int loop_c(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return cond_loop_c(arg);
}

static int cond_loop_build(void *env, void *data, void **graph) {
    (void)env;
    weft_taskflow *tf = weft_taskflow_create("cond_loop", NULL);
    if (!tf) return -1;
    weft_task init = weft_placeholder(tf), a = weft_emplace(tf, loop_a, data), b = weft_emplace(tf, loop_b, data);
    weft_task c = weft_emplace_condition(tf, loop_c, data);
    if (weft_precede(init, a) || weft_precede(a, b) || weft_precede(b, c) || weft_precede(c, a))
        return failed(tf, "building cond_loop");
    *graph = tf;
    return 0;
}

static int cond_loop_oneshot(void *env, void *data) {
    void *g;
    if (cond_loop_build(env, data, &g)) return -1;
    int rc = run_graph(env, g);
    destroy_graph(env, g);
    return rc;
}
const bench_ops bench_weft_cond_loop = { cond_loop_oneshot, cond_loop_build, run_graph, destroy_graph };

/* ---- subflow_spawn ------------------------------------------------------------ */

static int child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    spawn_kernel(arg);
    return 0;
}

static int spawn(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    const spawn_data *d = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (size_t i = 0; i < d->n; i++)
        if (weft_task_is_null(weft_emplace(g, child, &d->hit[i]))) return 1;
    return 0;
}

static int spawn_build(void *env, void *data, void **graph) {
    (void)env;
    weft_taskflow *tf = weft_taskflow_create("subflow_spawn", NULL);
    if (!tf) return -1;
    if (weft_task_is_null(weft_emplace_subflow(tf, spawn, data))) return failed(tf, "building subflow_spawn");
    *graph = tf;
    return 0;
}

static int spawn_oneshot(void *env, void *data) {
    void *g;
    if (spawn_build(env, data, &g)) return -1;
    int rc = run_graph(env, g);
    destroy_graph(env, g);
    return rc;
}
const bench_ops bench_weft_subflow_spawn = { spawn_oneshot, spawn_build, run_graph, destroy_graph };
