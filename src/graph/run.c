/* Running taskflows: the run queue of a taskflow, iterations, node execution.
 *
 * Counting: run->pending is the number of nodes made runnable and not yet finished
 * in the current iteration.  A node that finishes and readies k successors adds
 * k - 1, so a chain costs no shared atomic at all, and the node that brings it to 0
 * ends the iteration.  Every node of a started iteration is visited, even when the
 * run has been cancelled or has failed (it is then skipped, not called), which
 * keeps that count exact and re-arms every join counter for the next iteration. */
#include "graph/node_run.h"
#include "core/alloc.h"
#include "core/default_executor.h"
#include "core/obs_hooks.h" /* observer / metrics / profiler: one branch each when off */
#include "core/error_detail.h"

#include <stddef.h>

#define RUN_OF(job) ((weft__run *)((char *)(job) - offsetof(weft__run, start)))

static weft__job *begin_iteration(weft__worker *w, weft__run *r);
static weft__job *begin_iteration_seen(weft__worker *w, weft__run *r, int stop);

static weft__job *finish_nested(weft__worker *w, weft__run *r, weft__run *next);

/* w as ex's run counters must see it: a worker of another executor counts as
 * an outside thread (weft__runs_begin/end take the caller's worker of ex). */
static inline weft__worker *worker_of(weft_executor *ex, weft__worker *w) { return w && w->ex == ex ? w : NULL; }

/* `next` has just become the active run of its taskflow, on worker w, which
 * finished the run ahead of it.  A run executes on the executor it was
 * submitted to (a nested run on its parent's): on w's executor its start is
 * returned to run here; on another executor it goes through that executor's
 * injector, and NULL is returned.  Should the injector have no memory, the run
 * is failed (task_code WEFT_ENOMEM) and its start returned after all: a
 * stopped run ends at its start, and whatever of its parent it resumes is
 * skipped, so no task function runs on the wrong executor. */
static weft__job *start_queued(weft__worker *w, weft__run *next) {
    if (next->ex == w->ex) return &next->start;
    if (weft__submit_from(next->ex, NULL, &next->start) == WEFT_OK) return NULL;
    if (next->role == WEFT__ROLE_TOP) weft__future_fail(&next->fut, WEFT_ENOMEM, "(start of run)", 0);
    else weft__fail_node(next->parent, next->pnode, WEFT_ENOMEM);
    return &next->start;
}

/* A subflow's graph with no module and no semaphore needs no lock around its
 * run's start and end: it runs once at a time, started only by its own task
 * (weft__subflow_run refuses while a run of it is in flight, and
 * weft_subflow_join runs within the task), never queued behind another run
 * (weft_run and the rest refuse it), and is built and cleared by that task
 * without the lock anyway; the one other taker, weft_taskflow_validate, can
 * reach it only from a task of that run, which the run's start precedes and
 * its end follows.  The lock and unlock were ~60 instructions of each
 * subflow task's ~900 in a recursion of nested subflows. */
static inline bool run_needs_lock(const weft_taskflow *tf) {
    return !tf->is_subflow_graph || tf->nbodies != 0 || tf->nsem_ledger != 0;
}

static weft__job *finish_run(weft__worker *w, weft__run *r) {
    weft_taskflow *tf = r->tf;
    weft_executor *ex = r->ex;
    if (__builtin_expect(r->prio != 0, 0)) weft__prio_run_end(r); /* before the next run starts */
    bool lock = run_needs_lock(tf);
    if (lock) weft__mutex_lock(&tf->mu);
    weft__run *next = r->next;
    tf->active = next;
    if (!next) tf->tail = NULL;
    /* The module bodies submit() held (under the lock, after it: a run may
     * end before its submitter has left the lock), before tf is seen idle. */
    if (__builtin_expect(tf->nbodies != 0, 0)) {
        if (r->role == WEFT__ROLE_TOP) weft__module_hold_bodies(tf, -1);
        else weft__module_drop_held(tf); /* a subflow's graph: its modules' holds */
    }
    /* Before the future is ready: whoever waited on it may change tf at once. */
    weft__tf_inflight_out(tf);
    if (lock) weft__mutex_unlock(&tf->mu);
    if (r->role != WEFT__ROLE_TOP) return finish_nested(w, r, next);
    weft__future_complete(&r->fut);
    weft__runs_end(ex, worker_of(ex, w)); /* w is ex's but for start_queued's fallback */
    weft__future_release(&r->fut); /* r may be freed from here on */
    return next ? start_queued(w, next) : NULL;
}

static int noop_fn(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}

/* Placeholders ran uncounted: the metrics' tasks left them out while their
 * skipped count took them in, so tasks + skipped of a run fell short of its
 * tasks by its placeholders (graph.h). */
__attribute__((noinline, cold)) void weft__noop_observed(weft__worker *w, weft__run *r, weft__node *n) {
    weft_ctx cx = weft__run_ctx(w, r, n);
    w->ctx = &cx;
    (void)weft__hook_task_call(w, weft__obs_get(w->ex), n, r, noop_fn, &cx, NULL);
    w->ctx = cx.outer;
}

/* Applies the count this worker held back (node_run.h) to its run.  Installed
 * as the worker's defer_flush (core/executor.h says when the core calls it). */
static weft__job *flush_deferred(weft__worker *w) {
    weft__run *r = w->defer_obj;
    int64_t d = w->defer_delta;
    weft__clear_deferred(w);
    return weft__run_settle(w, r, d);
}

/* The first -1 of r held on w (node_run.h, weft__hold_minus_one).  Out of
 * line: its stores, inlined into weft__node_run, had the compiler set up their
 * values in the prologue of every call (7 instructions per chain of tasks). */
__attribute__((noinline)) weft__job *weft__hold_first(weft__worker *w, weft__run *r) {
    weft__job *done = weft__defer_settle(w); /* another run's count (normally none) */
    w->defer_flush = flush_deferred;
    w->defer_keep = weft__node_run;
    w->defer_obj = r;
    w->defer_delta = -1;
    return done;
}

/* The general case: any number of successors.  `shared`: other workers are
 * about (a constant in each of the two copies below). */
static inline __attribute__((always_inline)) weft__job *release_many_body(weft__worker *w, weft__run *r,
                                                                          weft__node *n, const bool shared) {
    weft__job *next = NULL, *buf[32];
    unsigned nb = 0;
    weft__node *const *succ = weft__succ_array(n);
    /* With other workers about, the successors' lines are often in another
     * core's cache (the last count-down was there).  Ask for them all first:
     * each count-down below is a locked RMW, a full fence on x86, so their
     * misses would otherwise come one after another.  With one worker they
     * are this core's or memory's, and the requests only cost instructions
     * (binary_tree_rerun 5% at one worker; wavefront_rerun 10% faster at two
     * with them). */
    if (shared)
        for (uint32_t i = 0, k = n->nsucc < 8 ? n->nsucc : 8; i < k; i++) __builtin_prefetch(succ[i], 1, 3);
    for (uint32_t i = 0; i < n->nsucc; i++) {
        weft__node *s = succ[i];
        /* A successor with one dependent is ready now: nothing to count. */
        if (s->num_deps != 1 && !weft__count_down(s, shared)) continue;
        /* s runs soon, here or on a thief: its successor array will be read. */
        if (shared && s->nsucc > 1) __builtin_prefetch(s->succ.many, 0, 3);
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
    if (delta == -1) return weft__hold_minus_one(w, r);
    delta = weft__absorb(w, r, delta); /* cancel against the held-back count first */
    /* When the count reaches 0 nothing is buffered, so `done` is all there is. */
    weft__job *done = delta != 0 ? weft__run_settle(w, r, delta) : NULL;
    for (unsigned k = 0; k < nb; k++) weft__push_local(w, buf[k]);
    return next ? next : done;
}

/* Two copies, so that one worker's loop tests nothing per successor
 * (node_run.h's weft__release calls them). */
weft__job *weft__release_many(weft__worker *w, weft__run *r, weft__node *n) {
    return release_many_body(w, r, n, true);
}
weft__job *weft__release_many_alone(weft__worker *w, weft__run *r, weft__node *n) {
    return release_many_body(w, r, n, false);
}

weft__job *weft__release_successors(weft__worker *w, weft__run *r, weft__node *n) { return weft__release(w, r, n); }

/* graph.h, weft__hand_on: the look is due. */
__attribute__((noinline)) weft__job *weft__hand_on_look(weft__worker *w, weft__job *j) {
    weft__job *g = weft__fair_look(w);
    if (!g) return j;
    weft__push_local(w, j);
    return g;
}

/* The iteration's last count came in.  An iteration completed when every one
 * of its tasks ran: nothing stopped the run, or a cancel came too late to skip
 * any of them (a task that failed stops the run with STOP_FAIL, and its
 * iteration did not complete).  The skip counts of this iteration's tasks are
 * seen here: each is made before that task's release of `pending`.  Out of
 * line: inlined into weft__run_settle, these tests cost the chain loop that
 * calls it 3 instructions a task (linear_chain_rerun +2%, callgrind). */
static __attribute__((noinline)) weft__job *iteration_done(weft__worker *w, weft__run *r) {
    int stop = atomic_load_explicit(&r->top->stop, memory_order_acquire) & WEFT__STOP_MASK;
    if (stop == 0 || (stop == WEFT__STOP_CANCEL &&
                      atomic_load_explicit(&r->top->skipped, memory_order_relaxed) == r->skip_mark))
        atomic_fetch_add_explicit(&r->fut.iterations, 1, memory_order_relaxed);
    return begin_iteration(w, r);
}

weft__job *weft__run_settle(weft__worker *w, weft__run *r, int64_t delta) {
    int64_t left = atomic_fetch_add_explicit(&r->pending, delta, memory_order_acq_rel) + delta;
    if (left != 0) return NULL;
    return iteration_done(w, r);
}

void weft__fail_node(weft__run *r, weft__node *n, int code) {
    weft__future_fail(r->top, code, weft__cold(n)->name, n->index);
}

/* Aligned: where this function falls decides whether wavefront_rerun runs in
 * 8.5 or 12.5 ms at one worker (release_many_alone's code the same byte for
 * byte, only its place and this function's moved: cpu-clock samples pile on
 * its successor loads; not huge pages, the same with them off).  At a 64-byte
 * boundary it ran fast in both builds measured (8.3 and 8.5 ms); it is no
 * cure (docs/design.md, "A layout cliff"): measure after changing this path. */
__attribute__((aligned(64))) weft__job *weft__node_run(weft__worker *w, weft__job *job) {
    return weft__node_chain(w, (weft__node *)job);
}

/* r's predicate, called inside a context of r's run chained on w's as a task's
 * is (gpu/task.c makes one so too), though it is no task (weft_ctx_task is the
 * null task): a wait in the predicate for this run, or a weft_run_and_wait of
 * r's taskflow, whose run queues behind this one, could never end, and is
 * refused with WEFT_EDEADLK as from a task of the run (core/future.c reads
 * the chain).  Without it the predicate ran with no context at all and such a
 * wait hung the run.  Spawns it leaves unsynced are synced, as a task's. */
static bool call_pred(weft__worker *w, weft__run *r) {
    if (!w) return r->pred(r->pred_arg);
    weft_ctx cx = weft__run_ctx(w, r, NULL);
    w->ctx = &cx;
    bool done = r->pred(r->pred_arg);
    if (__builtin_expect(weft__fj_left_unsynced(w, &cx), 0)) (void)weft__fj_sync_left(w, &cx);
    w->ctx = cx.outer;
    return done;
}

/* Starts the next iteration, or finishes the run.  Runs on one worker at a time. */
static weft__job *begin_iteration(weft__worker *w, weft__run *r) {
    return begin_iteration_seen(w, r, atomic_load_explicit(&r->top->stop, memory_order_acquire) & WEFT__STOP_MASK);
}

/* begin_iteration with the stop bits already read: run_start counts the
 * skipped tasks of a run cancelled while queued from the same read that stops
 * it here (a second read could see a cancel the first did not, and end the
 * run with its tasks neither run nor counted). */
static weft__job *begin_iteration_seen(weft__worker *w, weft__run *r, int stop) {
    weft_taskflow *tf = r->tf;
    uint64_t done = atomic_load_explicit(&r->fut.iterations, memory_order_relaxed);
    if (weft__nsources(tf) == 0) {
        /* An empty taskflow: each iteration completes at once, with no task. */
        if (r->pred) {
            while (!stop && !call_pred(w, r)) {
                atomic_fetch_add_explicit(&r->fut.iterations, 1, memory_order_relaxed);
                stop = atomic_load_explicit(&r->top->stop, memory_order_acquire) & WEFT__STOP_MASK;
            }
        } else if (!stop) {
            atomic_store_explicit(&r->fut.iterations, r->target, memory_order_relaxed);
        }
        return finish_run(w, r);
    }
    if (stop || done >= r->target || (r->pred && call_pred(w, r))) return finish_run(w, r);
    if (tf->nconds) weft__rearm_joins(tf);
    r->skip_mark = atomic_load_explicit(&r->top->skipped, memory_order_relaxed);
    atomic_store_explicit(&r->pending, (int64_t)weft__nsources(tf), memory_order_relaxed);
    return weft__sources_start(w, r);
}

static weft__job *run_start(weft__worker *w, weft__job *job) {
    weft__run *r = RUN_OF(job);
    if (__builtin_expect(r->prio != 0 || r->tf->nprio != 0, 0)) weft__prio_run_begin(r); /* priority.c */
    /* Cancelled while queued: report the first iteration's tasks as skipped
     * (its tasks, not the slots weft_task_erase freed).  A run of no
     * iteration (weft_run_n and weft_run_n_parallel with n == 0) would have
     * run none of them: it skips none (it reported a whole iteration
     * skipped, in its future and the metrics, that the cancel stopped
     * nothing of). */
    int stop = atomic_load_explicit(&r->top->stop, memory_order_acquire) & WEFT__STOP_MASK;
    if (stop && r->target != 0) {
        atomic_fetch_add_explicit(&r->top->skipped, r->tf->nnodes - r->tf->nerased, memory_order_relaxed);
        /* The metrics count them too (a subflow's or module's graph that starts
         * after its run stopped, not only a queued run). */
        weft__hook_skipped_n(w, r->tf->nnodes - r->tf->nerased);
    }
    return begin_iteration_seen(w, r, stop);
}

static void run_free(weft_future *f) {
    weft__free((void *)f->bodies, f->nbodies * sizeof *f->bodies);
    weft__free_aligned(f, sizeof(weft__run), WEFT__CACHE_LINE);
}

/* *out = f; sequentially consistent for a member of a set (submit says why). */
static inline void set_out(weft_future **out, weft_future *f, const weft_future *set) {
    if (set) __atomic_store_n(out, f, __ATOMIC_SEQ_CST);
    else *out = f;
}

/* call: the public call made (weft_run, weft_run_n, ...), named in the
 * messages (they all said "weft_run"). */
static weft_status submit(weft_executor *ex, weft_taskflow *tf, uint64_t target, weft_pred_fn pred, void *arg,
                          uint8_t prio, weft_future **out, const char *call, const weft_future *set) {
    /* Stores through out for a member of a weft_run_many set are atomic
     * (sequentially consistent): out is then the set's member table, which a
     * task of an earlier member may read through the set's future while this
     * call writes it (run_many.c).  Any other caller's out is published by
     * the submission's release: a plain store, no locked instruction a run. */
    if (out) set_out(out, NULL, set); /* on failure too, as weft_run_many and weft_run_n_parallel */
    if (!tf) return weft__fail(call, WEFT_EINVAL, "tf is NULL");
    if (tf->is_subflow_graph)
        return weft__tf_error(tf, WEFT_EINVAL, "%s: a subflow's graph runs only as part of its task", call);
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return weft__tf_error(tf, dst, "%s: no default executor", call);
    if (atomic_load_explicit(&ex->shutdown, memory_order_acquire))
        return weft__tf_error(tf, WEFT_ESHUTDOWN, "%s: the executor is being destroyed", call);
    /* Aligned: `pending` sits on a cache line of its own. */
    weft__run *r = weft__alloc_aligned(sizeof *r, WEFT__CACHE_LINE);
    if (!r) return weft__tf_error(tf, WEFT_ENOMEM, "%s: out of memory", call);
    weft__future_init(&r->fut, ex, out ? 2 : 1, run_free);
    r->fut.owner = tf; /* a task of tf waiting on this run would wait forever */
    /* So would a task of one of tf's module bodies: the run's module waits
     * for the body's run that task belongs to (core/future.c).  Copied, since
     * a waiter may still look after the run has ended and tf is gone. */
    if (__builtin_expect(tf->nbodies != 0, 0) &&
        weft__module_list_bodies(tf, &r->fut.bodies, &r->fut.nbodies) != WEFT_OK) {
        weft__free_aligned(r, sizeof *r, WEFT__CACHE_LINE);
        return weft__tf_error(tf, WEFT_ENOMEM, "%s: out of memory", call);
    }
    /* observe/: the run id of traces and observer events.  Graph runs only: an
     * async task is not traced, and this RMW is on the executor's shared line. */
    r->fut.id = atomic_fetch_add_explicit(&ex->next_run_id, 1, memory_order_relaxed) + 1;
    r->start = (weft__job){run_start, NULL};
    r->tf = tf;
    r->ex = ex;
    r->next = NULL;
    r->target = target;
    r->pred = pred;
    r->pred_arg = arg;
    r->top = &r->fut;
    r->parent = NULL;
    r->anchor = r;
    r->pnode = NULL;
    r->role = WEFT__ROLE_TOP;
    r->prio = prio;
    atomic_init(&r->pending, 0);
    /* Before the run can start: a task of it may read the caller's handle
     * (a task cancelling its own run through a variable the caller set;
     * graph.h).  The submission's release publishes the store with the job
     * (fj_hunt38's nested run raced here under TSan: weft_run stored it
     * after the run had started). */
    if (out) set_out(out, &r->fut, set);
    /* A member of a weft_run_many set that a task of an earlier member
     * cancelled (weft_run_many_cancel, a token attached to the set) before
     * this run was in the set's table: the canceller set the set's
     * WEFT__STOP_PARTS and then read the table, this call stored the run there and now reads the
     * bit (both sequentially consistent), so one of the two cancels it, and
     * here before any of its tasks can start (it ran to its end). */
    if (set && (atomic_load_explicit(&set->stop, memory_order_seq_cst) & WEFT__STOP_PARTS))
        atomic_fetch_or_explicit(&r->fut.stop, WEFT__STOP_CANCEL, memory_order_relaxed);

    weft__mutex_lock(&tf->mu);
    weft_status st = tf->active || weft__taskflow_prepared(tf) ? WEFT_OK : weft__taskflow_prepare(tf, NULL, call);
    /* Queued behind a run stuck at fork(), its waiter would hang: say so. */
    if (st == WEFT_OK && weft__tf_stuck_at_fork(tf)) st = weft__tf_refuse_stuck(tf, call);
    if (st == WEFT_OK && !tf->active) {
        /* Nothing ahead of us: start now.  Submitting under the lock keeps a
         * failure simple to undo, as no other run can have queued behind us. */
        tf->active = tf->tail = r;
        st = weft__submit(ex, &r->start);
        if (st != WEFT_OK) {
            tf->active = tf->tail = NULL;
            weft__tf_error(tf, st, "%s: %s", call, weft_strerror(st));
        }
    } else if (st == WEFT_OK) {
        tf->tail->next = r; /* the run ahead of us starts us when it finishes */
        tf->tail = r;
    }
    if (st == WEFT_OK) {
        weft__tf_inflight_in(tf);
        if (tf->nbodies) weft__module_hold_bodies(tf, 1); /* finish_run gives them back */
        weft__runs_begin(ex, weft__current_worker(ex));
        weft__tf_done(tf, WEFT_OK); /* under the lock: tf may go once it is released */
    }
    weft__mutex_unlock(&tf->mu);
    if (st != WEFT_OK) {
        if (out) set_out(out, NULL, set);
        run_free(&r->fut);
        return st;
    }
    return WEFT_OK;
}

weft_status weft__tf_refuse_stuck(weft_taskflow *tf, const char *call) {
    return weft__tf_error(tf, WEFT_EFORKED,
                          "%s: a run of this taskflow was in flight at fork() on an executor of the parent "
                          "process; in this child it never ends, so no run of it can start here",
                          call);
}

weft_status weft__run_member(weft_executor *ex, weft_taskflow *tf, weft_future **out, const weft_future *set) {
    return submit(ex, tf, 1, NULL, NULL, 0, out, "weft_run", set);
}

weft_status weft_run(weft_executor *ex, weft_taskflow *tf, weft_future **out) {
    return submit(ex, tf, 1, NULL, NULL, 0, out, __func__, NULL);
}

weft_status weft_run_n(weft_executor *ex, weft_taskflow *tf, uint64_t n, weft_future **out) {
    return submit(ex, tf, n, NULL, NULL, 0, out, __func__, NULL);
}

weft_status weft_run_until(weft_executor *ex, weft_taskflow *tf, weft_pred_fn pred, void *arg, weft_future **out) {
    if (out) *out = NULL;
    if (!pred)
        return tf ? weft__tf_error(tf, WEFT_EINVAL, "weft_run_until: the predicate is NULL")
                  : weft__fail(__func__, WEFT_EINVAL, "tf is NULL");
    return submit(ex, tf, UINT64_MAX, pred, arg, 0, out, __func__, NULL);
}

weft_status weft_run_with_priority(weft_executor *ex, weft_taskflow *tf, weft_priority priority, weft_future **out) {
    if (out) *out = NULL;
    if (priority < WEFT_PRIORITY_LOW || priority > WEFT_PRIORITY_CRITICAL)
        return tf ? weft__tf_error(tf, WEFT_EINVAL, "weft_run_with_priority: %d is not a priority", (int)priority)
                  : weft__fail(__func__, WEFT_EINVAL, "tf is NULL");
    /* NORMAL is weft_run's level: the plain path. */
    uint8_t prio = priority == WEFT_PRIORITY_NORMAL ? 0 : (uint8_t)((int)priority + 2);
    return submit(ex, tf, 1, NULL, NULL, prio, out, __func__, NULL);
}

/* From a task of tf or of a module body below tf (or of a graph nested in a
 * run of one), a run of tf queues (or its module waits) behind the run that
 * task belongs to: waiting for it can never end.  Told
 * before submitting, so that the refused call leaves nothing behind (the run
 * would otherwise execute later, and one whose tasks do the same, forever). */
weft_status weft__refuse_own_run(weft_taskflow *tf, const char *call) {
    if (!weft__runs_under(tf) && !(tf->nbodies && weft__module_body_runs_here(tf))) return WEFT_OK;
    return weft__tf_error(tf, WEFT_EDEADLK,
                          "%s: called from a task of taskflow '%s' or of one of its module bodies (or of a graph its run runs): its run would "
                          "wait for that task, which waits for it; nothing was submitted",
                          call, tf->name ? tf->name : "");
}

weft_status weft_run_and_wait(weft_executor *ex, weft_taskflow *tf) {
    weft_future *f;
    weft_status st = tf ? weft__refuse_own_run(tf, "weft_run_and_wait") : WEFT_OK;
    if (st != WEFT_OK) return st;
    st = weft_run(ex, tf, &f);
    if (st != WEFT_OK) return st;
    st = weft_future_wait(f);
    weft_future_destroy(f);
    return st;
}

/* ---- nested runs: subflows and modules ------------------------------------------ */

/* A nested run ended: resume its parent.  A joined one finishes the task that
 * started it; a detached one gives back the count it holds on its anchor.  The
 * record may be reused as soon as that happens, so it is read first. */
static weft__job *finish_nested(weft__worker *w, weft__run *r, weft__run *next) {
    weft__run *parent = r->parent, *anchor = r->anchor;
    weft__node *pnode = r->pnode;
    weft__job *resume = NULL;
    if (r->role == WEFT__ROLE_JOINED) resume = weft__release_successors(w, parent, pnode);
    else if (r->role == WEFT__ROLE_DETACHED) resume = weft__run_settle(w, anchor, -1);
    /* Release: the task waiting in weft_subflow_join (acquire) sees the graph's work. */
    else atomic_store_explicit(&r->fut.done, 1, memory_order_release);
    weft__job *start = next ? start_queued(w, next) : NULL;
    if (!start) return resume;
    if (!resume) return start;
    weft__push_local(w, start);
    return resume;
}

weft__job *weft__run_start_nested(weft__run *sub, weft_status *st) {
    weft_taskflow *tf = sub->tf;
    sub->start = (weft__job){run_start, NULL};
    sub->next = NULL;
    sub->prio = 0; /* a nested graph's tasks keep their own priorities */
    atomic_store_explicit(&sub->fut.iterations, 0, memory_order_relaxed);
    atomic_store_explicit(&sub->fut.done, 0, memory_order_relaxed);
    atomic_store_explicit(&sub->pending, 0, memory_order_relaxed);
    bool lock = run_needs_lock(tf);
    if (lock) weft__mutex_lock(&tf->mu);
    *st = tf->active || weft__taskflow_prepared(tf) ? WEFT_OK
                                                    : weft__taskflow_prepare(tf, NULL, "weft_run (a nested graph)");
    /* A module's body whose run was in flight at fork() on an executor of the
     * parent: as in submit, a run queued behind it never starts in this
     * child, and the module task (and its whole run) would wait for ever.
     * The task fails instead, and its run ends with this status. */
    if (*st == WEFT_OK && weft__tf_stuck_at_fork(tf)) *st = WEFT_EFORKED;
    weft__job *now = NULL;
    if (*st == WEFT_OK) {
        if (!tf->active) {
            tf->active = tf->tail = sub;
            now = &sub->start;
        } else {
            tf->tail->next = sub; /* runs when the run ahead of it ends */
            tf->tail = sub;
        }
        weft__tf_inflight_in(tf);
    } else {
        weft__module_drop_held(tf); /* a subflow's graph that will not run */
    }
    if (lock) weft__mutex_unlock(&tf->mu);
    return now;
}

/* ---- runs with priorities (priority.c) ---- */

