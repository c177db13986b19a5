/* Switching metrics and the profiler on and off (weft/observe.h). */
#include "observe/obs.h"
#include "core/future.h"
#include "core/error_detail.h"

/* Called after a switch went off: when nothing collects task metrics any
 * more (weft__obs_collecting), their wall time ends now (weft_metrics.wall_ns),
 * once.  Not at weft_metrics_enable(false) while the profiler (or an observer)
 * still counts: the wall clock stopped there while tasks went on being
 * counted, and their busy time, clamped to it, read 0. */
static void metrics_off(struct weft__obs *o) {
    if (!weft__obs_collecting(o) && atomic_load_explicit(&o->metrics_t1, memory_order_relaxed) == 0)
        atomic_store_explicit(&o->metrics_t1, weft__ticks(), memory_order_relaxed);
}

/* Sets metrics on or off; switching on resets the counters and the clock. */
static void set_metrics(struct weft__obs *o, bool on) {
    if (on) {
        /* A batch of the last run may still be open on an idle worker, its
         * tasks counted: the new epoch keeps its close from adding to the new
         * counts, and the wait lets a close that missed it finish first
         * (pairs with batch_close's idle_writing bracket, task_hooks.c). */
        atomic_fetch_add_explicit(&o->metrics_epoch, 1, memory_order_seq_cst);
        for (unsigned w = 0; w < o->nworkers; w++)
            while (atomic_load_explicit(&o->w[w].idle_writing, memory_order_seq_cst)) weft__cpu_relax();
        weft__obs_reset_counters(o);
        atomic_store_explicit(&o->metrics_t1, 0, memory_order_relaxed);
        atomic_store_explicit(&o->metrics_t0, weft__ticks(), memory_order_relaxed);
    }
    atomic_store_explicit(&o->metrics_on, on, memory_order_relaxed);
    if (!on) metrics_off(o);
}

/* From one of ex's workers a run of ex is in flight (the caller's own task):
 * a reset or a clear there garbles the counts and spans that run's tasks are
 * writing, which observe.h forbids.  Refused, as waits refuse (EDEADLK there). */
#define FROM_WORKER_WHY "called from one of the executor's own workers, inside a run of it (observe.h: any thread not a worker of ex)"

weft_status weft_metrics_enable(weft_executor *ex, bool on) {
    if (!ex) return weft__fail(__func__, WEFT_EINVAL, "ex is NULL");
    if (weft__current_worker(ex)) return weft__fail(__func__, WEFT_EBUSY, FROM_WORKER_WHY);
    struct weft__obs *o = weft__obs_state(ex);
    if (!o) return weft__fail_st(__func__, WEFT_ENOMEM);
    set_metrics(o, on);
    /* Asked for by the user: weft_profiler_stop leaves them as they are. */
    atomic_store_explicit(&o->metrics_by_profiler, false, memory_order_relaxed);
    weft__obs_publish(o);
    return WEFT_OK;
}

weft_status weft_profiler_start(weft_executor *ex) {
    if (!ex) return weft__fail(__func__, WEFT_EINVAL, "ex is NULL");
    if (weft__current_worker(ex)) return weft__fail(__func__, WEFT_EBUSY, FROM_WORKER_WHY);
    struct weft__obs *o = weft__obs_state(ex);
    if (!o) return weft__fail_st(__func__, WEFT_ENOMEM);
    /* Idle workers record steal and park spans at any time: stop them before
     * the buffers are reset under them. */
    (void)weft__spans_pause(o);
    for (unsigned i = 0; i < o->nworkers; i++) weft__spans_clear(&o->w[i]);
    /* A batch still open holds slots of the cleared buffers: it must not write
     * them (task_hooks.c, batch_close). */
    atomic_fetch_add_explicit(&o->span_epoch, 1, memory_order_relaxed);
    weft__obs_clear_suspects(o);
    if (!atomic_load_explicit(&o->metrics_on, memory_order_relaxed)) {
        set_metrics(o, true);
        atomic_store_explicit(&o->metrics_by_profiler, true, memory_order_relaxed);
    }
    atomic_store_explicit(&o->profile_t0, weft__ticks(), memory_order_relaxed);
    /* Releases: an idle worker's seq_cst load of profile_on in idle_span_begin
     * (or of reading in batch_close) that sees the new value also sees the
     * cleared buffers and the new epoch. */
    weft__spans_resume(o, true);
    weft__obs_publish(o);
    return WEFT_OK;
}

weft_status weft_profiler_stop(weft_executor *ex) {
    if (!ex) return weft__fail(__func__, WEFT_EINVAL, "ex is NULL");
    struct weft__obs *o = weft__obs_state_get(ex);
    if (!o) return WEFT_OK;
    atomic_store_explicit(&o->profile_on, false, memory_order_relaxed);
    /* Metrics the start switched on go off with the profiler (their counts
     * stay readable): else every task after a profiled section would go on
     * paying for them, a stage call of a pipeline ten times over. */
    if (atomic_exchange_explicit(&o->metrics_by_profiler, false, memory_order_relaxed))
        atomic_store_explicit(&o->metrics_on, false, memory_order_relaxed);
    metrics_off(o); /* also metrics switched off while the profiler ran */
    weft__obs_publish(o);
    return WEFT_OK;
}

uint64_t weft_future_id(const weft_future *f) { return f ? f->id : 0; }
