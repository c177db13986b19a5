/* weft_run_n_parallel: N instances of one taskflow running at the same time.
 *
 * The graph's nodes are shared read-only (function, argument, successors,
 * dependent counts); what a run changes lives per instance: a join counter and a
 * job for each node (a "shadow", 32 bytes) and a pending count.  A shadow's job
 * runs its node's function with the instance's context and readies the
 * instance's shadows of its successors, as run.c does for a node in a serial
 * run.  Copying the graph N times would cost N times its nodes (128 bytes and a
 * successor array each) and N builds.
 *
 * One root job, submitted like a run's start, pushes the N instance starts on
 * its worker; each instance fills its own shadows on the worker that starts it
 * (first touch: the memory lands near where it runs), then starts its sources.
 * The last instance to finish completes the future.  A failing task stops every
 * instance (one run, one future), as a failure stops a serial run_n. */
#include "graph/flow.h"
#include "core/alloc.h"
#include "core/default_executor.h"
#include "core/error_detail.h"

typedef struct pinst pinst;
typedef struct prun prun;

typedef struct shadow {
    weft__job job; /* must stay first */
    pinst *inst;
    _Atomic uint32_t join;
    uint32_t idx; /* the node's index */
} shadow;

struct pinst {
    weft__job start; /* must stay first */
    prun *p;
    uint64_t index;
    shadow *sh; /* one per node slot */
    /* A task of this instance was skipped or failed: it is no iteration.  An
     * instance counted only if the run's stop bits were clear when it ended,
     * so one whose every task ran before a cancel (its own last task's, say)
     * was not, where weft_run_n counts such an iteration (core.h,
     * weft_run_info.iterations); and whether one that ran whole counted
     * hung on another instance's failure coming before or after its end.
     * Relaxed: the release of the instance's count (pending, or the job
     * handed on) publishes it to the settle that ends the instance. */
    _Atomic int stopped;
    _Alignas(WEFT__CACHE_LINE) _Atomic int64_t pending; /* readied, not finished */
    _Alignas(WEFT__CACHE_LINE) char pad_;
};

struct prun {
    weft__run run; /* must stay first: run.fut is the future handle; observers read run.top */
    size_t nslots;
    uint64_t n;
    _Atomic uint64_t left; /* instances not finished */
    pinst *inst;
    shadow *sh;
};

static weft__job *shadow_run(weft__worker *w, weft__job *job);

static size_t shadow_bytes(const prun *p) { return (size_t)p->n * p->nslots * sizeof(shadow); }

static void prun_free(weft_future *f) {
    prun *p = (prun *)f;
    weft__free_aligned(p->sh, shadow_bytes(p), WEFT__CACHE_LINE);
    weft__free_aligned(p->inst, (size_t)p->n * sizeof(pinst), WEFT__CACHE_LINE);
    weft__free_aligned(p, sizeof *p, WEFT__CACHE_LINE);
}

/* The whole run is over. */
static void prun_finish(weft__worker *w, prun *p) {
    weft_taskflow *tf = p->run.tf;
    weft_executor *ex = p->run.ex;
    /* Before the future is ready: whoever waited on it may change tf at once. */
    weft__tf_inflight_out(tf);
    weft__future_complete(&p->run.fut);
    weft__runs_end(ex, w);
    weft__future_release(&p->run.fut);
}

/* Adds delta to instance I's pending count; the instance ends at 0. */
static void settle(weft__worker *w, pinst *I, int64_t delta) {
    if (atomic_fetch_add_explicit(&I->pending, delta, memory_order_acq_rel) + delta != 0) return;
    prun *p = I->p;
    /* An instance with no task (an empty taskflow) counts unless the run was
     * stopped, as weft_run_n's iterations of an empty taskflow do. */
    bool whole = weft__nsources(p->run.tf) != 0
                     ? atomic_load_explicit(&I->stopped, memory_order_relaxed) == 0
                     : (atomic_load_explicit(&p->run.fut.stop, memory_order_acquire) & WEFT__STOP_MASK) == 0;
    if (whole) atomic_fetch_add_explicit(&p->run.fut.iterations, 1, memory_order_relaxed);
    if (atomic_fetch_sub_explicit(&p->left, 1, memory_order_acq_rel) == 1) prun_finish(w, p);
}

/* n (run in I) finished: readies its successors; returns one to run next. */
static weft__job *release(weft__worker *w, pinst *I, const weft__node *n) {
    weft__node *const *succ = weft__succ_array(n);
    weft__job *next = NULL;
    for (uint32_t i = 0; i < n->nsucc; i++) {
        const weft__node *s = succ[i];
        shadow *y = &I->sh[s->index];
        if (s->num_deps != 1 && atomic_fetch_sub_explicit(&y->join, 1, memory_order_acq_rel) != 1) continue;
        if (!next) {
            next = &y->job; /* takes over n's count */
            continue;
        }
        atomic_fetch_add_explicit(&I->pending, 1, memory_order_relaxed); /* before anyone can finish it */
        weft__push_local(w, &y->job);
    }
    if (!next) settle(w, I, -1);
    return next;
}

static weft__job *shadow_run(weft__worker *w, weft__job *job) {
    shadow *x = (shadow *)job;
    pinst *I = x->inst;
    prun *p = I->p;
    const weft__node *n = weft__node_at(p->run.tf, x->idx);
    if (n->num_deps > 1) atomic_store_explicit(&x->join, n->num_deps, memory_order_relaxed); /* loops */
    bool cond = weft__cold(n)->kind == WEFT__KIND_COND;
    if (atomic_load_explicit(&p->run.fut.stop, memory_order_acquire) & WEFT__STOP_MASK) {
        atomic_store_explicit(&I->stopped, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&p->run.fut.skipped, 1, memory_order_relaxed);
        weft__hook_skipped(w); /* observe/: the metrics count it too */
        if (!cond) return release(w, I, n);
        settle(w, I, -1);
        return NULL;
    }
    int rc = 0;
    /* A placeholder runs too: reported (and counted) while something
     * observes, as in a serial run (run.c, weft__noop_observed). */
    if (n->fn || weft__obs_get(w->ex)) {
        weft_ctx cx;
        struct weft__obs *o = weft__task_enter(w, &cx, (weft__node *)n, &p->run);
        cx.task = x; /* weft_ctx_iteration finds the instance, weft_ctx_task the node */
        rc = n->fn ? n->fn(&cx, n->arg) : 0;
        weft__task_leave(w, &cx, o, (weft__node *)n, &p->run, cond && rc > 0 ? 0 : rc);
    }
    if (!cond) {
        if (rc != 0) {
            atomic_store_explicit(&I->stopped, 1, memory_order_relaxed);
            weft__future_fail(&p->run.fut, rc, weft__cold(n)->name, n->index);
        }
        return release(w, I, n);
    }
    if (rc < 0) {
        atomic_store_explicit(&I->stopped, 1, memory_order_relaxed);
        weft__future_fail(&p->run.fut, rc, weft__cold(n)->name, n->index);
    }
    else if ((uint32_t)rc < n->nsucc) return &I->sh[weft__succ_array(n)[rc]->index].job; /* takes the count */
    settle(w, I, -1);
    return NULL;
}

/* Starts instance I: fills its shadows, then readies its sources. */
static weft__job *inst_start(weft__worker *w, weft__job *job) {
    pinst *I = (pinst *)job;
    prun *p = I->p;
    weft_taskflow *tf = p->run.tf;
    for (size_t i = 0; i < p->nslots; i++) {
        const weft__node *n = weft__node_at(tf, i);
        I->sh[i] = (shadow){{shadow_run, NULL}, I, n->num_deps, (uint32_t)i};
    }
    size_t ns = weft__nsources(tf);
    if (ns == 0) { /* no task: the instance is done */
        settle(w, I, 0);
        return NULL;
    }
    atomic_store_explicit(&I->pending, (int64_t)ns, memory_order_relaxed);
    for (size_t i = ns; i-- > 1;) weft__push_local(w, &I->sh[weft__source_at(tf, i)->index].job);
    return &I->sh[weft__source_at(tf, 0)->index].job;
}

/* The root: pushes every instance's start here (a push on a worker cannot fail). */
static weft__job *root_start(weft__worker *w, weft__job *job) {
    prun *p = (prun *)((char *)job - offsetof(weft__run, start));
    for (uint64_t i = p->n; i-- > 1;) weft__push_local(w, &p->inst[i].start);
    return &p->inst[0].start;
}

/* Kinds a shadow runs: plain tasks and conditions; no semaphores. */
static weft_status check_kinds(weft_taskflow *tf) {
    WEFT__FOR_EACH_NODE(tf, n, {
        uint8_t k = weft__cold(n)->kind;
        /* graph.h promises the message names the task (it named none). */
        if (tf->nsems && weft__cold(n)->sems) {
            char b[24];
            return weft__tf_error(tf, WEFT_EINVAL,
                                  "weft_run_n_parallel: task '%s' acquires or releases a semaphore, which parallel "
                                  "instances cannot share",
                                  weft__node_label(n, b, sizeof b));
        }
        if (weft__cold(n)->single) {
            char b[24];
            return weft__tf_error(tf, WEFT_EINVAL,
                                  "weft_run_n_parallel: task '%s' drives a pipeline, which runs one run at a time "
                                  "(parallel instances would fail with WEFT_EBUSY; use weft_run_many on copies "
                                  "with a pipeline each)",
                                  weft__node_label(n, b, sizeof b));
        }
        if (k != WEFT__KIND_STATIC && k != WEFT__KIND_COND) {
            char b[24];
            return weft__tf_error(tf, WEFT_EINVAL,
                                  "weft_run_n_parallel: task '%s' is a subflow, module or multi-condition task, which "
                                  "parallel instances do not run (use weft_run_many on copies)",
                                  weft__node_label(n, b, sizeof b));
        }
    });
    if (tf->nsems) /* a record on no live task: refused as before */
        return weft__tf_error(tf, WEFT_EINVAL, "weft_run_n_parallel: tasks with semaphores cannot run in parallel instances");
    return WEFT_OK;
}

static prun *prun_alloc(weft_taskflow *tf, uint64_t n) {
    size_t slots = tf->nnodes;
    if (n > SIZE_MAX / sizeof(pinst) || (slots && n > SIZE_MAX / sizeof(shadow) / slots)) return NULL;
    prun *p = weft__calloc_aligned(sizeof *p, WEFT__CACHE_LINE);
    if (!p) return NULL;
    p->n = n;
    p->nslots = slots;
    p->inst = weft__calloc_aligned((size_t)n * sizeof(pinst), WEFT__CACHE_LINE);
    p->sh = weft__alloc_aligned(shadow_bytes(p), WEFT__CACHE_LINE);
    if (p->inst && (p->sh || shadow_bytes(p) == 0)) return p;
    prun_free(&p->run.fut);
    return NULL;
}

static void prun_init(prun *p, weft_executor *ex, weft_taskflow *tf, bool keep) {
    weft__future_init(&p->run.fut, ex, keep ? 2 : 1, prun_free);
    p->run.fut.owner = p; /* a task of this run waiting on it: WEFT_EDEADLK */
    p->run.fut.id = atomic_fetch_add_explicit(&ex->next_run_id, 1, memory_order_relaxed) + 1;
    p->run.start = (weft__job){root_start, NULL};
    p->run.tf = tf;
    p->run.ex = ex;
    p->run.target = p->n;
    p->run.top = &p->run.fut;
    p->run.anchor = &p->run;
    p->run.role = WEFT__ROLE_TOP;
    atomic_init(&p->left, p->n);
    for (uint64_t i = 0; i < p->n; i++) {
        pinst *I = &p->inst[i];
        I->start = (weft__job){inst_start, NULL};
        I->p = p;
        I->index = i;
        I->sh = p->sh + i * p->nslots;
        atomic_init(&I->pending, 0);
        atomic_init(&I->stopped, 0);
    }
}

/* Under tf->mu: checks tf and counts the run in, or says why not. */
static weft_status admit(weft_taskflow *tf) {
    weft_status st = tf->active ? WEFT_OK : weft__taskflow_prepare(tf, NULL, "weft_run_n_parallel");
    /* In a child of fork(), a serial run of tf in flight at the fork on an
     * executor of the parent never ends: tf stays busy (and its graph in that
     * run's state) for ever.  weft_run refuses it (graph/run.c, core.h: every
     * weft_run* of it is WEFT_EFORKED); parallel instances do not queue
     * behind that run, so they ran here.  Refused the same way. */
    if (st == WEFT_OK && weft__tf_stuck_at_fork(tf)) st = weft__tf_refuse_stuck(tf, "weft_run_n_parallel");
    if (st == WEFT_OK) st = check_kinds(tf);
    if (st == WEFT_OK) weft__tf_inflight_in(tf);
    return st;
}

weft_status weft_run_n_parallel(weft_executor *ex, weft_taskflow *tf, uint64_t n, weft_future **out) {
    if (out) *out = NULL;
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL");
    if (n == 0) return weft_run_n(ex, tf, 0, out); /* no task, like run_n's */
    if (tf->is_subflow_graph)
        return weft__tf_error(tf, WEFT_EINVAL, "weft_run_n_parallel: a subflow's graph runs only as part of its task");
    weft_status st = weft__executor_or_default(&ex);
    if (st != WEFT_OK) return weft__tf_error(tf, st, "weft_run_n_parallel: no default executor");
    if (atomic_load_explicit(&ex->shutdown, memory_order_acquire))
        return weft__tf_error(tf, WEFT_ESHUTDOWN, "weft_run_n_parallel: the executor is being destroyed");
    weft__mutex_lock(&tf->mu);
    st = admit(tf);
    weft__mutex_unlock(&tf->mu);
    if (st != WEFT_OK) return st;
    prun *p = prun_alloc(tf, n);
    if (!p) st = WEFT_ENOMEM;
    else {
        prun_init(p, ex, tf, out != NULL);
        if (out) *out = &p->run.fut; /* before the run can start: run.c's submit says why */
        weft__runs_begin(ex, weft__current_worker(ex));
        st = weft__submit(ex, &p->run.start);
        if (st != WEFT_OK) weft__runs_end(ex, weft__current_worker(ex));
    }
    if (st != WEFT_OK) {
        if (out) *out = NULL;
        if (p) prun_free(&p->run.fut);
        weft__tf_inflight_out(tf);
        return weft__tf_error(tf, st, "weft_run_n_parallel: %s", weft_strerror(st));
    }
    return weft__tf_done(tf, WEFT_OK);
}

/* ---- the context's view --------------------------------------------------------- */

weft__node *weft__ctx_node(const weft_ctx *ctx) {
    const weft__job *j = ctx->task;
    if (j && j->run == shadow_run) {
        const shadow *x = (const shadow *)j;
        return weft__node_at(x->inst->p->run.tf, x->idx);
    }
    return (weft__node *)ctx->task; /* a node, or NULL outside graph tasks */
}

uint64_t weft_ctx_iteration(const weft_ctx *ctx) {
    const weft__job *j = ctx ? ctx->task : NULL;
    if (!j) return 0;
    if (j->run == shadow_run) return ((const shadow *)j)->inst->index;
    /* A node of a serial run: ctx->stop is its outermost run's future, whose
     * completed iterations are the current one's index. */
    const weft_future *top = (const weft_future *)((const char *)ctx->stop - offsetof(weft_future, stop));
    return atomic_load_explicit(&((weft_future *)top)->iterations, memory_order_relaxed);
}
