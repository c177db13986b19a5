/* The hooks the task path calls while something observes (core/obs_hooks.h):
 * counting, batched timing of short tasks, spans of every kind of work. */
#include "observe/obs.h"
#include "observe/suspects.h"
#include "core/env.h"
#include "core/log.h"
#include "core/alloc.h"
#include "core/future.h"
#include "graph/graph.h"

#include <stddef.h>
#include <string.h>

/* mark_job of a worker with no usable mark: see WEFT__OBS_NO_MARK in obs.h. */
#define NO_MARK WEFT__OBS_NO_MARK

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
 * (rdtsc is ~9-12 ns on the VMs we measure on).  A worker that runs short tasks
 * back to back therefore times them in batches: a task at depth 0 that starts
 * in the very next job after the last one ended (the mark test above) and
 * follows a short stretch (average under batch_max) ends without a clock read
 * and joins the open batch.  One read closes the batch every WEFT__BATCH tasks,
 * when a task turns out long, at the next gap (the worker runs out of work, a
 * task of another run or other work starts, a task starts after a non-task
 * job, a nested task starts inside a batched one) and the batch's interval is
 * shared out evenly: its spans are flagged "estimated".  A batch that took
 * longer than expected by batch_long held a task that ran long: its spans are
 * flagged WEFT__EST_LONG and its tasks become suspects (below), timed alone
 * from then on; every other estimated span stands for a task shorter than
 * batch_long.  Counts stay exact: the task and histogram counters move at each task's
 * end (the histogram at the last stretch's bucket, moved at the close if the
 * batch's own average lands elsewhere); busy time moves at the close.
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

/* Opens a batch with the task of frame f (depth 0, its begin known). */
static __attribute__((noinline)) void batch_open(struct weft__obs *o, weft__obs_worker *ow, const weft__obs_frame *f,
                                                 const weft__run *r) {
    const weft__node *n = atomic_load_explicit(&f->node, memory_order_relaxed);
    uint64_t run_id = r->top->id;
    ow->batch_begin = f->begin;
    ow->batch_run = run_id;
    ow->batch_tf = n->tf;
    ow->batch_tfh = suspect_tfh(n->tf);
    ow->batch_named = n->tf->nnamed != 0;
    ow->batch_narrow = !ow->batch_named && n->tf->nnodes < WEFT__PAIR_FAILED;
    ow->batch_epoch = atomic_load_explicit(&o->span_epoch, memory_order_relaxed);
    ow->batch_mepoch = atomic_load_explicit(&o->metrics_epoch, memory_order_relaxed);
    /* Looked at once per batch, so that the task path tests a flag of its own.
     * Suspects found only in this iteration of this run are not looked for:
     * its tasks ran already (but for a condition task's loop, where the long
     * one is then timed from the next iteration or run on). */
    ow->batch_when = suspect_when(r);
    ow->suspects_on = atomic_load_explicit(&o->nsuspects, memory_order_relaxed) != 0 &&
                      atomic_load_explicit(&o->suspects_when, memory_order_relaxed) != ow->batch_when;
    weft__span *h = NULL;
    /* Room for WEFT__BATCH spans, or for as many as the limit still allows. */
    uint32_t cap = WEFT__BATCH;
    if (ow->room < cap && o->max_spans - ow->nspans < cap) cap = (uint32_t)(o->max_spans - ow->nspans);
    uint32_t slots = ow->batch_narrow ? WEFT__NARROW_SLOTS : WEFT__BATCH_SLOTS;
    if (cap && atomic_load_explicit(&o->profile_on, memory_order_relaxed) &&
        (h = weft__span_task_slots(o, ow, slots, cap, false)) != NULL) {
        *h = (weft__span){ .begin = f->begin, .tf = n->tf, .run = (uint32_t)run_id,
                           .name = ow->batch_avg < UINT32_MAX ? (uint32_t)ow->batch_avg : UINT32_MAX,
                           .kind = WEFT__SPAN_BATCH, .failed = (uint8_t)WEFT__SPAN_INNER_OF(r),
                           .estimated = 1, .narrow = ow->batch_narrow };
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
    if (!name || !*name) return 0;
    /* Out of memory for the table: the span says its name was lost, instead
     * of passing for an unnamed task ("#index") in every export. */
    uint32_t id = weft__name_intern(&ow->names, name);
    return id ? id : WEFT__NAME_LOST;
}

/* Node n's task (depth 0) ended and joins the open batch. */
static inline void batch_put(struct weft__obs *o, weft__obs_worker *ow, const weft__node *n, int rc) {
    uint32_t k = ow->batch_n;
    weft__stat_inc(&ow->hist[ow->batch_bucket]);
    if (k < ow->batch_cap) {
        weft__span *h = ow->batch_hdr;
        uint32_t failed = rc ? WEFT__PAIR_FAILED : 0;
        if (ow->batch_narrow) {
            weft__batch_narrow(h)[k] = n->index | failed;
        } else {
            uint32_t id = ow->batch_named ? name_id(ow, n) : 0;
            weft__batch_pairs(h)[k] = (weft__span_pair){ n->index, id | failed };
        }
        h->index = k + 1;
        ow->nspans++;
        weft__stat_inc(&ow->recorded);
    } else if (atomic_load_explicit(&o->profile_on, memory_order_relaxed)) {
        weft__stat_inc(&ow->dropped);
    }
    ow->batch_n = k + 1;
}

/* The batch whose header is h (its taskflow tf, opened in run-iteration when)
 * held a task that ran long: its tasks become suspects (from the first'th on). */
static __attribute__((noinline)) void batch_held_long(struct weft__obs *o, const weft__span *h, const void *tf,
                                                      uint64_t when, uint32_t first) {
    weft__obs_note_suspects_when(o, when);
    for (uint32_t i = first; i < h->index; i++) {
        uint32_t index, name;
        bool failed;
        weft__batch_entry(h, i, &index, &name, &failed);
        weft__obs_add_suspect(o, tf, index);
    }
}

/* A closing batch of n tasks took `total` ticks: busy time, and its tasks'
 * histogram counts moved from the provisional bucket to `bucket`, that of
 * their share. */
static void batch_count(struct weft__obs *o, weft__obs_worker *ow, uint64_t total, uint32_t n, unsigned bucket) {
    weft__owner_add(&ow->busy_ticks, total, memory_order_relaxed);
    unsigned was = ow->batch_bucket;
    if (bucket == was) return;
    /* min: a reset while a run is in flight (not exact) may have zeroed them. */
    uint64_t old = weft__stat_read(&ow->hist[was]);
    weft__owner_add(&ow->hist[bucket], n, memory_order_relaxed);
    atomic_store_explicit(&ow->hist[was], old - (old < n ? old : n), memory_order_relaxed);
}

/* Closes the open batch: its tasks took [batch_begin, end) between them.
 * in_run: called from a task of the batch's run (see above).  tight: end is
 * its last task's end but for a hand-off (at the WEFT__BATCH'th task, or when the next
 * task starts straight after); else (the worker ran out of work) end also
 * holds whatever the worker did after that task: ending the run, waking a
 * waiter, looking for work. */
static void batch_close(struct weft__obs *o, weft__obs_worker *ow, uint64_t end, uint64_t seen, bool in_run,
                        bool tight) {
    uint32_t n = ow->batch_n;
    ow->batch_n = 0;
    uint64_t begin = ow->batch_begin, total = end > begin ? end - begin : 0, step = total / n;
    /* Over the expected time (the provisional average each) by batch_long: a
     * task ran long in it (or, not tight, the worker's time after it did).
     * Judged at `seen`, the clock read that closes it, not at `end`: an end
     * estimated at the last stretch's pace (batch_gap) is never over, and a
     * 2 ms task in such a batch got a plain estimate of 100 ns, run after
     * run, never measured (tests/obs_hunt46.c).  The suspects need the
     * header for the indices. */
    const weft__span *hdr = ow->batch_hdr;
    bool held_long = (seen > begin ? seen - begin : 0) > n * ow->batch_avg + o->batch_long;
    /* Not once the profiler was started again since the batch opened: its
     * header is in cleared buffers, and its suspects would be the new
     * recording's (a batch left open at a run's end is closed when its worker
     * goes idle, often after the caller has started the next recording). */
    if (held_long && hdr && atomic_load_explicit(&o->span_epoch, memory_order_relaxed) == ow->batch_epoch)
        batch_held_long(o, hdr, ow->batch_tf, ow->batch_when, tight ? 0 : hdr->index - 1);
    unsigned bucket = ticks_bucket(o, step);
    weft__span *h = ow->batch_hdr;
    uint64_t closed = end > begin ? end : begin + 1; /* non-zero end: closed */
    uint8_t est = held_long ? WEFT__EST_LONG : 1;
    if (in_run) {
        /* Not after a reset since the batch opened (weft_metrics_enable while
         * the run went on): the counts it zeroed held its first tasks, and
         * moving all n of them to `bucket` left the histogram holding more
         * tasks than `tasks` for good.  The tasks counted since stay in the
         * provisional bucket; the batch's time is not the new counts' either. */
        if (atomic_load_explicit(&o->metrics_epoch, memory_order_relaxed) == ow->batch_mepoch)
            batch_count(o, ow, total, n, bucket);
        note_stretch(o, ow, step, bucket);
        if (h) h->end = closed, h->estimated = est;
        return;
    }
    /* After the run: a reset of the metrics (set_metrics in switch.c) may
     * come at any time, and one since the batch opened zeroed its tasks'
     * counts, so their time is not the new counts' either.  Dekker pairing,
     * as for the spans: the seq_cst store of idle_writing, then the seq_cst
     * loads of metrics_epoch and reading, against the reset's (or reader's)
     * seq_cst increment, then its wait for idle_writing to clear. */
    atomic_store_explicit(&ow->idle_writing, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&o->metrics_epoch, memory_order_seq_cst) == ow->batch_mepoch)
        batch_count(o, ow, total, n, bucket);
    if (h && !atomic_load_explicit(&o->reading, memory_order_seq_cst) &&
        atomic_load_explicit(&o->span_epoch, memory_order_relaxed) == ow->batch_epoch) {
        h->end = closed;
        h->estimated = est;
    }
    atomic_store_explicit(&ow->idle_writing, 0, memory_order_release);
    note_stretch(o, ow, step, bucket);
}

/* A task at depth d of run run_id (0: work that is no taskflow task) starts
 * while a batch is open, and cannot join it (not straight after it, nested, or
 * of another run): reads the clock (the task's begin, returned) and closes the
 * batch.  The batch's end is that read when the jobs ran straight on; else it
 * is estimated, at the last stretch's pace, as the gap between was not a
 * task's (a non-task job ran, or a batched task is still running and this one
 * is nested in it). */
static uint64_t batch_gap(struct weft__obs *o, weft__obs_worker *ow, unsigned d, bool straight, uint64_t run_id) {
    uint64_t now = weft__ticks(), end = now;
    if (!straight || d > 0) {
        uint64_t est = ow->batch_begin + ow->batch_n * ow->batch_avg;
        if (est < now) end = est;
    }
    batch_close(o, ow, end, now, run_id == ow->batch_run, true); /* not straight: end <= the estimate */
    if (d > 0 && ow->frame[0].begin == WEFT__BEGIN_BATCHED) {
        ow->frame[0].begin = end;
        ow->frame[0].estimated = true;
    }
    return now;
}

static void weft__obs_worker_idle(struct weft__obs *o, weft__worker *w) {
    weft__obs_worker *ow = &o->w[w->id];
    if (ow->batch_n && atomic_load_explicit(&ow->depth, memory_order_relaxed) == 0) {
        uint64_t now = weft__ticks();
        batch_close(o, ow, now, now, false, false);
    }
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
    /* A suspect is timed alone: it opens no batch (set after the close above,
     * which sets batch_on afresh). */
    const weft__node *n = node;
    bool suspect = __builtin_expect(ow->suspects_on, 0) && weft__obs_is_suspect(o, n->tf, n->index);
    if (suspect) ow->batch_on = false;
    if (d < WEFT__OBS_DEPTH) ow->frame[d].suspect = suspect;
    atomic_store_explicit(&ow->depth, d + 1, memory_order_relaxed);
}

/* task_begin on ow, w's state (inlined into both hooks that begin a task). */
static inline __attribute__((always_inline)) void task_begin_on(struct weft__obs *o, weft__obs_worker *ow,
                                                                weft__worker *w, const void *node, const void *run) {
    /* The fast path: a batch is open (so there is no observer) and this task
     * joins it: at depth 0, straight after it, of the same run and taskflow. */
    if (ow->batch_n && atomic_load_explicit(&ow->depth, memory_order_relaxed) == 0 &&
        ow->mark_job + 1 == w->stats.jobs && ((const weft__run *)run)->top->id == ow->batch_run &&
        ((const weft__node *)node)->tf == ow->batch_tf &&
        !(__builtin_expect(ow->suspects_on, 0) &&
          suspect_bit_at(o, ow->batch_tfh, ((const weft__node *)node)->index))) {
        frame_enter(ow, 0, node, run)->begin = WEFT__BEGIN_BATCHED;
        atomic_store_explicit(&ow->depth, 1, memory_order_relaxed);
        return;
    }
    task_begin_slow(o, w, node, run);
}

static void weft__obs_task_begin(struct weft__obs *o, weft__worker *w, const void *node, const void *run) {
    task_begin_on(o, &o->w[w->id], w, node, run);
}

/* The span of the task or work of frame f (nested: inside another frame). */
/* Inlined into time_task: out of line it cost ~30 instructions per task on the
 * profiled graph benchmarks (binary_tree_profiled_rerun +8%). */
static inline __attribute__((always_inline)) weft__span *
record_task_span(struct weft__obs *o, weft__obs_worker *ow, const weft__obs_frame *f, uint64_t end, int rc,
                 bool nested) {
    weft__span *s = weft__span_task_slots(o, ow, 1, 1, true);
    if (!s) return NULL;
    ow->nspans++;
    weft__stat_inc(&ow->recorded);
    const weft__node *n = atomic_load_explicit(&f->node, memory_order_relaxed);
    s->begin = f->begin;
    s->end = end;
    /* kind, failed, estimated, nested: four bytes written as one store (apart,
     * they cost ~11 instructions per task on the profiled graph benchmarks). */
    uint8_t tail[4] = {WEFT__SPAN_TASK, rc != 0, f->estimated, nested};
    if (__builtin_expect(n != NULL, 1)) {
        const weft__run *r = atomic_load_explicit(&f->run, memory_order_relaxed);
        tail[1] |= (uint8_t)WEFT__SPAN_INNER_OF(r);
        s->tf = n->tf;
        s->run = (uint32_t)r->top->id;
        s->index = n->index;
        s->name = n->tf->nnamed ? name_id(ow, n) : 0;
    } else {
        s->tf = f->id;
        s->run = f->part;
        s->index = f->index;
        s->name = 0;
        tail[0] = (uint8_t)(WEFT__SPAN_WORK + atomic_load_explicit(&f->work, memory_order_relaxed));
    }
    _Static_assert(offsetof(weft__span, nested) == offsetof(weft__span, kind) + 3, "span tail bytes");
    memcpy(&s->kind, tail, sizeof tail);
    return s;
}

/* A task or other work that ended deeper than the frames (WEFT__OBS_DEPTH):
 * counted, not timed, so it has no span.  While the profiler records, that
 * span is counted as dropped, so that spans + dropped still equals the runs
 * (weft_profiler_count); it went missing without a trace before. */
static void note_untimed(struct weft__obs *o, weft__obs_worker *ow) {
    if (atomic_load_explicit(&o->profile_on, memory_order_relaxed)) weft__stat_inc(&ow->dropped);
}

/* Times the task that just ended in frame d on its own: metrics, then its span. */
/* Inlined: on the task path of every task timed alone (a call here cost 2 ns
 * per task in exact mode). */
static inline __attribute__((always_inline)) void time_task(struct weft__obs *o, weft__obs_worker *ow, unsigned d,
                                                           uint64_t end, int rc) {
    weft__obs_frame *f = &ow->frame[d];
    uint64_t total = end - f->begin;
    weft__owner_add(&ow->busy_ticks, total - f->child, memory_order_relaxed);
    if (d > 0) ow->frame[d - 1].child += total;
    unsigned bucket = ticks_bucket(o, total);
    weft__stat_inc(&ow->hist[bucket]);
    if (d == 0 && f->child == 0) note_stretch(o, ow, total, bucket);
    if (atomic_load_explicit(&o->profile_on, memory_order_relaxed)) (void)record_task_span(o, ow, f, end, rc, d > 0);
    atomic_store_explicit(&f->node, NULL, memory_order_relaxed);
}

/* A batch reached WEFT__BATCH tasks: one clock read closes it. */
static __attribute__((noinline)) void batch_full(struct weft__obs *o, weft__obs_worker *ow) {
    uint64_t end = weft__ticks();
    ow->mark = end;
    batch_close(o, ow, end, end, true, true);
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
    if (d < WEFT__OBS_DEPTH && atomic_load_explicit(&ow->frame[d].node, memory_order_relaxed) == node) {
        weft__obs_frame *f = &ow->frame[d];
        /* A suspect that ran short is let go (weft__obs_drop_suspect); f->begin is
         * estimated only after a batch began it. */
        if (__builtin_expect(f->suspect, 0) && end - f->begin < o->batch_long && f->begin != WEFT__BEGIN_BATCHED)
            weft__obs_drop_suspect(o, ((const weft__node *)node)->tf, ((const weft__node *)node)->index);
        time_task(o, ow, d, end, rc);
    } else if (d >= WEFT__OBS_DEPTH) {
        note_untimed(o, ow);
    }
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

/* task_end on ow, w's state (inlined into both hooks that end a task). */
static inline __attribute__((always_inline)) void task_end_on(struct weft__obs *o, weft__obs_worker *ow,
                                                              weft__worker *w, const void *node, const void *run,
                                                              int rc) {
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

static void weft__obs_task_end(struct weft__obs *o, weft__worker *w, const void *node, const void *run, int rc) {
    task_end_on(o, &o->w[w->id], w, node, run, rc);
}

/* Both events around a plain task's call, w's state found once.  (o->w stays
 * where it is while o is on: it is allocated for all workers at once.) */
static int weft__obs_task_call(struct weft__obs *o, weft__worker *w, const void *node, const void *run,
                               weft_task_fn fn, weft_ctx *cx, void *arg) {
    weft__obs_worker *ow = &o->w[w->id];
    task_begin_on(o, ow, w, node, run);
    int rc = fn(cx, arg);
    /* Spawns fn left unsynced are the task's (weft/forkjoin.h): synced here,
     * inside its begin and end, as weft__fj_run_task does for a root or an
     * async task, so that their time is the task's and a child's failure,
     * which fails the run on the task's behalf, is the task's outcome too.
     * Synced after the end event (the call sites' own sync), they ran in no
     * span and the task was reported SUCCEEDED while its run failed with its
     * name.  The call site then finds nothing left: the top mark is reset as
     * sources.c resets it (an overflow spawn marks it). */
    if (__builtin_expect(weft__fj_left_unsynced(w, cx), 0)) {
        int left = weft__fj_sync_left(w, cx);
        if (rc == 0) rc = left;
        cx->fj_head0 = w->fj.head;
        cx->fj_ovf0 = 0;
    }
    task_end_on(o, ow, w, node, run, rc);
    return rc;
}

/* ---- work other than taskflow tasks ------------------------------------------------
 *
 * Async tasks, fork-join roots and stolen frames, algorithm jobs and pipeline
 * stage calls: each is timed on its own (two clock reads, or one straight after
 * the worker's previous task), counted in the metrics like a task and recorded
 * as a span of its kind.  They nest in tasks and in each other on the same
 * frame stack (a stage call inside the task that drives its pipeline), and a
 * batch of short tasks open when one starts is closed first. */

static void weft__obs_work_begin(struct weft__obs *o, weft__worker *w, weft__work kind, const void *id, uint32_t index,
                          uint32_t part) {
    weft__obs_worker *ow = &o->w[w->id];
    unsigned d = atomic_load_explicit(&ow->depth, memory_order_relaxed);
    if (d < WEFT__OBS_DEPTH) {
        weft__obs_frame *f = frame_enter(ow, d, NULL, NULL);
        atomic_store_explicit(&f->work, (uint8_t)kind, memory_order_relaxed);
        f->id = id;
        f->index = index;
        f->part = part;
        /* Straight from the previous task's job only at depth 0: nested work
         * starts inside a job, after the code of the task around it. */
        bool straight = d == 0 && ow->mark_job + 1 == w->stats.jobs;
        if (ow->batch_n) f->begin = batch_gap(o, ow, d, straight, 0);
        else f->begin = straight ? ow->mark : weft__ticks();
    }
    atomic_store_explicit(&ow->depth, d + 1, memory_order_relaxed);
}

static void weft__obs_work_end(struct weft__obs *o, weft__worker *w, const void *id, int rc) {
    weft__obs_worker *ow = &o->w[w->id];
    unsigned d = atomic_load_explicit(&ow->depth, memory_order_relaxed);
    if (d == 0) return;
    d -= 1;
    weft__stat_inc(&ow->tasks);
    if (rc != 0) weft__stat_inc(&ow->failed);
    uint64_t end = weft__ticks();
    /* Work deeper than the frames is counted, not timed: no frame[d] to form
     * (its address alone is out of bounds: undefined behaviour). */
    if (d < WEFT__OBS_DEPTH && atomic_load_explicit(&ow->frame[d].node, memory_order_relaxed) == NULL &&
        ow->frame[d].id == id)
        time_task(o, ow, d, end, rc);
    else if (d >= WEFT__OBS_DEPTH)
        note_untimed(o, ow);
    atomic_store_explicit(&ow->depth, d, memory_order_relaxed);
    ow->mark = end;
    ow->mark_job = o->has_observer ? NO_MARK : w->stats.jobs;
}

static int weft__obs_run_fn(struct weft__obs *o, weft__worker *w, weft__work kind, const _Atomic int *stop, weft_task_fn fn,
                     void *arg) {
    const void *id = weft__fn_id(fn);
    weft__obs_work_begin(o, w, kind, id, 0, 0);
    int rc = weft__fj_run_task(w, stop, fn, arg);
    weft__obs_work_end(o, w, id, rc);
    return rc;
}

/* ---- a GPU task's recording ---------------------------------------------------------
 *
 * Its fn runs on a worker before its outcome is known; the task's begin and
 * end are observed at the outcome, from whichever worker sees it (gpu/task.c
 * says why).  The recording is a frame like other work's (so that work run
 * inside it, and it inside a task that waits, is counted once) whose end adds
 * busy time and a WEFT__SPAN_RECORDING span, but no task: no count, no
 * histogram entry, no batching estimate, no recorded span in
 * weft_profiler_count. */

static void weft__obs_record_begin(struct weft__obs *o, weft__worker *w, const void *node) {
    weft__obs_work_begin(o, w, (weft__work)WEFT__WORK_RECORDING, node, ((const weft__node *)node)->index, 0);
}

static void weft__obs_record_end(struct weft__obs *o, weft__worker *w, const void *node, const void *run) {
    weft__obs_worker *ow = &o->w[w->id];
    unsigned d = atomic_load_explicit(&ow->depth, memory_order_relaxed);
    if (d == 0) return;
    d -= 1;
    uint64_t end = weft__ticks();
    /* frame[d] only below the depth: beyond it there is no frame to address. */
    weft__obs_frame *f = d < WEFT__OBS_DEPTH ? &ow->frame[d] : NULL;
    if (f && atomic_load_explicit(&f->node, memory_order_relaxed) == NULL && f->id == node) {
        uint64_t total = end - f->begin;
        weft__owner_add(&ow->busy_ticks, total - f->child, memory_order_relaxed);
        if (d > 0) ow->frame[d - 1].child += total;
        weft__span *s;
        /* The limit counts it (nspans), and so does the dropped count when it
         * finds no room: a recording lost to the limit left its busy time out
         * of the profile's figures with nothing saying so.  The recorded
         * count does not: it counts runs (weft_profiler_count). */
        if (atomic_load_explicit(&o->profile_on, memory_order_relaxed) &&
            (s = weft__span_slots(o, ow, 1, 1, true)) != NULL) {
            const weft__node *n = node;
            ow->nspans++;
            *s = (weft__span){ .begin = f->begin, .end = end, .tf = n->tf,
                               .run = (uint32_t)((const weft__run *)run)->top->id, .index = n->index,
                               .name = n->tf->nnamed ? name_id(ow, n) : 0, .kind = WEFT__SPAN_RECORDING,
                               .failed = (uint8_t)WEFT__SPAN_INNER_OF((const weft__run *)run),
                               .estimated = f->estimated, .nested = d > 0 };
        }
    }
    atomic_store_explicit(&ow->depth, d, memory_order_relaxed);
    ow->mark = end;
    ow->mark_job = o->has_observer ? NO_MARK : w->stats.jobs;
}

/* A read-modify-write, not the owner's load and store: work reported skipped
 * on a thread that is no worker (w NULL: a task weft_sched_remove took out on
 * another thread) is counted in worker 0's figures, beside worker 0's own
 * counts.  Skips are off the task path: the atomic costs nothing there. */
static void weft__obs_task_skipped(struct weft__obs *o, weft__worker *w, uint64_t n) {
    atomic_fetch_add_explicit(&o->w[w ? w->id : 0].skipped, n, memory_order_relaxed);
}

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

static void weft__obs_steal(struct weft__obs *o, weft__worker *w, int victim) {
    weft__obs_worker *ow = &o->w[w->id];
    weft__span *s = idle_span_begin(o, ow);
    if (!s) return;
    *s = (weft__span){ .kind = WEFT__SPAN_STEAL, .index = (uint32_t)(victim + 1) };
    s->begin = s->end = weft__ticks();
    idle_span_end(ow);
}

static void weft__obs_park(struct weft__obs *o, weft__worker *w, bool begin) {
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

const weft__obs_hooks weft__obs_hook_table = {
    .task_begin = weft__obs_task_begin,
    .task_end = weft__obs_task_end,
    .task_call = weft__obs_task_call,
    .task_skipped = weft__obs_task_skipped,
    .steal = weft__obs_steal,
    .park = weft__obs_park,
    .worker_idle = weft__obs_worker_idle,
    .work_begin = weft__obs_work_begin,
    .work_end = weft__obs_work_end,
    .run_fn = weft__obs_run_fn,
    .record_begin = weft__obs_record_begin,
    .record_end = weft__obs_record_end,
};
