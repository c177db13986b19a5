/* Control-flow internals: the records behind subflow, module and shared-work
 * tasks (a node's `ext`), and the kind-specific job functions.  Internal. */
#ifndef WEFT_GRAPH_FLOW_H
#define WEFT_GRAPH_FLOW_H

#include "graph/graph.h"
#include "weft/flow.h"

/* A subflow task's record; also the weft_subflow handle its function receives.
 * Kept with its graph and nested run across executions, and pooled per taskflow
 * when its task is cleared, so nested subflows rebuilt every run reuse memory. */
struct weft__subflow {
    weft_subflow_fn fn;
    void *arg;
    weft_taskflow *graph;
    weft__run *run; /* the nested run of `graph` (cache-line aligned) */
    struct weft__subflow *next_free;
    bool detached;
    bool joined; /* weft_subflow_join ran the graph already */
    /* weft_subflow_join is running the graph now: a call from one of its
     * tasks is refused (set before the graph's first task is pushed, cleared
     * after its last has finished, so those tasks read it race-free). */
    bool joining;
    /* Set while the function runs, for weft_subflow_join. */
    weft__worker *w;
    weft__run *parent;
    weft__node *node;
};

struct weft__module {
    weft_taskflow *body;
    weft__run *run;
};

struct weft_work {
    _Atomic size_t refs;
    weft_task_fn fn;
    void *state;
    void (*drop)(void *state);
    /* A job function of its own for one task made from this work, `home`
     * (weft__task_set_own_job), or NULL.  Copies of that task (compositions)
     * are other nodes: they run fn as plain tasks do. */
    weft__job_fn own_job;
    const weft__node *home;
};

/* Gives task t, made by weft_emplace_work, a job function of its own: a layer
 * above the graph whose task's job does more than call fn (the GPU layer's
 * records the work and parks the task on the device's completion).  It is
 * what the task runs whenever nothing wraps it, and what it gets back when a
 * wrapper goes (the end of a run with a priority, a priority set back,
 * semaphores removed); a semaphore's wrapper runs fn instead, to its end on
 * the worker, as the units must be held until the work is done.  t must be
 * the fresh task (work.c). */
void weft__task_set_own_job(weft_task t, weft__job_fn job);

/* Plain task n's own job function (above), or NULL. */
static inline weft__job_fn weft__own_job(const weft__node *n) {
    const weft__node_cold *c = weft__cold(n);
    const struct weft_work *w = c->kind == WEFT__KIND_STATIC ? c->ext : NULL;
    return w && w->home == n ? w->own_job : NULL;
}

/* Job functions of the kinds other than plain tasks. */
weft__job *weft__cond_run(weft__worker *w, weft__job *job);
weft__job *weft__mcond_run(weft__worker *w, weft__job *job);
weft__job *weft__subflow_run(weft__worker *w, weft__job *job);
weft__job *weft__module_run(weft__worker *w, weft__job *job);

/* Allocates / frees a zeroed nested-run record. */
weft__run *weft__nested_run_alloc(void);
void weft__nested_run_free(weft__run *r);

/* Adds a node of `kind` with job function `run` (fn/arg as stored in the node)
 * and per-kind record `ext` (NULL: none), written with the kind through one
 * look-up of the node's cold part.  Errors as weft_emplace. */
weft_task weft__add_kind(weft_taskflow *tf, uint8_t kind, weft__job_fn run, weft_task_fn fn, void *arg, void *ext);

/* Fills the fields of a nested run of `graph` for node n of run r. */
void weft__nested_init(weft__run *sub, weft__run *r, weft__node *n, weft_taskflow *graph, uint8_t role);

/* Starts the nested run `sub` of `graph` for node n of run r; returns the job to
 * run next in place of n's continuation, having resumed or failed n as needed. */
weft__job *weft__enter_nested(weft__worker *w, weft__run *r, weft__node *n, weft__run *sub,
                              weft_taskflow *graph, uint8_t role);

/* A module's or subflow's task of run r started and failed before `graph`
 * could run: its tasks count as skipped in r's future and in the metrics
 * (core.h, weft_run_info.skipped: a started module or subflow task counts as
 * the tasks of its graph that were not run), as when the graph's run starts
 * stopped (run.c, run_start). */
void weft__count_unrun(weft__worker *w, weft__run *r, const weft_taskflow *graph);

/* Module and subflow record lifetimes (free the record and what it owns).
 * weft__module_release also takes m's body off the bodies of tf, m's
 * taskflow. */
void weft__module_release(weft_taskflow *tf, struct weft__module *m);
void weft__subflow_free(struct weft__subflow *s);

#endif
