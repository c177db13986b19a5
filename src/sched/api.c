/* weft/sched.h: handles (re-prioritise, remove, look up), the snapshot,
 * manual escalation and the counters. */
#include "sched/sched.h"
#include "core/alloc.h"
#include "core/error_detail.h"

#include <stdlib.h>

static inline bool prio_ok(int p) { return p >= WEFT_PRIORITY_LOW && p <= WEFT_PRIORITY_CRITICAL; }

static weft__sched *sched_or_null(weft_executor *ex) { return ex ? weft__sched_of(ex) : NULL; }

/* A handle another executor gave out: WEFT_EINVAL, said so.  Its slot index
 * and generation could name a task queued here (every queue's first handle
 * was {0, 1}), which the call then re-prioritised or removed: a task the
 * caller never saw, reported cancelled with WEFT_OK. */
static weft_status foreign(const char *call) {
    return weft__fail(call, WEFT_EINVAL,
                      "the handle was given out by another executor (use it with the executor its task was "
                      "queued on)");
}

weft_status weft_sched_reprioritize(weft_executor *ex, weft_sched_handle h, weft_priority priority) {
    weft__sched *s = sched_or_null(ex);
    if (!s || !prio_ok((int)priority))
        return weft__fail(__func__, WEFT_EINVAL, "ex is NULL, or %d is not a priority", (int)priority);
    if (weft__squeue_foreign(&s->q, h)) return foreign(__func__);
    weft__mutex_lock(&s->q.lock);
    weft__sched_slot *sl = weft__squeue_slot_locked(&s->q, h);
    if (sl) weft__squeue_set_level_locked(&s->q, h.slot, (unsigned)priority + 1, weft__now_ns());
    weft__mutex_unlock(&s->q.lock);
    return sl ? WEFT_OK : WEFT_ENOENT;
}

/* A queued task just taken out reports itself cancelled here, on the
 * remover's thread: resubmitted to a worker, the report would queue behind
 * every NORMAL-and-up job (the injector), its future pending and its
 * dependents, whatever their own priority, held back until then.  Safe: the
 * job left the heap under the lock, so no worker can take it, and an
 * isolated waiter that claimed it first ran it (the job's run then only drops
 * its reference).  The last use of ex: once the report has ended the task's
 * run, weft_executor_wait_all may return and the executor be destroyed. */
static void report_removed(weft_executor *ex, weft__job *job) {
    weft__worker *w = weft__current_worker(ex);
    /* Off the workers this thread carries out the task's run, whose
     * weft_future_then callback runs here: its weft_executor_wait_all or
     * destroy would wait for that run (they hung); they see it (core/runs.c).
     * The leave touches only this thread's list, not ex. */
    weft__own_run own;
    if (!w) weft__own_run_enter(&own, ex);
    weft__job *next = job->run(w, job);
    if (!w) weft__own_run_leave(&own);
    if (next) weft__sched_resubmit(ex, w, next); /* none for a marked job (sched.h); kept for safety */
}

weft_status weft_sched_remove(weft_executor *ex, weft_sched_handle h) {
    weft__sched *s = sched_or_null(ex);
    if (!s) return weft__fail(__func__, WEFT_EINVAL, "ex is NULL");
    if (weft__squeue_foreign(&s->q, h)) return foreign(__func__);
    weft__mutex_lock(&s->q.lock);
    weft__sched_slot *sl = weft__squeue_slot_locked(&s->q, h);
    /* A job queued without a handle (queue_now: a graph task's from another
     * thread, a default-priority one under WEFT_SCHED_PRIORITY) has no way to
     * report itself cancelled: not removable, as in the lanes. */
    if (sl && !sl->on_remove) sl = NULL;
    weft__job *queued = NULL;
    if (sl) {
        /* Marked under the lock: a reserved task queued right after the unlock
         * must already find itself cancelled. */
        sl->on_remove(sl->job);
        if (sl->pos >= 0) {
            queued = sl->job;
            weft__squeue_erase_locked(&s->q, h.slot);
        }
        weft__squeue_free_locked(&s->q, h.slot);
    }
    weft__mutex_unlock(&s->q.lock);
    if (!sl) return WEFT_ENOENT;
    atomic_fetch_add_explicit(&s->removed, 1, memory_order_relaxed); /* before the report: s may go after it */
    if (queued) report_removed(ex, queued);
    return WEFT_OK;
}

weft_status weft_sched_priority(weft_executor *ex, weft_sched_handle h, weft_priority *out) {
    if (!ex || !out) return weft__fail(__func__, WEFT_EINVAL, "ex or out is NULL");
    /* WEFT_ENOENT is an outcome, not a failure (docs/errors.md, R3): like
     * weft_sched_remove and weft_sched_reprioritize, it leaves the thread's
     * last error message as it was. */
    weft__sched *s = sched_or_null(ex);
    if (!s) return WEFT_ENOENT; /* no task of this executor was ever queued with a priority */
    if (weft__squeue_foreign(&s->q, h)) return foreign(__func__);
    weft__mutex_lock(&s->q.lock);
    weft__sched_slot *sl = weft__squeue_slot_locked(&s->q, h);
    if (sl) *out = (weft_priority)((int)sl->level - 1);
    weft__mutex_unlock(&s->q.lock);
    return sl ? WEFT_OK : WEFT_ENOENT; /* the task has started, ran or was removed */
}

static int by_run_order(const void *a, const void *b) {
    const weft_sched_entry *x = a, *y = b;
    if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The lanes' worker state: weft__sched_worker is the layer's part of a worker. */
static weft__lanes *lanes_at(weft__sched *s, unsigned i) {
    return &((weft__sched_worker *)weft__layer_state(&s->ex->workers[i], &weft__sched_layer))->lanes;
}

/* Items in every worker's lanes (a hint without their locks). */
static size_t lanes_count(weft__sched *s) {
    size_t n = 0;
    for (unsigned i = 0; i < s->ex->nworkers; i++) n += atomic_load_explicit(&lanes_at(s, i)->count, memory_order_relaxed);
    return n;
}

/* The heap's entries, then the lanes' (as many as fit in cap), into `all`;
 * returns how many.  The lanes' items have no handle ({0, 0}). */
static size_t collect(weft__sched *s, weft_sched_entry *all, size_t cap) {
    weft__mutex_lock(&s->q.lock);
    size_t k = 0;
    uint64_t now = weft__now_ns();
    for (; k < s->q.n && k < cap; k++) {
        uint32_t idx = s->q.heap[k];
        const weft__sched_slot *sl = &s->q.slots[idx];
        /* Only a task queued with a handle shows one (weft_sched_remove). */
        weft_sched_handle hd = sl->on_remove ? (weft_sched_handle){idx, sl->gen} : (weft_sched_handle){0, 0};
        all[k] = (weft_sched_entry){hd, (weft_priority)((int)sl->level - 1), sl->seq, now - sl->queued_at};
    }
    weft__mutex_unlock(&s->q.lock);
    uint64_t ticks = weft__ticks();
    double npt = weft__ns_per_tick();
    for (unsigned i = 0; i < s->ex->nworkers && k < cap; i++)
        k += weft__lanes_copy(lanes_at(s, i), all + k, cap - k, ticks, npt);
    return k;
}

weft_status weft_sched_snapshot(weft_executor *ex, weft_sched_entry *out, size_t cap, size_t *n) {
    weft__sched *s = sched_or_null(ex);
    if (!s || !n || (cap && !out))
        return weft__fail(__func__, WEFT_EINVAL, "ex or n is NULL, or out is NULL with cap > 0");
    /* Sized from the hints, with room for some arriving meanwhile; filled to
     * the brim, it is taken again twice the size (tasks kept arriving). */
    size_t room = weft__squeue_count_from(&s->q, 0) + lanes_count(s) + 64, total;
    weft_sched_entry *all;
    for (;;) {
        if (!(all = weft__alloc(sizeof *all * room))) return weft__fail_st(__func__, WEFT_ENOMEM);
        if ((total = collect(s, all, room)) < room) break;
        weft__free(all, sizeof *all * room);
        room *= 2;
    }
    if (total) qsort(all, total, sizeof *all, by_run_order);
    for (size_t i = 0; i < total && i < cap; i++) out[i] = all[i];
    weft__free(all, sizeof *all * room);
    *n = total;
    return WEFT_OK;
}

weft_status weft_sched_escalate(weft_executor *ex, size_t *moved) {
    weft__sched *s = sched_or_null(ex);
    if (!s) return weft__fail(__func__, WEFT_EINVAL, "ex is NULL");
    size_t m = weft__sched_escalate_now(s);
    if (moved) *moved = m;
    return WEFT_OK;
}

weft_status weft_sched_get_stats(weft_executor *ex, weft_sched_stats *out) {
    weft__sched *s = sched_or_null(ex);
    if (!s || !out) return weft__fail(__func__, WEFT_EINVAL, "ex or out is NULL");
    *out = (weft_sched_stats){
        .queued = weft__squeue_count_from(&s->q, 0) + lanes_count(s),
        .escalations = atomic_load_explicit(&s->escalations, memory_order_relaxed),
        .inherited = atomic_load_explicit(&s->inherited, memory_order_relaxed),
        .removed = atomic_load_explicit(&s->removed, memory_order_relaxed),
        .policy_errors = atomic_load_explicit(&s->policy_errors, memory_order_relaxed),
    };
    return WEFT_OK;
}

const char *weft_priority_name(weft_priority p) {
    static const char *const names[] = {"low", "normal", "high", "critical"};
    return prio_ok((int)p) ? names[(int)p + 1] : "?";
}
