/* Running taskflows: the run queue of a taskflow, iterations, node execution.
 *
 * Counting: run->pending is the number of nodes made runnable and not yet finished
 * in the current iteration.  A node that finishes and readies k successors adds
 * k - 1, so a chain costs no shared atomic at all, and the node that brings it to 0
 * ends the iteration.  Every node of a started iteration is visited, even when the
 * run has been cancelled or has failed (it is then skipped, not called), which
 * keeps that count exact and re-arms every join counter for the next iteration. */
#include "graph/graph.h"
#include "core/alloc.h"
#include "observe/hooks.h" /* observer / metrics / profiler: one branch each when off */

#include <stddef.h>

#define RUN_OF(job) ((weft__run *)((char *)(job) - offsetof(weft__run, start)))

static weft__job *begin_iteration(weft__worker *w, weft__run *r);

static weft__job *finish_run(weft__run *r) {
    weft_taskflow *tf = r->tf;
    weft_executor *ex = r->ex;
    weft__mutex_lock(&tf->mu);
    weft__run *next = r->next;
    tf->active = next;
    if (!next) tf->tail = NULL;
    /* Before the future is ready: whoever waited on it may change tf at once. */
    atomic_fetch_sub_explicit(&tf->runs_inflight, 1, memory_order_release);
    weft__mutex_unlock(&tf->mu);
    weft__future_complete(&r->fut);
    weft__executor_run_end(ex);
    weft__future_release(&r->fut); /* r may be freed from here on */
    return next ? &next->start : NULL; /* the next queued run starts on this worker */
}

static weft__job *release_successors(weft__worker *w, weft__run *r, weft__node *n) {
    weft__job *next = NULL, *buf[32];
    unsigned nb = 0;
    weft__node *const *succ = weft__succ_array(n);
    for (uint32_t i = 0; i < n->nsucc; i++) {
        weft__node *s = succ[i];
        /* A successor with one dependent is ready now: no atomic needed.  Else
         * acq_rel: the last predecessor to count down sees all the others. */
        if (s->num_deps != 1 && atomic_fetch_sub_explicit(&s->join, 1, memory_order_acq_rel) != 1) continue;
        if (!next) {
            next = &s->job;
            continue;
        }
        buf[nb++] = &s->job;
        if (nb == 32) {
            /* Count them before anyone can steal (and finish) them. */
            atomic_fetch_add_explicit(&r->pending, 32, memory_order_relaxed);
            for (unsigned k = 0; k < nb; k++) weft__push_local(w, buf[k]);
            nb = 0;
        }
    }
    /* This node is done (-1); the ready ones not yet counted (+nb, +next). */
    int64_t delta = (int64_t)nb + (next != NULL) - 1;
    if (delta != 0) {
        int64_t left = atomic_fetch_add_explicit(&r->pending, delta, memory_order_acq_rel) + delta;
        if (left == 0) {
            /* Only an iteration that nothing stopped counts as completed. */
            if ((atomic_load_explicit(&r->fut.stop, memory_order_acquire) & WEFT__STOP_MASK) == 0)
                atomic_fetch_add_explicit(&r->fut.iterations, 1, memory_order_relaxed);
            return begin_iteration(w, r);
        }
    }
    for (unsigned k = 0; k < nb; k++) weft__push_local(w, buf[k]);
    return next;
}

weft__job *weft__node_run(weft__worker *w, weft__job *job) {
    weft__node *n = (weft__node *)job;
    weft__run *r = n->tf->active;
    /* Re-arm for the next iteration: every predecessor has already counted down.
     * (Nodes with one dependent never count down.) */
    if (n->num_deps > 1) atomic_store_explicit(&n->join, n->num_deps, memory_order_relaxed);
    if ((atomic_load_explicit(&r->fut.stop, memory_order_acquire) & WEFT__STOP_MASK) == 0) {
        if (n->fn) {
            weft_ctx cx = {w, n, &r->fut.stop, n->tf, w->ctx};
            w->ctx = &cx;
            struct weft__obs *o = weft__obs_get(w->ex); /* observe/: NULL unless switched on */
            if (__builtin_expect(o != NULL, 0)) weft__obs_task_begin(o, w, n, r);
            int rc = n->fn(&cx, n->arg);
            if (__builtin_expect(o != NULL, 0)) weft__obs_task_end(o, w, n, r, rc);
            w->ctx = cx.outer;
            if (rc != 0) weft__future_fail(&r->fut, rc, weft__cold(n)->name, n->index);
        }
    } else {
        atomic_fetch_add_explicit(&r->fut.skipped, 1, memory_order_relaxed);
        struct weft__obs *o = weft__obs_get(w->ex); /* observe/: count skipped tasks */
        if (__builtin_expect(o != NULL, 0)) weft__obs_task_skipped(o, w);
    }
    return release_successors(w, r, n);
}

/* Starts the next iteration, or finishes the run.  Runs on one worker at a time. */
static weft__job *begin_iteration(weft__worker *w, weft__run *r) {
    weft_taskflow *tf = r->tf;
    uint64_t done = atomic_load_explicit(&r->fut.iterations, memory_order_relaxed);
    int stop = atomic_load_explicit(&r->fut.stop, memory_order_acquire) & WEFT__STOP_MASK;
    if (tf->nsources == 0) {
        /* An empty taskflow: each iteration completes at once, with no task. */
        if (r->pred) {
            while (!stop && !r->pred(r->pred_arg)) {
                atomic_fetch_add_explicit(&r->fut.iterations, 1, memory_order_relaxed);
                stop = atomic_load_explicit(&r->fut.stop, memory_order_acquire) & WEFT__STOP_MASK;
            }
        } else if (!stop) {
            atomic_store_explicit(&r->fut.iterations, r->target, memory_order_relaxed);
        }
        return finish_run(r);
    }
    if (stop || done >= r->target || (r->pred && r->pred(r->pred_arg))) return finish_run(r);
    atomic_store_explicit(&r->pending, (int64_t)tf->nsources, memory_order_relaxed);
    for (size_t i = tf->nsources; i-- > 1;) weft__push_local(w, &tf->sources[i]->job);
    return &tf->sources[0]->job;
}

static weft__job *run_start(weft__worker *w, weft__job *job) {
    weft__run *r = RUN_OF(job);
    /* Cancelled while queued: report the first iteration's tasks as skipped. */
    if (atomic_load_explicit(&r->fut.stop, memory_order_acquire) & WEFT__STOP_MASK)
        atomic_store_explicit(&r->fut.skipped, r->tf->nnodes, memory_order_relaxed);
    return begin_iteration(w, r);
}

static void run_free(weft_future *f) { weft__free_aligned(f, sizeof(weft__run), WEFT__CACHE_LINE); }

static weft_status submit(weft_executor *ex, weft_taskflow *tf, uint64_t target, weft_pred_fn pred, void *arg,
                          weft_future **out) {
    if (!ex || !tf) return WEFT_EINVAL;
    if (atomic_load_explicit(&ex->shutdown, memory_order_acquire)) return WEFT_ESHUTDOWN;
    /* Aligned: `pending` sits on a cache line of its own. */
    weft__run *r = weft__alloc_aligned(sizeof *r, WEFT__CACHE_LINE);
    if (!r) return weft__tf_error(tf, WEFT_ENOMEM, NULL);
    weft__future_init(&r->fut, ex, out ? 2 : 1, run_free);
    r->fut.owner = tf; /* a task of tf waiting on this run would wait forever */
    r->start = (weft__job){run_start, NULL};
    r->tf = tf;
    r->ex = ex;
    r->next = NULL;
    r->target = target;
    r->pred = pred;
    r->pred_arg = arg;
    atomic_init(&r->pending, 0);

    weft__mutex_lock(&tf->mu);
    weft_status st = tf->active ? WEFT_OK : weft__taskflow_prepare(tf, NULL);
    if (st == WEFT_OK && !tf->active) {
        /* Nothing ahead of us: start now.  Submitting under the lock keeps a
         * failure simple to undo, as no other run can have queued behind us. */
        tf->active = tf->tail = r;
        st = weft__submit(ex, &r->start);
        if (st != WEFT_OK) {
            tf->active = tf->tail = NULL;
            weft__tf_error(tf, st, NULL);
        }
    } else if (st == WEFT_OK) {
        tf->tail->next = r; /* the run ahead of us starts us when it finishes */
        tf->tail = r;
    }
    if (st == WEFT_OK) {
        atomic_fetch_add_explicit(&tf->runs_inflight, 1, memory_order_relaxed);
        weft__executor_run_begin(ex);
    }
    weft__mutex_unlock(&tf->mu);
    if (st != WEFT_OK) {
        weft__free_aligned(r, sizeof *r, WEFT__CACHE_LINE);
        return st;
    }
    if (out) *out = &r->fut;
    return WEFT_OK;
}

weft_status weft_run(weft_executor *ex, weft_taskflow *tf, weft_future **out) {
    return submit(ex, tf, 1, NULL, NULL, out);
}

weft_status weft_run_n(weft_executor *ex, weft_taskflow *tf, uint64_t n, weft_future **out) {
    return submit(ex, tf, n, NULL, NULL, out);
}

weft_status weft_run_until(weft_executor *ex, weft_taskflow *tf, weft_pred_fn pred, void *arg, weft_future **out) {
    if (!pred) return WEFT_EINVAL;
    return submit(ex, tf, UINT64_MAX, pred, arg, out);
}

weft_status weft_run_and_wait(weft_executor *ex, weft_taskflow *tf) {
    weft_future *f;
    weft_status st = weft_run(ex, tf, &f);
    if (st != WEFT_OK) return st;
    st = weft_future_wait(f);
    weft_future_destroy(f);
    return st;
}
