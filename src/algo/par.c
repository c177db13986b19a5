/* weft__par_tasks: n jobs and a completion counter, on the core's job API.
 *
 * From a worker: jobs 1..n-1 go to the worker's own deque (thieves spread them),
 * job 0 runs inline, and the worker runs other jobs until the counter reaches
 * zero.  From any other thread: jobs 1..n-1 go through the injector with one
 * wake-up of up to n-1 sleepers, the caller runs job 0 (unless the workers are
 * bound to CPUs: then all n go to the workers), then every queued job no
 * worker has started yet (each job is claimed once, by an exchange), and sleeps
 * on the counter only for jobs that workers are running.  Without that, the
 * caller waited for a worker to wake up and run even the last, short job:
 * milliseconds on a loaded VM, whatever the loop's size (issue 17: for_each of
 * 10^6 on 2 threads took 10x oneTBB's time).  Claimed jobs still sit in the
 * injector, pointing at the state, so the state and jobs are then one heap
 * block with a reference per queued job, freed by the last to let go.
 *
 * A call made at a priority (weft_algo_set_priority) queues jobs 1..n-1 in the
 * scheduling layer's queue at that level instead (weft__sched_submit), and each
 * job runs with the thread's priority set to the call's, so nested calls in its
 * chunks inherit it.  A worker that waits for such a call runs other tasks at
 * the default priority meanwhile: they are not the call's.
 *
 * A call made with a NUMA node hint (weft_algo_set_numa_node) on an executor
 * with mailboxes (bound workers over several nodes) queues jobs 1..n-1 (all n
 * from outside, the workers being bound) in that node's mailbox, as a hinted
 * async task is queued: the node's workers take them first in every steal
 * round, the others only in their last look before sleeping.  From a worker
 * of that node, its own deque is the node's: the plain path.  With a
 * priority too, the priority queue decides and the hint is ignored.  The
 * thread's settings are one word (weft__algo_how): with neither, none of this
 * happens, one thread-local load per call. */
#include "algo/par.h"

#include "core/alloc.h"
#include "core/executor.h"
#include "core/fj.h"        /* weft__fj_sync_left: spawns a job's chunks left unsynced */
#include "core/obs_hooks.h" /* metrics and profiler: each job is a span */
#include "platform/platform.h"
#include "sched/sched.h" /* weft__sched_submit: jobs of a call made at a priority */

enum { STACK_JOBS = 16 };

typedef struct par par;

typedef struct par_job {
    weft__job job; /* must stay first */
    par *owner;
    unsigned t;
    _Atomic int claimed; /* shared state only: 1 once a thread took it to run */
} par_job;

struct par {
    weft__task_fn fn;
    void *ctx;
    unsigned n;
    uint32_t how; /* the call's settings (weft__algo_how when it was made) */
    bool external; /* the caller sleeps on `left` */
    /* The calling worker's context (its task's, w->ctx), NULL from any other
     * thread (the shared state is never a worker's): on the caller's stack
     * until every job has finished.  A job another worker runs runs in a
     * context of the same run (job_run). */
    const weft_ctx *cx;
    par_job *jobs;
    /* A heap block (this and the jobs after it) that the calling thread may
     * outlive: `refs` holds one per job queued and one for the caller. */
    bool shared;
    size_t bytes;
    _Atomic uint32_t refs;
    _Alignas(WEFT__CACHE_LINE) _Atomic uint32_t left; /* jobs not yet finished */
};

/* Lets go of a shared state; the last one frees it. */
static void unref(par *p) {
    /* acq_rel: the last one sees every other's use of the block before freeing. */
    if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1) weft__free_aligned(p, p->bytes, WEFT__CACHE_LINE);
}

static void finish(par *p) {
    /* Read before the decrement: once `left` reaches zero the caller may return
     * and *p (on its stack) is gone; only the futex address is used after. */
    bool external = p->external;
    _Atomic uint32_t *word = &p->left;
    /* acq_rel: releases this job's writes to the caller, which loads `left` with
     * acquire; acquire orders the other jobs' writes before the wake. */
    if (atomic_fetch_sub_explicit(word, 1, memory_order_acq_rel) == 1 && external)
        weft__futex_wake(word, 1);
}

static inline void run_one_body(weft__worker *w, par *p, unsigned t) {
    /* observe/: counted when a worker runs it (w NULL: the calling thread). */
    const void *id = (const void *)(uintptr_t)p->fn;
    struct weft__obs *o = w ? weft__hook_work_begin(w, WEFT__WORK_CHUNK, id, t, p->n) : NULL;
    p->fn(p->ctx, t, p->n);
    weft__hook_work_end(w, o, id, 0);
}

static void run_one(weft__worker *w, par *p, unsigned t) {
    run_one_body(w, p, t);
    finish(p);
}

/* Claims job j of a shared state: true for the one thread that runs it. */
static inline bool claim(par_job *j) {
    return atomic_exchange_explicit(&j->claimed, 1, memory_order_relaxed) == 0;
}

/* A job of a call made by a task (p->cx), run by a worker whose innermost
 * context is not that task's: another worker (a thief), or the caller's after
 * a wait of its ran another task.  Its chunks run in a context of the call's
 * run, chained on the worker's as a task's is (the null task, as a pipeline
 * stage's on a thief, pipeline/run.c): there was none, or an unrelated
 * task's, so a chunk's wait for its own run (its future, a run of its
 * taskflow or of one its task is nested in) was not refused with
 * WEFT_EDEADLK as on the caller's worker and hung the run, weft_current_ctx()
 * gave it nothing to spawn through, and it did not see its run's
 * cancellation.  Spawns its chunks left unsynced are synced before the job
 * finishes: after that the caller may return, and the run may end.  Their
 * results are dropped: a chunk returns nothing (weft/algo.h). */
static __attribute__((noinline)) void run_in_ctx(weft__worker *w, par *p, unsigned t) {
    const weft_ctx *c = p->cx;
    weft_ctx cx = weft__ctx_on(w, NULL, c->stop, c->run);
    w->ctx = &cx;
    run_one_body(w, p, t);
    if (weft__fj_left_unsynced(w, &cx)) (void)weft__fj_sync_left(w, &cx);
    w->ctx = cx.outer;
    finish(p);
}

static weft__job *job_run(weft__worker *w, weft__job *self) {
    par_job *j = (par_job *)self;
    par *p = j->owner;
    if (!p->shared) {
        /* Two loads and a compare on the plain path (the caller's own jobs). */
        if (__builtin_expect(p->cx != NULL && w->ctx != p->cx, 0)) run_in_ctx(w, p, j->t);
        else run_one(w, p, j->t);
        return NULL;
    }
    if (claim(j)) run_one(w, p, j->t);
    unref(p); /* after finish: our reference keeps the block alive through it */
    return NULL;
}

/* A job of a call made at a priority or with a hint: it runs with the
 * thread's settings set to the call's (nested calls inherit them), and puts
 * back what was there. */
static weft__job *job_run_how(weft__worker *w, weft__job *self) {
    uint32_t saved = weft__algo_how;
    weft__algo_how = ((par_job *)self)->owner->how; /* read before the job can free it */
    (void)job_run(w, self);
    weft__algo_how = saved;
    return NULL;
}

/* Queues jobs first..n-1 at the call's priority, in order (FIFO among equals:
 * idle workers take the lowest first); returns how many were queued, a prefix
 * (the scheduling layer out of memory: the rest are not). */
static unsigned queue_prio(weft_executor *ex, weft__worker *w, par *p, unsigned first) {
    unsigned t = first;
    signed char prio = weft__how_prio(p->how);
    while (t < p->n && weft__sched_submit(ex, w, &p->jobs[t].job, prio) == WEFT_OK) t++;
    return t - first;
}

/* The mailbox a hinted call's jobs go to, or -1 for the plain path: no hint,
 * an executor without mailboxes or without workers on that node, or a
 * calling worker of that node (its deque is the node's). */
static int hint_node(const weft_executor *ex, const weft__worker *w, uint32_t how) {
    unsigned node = weft__how_node(how);
    if (node-- == 0 || node >= ex->nnodes || ex->mailboxes[node].nworkers == 0) return -1;
    return w && w->node == (int)node ? -1 : (int)node;
}

/* Queues jobs first..n-1 of a call with settings (p->how non-zero): at its
 * priority, or in its node's mailbox; returns how many were queued, a prefix.
 * Without either to apply, a worker queues none here (its deque takes them)
 * and any other thread spreads them through the injector as a plain call. */
static unsigned queue_how(weft_executor *ex, weft__worker *w, par *p, unsigned first) {
    if (weft__how_prio(p->how) != 0) return queue_prio(ex, w, p, first);
    int node = hint_node(ex, w, p->how);
    if (node >= 0)
        return weft__submit_spread_to_node(ex, (unsigned)node, &p->jobs[first].job, sizeof p->jobs[0], p->n - first);
    return w ? 0 : weft__submit_spread(ex, &p->jobs[first].job, sizeof p->jobs[0], p->n - first);
}

static void push_rest(weft_executor *ex, weft__worker *w, par *p) {
    unsigned from = 1;
    if (__builtin_expect(p->how != 0, 0)) from += queue_how(ex, w, p, 1);
    for (unsigned t = p->n; t-- > from;) weft__push_local(w, &p->jobs[t].job);
}

static bool all_done(void *arg) {
    par *p = arg;
    return atomic_load_explicit(&p->left, memory_order_acquire) == 0;
}

static void wait_outside(par *p) {
    uint32_t v;
    /* acquire: pairs with finish's acq_rel decrement, so every job's writes are
     * visible once zero is read. */
    while ((v = atomic_load_explicit(&p->left, memory_order_acquire)) != 0)
        (void)weft__futex_wait(&p->left, v, UINT64_MAX);
}

static void fork_join(weft_executor *ex, par *p) {
    weft__worker *w = weft__current_worker(ex);
    atomic_store_explicit(&p->left, p->n, memory_order_relaxed);
    p->external = (w == NULL);
    p->cx = w ? w->ctx : NULL;
    weft__job_fn run = __builtin_expect(p->how != 0, 0) ? job_run_how : job_run;
    for (unsigned t = 0; t < p->n; t++) {
        p->jobs[t] = (par_job){ { run, NULL }, p, t, 0 };
        atomic_init(&p->jobs[t].claimed, 0);
    }
    if (w) {
        push_rest(ex, w, p);
        weft__execute(w, &p->jobs[0].job);
        /* Other tasks this worker runs while it waits are not the call's: they
         * see the default settings (the call's own jobs set theirs). */
        uint32_t saved = weft__algo_how;
        weft__algo_how = 0;
        weft__worker_wait_until(w, all_done, p);
        weft__algo_how = saved;
        return;
    }
    /* The jobs go through the injector with one wake-up of all the sleepers they
     * need: woken together, the workers start together (a chain, the first
     * worker waking the next, costs one wake-up latency per link, milliseconds
     * on a VM whose idle vCPUs are halted).  Job 0 runs on this thread, which
     * would otherwise sleep: the loop starts at once, with one wake-up fewer,
     * and n threads work as with oneTBB and OpenMP.  Not when the workers are
     * bound to CPUs: this thread would then share one with a bound worker.
     * Counted as a run, so that its jobs, like every job, belong to one
     * (core/runs.c: weft_executor_wait_all's wake-up relies on it). */
    unsigned first = ex->bound ? 0 : 1;
    weft__runs_begin(ex, NULL);
    /* This thread runs shares of the call (user code) while it is a run of
     * ex: a callback's weft_executor_wait_all or destroy must see that. */
    weft__own_run own;
    weft__own_run_enter(&own, ex);
    if (p->shared) atomic_store_explicit(&p->refs, p->n - first + 1, memory_order_relaxed);
    unsigned pushed = __builtin_expect(p->how != 0, 0)
                          ? queue_how(ex, NULL, p, first)
                          : weft__submit_spread(ex, &p->jobs[first].job, sizeof p->jobs[0], p->n - first);
    if (p->shared && pushed < p->n - first) /* out of memory: those are not queued */
        atomic_fetch_sub_explicit(&p->refs, p->n - first - pushed, memory_order_relaxed);
    for (unsigned t = first + pushed; t < p->n; t++) run_one(NULL, p, t); /* out of memory */
    if (first) {
        run_one(NULL, p, 0);
        /* The queued jobs no worker has started: newest first (workers take
         * the oldest first from the injector). */
        if (p->shared)
            for (unsigned t = first + pushed; t-- > first;)
                if (claim(&p->jobs[t])) run_one(NULL, p, t);
    }
    wait_outside(p);
    weft__own_run_leave(&own);
    weft__runs_end(ex, NULL);
}

/* From a thread that is not a worker: the state and jobs in one heap block
 * (see the top), or NULL without memory (the caller then keeps them on its
 * stack and waits for every job). */
static par *shared_state(weft__task_fn fn, void *ctx, unsigned n, uint32_t how) {
    size_t bytes = sizeof(par) + (size_t)n * sizeof(par_job);
    par *p = weft__alloc_aligned(bytes, WEFT__CACHE_LINE);
    if (!p) return NULL;
    *p = (par){ .fn = fn, .ctx = ctx, .n = n, .how = how, .jobs = (par_job *)(p + 1), .shared = true,
                .bytes = bytes };
    return p;
}

void weft__par_tasks(weft_executor *ex, unsigned n, weft__task_fn fn, void *ctx) {
    par_job stack_jobs[STACK_JOBS];
    par p = { .fn = fn, .ctx = ctx, .n = n ? n : 1, .jobs = stack_jobs };
    if (p.n == 1) {
        fn(ctx, 0, 1); /* nothing to spread: no job, no wake-up */
        return;
    }
    p.how = weft__algo_how;
    bool outside = weft__current_worker(ex) == NULL;
    /* In a child made by fork() the executor has no workers (weft/core.h: the
     * algorithms run on the calling thread alone): all n shares here, as one.
     * A call made at a priority queued jobs 1..n-1 in the scheduling layer,
     * which refuses nothing after a fork, and waited forever for workers the
     * child does not have. */
    if (outside && __builtin_expect(weft__forked(ex), 0)) {
        fn(ctx, 0, 1);
        return;
    }
    if (!ex->bound && outside) {
        par *sp = shared_state(fn, ctx, p.n, p.how);
        if (sp) {
            fork_join(ex, sp);
            unref(sp); /* the caller's reference */
            return;
        }
    }
    size_t bytes = 0;
    if (p.n > STACK_JOBS) {
        bytes = (size_t)p.n * sizeof(par_job);
        p.jobs = weft__alloc(bytes);
        if (!p.jobs) { /* fewer tasks rather than failing */
            p.jobs = stack_jobs;
            p.n = STACK_JOBS;
            bytes = 0;
        }
    }
    fork_join(ex, &p);
    if (bytes) weft__free(p.jobs, bytes);
}
