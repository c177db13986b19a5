/* Running a plain task and the chain of plain tasks it readies: weft__node_run's
 * body, inline here so that a loop over many sources (sources.c) runs each
 * without a call.  Internal to the graph layer.
 *
 * Counting (run.c's header says more): a node that finishes and readies k
 * successors adds k - 1 to its run's pending count, and a -1 (nothing readied)
 * is held back on the worker. */
#ifndef WEFT_GRAPH_NODE_RUN_H
#define WEFT_GRAPH_NODE_RUN_H

#include "graph/graph.h"

/* run.c: the out-of-line parts. */
weft__job *weft__hold_first(weft__worker *w, weft__run *r);
weft__job *weft__release_many(weft__worker *w, weft__run *r, weft__node *n);
weft__job *weft__release_many_alone(weft__worker *w, weft__run *r, weft__node *n);

static inline void weft__clear_deferred(weft__worker *w) {
    w->defer_flush = NULL;
    w->defer_obj = NULL;
    w->defer_delta = 0;
}

/* A -1 is held back on the worker (w->defer_delta) rather than applied to the
 * shared count: a task that readies nothing (a leaf of a tree, a subflow's
 * child) would otherwise cost an atomic on a line every worker writes.
 * Held-back counts are never positive, so the shared count is never below the
 * true one and cannot reach 0 early; a later +k of the same run on this worker
 * cancels against them first.  The core applies them before the worker runs
 * another kind of job, searches or waits (core/executor.h), and
 * weft__node_run before a task of another run. */

/* Node of run r finished and readied nothing: its -1.  Returns a job to run
 * (only when another run's held count ended that run's iteration). */
static inline weft__job *weft__hold_minus_one(weft__worker *w, weft__run *r) {
    if (w->defer_obj == r) {
        w->defer_delta -= 1;
        return NULL;
    }
    return weft__hold_first(w, r);
}

/* A count delta of run r, cancelled first against what w holds back for r:
 * what is left to apply to the shared count. */
static inline int64_t weft__absorb(weft__worker *w, weft__run *r, int64_t delta) {
    if (w->defer_obj != r) return delta;
    int64_t d = w->defer_delta + delta;
    if (d < 0) {
        w->defer_delta = d;
        return 0;
    }
    weft__clear_deferred(w);
    return d;
}

/* s's last predecessor has finished (s's join counted down to 0).  acq_rel:
 * the last to count down sees all the others.  `shared` false: a lone worker
 * is the only thread that runs its executor's graph tasks (a run executes on
 * one executor, and only its workers run node jobs: weft__execute; a thread
 * outside helps with algorithm chunks only), so all of s's predecessors ran
 * here and a plain decrement does, without the locked RMW, a full fence on
 * x86 (wavefront_rerun at one worker: 0.55x the time). */
static inline __attribute__((always_inline)) bool weft__count_down(weft__node *s, const bool shared) {
    if (shared) return atomic_fetch_sub_explicit(&s->join, 1, memory_order_acq_rel) == 1;
    uint32_t left = atomic_load_explicit(&s->join, memory_order_relaxed) - 1;
    atomic_store_explicit(&s->join, left, memory_order_relaxed);
    return left == 0;
}

/* Two successors (a tree's node, a wavefront's cell): run.c's release_many_body's
 * work without its buffer and loop, inline in weft__node_run (binary_tree_rerun:
 * 30 instructions fewer per task, of about 150). */
static inline __attribute__((always_inline)) weft__job *weft__release_two(weft__worker *w, weft__run *r, weft__node *n,
                                                                    const bool shared) {
    weft__node *a = n->succ.many[0], *b = n->succ.many[1];
    if (shared) {
        __builtin_prefetch(a, 1, 3);
        __builtin_prefetch(b, 1, 3);
    }
    bool ra = a->num_deps == 1 || weft__count_down(a, shared);
    bool rb = b->num_deps == 1 || weft__count_down(b, shared);
    if (shared) {
        if (ra && a->nsucc > 1) __builtin_prefetch(a->succ.many, 0, 3);
        if (rb && b->nsucc > 1) __builtin_prefetch(b->succ.many, 0, 3);
    }
    if (ra && rb) {
        /* b goes to the deque, counted first (+1: two ready, this one done),
         * before anyone can steal (and finish) it.  A positive count cannot
         * end the iteration, so there is nothing else to run. */
        int64_t delta = weft__absorb(w, r, 1);
        if (delta != 0) weft__run_settle(w, r, delta);
        weft__push_local(w, &b->job);
        return &a->job;
    }
    if (ra) return &a->job; /* takes over this node's count */
    if (rb) return &b->job;
    return weft__hold_minus_one(w, r);
}

/* The body of weft__release_successors, inlined into weft__node_run: a node
 * with no successor, one (chains, leaves) or two (trees) takes a short way. */
static inline __attribute__((always_inline)) weft__job *weft__release(weft__worker *w, weft__run *r, weft__node *n) {
    if (n->nsucc > 1) {
        bool shared = w->ex->nworkers > 1;
        if (n->nsucc == 2) return shared ? weft__release_two(w, r, n, true) : weft__release_two(w, r, n, false);
        return shared ? weft__release_many(w, r, n) : weft__release_many_alone(w, r, n);
    }
    if (n->nsucc == 1) {
        weft__node *s = n->succ.one;
        if (s->num_deps == 1 || atomic_fetch_sub_explicit(&s->join, 1, memory_order_acq_rel) == 1)
            return &s->job; /* takes over this node's count */
    }
    return weft__hold_minus_one(w, r);
}

/* Runs n, a plain task (job function weft__node_run), and the plain task its
 * release readies next, and so on: returns the first job readied that is not
 * a plain task, or NULL.  A chain's next link, a tree's first child, a
 * wavefront's right neighbour runs here, not through a return to
 * weft__execute and another call.  What weft__execute does between two jobs
 * is kept: the jobs count, and a count held back for another run applied
 * first (the check at the loop's top).  A count held for this run is kept: it
 * was held by a task like this one, and a task whose job function is
 * weft__node_run is of a run without priorities, so no count of the
 * priorities' kind is held for it. */
static inline __attribute__((always_inline)) weft__job *weft__node_chain(weft__worker *w, weft__node *n) {
    for (;;) {
        weft__run *r = n->tf->active;
        /* A count held back for another run is applied before this task, which
         * may take long (the other run would wait for it to end). */
        if (__builtin_expect(w->defer_obj != NULL, 0) && w->defer_obj != r) weft__defer_settle_local(w);
        weft__call_node(w, r, n);
        weft__job *next = weft__release(w, r, n);
        if (!next || next->run != weft__node_run) return next;
        w->stats.jobs++; /* observe/: see weft__worker_stats */
        /* Time for the worker's look at the shared queues: what it finds
         * runs first, the next link waits on the deque (graph.h,
         * weft__hand_on). */
        if (__builtin_expect(weft__fair_due(w), 0)) return weft__hand_on(w, next);
        n = (weft__node *)next;
    }
}

#endif
