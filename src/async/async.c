/* weft_async, weft_silent_async, weft_dependent_async: queueing, running, and
 * releasing dependents when a task finishes. */
#include "async/async.h"
#include "core/alloc.h"
#include "core/default_executor.h"
#include "core/obs_hooks.h" /* metrics and profiler: one branch each when off */
#include "sched/sched.h"
#include "core/error_detail.h"

/* Marks a finished task's successor list: no edge may be added any more. */
#define CLOSED ((weft__async_edge *)(uintptr_t)1)

static weft__job *async_job_run(weft__worker *w, weft__job *job);

/* Queues a task whose dependencies are done; w is the calling thread's worker
 * or NULL.  Its job holds the producer reference.  0, or (only off the
 * workers) WEFT_ENOMEM (the injector is full) or WEFT_EFORKED. */
static int enqueue(weft__async *a, weft__worker *w) {
    a->job.run = async_job_run;
    a->job.next = NULL;
    if (__builtin_expect((a->sched.gen | a->sched.slot) != 0, 0)) { /* a priority or a handle: sched/ */
        if (a->sched.gen) weft__sched_queue_job(a->fut.ex, w, a->sched, &a->job);
        else if (a->sched.slot & WEFT__ASYNC_ON_NODE) /* a NUMA node hint */
            return weft__submit_to_node(a->fut.ex, w, &a->job, a->sched.slot & ~WEFT__ASYNC_ON_NODE);
        else if (weft__sched_submit(a->fut.ex, w, &a->job, (int)a->sched.slot - 2) != WEFT_OK)
            return weft__submit_from(a->fut.ex, w, &a->job); /* no memory in the policy: a deque */
        return 0;
    }
    return weft__submit_from(a->fut.ex, w, &a->job);
}

/* Counts one finished dependency of a; the last one queues it.  Called on
 * worker w (a finishing task), where queueing cannot fail, or with w NULL by
 * weft_sched_remove reporting a removed task cancelled on another thread
 * (sched/api.c), where the injector may lack memory: a must still run, so
 * it then goes to the injector's spare list, as weft__sched_resubmit does. */
static void dependency_done(weft__async *a, weft__worker *w) {
    /* acq_rel: the last decrement sees every dependency's effects, so fn does. */
    if (atomic_fetch_sub_explicit(&a->join, 1, memory_order_acq_rel) != 1) return;
    /* Spinning until the injector got memory hung the caller for as long as
     * memory stayed short (weft_sched_remove never returned): the injector's
     * spare list takes the job without memory. */
    if (enqueue(a, w) == WEFT_ENOMEM) (void)weft__submit_from_always(a->fut.ex, w, &a->job);
}

/* The task finished on w: close its successor list and release each dependent. */
static void release_dependents(weft__async *a, weft__worker *w) {
    /* acq_rel: acquire the edges pushed with release; release our effects to the
     * creators that see CLOSED. */
    weft__async_edge *e = atomic_exchange_explicit(&a->succ, CLOSED, memory_order_acq_rel);
    while (e) {
        weft__async_edge *next = e->next; /* e may be freed once its count drops */
        dependency_done(e->succ, w);
        e = next;
    }
}

/* Whether f is a dependent of a, directly or through other dependents.  a
 * runs (a context on this worker's chain works for it) or is completing
 * here (its then-callback runs), so it has not released its
 * dependents: each of them, and each of theirs in turn, still waits for it,
 * so none has started, been freed or closed its list meanwhile.  Other
 * threads may push edges at a list's head as it is read (link_edge):
 * acquire loads see each pushed edge whole.  Looks at WALK_EDGES edges at
 * most (a path of diamonds is walked once per path), and keeps WALK_DEPTH
 * places to come back to: past either, no answer (false, as before). */
static bool has_dependent(weft__async *a, const weft_future *f) {
    enum { WALK_EDGES = 4096, WALK_DEPTH = 64 };
    const weft__async_edge *back[WALK_DEPTH];
    unsigned nback = 0, budget = WALK_EDGES;
    const weft__async_edge *e = atomic_load_explicit(&a->succ, memory_order_acquire);
    for (;;) {
        if (!e || e == CLOSED) {
            if (!nback) return false;
            e = back[--nback];
        }
        if (--budget == 0) return false;
        weft__async *d = e->succ;
        if (&d->fut == f) return true;
        const weft__async_edge *down = atomic_load_explicit(&d->succ, memory_order_acquire);
        if (down && down != CLOSED) {
            if (e->next) {
                if (nback == WALK_DEPTH) return false;
                back[nback++] = e->next;
            }
            e = down;
        } else {
            e = e->next;
        }
    }
}

const char *weft__async_waits_behind(weft__worker *w, void *state, const weft_future *f) {
    weft__async_worker *aw = state;
    weft__async *fa = weft__async_of((weft_future *)f);
    /* Only a dependent with a dependency unfinished can wait behind one. */
    if (!fa || !fa->nedges || atomic_load_explicit(&fa->join, memory_order_acquire) == 0) return NULL;
    /* The async tasks this wait keeps from returning: each context on w's
     * chain whose stop word is an async task's (WEFT__STOP_ASYNC): the task
     * itself lower on this worker's stack (its wait ran the caller), and work
     * that runs for it here though it runs elsewhere, a fork-join child a
     * thief took from it or a chunk of an algorithm it called, which it
     * syncs before it returns.  A per-worker stack of the async tasks run
     * here saw only the first: such a child or chunk on another worker
     * waited for ever.  The word's owner is alive while its context is on
     * the chain (cancellation tests read the word too). */
    const _Atomic int *seen = NULL;
    for (const weft_ctx *c = w->ctx; c; c = c->outer) {
        const _Atomic int *s = c->stop;
        if (!s || s == seen) continue;
        seen = s;
        if (!(atomic_load_explicit(s, memory_order_relaxed) & WEFT__STOP_ASYNC)) continue;
        weft__async *a = (weft__async *)(void *)((char *)s - offsetof(weft__async, fut.stop));
        if (has_dependent(a, f))
            return "f is the future of a dependent async task that waits, through its dependencies, for an async task "
                   "that cannot return before this wait does (the waiting task, one whose wait is running it, or "
                   "the task that spawned this fork-join child or called this parallel algorithm): it could only "
                   "start after that task returns";
    }
    /* A task whose then-callback runs on this worker, below this wait: it
     * releases its dependents once the callback has returned. */
    for (const weft__async_completing *k = aw->completing; k; k = k->outer)
        if (has_dependent(k->a, f))
            return "f is the future of a dependent async task that waits, through its dependencies, for an async task "
                   "whose weft_future_then callback is running on this worker (the caller, or a callback whose wait is "
                   "running it): that task releases its dependents once the callback has returned";
    return NULL;
}

void weft__async_execute(weft__worker *w, weft__async *a) {
    weft_future *f = &a->fut;
    weft_executor *ex = f->ex;
    if ((atomic_load_explicit(&f->stop, memory_order_acquire) & WEFT__STOP_CANCEL) == 0) {
        /* w is a worker here: only a cancelled task is reported with w NULL.
         * Its context's stop word says it runs (weft__async_waits_behind). */
        int r = weft__run_observed(w, WEFT__WORK_ASYNC, &f->stop, a->fn, a->arg);
        if (r != 0) weft__future_fail(f, r, "", 0);
    } else {
        atomic_fetch_add_explicit(&f->skipped, 1, memory_order_relaxed); /* weft_future_info; complete releases */
        /* observe/: cancelled before it ran.  A removal reported off the
         * workers (w NULL, sched/api.c) is counted too: in worker 0's figures. */
        weft__hook_skipped_on(ex, w, 1);
    }
    if (a->sems) weft__async_sems_release(w, a); /* before the future: a waiter may reuse them */
    if (w) {
        /* Its then-callback runs in the completion, before its dependents
         * are released: a wait there for one of them is refused
         * (weft__async_waits_behind).  w NULL: a removal reported off the
         * workers, whose waits are never refused. */
        weft__async_worker *aw = weft__async_worker_of(w);
        weft__async_completing k = {a, aw->completing};
        aw->completing = &k;
        weft__future_complete(f);
        aw->completing = k.outer;
    } else {
        weft__future_complete(f);
    }
    release_dependents(a, w);
    weft__runs_end(ex, w);
}

static weft__job *async_job_run(weft__worker *w, weft__job *job) {
    weft__async *a = (weft__async *)((char *)job - offsetof(weft__async, job));
    if (a->sems && !weft__async_sems_acquire(w, a)) return NULL; /* parked: a release queues it again */
    /* acq_rel: only one of the queue and an isolated waiter runs it. */
    if (atomic_exchange_explicit(&a->claimed, 1, memory_order_acq_rel) == 0) weft__async_execute(w, a);
    weft__future_release(&a->fut); /* the producer's (queue's) reference */
    return NULL;
}

/* Undoes a task that could not be queued (nothing else can reference it); w is
 * the submitting thread's worker, or NULL.  Returns st, why it failed, with the
 * message naming `call` (the public function): the queue's refusal is where
 * the failure is decided, and returning st alone left the thread's message
 * as an earlier failure had set it (weft/core.h, weft_last_error_message). */
static weft_status give_up(const char *call, weft__async *a, weft__worker *w, bool keep_handle, int st) {
    if (keep_handle) weft__future_release(&a->fut);
    weft__runs_end(a->fut.ex, w);
    weft__future_release(&a->fut);
    return weft__async_queue_refused(call, st);
}

__attribute__((cold)) weft_status weft__async_queue_refused(const char *call, int st) {
    if (st == WEFT_EFORKED) return weft__fail(call, WEFT_EFORKED, WEFT__FORKED_WHY);
    return weft__fail(call, (weft_status)st, "no memory to queue the task on the executor (nothing was queued)");
}

/* Links a after dependency d; false if d has finished already. */
static bool link_edge(weft__async *d, weft__async_edge *e) {
    weft__async_edge *head = atomic_load_explicit(&d->succ, memory_order_acquire);
    do {
        if (head == CLOSED) return false;
        e->next = head;
        /* Release: the finisher that takes the list sees e's fields. */
    } while (!atomic_compare_exchange_weak_explicit(&d->succ, &head, e, memory_order_release,
                                                    memory_order_acquire));
    return true;
}

/* WEFT_OK, or WEFT_EINVAL with a message naming the first bad dependency and
 * what is wrong with it: a future of a taskflow run or of a set (weft_run,
 * weft_run_many) is a future of the right executor, and a message that said
 * "NULL or of another executor" sent its user looking in the wrong place. */
static weft_status deps_check(const char *call, weft_executor *ex, weft_future *const *deps, size_t ndeps) {
    if (ndeps && !deps) return weft__fail(call, WEFT_EINVAL, "deps is NULL with ndeps = %zu", ndeps);
    /* The task's join counter is 32 bits (ndeps + 1 of them): more wrapped it
     * and started the task early; and a count no array holds had the loop
     * below read far past the caller's array first.  (2^32 - 2 dependencies
     * are 32 GiB of pointers: no program gets near it with a real array.) */
    if (ndeps >= UINT32_MAX) return weft__fail(call, WEFT_EINVAL, "ndeps = %zu: at most %u", ndeps, UINT32_MAX - 1);
    for (size_t i = 0; i < ndeps; i++) {
        weft__async *d = weft__async_of(deps[i]);
        if (!deps[i]) return weft__fail(call, WEFT_EINVAL, "deps[%zu] is NULL", i);
        if (!d)
            return weft__fail(call, WEFT_EINVAL,
                              "deps[%zu] is not the future of an async task (a taskflow run's or a set's "
                              "cannot be a dependency)",
                              i);
        if (d->fut.ex != ex) return weft__fail(call, WEFT_EINVAL, "deps[%zu] is a task of another executor", i);
    }
    return WEFT_OK;
}

/* weft_sched_remove took the task out: it runs only to report itself
 * cancelled (its future becomes WEFT_ECANCELED), right away on the remover's
 * thread if it was queued (async_job_run with w NULL off the workers: nothing
 * on that path needs a worker), else once its dependencies finish.  Under the
 * queue's lock. */
static void async_removed(weft__job *job) {
    weft__async *a = (weft__async *)((char *)job - offsetof(weft__async, job));
    atomic_fetch_or_explicit(&a->fut.stop, WEFT__STOP_CANCEL, memory_order_seq_cst);
}

/* A priority or a handle: the task's place in the scheduling layer's queue,
 * reserved now (the handle exists before it is queued), and inheritance:
 * its dependencies still queued below its priority are raised to it. */
static int schedule(weft__async *a, const weft_async_options *opt, weft_future *const *deps, size_t ndeps) {
    if (!opt) return WEFT_OK;
    if (opt->priority == WEFT_PRIORITY_NORMAL && !opt->handle) {
        /* A node index of 2^31 or more is no machine's (it would lose its
         * top bit to the flag and land on a real node): ignored, as async.h
         * says of a node without workers. */
        if (opt->numa_node && opt->numa_node - 1 < WEFT__ASYNC_ON_NODE)
            a->sched.slot = WEFT__ASYNC_ON_NODE | (opt->numa_node - 1); /* enqueue */
        return WEFT_OK;
    }
    if (!opt->handle && weft__sched_policy_orders(a->fut.ex)) {
        a->sched.slot = (uint32_t)((int)opt->priority + 2); /* the policy orders it (enqueue) */
        return WEFT_OK;
    }
    int st = weft__sched_reserve(a->fut.ex, (int)opt->priority, async_removed, &a->job, &a->sched);
    if (st != WEFT_OK) return st;
    for (size_t i = 0; i < ndeps; i++) {
        weft__async *d = weft__async_of(deps[i]);
        if (d && d->sched.gen) weft__sched_inherit(a->fut.ex, d->sched, (int)opt->priority);
    }
    if (opt->handle) *opt->handle = a->sched;
    return WEFT_OK;
}

/* `call`: the public function, for the messages. */
static weft_status submit(const char *call, weft_executor *ex, weft_task_fn fn, void *arg, weft_future *const *deps,
                          size_t ndeps, const weft_async_options *opt, weft_future **out) {
    if (out) *out = NULL;
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return dst;
    if (!fn) return weft__fail(call, WEFT_EINVAL, "fn is NULL");
    weft_status dep = deps_check(call, ex, deps, ndeps);
    if (dep != WEFT_OK) return dep;
    weft__worker *w = weft__current_worker(ex);
    /* No workers in this process (fork): refused before any record or edge, as
     * a task waiting on the parent's unfinished tasks would never be queued. */
    if (!w && weft__forked(ex)) return weft__fail(call, WEFT_EFORKED, WEFT__FORKED_WHY);
    weft__async *a = weft__async_new(ex, w, fn, arg, out != NULL);
    if (!a) return weft__fail_st(call, WEFT_ENOMEM);
    int sst = schedule(a, opt, deps, ndeps);
    if (sst != WEFT_OK) {
        if (out) weft__future_release(&a->fut);
        weft__future_release(&a->fut);
        /* The scheduling layer returns a bare status (its queue's slots could
         * not grow): the message is set here, or the thread kept an earlier
         * failure's (weft/core.h, weft_last_error_message). */
        if (sst == WEFT_ENOMEM)
            return weft__fail(call, WEFT_ENOMEM, "no memory for the task's place in the executor's priority queue");
        return weft__fail_st(call, (weft_status)sst);
    }
    if (ndeps) {
        a->edges = weft__alloc(ndeps * sizeof *a->edges);
        if (!a->edges) {
            if (a->sched.gen) weft__sched_unreserve(ex, a->sched);
            if (out) weft__future_release(&a->fut);
            weft__future_release(&a->fut);
            return weft__fail_st(call, WEFT_ENOMEM);
        }
        a->nedges = ndeps;
    }
    if (ndeps == 0) return weft__async_start(call, a, w, out);
    weft__runs_begin(ex, w);
    atomic_store_explicit(&a->join, (uint32_t)ndeps + 1, memory_order_relaxed);
    /* Before the first edge is linked: from then on a dependency that
     * finishes on another thread may start the task, which may read the
     * caller's handle (weft__async_start says why). */
    if (out) *out = &a->fut;
    uint32_t finished = 0;
    for (size_t i = 0; i < ndeps; i++) {
        a->edges[i].succ = a;
        if (!link_edge(weft__async_of(deps[i]), &a->edges[i])) finished++;
    }
    /* Our own 1 plus the dependencies that had finished before we linked. */
    if (atomic_fetch_sub_explicit(&a->join, finished + 1, memory_order_acq_rel) == finished + 1) {
        int st = enqueue(a, w);
        if (st != 0) { /* all edges were consumed: nothing points at a */
            if (out) *out = NULL;
            return give_up(call, a, w, out != NULL, st);
        }
    }
    return WEFT_OK;
}

weft_status weft__async_start(const char *call, weft__async *a, weft__worker *w, weft_future **out) {
    weft__runs_begin(a->fut.ex, w);
    /* Nobody else can see a yet: no count to take down.  join = 0 says it may
     * run (weft_future_wait_isolated reads it). */
    atomic_store_explicit(&a->join, 0, memory_order_relaxed);
    /* Before the task can start: it may read the caller's handle (a task
     * cancelling itself through a variable the caller set), and the queue's
     * release publishes this store with the task. */
    if (out) *out = &a->fut;
    int st = enqueue(a, w);
    if (st != 0) {
        if (out) *out = NULL;
        if (a->sems) weft__async_sems_free(a->sems);
        a->sems = NULL;
        return give_up(call, a, w, out != NULL, st);
    }
    return WEFT_OK;
}

weft_status weft_dependent_async(weft_executor *ex, weft_task_fn fn, void *arg, weft_future *const *deps,
                                 size_t ndeps, weft_future **out) {
    return submit(__func__, ex, fn, arg, deps, ndeps, NULL, out);
}

weft_status weft__async_with(weft_executor *ex, weft_task_fn fn, void *arg, const weft_async_options *opt,
                             weft_future **out) {
    if (out) *out = NULL;
    if (opt && (opt->priority < WEFT_PRIORITY_LOW || opt->priority > WEFT_PRIORITY_CRITICAL))
        return weft__fail("weft_async_with", WEFT_EINVAL, "%d is not a priority", (int)opt->priority);
    return submit("weft_async_with", ex, fn, arg, opt ? opt->deps : NULL, opt ? opt->ndeps : 0, opt, out);
}

weft_status weft_async(weft_executor *ex, weft_task_fn fn, void *arg, weft_future **out) {
    return submit(__func__, ex, fn, arg, NULL, 0, NULL, out);
}


static bool future_done(weft_future *f) {
    return atomic_load_explicit(&f->done, memory_order_acquire) != 0;
}

weft_status weft_future_wait_isolated(weft_future *f) {
    if (!f) return weft__fail(__func__, WEFT_EINVAL, "f is NULL");
    weft__worker *w = weft__current_worker(f->ex);
    if (!w) return weft_future_wait(f);
    weft__async *a = weft__async_of(f);
    if (!a) return weft__fail(__func__, WEFT_EINVAL, "f is not the future of an async task");
    /* A task holding semaphores may be parked behind one that this thread's
     * task holds: wait by running other work, which cannot deadlock. */
    if (a->sems) return weft_future_wait(f);
    if (!future_done(f) && atomic_load_explicit(&a->join, memory_order_acquire) != 0) {
        /* A dependency makes its future ready and then releases its dependents
         * (weft__async_execute: a dependent must find it ready), so a caller
         * that saw the last dependency ready can get here before the count
         * drops.  Wait that moment out before saying the dependencies are
         * unfinished (2 workers: 800-1600 spurious EAGAINs in 2000 tries). */
        for (unsigned i = 0; i < 4096 && atomic_load_explicit(&a->join, memory_order_acquire) != 0; i++)
            weft__cpu_relax();
        if (atomic_load_explicit(&a->join, memory_order_acquire) != 0) return WEFT_EAGAIN;
    }
    /* Started lower on this worker's stack (a wait there ran this caller):
     * the spin below would never end. */
    if (!future_done(f) && weft__future_waits_on_itself(f))
        return weft__fail(__func__, WEFT_EDEADLK,
                          "the task waits for itself (it started lower on this worker's stack)");
    /* Queued but not started: run it here; its queue entry will find it
     * claimed.  A task with a handle leaves the scheduling layer's queue
     * first, so that the handle reads as gone (weft_sched_priority, _remove:
     * WEFT_ENOENT) as for a task a worker took; the entry taken out held the
     * queue's reference, dropped after the run. */
    if (atomic_exchange_explicit(&a->claimed, 1, memory_order_acq_rel) == 0) {
        bool took = a->sched.gen != 0 && weft__sched_withdraw(f->ex, a->sched);
        weft__async_execute(w, a);
        if (took) weft__future_release(&a->fut);
    }
    unsigned idle = 0;
    while (!future_done(f)) weft__worker_pause(w, &idle);
    return f->status;
}
