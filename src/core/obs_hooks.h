/* The observability hooks that core/ and graph/ call.  Internal.
 *
 * This is the one header below observe/ that names observe/: the call sites stay
 * in the core (a counter, or one predictable branch on ex->obs), all logic lives
 * in src/observe/.  The inline helpers here are what worker.c and run.c call, so
 * each call site is one line. */
#ifndef WEFT_OBSERVE_HOOKS_H
#define WEFT_OBSERVE_HOOKS_H

#include "core/executor.h"
#include "fj/fj.h"

struct weft__obs;

/* The active observability state of ex, or NULL (the common case).  Acquire:
 * pairs with the release store that publishes a freshly initialised state. */
static inline struct weft__obs *weft__obs_get(const weft_executor *ex) {
    return atomic_load_explicit(&((weft_executor *)ex)->obs, memory_order_acquire);
}

/* Out-of-line parts (obs.c).  node is a weft__node, run a weft__run. */
void weft__obs_task_begin(struct weft__obs *o, weft__worker *w, const void *node, const void *run);
void weft__obs_task_end(struct weft__obs *o, weft__worker *w, const void *node, const void *run, int rc);
void weft__obs_task_skipped(struct weft__obs *o, weft__worker *w);
void weft__obs_steal(struct weft__obs *o, weft__worker *w, int victim);
void weft__obs_park(struct weft__obs *o, weft__worker *w, bool begin);
/* The worker ran out of work: closes its batch of short tasks, if one is open. */
void weft__obs_worker_idle(struct weft__obs *o, weft__worker *w);

/* Work other than taskflow tasks, each counted in the metrics and recorded as a
 * span like a task: what `id` and `index`/`part` say for each kind. */
typedef enum weft__work {
    WEFT__WORK_ASYNC = 0,  /* weft_async / weft_dependent_async: id the function */
    WEFT__WORK_SILENT = 1, /* weft_silent_async: id the function */
    WEFT__WORK_ROOT = 2,   /* weft_run_root: id the function */
    WEFT__WORK_STOLEN = 3, /* a fork-join frame run by a thief: id the function */
    WEFT__WORK_CHUNK = 4,  /* a job of a parallel algorithm: id the job function, index t of part n */
    WEFT__WORK_STAGE = 5,  /* a pipeline stage call: id the pipeline, index the stage, part the token */
    WEFT__WORK_KINDS = 6
} weft__work;

void weft__obs_work_begin(struct weft__obs *o, weft__worker *w, weft__work kind, const void *id, uint32_t index,
                          uint32_t part);
void weft__obs_work_end(struct weft__obs *o, weft__worker *w, const void *id, int rc);
/* weft__fj_run_task(w, stop, fn, arg) as work of `kind` (observe is on). */
int weft__obs_run_fn(struct weft__obs *o, weft__worker *w, weft__work kind, const _Atomic int *stop, weft_task_fn fn,
                     void *arg);

/* What a work span names as its id for a function. */
static inline const void *weft__fn_id(weft_task_fn fn) { return (const void *)(uintptr_t)fn; }

/* ---- call-site helpers for the layers' work (async/, fj/, algo/, pipeline/) ----
 * One predictable branch each while nothing is on. */

/* Runs fn(arg) as a fork-join task (weft__fj_run_task) that is work of `kind`. */
static inline int weft__run_observed(weft__worker *w, weft__work kind, const _Atomic int *stop, weft_task_fn fn,
                                     void *arg) {
    struct weft__obs *o = weft__obs_get(w->ex);
    if (__builtin_expect(o != NULL, 0)) return weft__obs_run_fn(o, w, kind, stop, fn, arg);
    return weft__fj_run_task(w, stop, fn, arg);
}

/* Around other work: begin returns the state to give to end (the same both
 * times, so the two come in pairs). */
static inline struct weft__obs *weft__hook_work_begin(weft__worker *w, weft__work kind, const void *id,
                                                      uint32_t index, uint32_t part) {
    struct weft__obs *o = weft__obs_get(w->ex);
    if (__builtin_expect(o != NULL, 0)) weft__obs_work_begin(o, w, kind, id, index, part);
    return o;
}

static inline void weft__hook_work_end(weft__worker *w, struct weft__obs *o, const void *id, int rc) {
    if (__builtin_expect(o != NULL, 0)) weft__obs_work_end(o, w, id, rc);
}

/* Work that was not run because it was cancelled (counted as skipped). */
static inline void weft__hook_skipped(weft__worker *w) {
    struct weft__obs *o = weft__obs_get(w->ex);
    if (__builtin_expect(o != NULL, 0)) weft__obs_task_skipped(o, w);
}

/* Executor lifetime (executor.c): reads WEFT_PROFILE / WEFT_LOG and the config;
 * 0 or WEFT_ENOMEM.  destroy runs after the workers are joined, saves the
 * WEFT_PROFILE file if one was asked for, and frees the state. */
int weft__obs_create(weft_executor *ex, const weft_executor_config *config);
void weft__obs_destroy(weft_executor *ex);

/* ---- call-site helpers for worker.c ---- */

/* A steal attempt on `victim` (-1: the injector) that succeeded or not. */
static inline void weft__hook_steal(weft__worker *w, bool ok, int victim) {
    if (!ok) {
        weft__stat_inc(&w->stats.steal_fails);
        return;
    }
    weft__stat_inc(&w->stats.steals);
    struct weft__obs *o = weft__obs_get(w->ex);
    if (__builtin_expect(o != NULL, 0)) weft__obs_steal(o, w, victim);
}

/* Around weft__sleep_wait: begin = going to sleep, else woken. */
static inline void weft__hook_park(weft__worker *w, bool begin) {
    if (begin) {
        weft__stat_inc(&w->stats.parks);
        w->stats.woke = true;
    }
    atomic_store_explicit(&w->stats.state, begin ? WEFT__WSTATE_PARKED : WEFT__WSTATE_SEARCHING,
                          memory_order_relaxed);
    struct weft__obs *o = weft__obs_get(w->ex);
    if (__builtin_expect(o != NULL, 0)) weft__obs_park(o, w, begin);
}

/* The worker found work (running) or ran out of it (searching again). */
static inline void weft__hook_busy(weft__worker *w, bool running) {
    if (running && w->stats.woke) {
        weft__stat_inc(&w->stats.wakeups);
        w->stats.woke = false;
    }
    atomic_store_explicit(&w->stats.state, running ? WEFT__WSTATE_RUNNING : WEFT__WSTATE_SEARCHING,
                          memory_order_relaxed);
    if (running) return;
    struct weft__obs *o = weft__obs_get(w->ex);
    if (__builtin_expect(o != NULL, 0)) weft__obs_worker_idle(o, w);
}

#endif
