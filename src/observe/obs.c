/* Observability state: lifetime, switching things on and off, and the hooks the
 * task path calls (only ever when something is on). */
#include "observe/obs.h"
#include "observe/log.h"
#include "core/alloc.h"
#include "core/future.h"
#include "graph/graph.h"

#include <string.h>

/* mark_job of a worker with no usable mark: mark_job + 1 wraps to 0, and a
 * task's job count is at least 1. */
#define NO_MARK UINT64_MAX

struct weft__obs *weft__obs_state(weft_executor *ex) {
    if (ex->obs_state) return ex->obs_state;
    struct weft__obs *o = weft__calloc(sizeof *o);
    if (!o) return NULL;
    o->w_bytes = sizeof(weft__obs_worker) * ex->nworkers;
    o->w = weft__calloc_aligned(o->w_bytes, WEFT__CACHE_LINE);
    if (!o->w) {
        weft__free(o, sizeof *o);
        return NULL;
    }
    o->ex = ex;
    o->nworkers = ex->nworkers;
    o->max_spans = WEFT__DEFAULT_MAX_SPANS;
    o->ns_per_tick = weft__ns_per_tick();
    o->ns_mul = (uint64_t)(o->ns_per_tick * (double)(1u << 20) + 0.5);
    for (unsigned i = 0; i < o->nworkers; i++) o->w[i].mark_job = NO_MARK;
    ex->obs_state = o;
    return o;
}

void weft__obs_publish(struct weft__obs *o) {
    bool on = o->has_observer || atomic_load_explicit(&o->metrics_on, memory_order_relaxed) ||
              atomic_load_explicit(&o->profile_on, memory_order_relaxed);
    /* Release: a worker that sees the pointer (acquire in weft__obs_get) sees the
     * state initialised and the flags set above. */
    atomic_store_explicit(&o->ex->obs, on ? o : NULL, memory_order_release);
}

int weft__obs_create(weft_executor *ex, const weft_executor_config *c) {
    weft__log_init_from_env();
    const char *path = weft__getenv("WEFT_PROFILE");
    bool profile = c->profile || (path && *path);
    if (!c->observer && !c->metrics && !profile) return 0;
    struct weft__obs *o = weft__obs_state(ex);
    if (!o) return WEFT_ENOMEM;
    if (c->profile_max_spans) o->max_spans = c->profile_max_spans;
    if (c->observer) {
        o->observer = *c->observer;
        o->has_observer = true;
    }
    if (path && *path && !(o->save_path = weft__strdup(path))) return WEFT_ENOMEM;
    uint64_t now = weft__ticks();
    atomic_store_explicit(&o->metrics_t0, now, memory_order_relaxed);
    atomic_store_explicit(&o->profile_t0, now, memory_order_relaxed);
    atomic_store_explicit(&o->metrics_on, true, memory_order_relaxed);
    atomic_store_explicit(&o->profile_on, profile, memory_order_relaxed);
    weft__obs_publish(o);
    return 0;
}

/* WEFT_PROFILE=out.json: the first executor destroyed writes out.json, later ones
 * out.1.json, out.2.json, ... so that a program with several executors loses none. */
static void save_env_profile(struct weft__obs *o) {
    static _Atomic unsigned saved;
    unsigned k = atomic_fetch_add_explicit(&saved, 1, memory_order_relaxed);
    char path[4096];
    const char *dot = strrchr(o->save_path, '.');
    if (k == 0 || !dot || strchr(dot, '/'))
        snprintf(path, sizeof path, k ? "%s.%u" : "%s", o->save_path, k);
    else
        snprintf(path, sizeof path, "%.*s.%u%s", (int)(dot - o->save_path), o->save_path, k, dot);
    weft_status st = weft_profiler_save(o->ex, path);
    if (st != WEFT_OK) weft__log(WEFT_LOG_ERROR, "cannot write the profile to %s: %s", path, weft_strerror(st));
    else weft__log(WEFT_LOG_INFO, "profile written to %s", path);
}

void weft__obs_destroy(weft_executor *ex) {
    struct weft__obs *o = ex->obs_state;
    if (!o) return;
    if (o->save_path) save_env_profile(o);
    atomic_store_explicit(&ex->obs, NULL, memory_order_relaxed);
    for (unsigned i = 0; i < o->nworkers; i++) weft__spans_free(&o->w[i]);
    weft__free_str(o->save_path);
    weft__free_aligned(o->w, o->w_bytes, WEFT__CACHE_LINE);
    weft__free(o, sizeof *o);
    ex->obs_state = NULL;
}

/* ---- switching on and off ---------------------------------------------------- */

/* Sets metrics on or off; switching on resets the counters and the clock. */
static void set_metrics(struct weft__obs *o, bool on) {
    if (on) {
        weft__obs_reset_counters(o);
        atomic_store_explicit(&o->metrics_t0, weft__ticks(), memory_order_relaxed);
    }
    atomic_store_explicit(&o->metrics_on, on, memory_order_relaxed);
}

weft_status weft_metrics_enable(weft_executor *ex, bool on) {
    if (!ex) return WEFT_EINVAL;
    struct weft__obs *o = weft__obs_state(ex);
    if (!o) return WEFT_ENOMEM;
    set_metrics(o, on);
    weft__obs_publish(o);
    return WEFT_OK;
}

weft_status weft_profiler_start(weft_executor *ex) {
    if (!ex) return WEFT_EINVAL;
    struct weft__obs *o = weft__obs_state(ex);
    if (!o) return WEFT_ENOMEM;
    /* Idle workers record steal and park spans at any time: stop them before
     * the buffers are reset under them. */
    (void)weft__spans_pause(o);
    for (unsigned i = 0; i < o->nworkers; i++) weft__spans_clear(&o->w[i]);
    if (!atomic_load_explicit(&o->metrics_on, memory_order_relaxed)) set_metrics(o, true);
    atomic_store_explicit(&o->profile_t0, weft__ticks(), memory_order_relaxed);
    /* seq_cst (a release): an idle worker's seq_cst load of profile_on in
     * idle_span_begin that sees it on also sees the cleared buffers. */
    atomic_store_explicit(&o->profile_on, true, memory_order_seq_cst);
    weft__obs_publish(o);
    return WEFT_OK;
}

weft_status weft_profiler_stop(weft_executor *ex) {
    if (!ex) return WEFT_EINVAL;
    struct weft__obs *o = ex->obs_state;
    if (!o) return WEFT_OK;
    atomic_store_explicit(&o->profile_on, false, memory_order_relaxed);
    weft__obs_publish(o);
    return WEFT_OK;
}

uint64_t weft_future_id(const weft_future *f) { return f ? f->id : 0; }

/* ---- the hooks ------------------------------------------------------------------ */

static void fill_event(weft_task_event *ev, struct weft__obs *o, weft__worker *w, const weft__node *n,
                       const weft__run *r) {
    ev->executor = o->ex;
    ev->worker = w->id;
    ev->task = (weft_task){ (struct weft__node *)n };
    const char *name = n->tf->nnamed ? weft__cold(n)->name : NULL; /* see record_task_span */
    ev->name = name ? name : "";
    ev->index = n->index;
    ev->run_id = r->top->id;
}

void weft__obs_task_begin(struct weft__obs *o, weft__worker *w, const void *node, const void *run) {
    weft__obs_worker *ow = &o->w[w->id];
    unsigned d = atomic_load_explicit(&ow->depth, memory_order_relaxed);
    if (o->has_observer && o->observer.task_begin) {
        weft_task_event ev = { .outcome = WEFT_TASK_RUNNING };
        fill_event(&ev, o, w, node, run);
        o->observer.task_begin(o->observer.user, &ev);
    }
    if (d < WEFT__OBS_DEPTH) {
        weft__obs_frame *f = &ow->frame[d];
        atomic_store_explicit(&f->run, run, memory_order_relaxed);
        atomic_store_explicit(&f->node, node, memory_order_relaxed);
        f->child = 0;
        /* Straight from the previous task's job (see mark in obs.h): start where
         * it ended; the span then also holds the hand-off between the two (tens
         * of ns), which a second clock read per task would cost anyway.  Else
         * read the clock, last, so that the observer's time is not the task's. */
        f->begin = ow->mark_job + 1 == w->stats.jobs ? ow->mark : weft__ticks();
    }
    atomic_store_explicit(&ow->depth, d + 1, memory_order_relaxed);
}

static void record_task_span(struct weft__obs *o, weft__obs_worker *ow, const weft__obs_frame *f,
                             uint64_t end, int rc) {
    weft__span *s = weft__span_task_slot(o, ow);
    if (!s) return;
    const weft__node *n = atomic_load_explicit(&f->node, memory_order_relaxed);
    const weft__run *r = atomic_load_explicit(&f->run, memory_order_relaxed);
    s->begin = f->begin;
    s->end = end;
    s->node = n;
    s->run = (uint32_t)r->top->id;
    s->index = n->index;
    /* The cold line only when the taskflow has named tasks: a chain's cold pages
     * were never touched, and reading one faults in a zero page per 64 nodes. */
    const char *name = n->tf->nnamed ? weft__cold(n)->name : NULL;
    s->name = name ? weft__name_intern(&ow->names, name) : 0;
    s->kind = WEFT__SPAN_TASK;
    s->failed = rc != 0;
}

/* Times the task that just ended in frame d: metrics, then its span. */
static void time_task(struct weft__obs *o, weft__obs_worker *ow, unsigned d, uint64_t end, int rc) {
    weft__obs_frame *f = &ow->frame[d];
    uint64_t total = end - f->begin;
    weft__owner_add(&ow->busy_ticks, total - f->child, memory_order_relaxed);
    if (d > 0) ow->frame[d - 1].child += total;
    /* Integer conversion, ticks * ns_mul >> 20 (exact to a few ppm).  Clamped at
     * 2^43 ticks, which no product overflows and which is past the last
     * bucket (2^39 ns) for any tick of 1/16 ns or longer. */
    uint64_t clamped = total < ((uint64_t)1 << 43) ? total : (uint64_t)1 << 43;
    weft__stat_inc(&ow->hist[weft__hist_bucket(clamped * o->ns_mul >> 20)]);
    if (atomic_load_explicit(&o->profile_on, memory_order_relaxed)) record_task_span(o, ow, f, end, rc);
    atomic_store_explicit(&f->node, NULL, memory_order_relaxed);
}

void weft__obs_task_end(struct weft__obs *o, weft__worker *w, const void *node, const void *run, int rc) {
    uint64_t end = weft__ticks();
    weft__obs_worker *ow = &o->w[w->id];
    unsigned d = atomic_load_explicit(&ow->depth, memory_order_relaxed);
    if (d == 0) return; /* began before the observer state was switched on */
    d -= 1;
    weft__stat_inc(&ow->tasks);
    if (rc != 0) weft__stat_inc(&ow->failed);
    if (d < WEFT__OBS_DEPTH && atomic_load_explicit(&ow->frame[d].node, memory_order_relaxed) == node)
        time_task(o, ow, d, end, rc);
    atomic_store_explicit(&ow->depth, d, memory_order_relaxed);
    /* An observer's callback would run inside the next task's span: no mark. */
    ow->mark = end;
    ow->mark_job = o->has_observer ? NO_MARK : w->stats.jobs;
    if (o->has_observer && o->observer.task_end) {
        weft_task_event ev = { .outcome = rc ? WEFT_TASK_FAILED : WEFT_TASK_SUCCEEDED, .code = rc };
        fill_event(&ev, o, w, node, run);
        o->observer.task_end(o->observer.user, &ev);
    }
}

void weft__obs_task_skipped(struct weft__obs *o, weft__worker *w) { weft__stat_inc(&o->w[w->id].skipped); }

/* A span slot for a steal or park event, or NULL (profiler off or full).  Such
 * events come from idle workers at any time, so the write is bracketed by
 * idle_writing (see weft__spans_pause in spans.c); end it with idle_span_end. */
static weft__span *idle_span_begin(struct weft__obs *o, weft__obs_worker *ow) {
    if (!atomic_load_explicit(&o->profile_on, memory_order_relaxed)) return NULL;
    atomic_store_explicit(&ow->idle_writing, 1, memory_order_seq_cst);
    weft__span *s = NULL;
    if (atomic_load_explicit(&o->profile_on, memory_order_seq_cst)) s = weft__span_slot(o, ow, false);
    if (!s) atomic_store_explicit(&ow->idle_writing, 0, memory_order_release);
    return s;
}

static void idle_span_end(weft__obs_worker *ow) { atomic_store_explicit(&ow->idle_writing, 0, memory_order_release); }

void weft__obs_steal(struct weft__obs *o, weft__worker *w, int victim) {
    weft__obs_worker *ow = &o->w[w->id];
    weft__span *s = idle_span_begin(o, ow);
    if (!s) return;
    *s = (weft__span){ .kind = WEFT__SPAN_STEAL, .index = (uint32_t)(victim + 1) };
    s->begin = s->end = weft__ticks();
    idle_span_end(ow);
}

void weft__obs_park(struct weft__obs *o, weft__worker *w, bool begin) {
    weft__obs_worker *ow = &o->w[w->id];
    if (begin) {
        ow->park_begin = weft__ticks();
        return;
    }
    uint64_t park_begin = ow->park_begin;
    ow->park_begin = 0;
    if (park_begin == 0) return;
    weft__span *s = idle_span_begin(o, ow);
    if (!s) return;
    *s = (weft__span){ .kind = WEFT__SPAN_PARK, .begin = park_begin, .end = weft__ticks() };
    idle_span_end(ow);
}
