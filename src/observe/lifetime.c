/* Observation state of an executor: allocated on first use or at create,
 * published while something is on, saved to WEFT_PROFILE at destroy or exit, and
 * the observe layer that an executor is built with (core/layer.h). */
#include "core/error_detail.h"
#include "observe/obs.h"
#include "observe/live.h"
#include "core/env.h"
#include "core/log.h"
#include "core/alloc.h"
#include "core/future.h"
#include "graph/graph.h"

#include <string.h>
#include "core/layer.h"

struct weft__obs *weft__obs_state(weft_executor *ex) {
    struct weft__obs *cur = weft__obs_state_get(ex);
    if (cur) return cur;
    struct weft__obs *o = weft__calloc(sizeof *o);
    if (!o) return NULL;
    o->w_bytes = sizeof(weft__obs_worker) * ex->nworkers;
    o->w = weft__calloc_aligned(o->w_bytes, WEFT__CACHE_LINE);
    if (!o->w) {
        weft__free(o, sizeof *o);
        return NULL;
    }
    o->head.hooks = weft__obs_hook_table;
    o->ex = ex;
    o->nworkers = ex->nworkers;
    o->max_spans = WEFT__DEFAULT_MAX_SPANS;
    o->ns_per_tick = weft__ns_per_tick();
    o->ns_mul = (uint64_t)(o->ns_per_tick * (double)(1u << 20) + 0.5);
    for (unsigned i = 0; i < o->nworkers; i++) o->w[i].mark_job = WEFT__OBS_NO_MARK;
    o->batch_max = (uint64_t)(WEFT__BATCH_MAX_NS / o->ns_per_tick);
    o->batch_long = (uint64_t)(WEFT__BATCH_LONG_NS / o->ns_per_tick);
    static _Atomic unsigned seq;
    o->seq = atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed) + 1;
    /* Release: a reader's acquire (weft__obs_state_get) sees the state
     * initialised.  Two first calls at once (weft_metrics_enable on two
     * threads) make one state: the loser frees its own. */
    if (!__atomic_compare_exchange_n(&ex->obs_state, &cur, o, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        weft__free_aligned(o->w, o->w_bytes, WEFT__CACHE_LINE);
        weft__free(o, sizeof *o);
        return cur;
    }
    return o;
}

void weft__obs_publish(struct weft__obs *o) {
    bool on = o->has_observer || atomic_load_explicit(&o->metrics_on, memory_order_relaxed) ||
              atomic_load_explicit(&o->profile_on, memory_order_relaxed);
    /* Release: a worker that sees the pointer (acquire in weft__obs_get) sees the
     * state initialised and the flags set above. */
    atomic_store_explicit(&o->ex->obs, on ? o : NULL, memory_order_release);
}

void weft__obs_nth_path(char *out, size_t cap, const char *base, unsigned k) {
    const char *dot = strrchr(base, '.');
    if (k == 0 || !dot || strchr(dot, '/'))
        snprintf(out, cap, k ? "%s.%u" : "%s", base, k);
    else
        snprintf(out, cap, "%.*s.%u%s", (int)(dot - base), base, k, dot);
}

void weft__obs_names_at_load(weft__obs_names *n, const char *var) {
    const char *v = weft__getenv(var);
    if (v && *v) atomic_store_explicit(&n->owner, weft__process_id(), memory_order_relaxed);
}

void weft__obs_names_claim(weft__obs_names *n) {
    unsigned none = 0;
    atomic_compare_exchange_strong_explicit(&n->owner, &none, weft__process_id(), memory_order_relaxed,
                                            memory_order_relaxed);
}

unsigned weft__obs_names_next(weft__obs_names *n) {
    uint64_t me = weft__process_id(), v = atomic_load_explicit(&n->count, memory_order_relaxed), next;
    unsigned k;
    do {
        k = (v >> 32) == me ? (unsigned)v : 0; /* a count copied from the parent starts again */
        next = me << 32 | (k + 1u);
    } while (!atomic_compare_exchange_weak_explicit(&n->count, &v, next, memory_order_relaxed, memory_order_relaxed));
    return k;
}

void weft__obs_names_path(const weft__obs_names *n, char *out, size_t cap, const char *base, unsigned k) {
    unsigned me = weft__process_id();
    char mine[4096];
    if (atomic_load_explicit(&((weft__obs_names *)n)->owner, memory_order_relaxed) != me) {
        weft__obs_nth_path(mine, sizeof mine, base, me);
        base = mine;
    }
    weft__obs_nth_path(out, cap, base, k);
}

/* WEFT_PROFILE's files (weft__obs_names: the owner is the process that loaded
 * weft with it set, else the first to create an executor that saves one). */
static weft__obs_names profile_names;

__attribute__((constructor)) static void profile_names_at_load(void) {
    weft__obs_names_at_load(&profile_names, "WEFT_PROFILE");
}

/* WEFT_PROFILE=out.json: the first executor destroyed writes out.json, later ones
 * out.1.json, out.2.json, ... so that a program with several executors loses none;
 * a process forked from the owner writes out.<pid>.json, out.<pid>.1.json, ...
 * (weft__obs_names). */
static void save_env_profile(struct weft__obs *o) {
    o->saved = true;
    char path[4096];
    weft__obs_names_path(&profile_names, path, sizeof path, o->save_path, weft__obs_names_next(&profile_names));
    weft__saved_message msg; /* logged below, not a failure of the caller's call */
    weft__error_message_save(&msg);
    weft_status st = weft_profiler_save(o->ex, path);
    weft__error_message_restore(&msg);
    if (st != WEFT_OK) weft__log(WEFT_LOG_ERROR, "cannot write the profile to %s: %s", path, weft_strerror(st));
    else weft__log(WEFT_LOG_INFO, "profile written to %s", path);
}

/* ---- the WEFT_PROFILE file at exit ------------------------------------------------
 *
 * A program that exits with an executor it never destroyed would lose its
 * profile: every state with a save path is on a list that an atexit handler
 * walks.  The workers may still be running then, so the handler writes only an
 * executor with no run in flight (after a grace of 50 ms) (task spans are written during runs without
 * the readers' protocol); for one still busy it logs a warning instead.  A
 * spin lock (executor creation and destruction are rare) orders the list
 * against destroy, which takes its state off the list first. */
static atomic_flag exit_lock = ATOMIC_FLAG_INIT;
static struct weft__obs *exit_list;
static bool exit_handler;

static void exit_lock_take(void) {
    /* Acquire / release: the list and the states' saved flags move under it. */
    while (atomic_flag_test_and_set_explicit(&exit_lock, memory_order_acquire)) weft__cpu_relax();
}

static void exit_lock_drop(void) { atomic_flag_clear_explicit(&exit_lock, memory_order_release); }

/* How long exit waits for an executor's runs in flight to end. */
#define EXIT_GRACE_NS 50000000u

static void save_at_exit(void) {
    exit_lock_take();
    for (struct weft__obs *o = exit_list; o; o = o->exit_next) {
        /* A child process made by fork() exits with its parent's list: the
         * profile is the parent's to write. */
        if (o->exit_pid != weft__process_id()) continue;
        /* A run whose end the caller has seen (its future) may still be
         * finishing on a worker: a short grace for it. */
        uint64_t busy, deadline = weft__now_ns() + EXIT_GRACE_NS;
        while ((busy = weft__runs_in_flight(o->ex)) != 0 && weft__now_ns() < deadline) weft__thread_yield();
        if (busy) {
            weft__log(WEFT_LOG_WARN, "exit with executor %u still running %llu run(s): its profile (for WEFT_PROFILE=%s) is not written; "
                      "wait for its runs or destroy it before exit", o->seq, (unsigned long long)busy, o->save_path);
            continue;
        }
        weft__log(WEFT_LOG_INFO, "executor %u was not destroyed before exit: writing its profile now", o->seq);
        save_env_profile(o);
    }
    exit_list = NULL;
    exit_lock_drop();
}

static void exit_list_add(struct weft__obs *o) {
    exit_lock_take();
    if (!exit_handler && atexit(save_at_exit) != 0)
        weft__log(WEFT_LOG_WARN, "cannot register the exit handler: a profile is written only when its executor is destroyed");
    exit_handler = true;
    o->exit_next = exit_list;
    o->exit_pid = weft__process_id();
    exit_list = o;
    exit_lock_drop();
}

static void exit_list_remove(struct weft__obs *o) {
    exit_lock_take();
    struct weft__obs **p = &exit_list;
    while (*p && *p != o) p = &(*p)->exit_next;
    if (*p) *p = o->exit_next;
    exit_lock_drop();
}

static int weft__obs_create(weft_executor *ex, const weft_executor_config *c) {
    weft__log_init_from_env();
    weft__log_set_context(weft__obs_log_context); /* log entries name tasks and runs */
    const char *path = weft__getenv("WEFT_PROFILE");
    /* Set but empty: the rule of every variable (core/env.h, README): warned
     * about once, and the default (no profile file) kept.  It was silent. */
    if (path && !*path && weft__env_first_warning("WEFT_PROFILE"))
        weft__log(WEFT_LOG_WARN, "WEFT_PROFILE is set but empty: no profile is written (give it a file name)");
    bool profile = c->profile || (path && *path);
    bool metrics = c->metrics || weft__env_flag("WEFT_METRICS", false);
    bool on = c->observer || metrics || profile;
    /* Exact timing: every task's own clock reads.  An observer's callbacks
     * would fall inside a batch's time, so they make it exact too. */
    bool exact = c->profile_exact || c->observer || weft__env_flag("WEFT_PROFILE_EXACT", false);
    /* Off, the state is made only for a span cap or exact timing, which a
     * profiler started later keeps (weft_profiler_start would make it with
     * the default cap, and batching). */
    if (!on && !c->profile_max_spans && !exact) return 0;
    struct weft__obs *o = weft__obs_state(ex);
    if (!o) return WEFT_ENOMEM;
    if (c->profile_max_spans) o->max_spans = c->profile_max_spans;
    o->exact = exact;
    if (exact) o->batch_max = 0;
    if (!on) return 0;
    if (c->observer) {
        o->observer = *c->observer;
        o->has_observer = true;
    }
    if (path && *path && !(o->save_path = weft__strdup(path))) return WEFT_ENOMEM;
    if (o->save_path) {
        weft__obs_names_claim(&profile_names);
        exit_list_add(o);
    }
    uint64_t now = weft__ticks();
    atomic_store_explicit(&o->metrics_t0, now, memory_order_relaxed);
    atomic_store_explicit(&o->profile_t0, now, memory_order_relaxed);
    atomic_store_explicit(&o->metrics_on, true, memory_order_relaxed);
    atomic_store_explicit(&o->profile_on, profile, memory_order_relaxed);
    /* A profile from the start is as after weft_profiler_start: metrics it
     * alone switched on go off with weft_profiler_stop (else every task after
     * the profiled section goes on paying for them). */
    atomic_store_explicit(&o->metrics_by_profiler, profile && !metrics && !c->observer, memory_order_relaxed);
    weft__obs_publish(o);
    return 0;
}

static void weft__obs_destroy(weft_executor *ex) {
    struct weft__obs *o = ex->obs_state;
    if (!o) return;
    weft__live_stop(o); /* its thread reads the workers and this state */
    if (o->save_path) exit_list_remove(o);
    if (o->save_path && !o->saved) save_env_profile(o);
    atomic_store_explicit(&ex->obs, NULL, memory_order_relaxed);
    for (unsigned i = 0; i < o->nworkers; i++) weft__spans_free(&o->w[i]);
    weft__free_str(o->save_path);
    weft__free_aligned(o->w, o->w_bytes, WEFT__CACHE_LINE);
    weft__free(o, sizeof *o);
    ex->obs_state = NULL;
}


/* ---- the observe layer ------------------------------------------------------------ */

static int observe_executor_init(weft_executor *ex, const weft_executor_config *c) {
    int st = weft__obs_create(ex, c);
    /* Last: the publishing thread reads the state set up above. */
    if (st == 0) weft__live_from_env(ex);
    return st;
}

weft__layer weft__observe_layer = {
    .name = "observe",
    .executor_init = observe_executor_init,
    .executor_fini = weft__obs_destroy,
};
