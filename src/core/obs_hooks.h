/* Observation hooks: what the core and the layers above it tell an observer
 * (metrics, profiler, user observer), as a table of functions that observe/
 * fills.  Internal.
 *
 * The core does not know observe/: an executor's `obs` pointer is NULL unless
 * something observes, and then points to a state whose first member is a
 * weft__obs_head, whose table says what to call.  Every call site is one line
 * and costs one predictable branch on ex->obs while nothing observes; the
 * counters of the worker's own events (steals, parks) are the core's and are
 * kept whatever the observer (weft__worker_stats). */
#ifndef WEFT_CORE_OBS_HOOKS_H
#define WEFT_CORE_OBS_HOOKS_H

#include "core/executor.h"
#include "core/fj.h"

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

/* What observe/ implements.  node is a graph node, run a graph run (both
 * opaque here); each is called only while ex->obs is non-NULL. */
typedef struct weft__obs_hooks {
    void (*task_begin)(struct weft__obs *o, weft__worker *w, const void *node, const void *run);
    void (*task_end)(struct weft__obs *o, weft__worker *w, const void *node, const void *run, int rc);
    /* task_begin, fn(cx, arg), the sync of the spawns fn left unsynced
     * (weft__fj_sync_left), task_end: a plain graph task's whole call as one
     * hook (graph/graph.h, weft__call_node; graph/sources.c); returns what fn
     * returned, or, when that is 0, the first non-zero value of those spawns
     * (the value the task then fails its run with). */
    int (*task_call)(struct weft__obs *o, weft__worker *w, const void *node, const void *run, weft_task_fn fn,
                     weft_ctx *cx, void *arg);
    /* n tasks (or other work) not run: their run stopped first.  w NULL: reported
     * on a thread that is no worker of the executor. */
    void (*task_skipped)(struct weft__obs *o, weft__worker *w, uint64_t n);
    void (*steal)(struct weft__obs *o, weft__worker *w, int victim);
    void (*park)(struct weft__obs *o, weft__worker *w, bool begin);
    /* The worker ran out of work: closes its batch of short tasks, if one is open. */
    void (*worker_idle)(struct weft__obs *o, weft__worker *w);
    void (*work_begin)(struct weft__obs *o, weft__worker *w, weft__work kind, const void *id, uint32_t index,
                       uint32_t part);
    void (*work_end)(struct weft__obs *o, weft__worker *w, const void *id, int rc);
    /* weft__fj_run_task(w, stop, fn, arg) as work of `kind`. */
    int (*run_fn)(struct weft__obs *o, weft__worker *w, weft__work kind, const _Atomic int *stop, weft_task_fn fn,
                  void *arg);
    /* The part of a graph task that runs before its outcome is known (a GPU
     * task's recording, gpu/task.c): between begin and end, w's busy time and
     * a "GPU recording" span of the task, never a task run (the task is
     * counted, and its begin and end observed, at its outcome). */
    void (*record_begin)(struct weft__obs *o, weft__worker *w, const void *node);
    void (*record_end)(struct weft__obs *o, weft__worker *w, const void *node, const void *run);
} weft__obs_hooks;

/* The first member of the state ex->obs points to: a copy of the table, so a
 * hook costs one load from the state (already in a register) and the call,
 * not a load of the table's address first. */
typedef struct weft__obs_head {
    weft__obs_hooks hooks;
} weft__obs_head;

/* The active observation state of ex, or NULL (the common case).  Acquire:
 * pairs with the release store that publishes a freshly initialised state. */
static inline struct weft__obs *weft__obs_get(const weft_executor *ex) {
    return atomic_load_explicit(&((weft_executor *)ex)->obs, memory_order_acquire);
}

static inline const weft__obs_hooks *weft__obs_hooks_of(struct weft__obs *o) {
    return &((const weft__obs_head *)(const void *)o)->hooks;
}

/* ---- call-site helpers for graph tasks (graph/) ---- */

static inline void weft__hook_task_begin(weft__worker *w, struct weft__obs *o, const void *node, const void *run) {
    if (__builtin_expect(o != NULL, 0)) weft__obs_hooks_of(o)->task_begin(o, w, node, run);
}

static inline void weft__hook_task_end(weft__worker *w, struct weft__obs *o, const void *node, const void *run,
                                       int rc) {
    if (__builtin_expect(o != NULL, 0)) weft__obs_hooks_of(o)->task_end(o, w, node, run, rc);
}

/* Calls fn(cx, arg), the function of plain graph task `node` of run `run`,
 * between the task's begin and end events when something observes.  One test
 * of o around the call, not one before and one after it with o kept across
 * the call: linear_chain_rerun ~9% faster at one worker with nothing on. */
static inline int weft__hook_task_call(weft__worker *w, struct weft__obs *o, const void *node, const void *run,
                                       weft_task_fn fn, weft_ctx *cx, void *arg) {
    if (__builtin_expect(o != NULL, 0)) return weft__obs_hooks_of(o)->task_call(o, w, node, run, fn, cx, arg);
    return fn(cx, arg);
}

/* What a work span names as its id for a function. */
static inline const void *weft__fn_id(weft_task_fn fn) { return (const void *)(uintptr_t)fn; }

/* ---- call-site helpers for the layers' work (async/, fork-join, algo/, pipeline/) ----
 * One predictable branch each while nothing is on. */

/* Runs fn(arg) as a fork-join task (weft__fj_run_task) that is work of `kind`. */
static inline int weft__run_observed(weft__worker *w, weft__work kind, const _Atomic int *stop, weft_task_fn fn,
                                     void *arg) {
    struct weft__obs *o = weft__obs_get(w->ex);
    if (__builtin_expect(o != NULL, 0)) return weft__obs_hooks_of(o)->run_fn(o, w, kind, stop, fn, arg);
    return weft__fj_run_task(w, stop, fn, arg);
}

/* Around other work: begin returns the state to give to end (the same both
 * times, so the two come in pairs). */
static inline struct weft__obs *weft__hook_work_begin(weft__worker *w, weft__work kind, const void *id,
                                                      uint32_t index, uint32_t part) {
    struct weft__obs *o = weft__obs_get(w->ex);
    if (__builtin_expect(o != NULL, 0)) weft__obs_hooks_of(o)->work_begin(o, w, kind, id, index, part);
    return o;
}

static inline void weft__hook_work_end(weft__worker *w, struct weft__obs *o, const void *id, int rc) {
    if (__builtin_expect(o != NULL, 0)) weft__obs_hooks_of(o)->work_end(o, w, id, rc);
}

/* Around a GPU task's recording (record_begin above): begin returns the
 * state to give to end, as weft__hook_work_begin.  One predictable branch
 * each while nothing is on. */
static inline struct weft__obs *weft__hook_record_begin(weft__worker *w, const void *node) {
    struct weft__obs *o = weft__obs_get(w->ex);
    if (__builtin_expect(o != NULL, 0)) weft__obs_hooks_of(o)->record_begin(o, w, node);
    return o;
}

static inline void weft__hook_record_end(weft__worker *w, struct weft__obs *o, const void *node, const void *run) {
    if (__builtin_expect(o != NULL, 0)) weft__obs_hooks_of(o)->record_end(o, w, node, run);
}

/* n tasks (or other work) of ex not run because their run was cancelled or
 * had failed (counted as skipped in the metrics): every count of skipped tasks
 * in a future (weft_run_info.skipped) comes with one of these, so the two
 * agree.  Reported on worker w or, with w NULL, on a thread that is none of
 * ex's workers (weft_sched_remove from another thread reports the task it took
 * out there): observe/ counts those in worker 0's figures. */
static inline void weft__hook_skipped_on(weft_executor *ex, weft__worker *w, uint64_t n) {
    struct weft__obs *o = weft__obs_get(ex);
    if (__builtin_expect(o != NULL, 0)) weft__obs_hooks_of(o)->task_skipped(o, w, n);
}

/* n, or one, skipped on worker w (weft__hook_skipped_on). */
static inline void weft__hook_skipped_n(weft__worker *w, uint64_t n) { weft__hook_skipped_on(w->ex, w, n); }
static inline void weft__hook_skipped(weft__worker *w) { weft__hook_skipped_on(w->ex, w, 1); }

/* ---- call-site helpers for worker.c ---- */

/* A steal attempt on `victim` (-1: the injector) that succeeded or not. */
static inline void weft__hook_steal(weft__worker *w, bool ok, int victim) {
    if (!ok) {
        weft__stat_inc(&w->stats.steal_fails);
        return;
    }
    weft__stat_inc(&w->stats.steals);
    struct weft__obs *o = weft__obs_get(w->ex);
    if (__builtin_expect(o != NULL, 0)) weft__obs_hooks_of(o)->steal(o, w, victim);
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
    if (__builtin_expect(o != NULL, 0)) weft__obs_hooks_of(o)->park(o, w, begin);
}

/* The worker found work (running) or ran out of it (searching again). */
static inline void weft__hook_busy(weft__worker *w, bool running) {
    if (running && w->stats.woke) {
        /* Only a sleep that began since the counters were last reset
         * (weft_metrics_enable zeroes parks and wakeups, also of a worker
         * asleep then): its park is counted, so wakeups never pass parks.
         * Counting every wake-up let a worker asleep at the reset show a
         * wake-up for no park.  Only this worker moves either counter: as many
         * parks as wakeups means the sleep it woke from began before the reset
         * (a park sets woke, a counted wake-up clears it). */
        if (weft__stat_read(&w->stats.parks) > weft__stat_read(&w->stats.wakeups))
            weft__stat_inc(&w->stats.wakeups);
        w->stats.woke = false;
    }
    atomic_store_explicit(&w->stats.state, running ? WEFT__WSTATE_RUNNING : WEFT__WSTATE_SEARCHING,
                          memory_order_relaxed);
    if (running) return;
    struct weft__obs *o = weft__obs_get(w->ex);
    if (__builtin_expect(o != NULL, 0)) weft__obs_hooks_of(o)->worker_idle(o, w);
}

#endif
