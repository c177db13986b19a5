/* weft-bench — the weft implementation: one taskflow per benchmark.
 * SPDX-License-Identifier: MIT
 *
 * The executor is created once per thread count (bench_impl.init), outside the
 * timers.  The timed "oneshot" unit is create taskflow + emplace + precede +
 * weft_run_and_wait + destroy, matching what Taskflow's suite times for
 * tf::Taskflow (whose destructor runs inside its timed function).  The _rerun
 * variant builds once and times weft_run_and_wait on the same taskflow.
 */
#include "bench_work.h"

#include <stdio.h>
#include <stdlib.h>

#include <weft.h>

/* ---- environment ------------------------------------------------------------- */

static int weft_env_init(unsigned threads, void **env) {
    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = threads }, &st);
    if (!ex) {
        fprintf(stderr, "weft: weft_executor_create(workers=%u) failed: %s\n", threads, weft_strerror(st));
        return -1;
    }
    if (weft_executor_workers(ex) != threads) {
        fprintf(stderr, "weft: asked for %u workers, got %u\n", threads, weft_executor_workers(ex));
        weft_executor_destroy(ex);
        return -1;
    }
    /* WEFT_BENCH_METRICS=1: counts steals and parks over the whole thread count
     * (every benchmark and rep of this invocation at it), printed at the end,
     * for finding why a case scales as it does.  The counting costs time. */
    const char *m = getenv("WEFT_BENCH_METRICS");
    if (m && *m && *m != '0' && weft_metrics_enable(ex, true) != WEFT_OK)
        fprintf(stderr, "weft: WEFT_BENCH_METRICS: weft_metrics_enable failed\n");
    *env = ex;
    return 0;
}

static void weft_env_fini(void *env) {
    weft_metrics m;
    if (weft_executor_metrics(env, &m, NULL, 0) == WEFT_OK && m.enabled)
        printf("# weft metrics: workers=%u tasks=%llu steals=%llu steal_fails=%llu parks=%llu wakeups=%llu "
               "busy_ms=%.3f idle_ms=%.3f\n",
               m.workers, (unsigned long long)m.total.tasks, (unsigned long long)m.total.steals,
               (unsigned long long)m.total.steal_fails, (unsigned long long)m.total.parks,
               (unsigned long long)m.total.wakeups, (double)m.total.busy_ns / 1e6, (double)m.total.idle_ns / 1e6);
    weft_executor_destroy(env);
}

const bench_impl bench_impl_weft = { "weft", NULL, 0, weft_env_init, weft_env_fini };

/* ---- shared plumbing --------------------------------------------------------- */

/* Reports why building failed and frees the half-built taskflow.  Returns NULL so
 * builders can `return build_failed(tf, "...")`. */
static weft_taskflow *build_failed(weft_taskflow *tf, const char *what) {
    weft_status st = weft_taskflow_last_error(tf);
    fprintf(stderr, "weft: %s failed: %s (%s) %s\n", what, weft_errname(st), weft_strerror(st),
            weft_taskflow_error_message(tf));
    weft_status dst = weft_taskflow_destroy(tf);
    if (dst != WEFT_OK) fprintf(stderr, "weft: weft_taskflow_destroy: %s\n", weft_errname(dst));
    return NULL;
}

static weft_taskflow *new_taskflow(const char *name) {
    weft_status st = WEFT_OK;
    weft_taskflow *tf = weft_taskflow_create(name, &st);
    if (!tf) fprintf(stderr, "weft: weft_taskflow_create: %s\n", weft_strerror(st));
    return tf;
}

typedef weft_taskflow *(*weft_builder)(void *data);

static int weft_run_graph(void *env, void *graph) {
    weft_status st = weft_run_and_wait(env, graph);
    if (st != WEFT_OK) {
        fprintf(stderr, "weft: weft_run_and_wait: %s (%s) %s\n", weft_errname(st), weft_strerror(st),
                weft_taskflow_error_message(graph));
        return -1;
    }
    return 0;
}

static void weft_destroy_graph(void *env, void *graph) {
    (void)env;
    weft_status st = weft_taskflow_destroy(graph);
    if (st != WEFT_OK) fprintf(stderr, "weft: weft_taskflow_destroy: %s\n", weft_errname(st));
}

static int weft_build(void *data, weft_builder builder, void **graph) {
    weft_taskflow *tf = builder(data);
    if (!tf) return -1;
    *graph = tf;
    return 0;
}

static int weft_oneshot(void *env, void *data, weft_builder builder) {
    weft_taskflow *tf = builder(data);
    if (!tf) return -1;
    int rc = weft_run_graph(env, tf);
    weft_status st = weft_taskflow_destroy(tf);
    if (st != WEFT_OK) {
        fprintf(stderr, "weft: weft_taskflow_destroy: %s\n", weft_errname(st));
        rc = -1;
    }
    return rc;
}

/* Defines bench_weft_NAME from a builder `static weft_taskflow *build_NAME(void *)`. */
#define WEFT_BENCH_OPS(name)                                                        \
    static int name##_oneshot(void *env, void *data) {                              \
        return weft_oneshot(env, data, build_##name);                               \
    }                                                                               \
    static int name##_build(void *env, void *data, void **graph) {                  \
        (void)env;                                                                  \
        return weft_build(data, build_##name, graph);                               \
    }                                                                               \
    const bench_ops bench_weft_##name = { name##_oneshot, name##_build, weft_run_graph, \
                                          weft_destroy_graph };

/* ---- linear_chain ------------------------------------------------------------ */

static int chain_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    chain_kernel(arg);
    return 0;
}

/* As Taskflow's benchmarks/linear_chain/taskflow.cpp: every task emplaced into
 * a handle array (part of the timed build, like its std::vector<tf::Task>),
 * then one weft_linearize over the array (its taskflow.linearize(tasks)). */
static weft_taskflow *build_linear_chain(void *data) {
    const chain_data *d = data;
    weft_task *task = malloc(d->n * sizeof *task);
    if (!task) {
        fprintf(stderr, "weft: out of memory for %zu task handles\n", d->n);
        return NULL;
    }
    weft_taskflow *tf = new_taskflow("linear_chain");
    if (!tf) { free(task); return NULL; }
    for (size_t i = 0; i < d->n; ++i) {
        task[i] = weft_emplace(tf, chain_task, chain_cell(d, i));
        if (weft_task_is_null(task[i])) { free(task); return build_failed(tf, "weft_emplace"); }
    }
    if (weft_linearize(task, d->n) != WEFT_OK) {
        free(task);
        return build_failed(tf, "weft_linearize");
    }
    free(task);
    return tf;
}
WEFT_BENCH_OPS(linear_chain)

/* ---- binary_tree ------------------------------------------------------------- */

static int tree_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    tree_kernel(arg);
    return 0;
}

/* Emplaces in heap order and links each node to its parent as it goes; the
 * handle array is part of the timed build, as Taskflow's std::vector<tf::Task>. */
static weft_taskflow *build_binary_tree(void *data) {
    const tree_data *d = data;
    weft_task *task = malloc((d->n + 1) * sizeof *task);
    if (!task) {
        fprintf(stderr, "weft: out of memory for %zu task handles\n", d->n);
        return NULL;
    }
    weft_taskflow *tf = new_taskflow("binary_tree");
    if (!tf) { free(task); return NULL; }
    for (size_t i = 1; i <= d->n; ++i) {
        task[i] = weft_emplace(tf, tree_task, &d->cell[i]);
        if (weft_task_is_null(task[i])) { free(task); return build_failed(tf, "weft_emplace"); }
    }
    for (size_t i = 1; 2 * i + 1 <= d->n; ++i) {
        if (weft_precede_many(task[i], &task[2 * i], 2) != WEFT_OK) {
            free(task);
            return build_failed(tf, "weft_precede_many");
        }
    }
    free(task);
    return tf;
}
WEFT_BENCH_OPS(binary_tree)

/* ---- wavefront --------------------------------------------------------------- */

static int wave_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    wave_kernel(arg);
    return 0;
}

/* As Taskflow's benchmarks/wavefront/taskflow.cpp: an m x m array of
 * placeholders (the handle matrix is part of the timed build, like its
 * vector<vector<tf::Task>>), then from the last cell back to the first each
 * is given its work and precedes its right neighbour, then the cell below. */
static weft_taskflow *build_wavefront(void *data) {
    const wave_data *d = data;
    const size_t m = d->m;
    weft_task *node = malloc(m * m * sizeof *node);
    if (!node) {
        fprintf(stderr, "weft: out of memory for %zu task handles\n", m * m);
        return NULL;
    }
    weft_taskflow *tf = new_taskflow("wavefront");
    if (!tf) { free(node); return NULL; }
    for (size_t k = 0; k < m * m; ++k) {
        node[k] = weft_placeholder(tf);
        if (weft_task_is_null(node[k])) { free(node); return build_failed(tf, "weft_placeholder"); }
    }
    for (size_t i = m; i-- > 0;) {
        for (size_t j = m; j-- > 0;) {
            weft_task t = node[i * m + j];
            if (weft_task_set_work(t, wave_task, wave_at(d, i, j)) != WEFT_OK) {
                free(node);
                return build_failed(tf, "weft_task_set_work");
            }
            if ((j + 1 < m && weft_precede(t, node[i * m + j + 1]) != WEFT_OK) ||
                (i + 1 < m && weft_precede(t, node[(i + 1) * m + j]) != WEFT_OK)) {
                free(node);
                return build_failed(tf, "weft_precede");
            }
        }
    }
    free(node);
    return tf;
}
WEFT_BENCH_OPS(wavefront)

/* ---- graph_traversal --------------------------------------------------------- */

static int trav_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    trav_kernel(arg);
    return 0;
}

/* In the order of Taskflow's benchmarks/graph_traversal/taskflow.cpp: the last
 * level first, then each level from the second-to-last back to the first, each
 * node emplaced and at once made to precede its successors (a level below,
 * already there), in its edge order. */
static weft_taskflow *build_graph_traversal(void *data) {
    const trav_data *d = data;
    weft_task *task = malloc(d->n * sizeof *task);
    if (!task) {
        fprintf(stderr, "weft: out of memory for %zu task handles\n", d->n);
        return NULL;
    }
    weft_taskflow *tf = new_taskflow("graph_traversal");
    if (!tf) { free(task); return NULL; }
    for (size_t first = (d->n - 1) / d->width * d->width;; first -= d->width) {
        size_t last = first + d->width < d->n ? first + d->width : d->n;
        for (size_t i = first; i < last; ++i) {
            task[i] = weft_emplace(tf, trav_task, &d->visited[i]);
            if (weft_task_is_null(task[i])) { free(task); return build_failed(tf, "weft_emplace"); }
            weft_task to[4];        /* out-degree is at most 4 (bench_work.c) */
            size_t k = 0;
            for (uint32_t e = d->succ_off[i]; e < d->succ_off[i + 1]; ++e) to[k++] = task[d->succ[e]];
            if (k && weft_precede_many(task[i], to, k) != WEFT_OK) {
                free(task);
                return build_failed(tf, "weft_precede_many");
            }
        }
        if (first == 0) break;
    }
    free(task);
    return tf;
}
WEFT_BENCH_OPS(graph_traversal)

/* ---- embarrassing_parallelism ------------------------------------------------ */

static int emb_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    emb_kernel(arg);
    return 0;
}

static weft_taskflow *build_embarrassing_parallelism(void *data) {
    const emb_data *d = data;
    weft_taskflow *tf = new_taskflow("embarrassing_parallelism");
    if (!tf) return NULL;
    for (size_t i = 0; i < d->n; ++i) {
        if (weft_task_is_null(weft_emplace(tf, emb_task, &d->out[i])))
            return build_failed(tf, "weft_emplace");
    }
    return tf;
}
WEFT_BENCH_OPS(embarrassing_parallelism)
