/* Graph tasks with a priority: weft_task_set_priority and runs with one
 * (weft_run_with_priority); docs/guide-scheduling.md.
 *
 * A node's hot line has no room for a priority, so, as for semaphores
 * (semaphore.c), a task that has one runs through another job function,
 * weft__prio_node_run, and tasks without one keep theirs and pay nothing.
 * The level is a byte of the node's cold part, or the run's for a task that
 * has none of its own.  The wrapper runs twice per iteration.  When the task
 * becomes ready (it reached a worker as any ready job does) the wrapper queues
 * the node's own job in the scheduling layer's priority queue (sched/) and
 * marks the node `routed`; when a worker takes it from there, the wrapper
 * clears the mark and runs the kind's job function.  A node is readied once per
 * iteration and taken once, the queue's lock ordering the two, so one byte is
 * all the state (0 whenever no run is going).
 *
 * The queue orders ready tasks only once they are in it, so tasks readied
 * together are queued together: an iteration's sources all at its start
 * (weft__prio_sources_start), and the successors one task readies, which wait
 * on the worker's deque, by the first of them to run, which takes the others
 * off the deque (the top CHAIN jobs) and queues them in the order they were
 * readied.  Only then does a HIGH or CRITICAL one run (the layer's ticket,
 * sched/sched.c).
 *
 * weft_run_n_parallel runs its own jobs (shadows), not the nodes': it ignores
 * priorities. */
#include "graph/flow.h"
#include "sched/sched.h"

/* Tasks readied together that the first of them queues at once, at most. */
enum { CHAIN = 64 }; /* (a bit each in a uint64_t) */

static inline bool prio_ok(int p) { return p >= WEFT_PRIORITY_LOW && p <= WEFT_PRIORITY_CRITICAL; }

weft__job_fn weft__kind_run(const weft__node *n) {
    switch (weft__cold(n)->kind) {
    case WEFT__KIND_COND: return weft__cond_run;
    case WEFT__KIND_MCOND: return weft__mcond_run;
    case WEFT__KIND_SUBFLOW: return weft__subflow_run;
    case WEFT__KIND_MODULE: return weft__module_run;
    default: return weft__node_run;
    }
}

/* What the wrapper runs once the task is taken: its semaphores' wrapper, or its kind's. */
static weft__job_fn inner_of(const weft__node *n) {
    return weft__cold(n)->sems ? weft__sem_node_run : weft__kind_run(n);
}

/* Wrapped for good (a priority of its own other than NORMAL), not only for a run. */
static bool wrapped_alone(const weft__node *n) {
    uint8_t own = weft__cold(n)->prio;
    return own != 0 && own != WEFT_PRIORITY_NORMAL + 2;
}

/* Queues ready node n, taken on worker w, at its level.  Should the queue lack
 * memory, n goes to w's deque already marked, and runs when popped. */
static void route(weft__worker *w, weft__node *n) {
    weft__node_cold *c = weft__cold(n);
    int prio = (int)(c->prio ? c->prio : n->tf->active->prio) - 2;
    c->routed = 1; /* before the queue's lock: whoever takes it sees the mark */
    if (weft__sched_submit_hint(w->ex, w, &n->job, prio_ok(prio) ? prio : WEFT_PRIORITY_NORMAL, c) != WEFT_OK)
        weft__push_local(w, &n->job);
}

/* A ready task's job that the wrapper queues (not one already queued that
 * had to wait on the deque). */
static bool queueable(weft__job *j) {
    return j->run == weft__prio_node_run && !weft__cold((weft__node *)j)->routed;
}

weft__job *weft__prio_node_run(weft__worker *w, weft__job *job) {
    weft__node *n = (weft__node *)job;
    weft__node_cold *c = weft__cold(n);
    if (c->routed) { /* taken from the queue: run it */
        c->routed = 0;
        weft__job *next = inner_of(n)(w, job);
        return next ? next : weft__sched_next(w); /* see the end of this function */
    }
    /* Ready: the tasks readied with it wait on the deque, the newest on top.
     * Those with a wrapper go to the queue with it, oldest first, before any
     * of them runs; the others go back to the deque as they were, below the
     * tickets the queueing pushes. */
    weft__job *more[CHAIN];
    uint64_t mine = 0; /* bit i: more[i] is queued here (decided while we own it) */
    unsigned k = 0;
    while (k < CHAIN && (more[k] = weft__deque_pop(&w->deque)) != NULL) {
        /* A ticket lies below every task readied since it was pushed: the
         * rest of the deque is older work (a ready set of HIGH tasks leaves
         * a ticket each). */
        if (more[k] == &weft__sched_ticket) {
            (void)weft__deque_push(&w->deque, more[k]); /* room: it was there (tickets never overflow) */
            break;
        }
        k++;
    }
    for (unsigned i = k; i-- > 0;) {
        if (queueable(more[i])) mine |= (uint64_t)1 << i;
        else weft__push_local(w, more[i]); /* a thief may take it from here on */
    }
    route(w, n);
    for (unsigned i = k; i-- > 0;)
        if (mine >> i & 1) route(w, (weft__node *)more[i]);
    /* With nothing left on the deque, the worker would go searching and take
     * a NORMAL-or-above job from the layer first: taken here, the search (two
     * read-modify-writes of the shared sleep word) is saved.  A HIGH or
     * CRITICAL job left a ticket on the deque, which runs it next instead. */
    return weft__sched_next(w);
}

weft__job *weft__prio_sources_start(weft__worker *w, weft__run *r) {
    weft_taskflow *tf = r->tf;
    /* The others first, the last source at the bottom: they pop in order, and
     * the tickets of HIGH and CRITICAL sources land above them. */
    for (size_t i = tf->nsources; i-- > 0;)
        if (tf->sources[i]->job.run != weft__prio_node_run) weft__push_local(w, &tf->sources[i]->job);
    for (size_t i = 0; i < tf->nsources; i++)
        if (tf->sources[i]->job.run == weft__prio_node_run) route(w, tf->sources[i]);
    return NULL;
}

void weft__prio_run_begin(weft__run *r) {
    WEFT__FOR_EACH_NODE(r->tf, n, { n->job.run = weft__prio_node_run; });
}

void weft__prio_run_end(weft__run *r) {
    WEFT__FOR_EACH_NODE(r->tf, n, {
        if (!wrapped_alone(n)) n->job.run = inner_of(n);
    });
}

weft_status weft_task_set_priority(weft_task t, weft_priority priority) {
    weft__node *n = t.node_;
    if (!n) return WEFT_EINVAL;
    if (!prio_ok((int)priority))
        return weft__tf_error(n->tf, WEFT_EINVAL, "weft_task_set_priority: %d is not a priority", (int)priority);
    if (weft__node_erased(n)) return weft__tf_error(n->tf, WEFT_EINVAL, "the task was erased");
    if (weft__tf_busy(n->tf)) return WEFT_EBUSY;
    weft__node_cold *c = weft__cold_mut(n);
    if (!c->prio) n->tf->nprio++;
    c->prio = (uint8_t)((int)priority + 2);
    /* NORMAL is the plain path's level: no wrapper, except in a run with a
     * priority, where it keeps the task NORMAL (weft__prio_run_begin). */
    n->job.run = wrapped_alone(n) ? weft__prio_node_run : inner_of(n);
    return weft__tf_done(n->tf, WEFT_OK);
}

weft_priority weft_task_get_priority(weft_task t) {
    uint8_t own = t.node_ ? weft__cold(t.node_)->prio : 0;
    return own ? (weft_priority)((int)own - 2) : WEFT_PRIORITY_NORMAL;
}

weft_status weft__prio_copy(weft_task to, const weft__node *from) {
    uint8_t own = weft__cold(from)->prio;
    return own ? weft_task_set_priority(to, (weft_priority)((int)own - 2)) : WEFT_OK;
}
