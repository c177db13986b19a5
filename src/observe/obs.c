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
    o->batch_max = (uint64_t)(WEFT__BATCH_MAX_NS / o->ns_per_tick);
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
    /* Exact timing: every task's own clock reads.  An observer's callbacks
     * would fall inside a batch's time, so they make it exact too. */
    const char *exact = weft__getenv("WEFT_PROFILE_EXACT");
    o->exact = c->profile_exact || c->observer || (exact && *exact && strcmp(exact, "0") != 0);
    if (o->exact) o->batch_max = 0;
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
    /* A batch still open holds slots of the cleared buffers: it must not write
     * them (obs.c, batch_close). */
    atomic_fetch_add_explicit(&o->span_epoch, 1, memory_order_relaxed);
    if (!atomic_load_explicit(&o->metrics_on, memory_order_relaxed)) set_metrics(o, true);
    atomic_store_explicit(&o->profile_t0, weft__ticks(), memory_order_relaxed);
    /* Releases: an idle worker's seq_cst load of profile_on in idle_span_begin
     * (or of reading in batch_close) that sees the new value also sees the
     * cleared buffers and the new epoch. */
    weft__spans_resume(o, true);
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
    const char *name = n->tf->nnamed ? weft__cold(n)->name : NULL; /* see name_id */
    ev->name = name ? name : "";
    ev->index = n->index;
    ev->run_id = r->top->id;
}

/* ---- batched timing --------------------------------------------------------------
 *
 * Reading the clock costs about as much as a short task's whole bookkeeping
 * (rdtsc is ~9 ns on the VMs we measure on).  A worker that runs short tasks
 * back to back therefore times them in batches: a task at depth 0 that starts
 * in the very next job after the last one ended (the mark test above) and
 * follows a short stretch (average under batch_max) ends without a clock read
 * and joins the open batch.  One read closes the batch every WEFT__BATCH tasks,
 * when a task turns out long, at the next gap (the worker runs out of work, a
 * task of another run starts, a task starts after a non-task job, a nested task
 * starts inside a batched one) and the batch's interval is shared out evenly:
 * its spans are flagged "estimated".  Counts stay exact: the task and histogram
 * counters move at each task's end (the histogram at the last stretch's bucket,
 * moved at the close if the batch's own average lands elsewhere); busy time
 * moves at the close.
 *
 * A batch holds tasks of one run only.  A close from inside a task of that run
 * writes the spans with no ceremony: the run is in flight, so no reader is
 * looking (readers wait for runs).  Any other close may come after the run
 * ended, while a reader walks the buffers or after a clear: it writes under the
 * idle_writing protocol, and only if no reader is on and no clear came since
 * the spans were taken; otherwise the spans keep their provisional times (the
 * last stretch's average, laid end to end from the batch's start). */

/* Histogram bucket of a duration in ticks.  Integer conversion, ticks * ns_mul
 * >> 20 (exact to a few ppm); clamped at 2^43 ticks, which no product overflows
 * and which is past the last bucket (2^39 ns) for any tick of 1/16 ns or more. */
static unsigned ticks_bucket(const struct weft__obs *o, uint64_t ticks) {
    uint64_t clamped = ticks < ((uint64_t)1 << 43) ? ticks : (uint64_t)1 << 43;
    return weft__hist_bucket(clamped * o->ns_mul >> 20);
}

/* A depth-0 task without nested ones, or a batch, took `avg` ticks per task:
 * whether the next tasks are batched, and at what provisional figures. */
static void note_stretch(const struct weft__obs *o, weft__obs_worker *ow, uint64_t avg, unsigned bucket) {
    ow->batch_avg = avg;
    ow->batch_bucket = bucket;
    ow->batch_on = avg < o->batch_max; /* batch_max is 0 when batching is off */
}

static weft__span *record_task_span(struct weft__obs *o, weft__obs_worker *ow, const weft__obs_frame *f,
                                    uint64_t end, int rc);

/* Opens a batch with the task of frame f (depth 0, its begin known). */
static __attribute__((noinline)) void batch_open(struct weft__obs *o, weft__obs_worker *ow, const weft__obs_frame *f,
                                                 const weft__run *r) {
    const weft__node *n = atomic_load_explicit(&f->node, memory_order_relaxed);
    uint64_t run_id = r->top->id;
    ow->batch_begin = f->begin;
    ow->batch_run = run_id;
    ow->batch_tf = n->tf;
    ow->batch_named = n->tf->nnamed != 0;
    ow->batch_narrow = !ow->batch_named && n->tf->nnodes < WEFT__PAIR_FAILED;
    ow->batch_epoch = atomic_load_explicit(&o->span_epoch, memory_order_relaxed);
    weft__span *h = NULL;
    /* Room for WEFT__BATCH spans, or for as many as the limit still allows. */
    uint32_t cap = WEFT__BATCH;
    if (ow->room < cap && o->max_spans - ow->nspans < cap) cap = (uint32_t)(o->max_spans - ow->nspans);
    uint32_t slots = ow->batch_narrow ? WEFT__NARROW_SLOTS : WEFT__BATCH_SLOTS;
    if (cap && atomic_load_explicit(&o->profile_on, memory_order_relaxed) &&
        (h = weft__span_task_slots(o, ow, slots, cap, false)) != NULL) {
        *h = (weft__span){ .begin = f->begin, .tf = n->tf, .run = (uint32_t)run_id,
                           .name = ow->batch_avg < UINT32_MAX ? (uint32_t)ow->batch_avg : UINT32_MAX,
                           .kind = WEFT__SPAN_BATCH, .estimated = 1, .narrow = ow->batch_narrow };
    }
    ow->batch_hdr = h;
    ow->batch_cap = h ? cap : 0;
}

/* The interned name of node n, 0 if unnamed.  Out of line: the cold line is
 * read only for taskflows that name tasks (callers test tf->nnamed), as a
 * chain's cold pages were never touched and reading one faults in a zero page
 * per 64 nodes. */
static __attribute__((noinline)) uint32_t name_id(weft__obs_worker *ow, const weft__node *n) {
    const char *name = weft__cold(n)->name;
    return name ? weft__name_intern(&ow->names, name) : 0;
}

/* Node n's task (depth 0) ended and joins the open batch. */
static inline void batch_put(struct weft__obs *o, weft__obs_worker *ow, const weft__node *n, int rc) {
    uint32_t k = ow->batch_n;
    weft__stat_inc(&ow->hist[ow->batch_bucket]);
    if (k < ow->batch_cap) {
        weft__span *h = ow->batch_hdr;
        weft__span_slot *e = (weft__span_slot *)h + 1;
        uint32_t failed = rc ? WEFT__PAIR_FAILED : 0;
        if (ow->batch_narrow) {
            e[k / WEFT__NARROW_PER_SLOT].narrow[k % WEFT__NARROW_PER_SLOT] = n->index | failed;
        } else {
            uint32_t id = ow->batch_named ? name_id(ow, n) : 0;
            e[k / WEFT__PAIRS_PER_SLOT].pair[k % WEFT__PAIRS_PER_SLOT] = (weft__span_pair){ n->index, id | failed };
        }
        h->index = k + 1;
        ow->nspans++;
        weft__stat_inc(&ow->recorded);
    } else if (atomic_load_explicit(&o->profile_on, memory_order_relaxed)) {
        weft__stat_inc(&ow->dropped);
    }
    ow->batch_n = k + 1;
}

/* Closes the open batch: its tasks took [batch_begin, end) between them.
 * in_run: called from a task of the batch's run (see above). */
static void batch_close(struct weft__obs *o, weft__obs_worker *ow, uint64_t end, bool in_run) {
    uint32_t n = ow->batch_n;
    ow->batch_n = 0;
    uint64_t begin = ow->batch_begin, total = end > begin ? end - begin : 0, step = total / n;
    weft__owner_add(&ow->busy_ticks, total, memory_order_relaxed);
    unsigned was = ow->batch_bucket, bucket = ticks_bucket(o, step);
    if (bucket != was) {
        /* min: weft_metrics_enable may have zeroed the counters meanwhile. */
        uint64_t old = weft__stat_read(&ow->hist[was]);
        weft__owner_add(&ow->hist[bucket], n, memory_order_relaxed);
        atomic_store_explicit(&ow->hist[was], old - (old < n ? old : n), memory_order_relaxed);
    }
    note_stretch(o, ow, step, bucket);
    weft__span *h = ow->batch_hdr;
    if (!h) return;
    uint64_t closed = end > begin ? end : begin + 1; /* non-zero end: closed */
    if (in_run) {
        h->end = closed;
        return;
    }
    atomic_store_explicit(&ow->idle_writing, 1, memory_order_seq_cst);
    if (!atomic_load_explicit(&o->reading, memory_order_seq_cst) &&
        atomic_load_explicit(&o->span_epoch, memory_order_relaxed) == ow->batch_epoch)
        h->end = closed;
    atomic_store_explicit(&ow->idle_writing, 0, memory_order_release);
}

/* A task at depth d of run run_id starts while a batch is open, and cannot
 * join it (not straight after it, nested, or of another run): reads the clock
 * (the task's begin, returned) and closes the batch.  The batch's end is that
 * read when the jobs ran straight on; else it is estimated, at the last
 * stretch's pace, as the gap between was not a task's (a non-task job ran, or
 * a batched task is still running and this one is nested in it). */
static uint64_t batch_gap(struct weft__obs *o, weft__obs_worker *ow, unsigned d, bool straight, uint64_t run_id) {
    uint64_t now = weft__ticks(), end = now;
    if (!straight || d > 0) {
        uint64_t est = ow->batch_begin + ow->batch_n * ow->batch_avg;
        if (est < now) end = est;
    }
    batch_close(o, ow, end, run_id == ow->batch_run);
    if (d > 0 && ow->frame[0].begin == WEFT__BEGIN_BATCHED) {
        ow->frame[0].begin = end;
        ow->frame[0].estimated = true;
    }
    return now;
}

void weft__obs_worker_idle(struct weft__obs *o, weft__worker *w) {
    weft__obs_worker *ow = &o->w[w->id];
    if (ow->batch_n && atomic_load_explicit(&ow->depth, memory_order_relaxed) == 0)
        batch_close(o, ow, weft__ticks(), false);
}

/* ---- task hooks ------------------------------------------------------------------- */

/* Frame d of ow for a task starting: what it runs (read by the state dump) and
 * no nested time yet; the caller sets begin. */
static inline weft__obs_frame *frame_enter(weft__obs_worker *ow, unsigned d, const void *node, const void *run) {
    weft__obs_frame *f = &ow->frame[d];
    atomic_store_explicit(&f->run, run, memory_order_relaxed);
    atomic_store_explicit(&f->node, node, memory_order_relaxed);
    f->child = 0;
    f->estimated = false;
    return f;
}

static __attribute__((noinline)) void task_begin_slow(struct weft__obs *o, weft__worker *w, const void *node,
                                                      const void *run) {
    weft__obs_worker *ow = &o->w[w->id];
    unsigned d = atomic_load_explicit(&ow->depth, memory_order_relaxed);
    if (o->has_observer && o->observer.task_begin) {
        weft_task_event ev = { .outcome = WEFT_TASK_RUNNING };
        fill_event(&ev, o, w, node, run);
        o->observer.task_begin(o->observer.user, &ev);
    }
    if (d < WEFT__OBS_DEPTH) {
        weft__obs_frame *f = frame_enter(ow, d, node, run);
        /* Straight from the previous task's job (see mark in obs.h): start where
         * it ended; the span then also holds the hand-off between the two (tens
         * of ns), which a second clock read per task would cost anyway.  Else
         * read the clock, last, so that the observer's time is not the task's.
         * A batch still open is closed (the fast path took the tasks that join
         * it). */
        bool straight = ow->mark_job + 1 == w->stats.jobs;
        if (ow->batch_n) f->begin = batch_gap(o, ow, d, straight, ((const weft__run *)run)->top->id);
        else f->begin = straight ? ow->mark : weft__ticks();
    }
    atomic_store_explicit(&ow->depth, d + 1, memory_order_relaxed);
}

void weft__obs_task_begin(struct weft__obs *o, weft__worker *w, const void *node, const void *run) {
    weft__obs_worker *ow = &o->w[w->id];
    /* The fast path: a batch is open (so there is no observer) and this task
     * joins it: at depth 0, straight after it, of the same run and taskflow. */
    if (ow->batch_n && atomic_load_explicit(&ow->depth, memory_order_relaxed) == 0 &&
        ow->mark_job + 1 == w->stats.jobs && ((const weft__run *)run)->top->id == ow->batch_run &&
        ((const weft__node *)node)->tf == ow->batch_tf) {
        frame_enter(ow, 0, node, run)->begin = WEFT__BEGIN_BATCHED;
        atomic_store_explicit(&ow->depth, 1, memory_order_relaxed);
        return;
    }
    task_begin_slow(o, w, node, run);
}

static weft__span *record_task_span(struct weft__obs *o, weft__obs_worker *ow, const weft__obs_frame *f,
                                    uint64_t end, int rc) {
    weft__span *s = weft__span_task_slots(o, ow, 1, 1, true);
    if (!s) return NULL;
    ow->nspans++;
    weft__stat_inc(&ow->recorded);
    const weft__node *n = atomic_load_explicit(&f->node, memory_order_relaxed);
    const weft__run *r = atomic_load_explicit(&f->run, memory_order_relaxed);
    s->begin = f->begin;
    s->end = end;
    s->tf = n->tf;
    s->run = (uint32_t)r->top->id;
    s->index = n->index;
    s->name = n->tf->nnamed ? name_id(ow, n) : 0;
    s->kind = WEFT__SPAN_TASK;
    s->failed = rc != 0;
    s->estimated = f->estimated;
    return s;
}

/* Times the task that just ended in frame d on its own: metrics, then its span. */
static void time_task(struct weft__obs *o, weft__obs_worker *ow, unsigned d, uint64_t end, int rc) {
    weft__obs_frame *f = &ow->frame[d];
    uint64_t total = end - f->begin;
    weft__owner_add(&ow->busy_ticks, total - f->child, memory_order_relaxed);
    if (d > 0) ow->frame[d - 1].child += total;
    unsigned bucket = ticks_bucket(o, total);
    weft__stat_inc(&ow->hist[bucket]);
    if (d == 0 && f->child == 0) note_stretch(o, ow, total, bucket);
    if (atomic_load_explicit(&o->profile_on, memory_order_relaxed)) (void)record_task_span(o, ow, f, end, rc);
    atomic_store_explicit(&f->node, NULL, memory_order_relaxed);
}

/* A batch reached WEFT__BATCH tasks: one clock read closes it. */
static __attribute__((noinline)) void batch_full(struct weft__obs *o, weft__obs_worker *ow) {
    uint64_t end = weft__ticks();
    ow->mark = end;
    batch_close(o, ow, end, true);
}

static __attribute__((noinline)) void task_end_slow(struct weft__obs *o, weft__worker *w, const void *node,
                                                    const void *run, int rc) {
    weft__obs_worker *ow = &o->w[w->id];
    unsigned d = atomic_load_explicit(&ow->depth, memory_order_relaxed);
    if (d == 0) return; /* began before the observer state was switched on */
    d -= 1;
    weft__stat_inc(&ow->tasks);
    if (rc != 0) weft__stat_inc(&ow->failed);
    uint64_t end = weft__ticks();
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

void weft__obs_task_end(struct weft__obs *o, weft__worker *w, const void *node, const void *run, int rc) {
    weft__obs_worker *ow = &o->w[w->id];
    weft__obs_frame *f = &ow->frame[0];
    /* The fast path: a depth-0 task that joins the open batch (it began in it)
     * or opens one (the last stretch was short; batch_on is never set with an
     * observer).  A task that ran nested ones is timed on its own. */
    if (atomic_load_explicit(&ow->depth, memory_order_relaxed) == 1 &&
        atomic_load_explicit(&f->node, memory_order_relaxed) == node &&
        (f->begin == WEFT__BEGIN_BATCHED || (ow->batch_on && f->child == 0))) {
        weft__stat_inc(&ow->tasks);
        if (rc != 0) weft__stat_inc(&ow->failed);
        if (ow->batch_n == 0) batch_open(o, ow, f, run);
        batch_put(o, ow, node, rc);
        atomic_store_explicit(&f->node, NULL, memory_order_relaxed);
        atomic_store_explicit(&ow->depth, 0, memory_order_relaxed);
        ow->mark_job = w->stats.jobs; /* mark: the batch's end, unknown until it closes */
        if (ow->batch_n == WEFT__BATCH) batch_full(o, ow);
        return;
    }
    task_end_slow(o, w, node, run, rc);
}

void weft__obs_task_skipped(struct weft__obs *o, weft__worker *w) { weft__stat_inc(&o->w[w->id].skipped); }

/* A span slot for a steal or park event, or NULL (profiler off or full).  Such
 * events come from idle workers at any time, so the write is bracketed by
 * idle_writing (see weft__spans_pause in spans.c); end it with idle_span_end. */
static weft__span *idle_span_begin(struct weft__obs *o, weft__obs_worker *ow) {
    if (!atomic_load_explicit(&o->profile_on, memory_order_relaxed)) return NULL;
    atomic_store_explicit(&ow->idle_writing, 1, memory_order_seq_cst);
    weft__span *s = NULL;
    if (atomic_load_explicit(&o->profile_on, memory_order_seq_cst) && (s = weft__span_slots(o, ow, 1, 1, false)))
        ow->nspans++;
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
    /* A park that began before the profiler started is recorded from the start
     * (profile_t0 was written before the store that turned recording on, which
     * idle_span_begin's load saw). */
    uint64_t t0 = atomic_load_explicit(&o->profile_t0, memory_order_relaxed);
    *s = (weft__span){ .kind = WEFT__SPAN_PARK, .begin = park_begin > t0 ? park_begin : t0, .end = weft__ticks() };
    idle_span_end(ow);
}
