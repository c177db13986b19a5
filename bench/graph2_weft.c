/* weft-bench — issue 25: parallel run_n against N copies, and semaphore cost.
 * SPDX-License-Identifier: MIT
 *
 * run_n_parallel_N / run_n_copies_N (N = 1, 2, 64 instances by default): the
 * 1000-node random level DAG of graph_traversal, run N times at once.
 *   parallel: one taskflow, weft_run_n_parallel(N); a task finds its
 *             instance's counter through weft_ctx_iteration.
 *   copies:   N taskflows, each built over its own counters, submitted
 *             together with weft_run_many_and_wait.
 * size = N * 1000 tasks; NAME times build + run + destroy (one graph against
 * N), NAME_rerun the run of graphs built beforehand.
 *
 * sem_free / sem_uncontended / sem_k1: n independent tasks, each incrementing
 * its own counter; without a semaphore, each acquiring and releasing one that
 * never runs out (max = 2^30), and each holding one of max 1 (every task
 * parked behind the one running, on every thread count above 1).  The
 * difference per task to sem_free is what a semaphore costs.
 */
#include "graph2_work.h"

#include <stdio.h>
#include <stdlib.h>

#include <weft.h>

#define INST_TASKS 1000 /* nodes of the DAG every instance runs */

/* ---- the data: N instances' visit counters over one DAG ---------------------- */

typedef struct inst_data {
    trav_data *g;       /* the DAG (graph_traversal's generator, INST_TASKS nodes) */
    size_t ninst;
    uint32_t *visited;  /* ninst * INST_TASKS, instance-major */
} inst_data;

static size_t inst_shape(size_t req) {
    size_t n = (req + INST_TASKS / 2) / INST_TASKS;
    return (n ? n : 1) * INST_TASKS;
}

static void inst_destroy(void *data) {
    inst_data *d = data;
    if (!d) return;
    bench_work_graph_traversal.destroy(d->g);
    free(d->visited);
    free(d);
}

static void *inst_create(size_t tasks) {
    inst_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->ninst = tasks / INST_TASKS;
    d->g = bench_work_graph_traversal.create(INST_TASKS);
    d->visited = calloc(tasks, sizeof *d->visited);
    if (d->g && d->visited) return d;
    inst_destroy(d);
    return NULL;
}

static void inst_reset(void *data) {
    inst_data *d = data;
    for (size_t i = 0; i < d->ninst * INST_TASKS; i++) d->visited[i] = 0;
}

/* Every node of every instance ran exactly once. */
static int counters_verify(const uint32_t *v, size_t n, char *msg, size_t len) {
    for (size_t i = 0; i < n; i++)
        if (v[i] != 1) {
            snprintf(msg, len, "counter %zu is %u, want 1", i, v[i]);
            return -1;
        }
    return 0;
}

static int inst_verify(const void *data, char *msg, size_t len) {
    const inst_data *d = data;
    return counters_verify(d->visited, d->ninst * INST_TASKS, msg, len);
}

const bench_work bench_work_instances = { inst_shape, inst_create, inst_reset, inst_verify, inst_destroy };

/* ---- shared plumbing ---------------------------------------------------------- */

static int report(const char *what, weft_status st) {
    if (st == WEFT_OK) return 0;
    fprintf(stderr, "weft: %s: %s (%s) %s\n", what, weft_errname(st), weft_strerror(st), weft_last_error_message());
    return -1;
}

static int visit(weft_ctx *cx, void *arg) {
    (void)cx;
    trav_kernel(arg);
    return 0;
}

/* Instance i's counter of the node whose instance-0 counter is arg. */
static int visit_instance(weft_ctx *cx, void *arg) {
    trav_kernel((uint32_t *)arg + weft_ctx_iteration(cx) * INST_TASKS);
    return 0;
}

/* The DAG over counters base[0 .. INST_TASKS-1], each task fn(&base[i]). */
static weft_taskflow *build_dag(const trav_data *g, uint32_t *base, weft_task_fn fn) {
    weft_taskflow *tf = weft_taskflow_create("dag", NULL);
    weft_task task[INST_TASKS];
    for (size_t i = 0; tf && i < INST_TASKS; i++)
        if (weft_task_is_null(task[i] = weft_emplace(tf, fn, &base[i]))) goto fail;
    for (size_t i = 0; tf && i < INST_TASKS; i++) {
        weft_task to[4]; /* out-degree at most 4 (bench_work.c) */
        size_t k = 0;
        for (uint32_t e = g->succ_off[i]; e < g->succ_off[i + 1]; e++) to[k++] = task[g->succ[e]];
        if (weft_precede_many(task[i], to, k) != WEFT_OK) goto fail;
    }
    if (tf) return tf;
fail:
    if (tf) (void)report("building the DAG", weft_taskflow_last_error(tf));
    (void)weft_taskflow_destroy(tf);
    return NULL;
}

/* ---- parallel: one graph, N instances ------------------------------------------ */

typedef struct one_graph {
    weft_taskflow *tf;
    size_t ninst;
} one_graph;

static int par_build(void *env, void *data, void **graph) {
    (void)env;
    inst_data *d = data;
    one_graph *o = malloc(sizeof *o);
    if (!o || !(o->tf = build_dag(d->g, d->visited, visit_instance))) {
        free(o);
        return -1;
    }
    o->ninst = d->ninst;
    *graph = o;
    return 0;
}

static int par_run(void *env, void *graph) {
    one_graph *o = graph;
    weft_future *f;
    weft_status st = weft_run_n_parallel(env, o->tf, o->ninst, &f);
    if (st != WEFT_OK) return report("weft_run_n_parallel", st);
    st = weft_future_wait(f);
    weft_future_destroy(f);
    return report("weft_run_n_parallel's run", st);
}

static void par_destroy(void *env, void *graph) {
    (void)env;
    one_graph *o = graph;
    (void)report("weft_taskflow_destroy", weft_taskflow_destroy(o->tf));
    free(o);
}

/* Build + run + destroy, from any of the three above. */
#define ONESHOT(prefix)                                                    \
    static int prefix##_oneshot(void *env, void *data) {                   \
        void *graph;                                                       \
        if (prefix##_build(env, data, &graph) != 0) return -1;             \
        int rc = prefix##_run(env, graph);                                 \
        prefix##_destroy(env, graph);                                      \
        return rc;                                                         \
    }

ONESHOT(par)
const bench_ops bench_weft_run_n_parallel = { par_oneshot, par_build, par_run, par_destroy };

/* ---- copies: N graphs run at once ---------------------------------------------- */

typedef struct copies {
    size_t n;
    weft_taskflow *tf[]; /* n */
} copies;

static void copies_destroy(void *env, void *graph) {
    (void)env;
    copies *c = graph;
    for (size_t i = 0; i < c->n; i++) (void)report("weft_taskflow_destroy", weft_taskflow_destroy(c->tf[i]));
    free(c);
}

static int copies_build(void *env, void *data, void **graph) {
    inst_data *d = data;
    copies *c = calloc(1, sizeof *c + d->ninst * sizeof c->tf[0]);
    if (!c) return -1;
    for (; c->n < d->ninst; c->n++)
        if (!(c->tf[c->n] = build_dag(d->g, d->visited + c->n * INST_TASKS, visit))) {
            copies_destroy(env, c);
            return -1;
        }
    *graph = c;
    return 0;
}

static int copies_run(void *env, void *graph) {
    copies *c = graph;
    return report("weft_run_many_and_wait", weft_run_many_and_wait(env, c->tf, c->n, NULL));
}

ONESHOT(copies)
const bench_ops bench_weft_run_n_copies = { copies_oneshot, copies_build, copies_run, copies_destroy };

/* ---- semaphores: n independent tasks, with and without one ---------------------- */

typedef struct sem_data {
    size_t n;
    uint32_t *count;
} sem_data;

static size_t sem_shape(size_t req) { return req ? req : 1; }

static void sem_destroy_data(void *data) {
    sem_data *d = data;
    if (d) free(d->count);
    free(d);
}

static void *sem_create(size_t n) {
    sem_data *d = calloc(1, sizeof *d);
    if (d && (d->count = calloc(n, sizeof *d->count))) {
        d->n = n;
        return d;
    }
    sem_destroy_data(d);
    return NULL;
}

static void sem_reset(void *data) {
    sem_data *d = data;
    for (size_t i = 0; i < d->n; i++) d->count[i] = 0;
}

static int sem_verify(const void *data, char *msg, size_t len) {
    const sem_data *d = data;
    return counters_verify(d->count, d->n, msg, len);
}

const bench_work bench_work_sem = { sem_shape, sem_create, sem_reset, sem_verify, sem_destroy_data };

typedef struct sem_graph {
    weft_taskflow *tf;
    weft_semaphore *s; /* NULL: no semaphore */
} sem_graph;

static void sem_graph_destroy(void *env, void *graph) {
    (void)env;
    sem_graph *g = graph;
    (void)report("weft_taskflow_destroy", weft_taskflow_destroy(g->tf));
    (void)report("weft_semaphore_destroy", weft_semaphore_destroy(g->s));
    free(g);
}

/* max 0: no semaphore. */
static int sem_graph_build(void *data, size_t max, void **graph) {
    sem_data *d = data;
    sem_graph *g = calloc(1, sizeof *g);
    weft_status st = WEFT_ENOMEM;
    if (!g || !(g->tf = weft_taskflow_create("sem", &st))) goto fail;
    if (max && !(g->s = weft_semaphore_create(max, &st))) goto fail;
    for (size_t i = 0; i < d->n; i++) {
        weft_task t = weft_emplace(g->tf, visit, &d->count[i]);
        st = weft_task_is_null(t) ? weft_taskflow_last_error(g->tf) : WEFT_OK;
        if (st == WEFT_OK && g->s) st = weft_task_acquire(t, g->s);
        if (st == WEFT_OK && g->s) st = weft_task_release(t, g->s);
        if (st != WEFT_OK) goto fail;
    }
    *graph = g;
    return 0;
fail:
    (void)report("building the semaphore graph", st);
    if (g && g->tf) sem_graph_destroy(NULL, g);
    else free(g);
    return -1;
}

static int sem_run(void *env, void *graph) {
    sem_graph *g = graph;
    return report("weft_run_and_wait", weft_run_and_wait(env, g->tf));
}

#define SEM_OPS(name, max)                                                                   \
    static int name##_build(void *env, void *data, void **graph) {                           \
        (void)env;                                                                           \
        return sem_graph_build(data, max, graph);                                            \
    }                                                                                        \
    static int name##_run(void *env, void *graph) { return sem_run(env, graph); }            \
    static void name##_destroy(void *env, void *graph) { sem_graph_destroy(env, graph); }   \
    ONESHOT(name)                                                                            \
    const bench_ops bench_weft_##name = { name##_oneshot, name##_build, name##_run, name##_destroy };

SEM_OPS(sem_free, 0)
SEM_OPS(sem_uncontended, (size_t)1 << 30)
SEM_OPS(sem_k1, 1)
