/* The observability hooks that core/ and graph/ call.  Internal.
 *
 * This is the one header below observe/ that names observe/: the call sites stay
 * in the core (a counter, or one predictable branch on ex->obs), all logic lives
 * in src/observe/.  The inline helpers here are what worker.c and run.c call, so
 * each call site is one line. */
#ifndef WEFT_OBSERVE_HOOKS_H
#define WEFT_OBSERVE_HOOKS_H

#include "core/executor.h"

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
