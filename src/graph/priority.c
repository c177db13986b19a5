/* Graph tasks with a priority: weft_task_set_priority and runs with one
 * (weft_run_with_priority); docs/guide-scheduling.md.
 *
 * A node's hot line has no room for a priority, so, as for semaphores
 * (semaphore.c), a task that has one runs through another job function, a
 * wrapper, and tasks without one keep theirs and pay nothing.  There is a
 * wrapper per level, and per kind of task (weft__prio_wrapper: plain ones,
 * static without semaphores, which `taken` runs without a look at their cold
 * part; the others): the level a ready task is queued at is read off its job
 * function, on the line that readied it, not off its cold part (a miss per
 * task, in priority order).  The level is the task's own (a
 * byte of its cold part, for building and weft_task_get_priority), or the
 * run's for a task that has none (set for the run, weft__prio_run_begin).
 *
 * A ready task is queued in the scheduling layer (sched/: its worker's lanes)
 * with its job function switched to `taken` and its level in its job's `next`
 * (unused outside a worker's overflow list, where a queued job never is);
 * taken, it gets its wrapper back and runs its kind's job function.  A node is
 * readied once per iteration and taken once, the queue's lock ordering the
 * two, so at rest every wrapped task has its wrapper.
 *
 * Who queues it: in a run with priorities, plain tasks run weft__node_run_prio
 * (run.c) and taken ones their kind's variant of it, which queue the
 * successors they ready at once (weft__prio_route), and an iteration's sources
 * are queued together at its start (weft__prio_sources_start).  A task readied
 * any other way (by a condition, a subflow's end, a semaphore) reaches a
 * worker as a plain job and its wrapper queues it when it runs: the queue
 * orders ready tasks only once they are in it, so that wrapper first takes the
 * tasks readied with it off the deque (the top CHAIN jobs) and queues them
 * together, in the order they were readied.  Only then does a HIGH or
 * CRITICAL one run (the layer's ticket, sched/sched.c).
 *
 * weft_run_n_parallel runs its own jobs (shadows), not the nodes': it ignores
 * priorities. */
#include "graph/flow.h"
#include "graph/node_run.h" /* the held-back counts */
#include "sched/sched.h"
#include "core/error_detail.h"

/* Tasks readied together that the first of them queues at once, at most. */
enum { CHAIN = 64 }; /* (a bit each in a uint64_t) */
/* Tasks queued with one lock, at most. */
enum { ROUTE_MAX = WEFT__PRIO_ROUTE_MAX };

static inline bool prio_ok(int p) { return p >= WEFT_PRIORITY_LOW && p <= WEFT_PRIORITY_CRITICAL; }

static weft__job_fn kind_run_of(uint8_t kind) {
    switch (kind) {
    case WEFT__KIND_COND: return weft__cond_run;
    case WEFT__KIND_MCOND: return weft__mcond_run;
    case WEFT__KIND_SUBFLOW: return weft__subflow_run;
    case WEFT__KIND_MODULE: return weft__module_run;
    default: return weft__node_run;
    }
}

weft__job_fn weft__kind_run(const weft__node *n) {
    weft__job_fn own = weft__own_job(n);
    return own ? own : kind_run_of(weft__cold(n)->kind);
}

weft__job_fn weft__kind_run_to_end(const weft__node *n) { return kind_run_of(weft__cold(n)->kind); }

/* The job function a task has without a priority: its semaphores' wrapper, or its kind's. */
static weft__job_fn inner_of(const weft__node *n) {
    return weft__cold(n)->sems ? weft__sem_node_run : weft__kind_run(n);
}

/* What runs a taken task: inner_of, but a plain task's is the variant that
 * queues its successors with wrappers at once (weft__node_run_prio). */
static inline weft__job_fn taken_run(const weft__node *n) {
    const weft__node_cold *c = weft__cold(n);
    if (c->sems) return weft__sem_node_run;
    weft__job_fn own = weft__own_job(n);
    if (own) return own; /* (its successors are readied plainly; their wrappers queue them) */
    return c->kind == WEFT__KIND_STATIC ? weft__node_run_prio : kind_run_of(c->kind);
}

/* A plain task: a static one without semaphores, which `taken` runs without
 * a look at its cold part. */
static inline bool plain(const weft__node *n) {
    const weft__node_cold *c = weft__cold(n);
    return !c->sems && c->kind == WEFT__KIND_STATIC && !weft__own_job(n);
}

/* n's wrapper at a level given as a cold byte (weft_priority + 2). */
static inline weft__job_fn wrapper_of(const weft__node *n, unsigned own) {
    return weft__prio_wrapper[(plain(n) ? 4 : 0) + own - 2 + 1];
}

void weft__prio_rewrap(weft__node *n) {
    int ix = weft__prio_index(n->job.run);
    if (ix >= 0) weft__node_set_run(n, wrapper_of(n, (unsigned)(ix & 3) + 1));
}

/* Wrapped for good (a priority of its own other than NORMAL), not only for a run. */
static bool wrapped_alone(const weft__node *n) {
    uint8_t own = weft__cold(n)->prio;
    return own != 0 && own != WEFT_PRIORITY_NORMAL + 2;
}

/* A queued task, taken (its wrapper's index in job->next, weft__prio_route). */
static weft__job *taken(weft__worker *w, weft__job *job) {
    uintptr_t ix = (uintptr_t)job->next;
    weft__node_set_run((weft__node *)job, weft__prio_wrapper[ix]);
    job->next = NULL;
    /* The core keeps a count held back across `taken` jobs (defer_keep): a
     * task of another run, which may take long, has it applied first, as
     * weft__node_run_prio does for a plain task.  The other kinds (a
     * condition, a subflow, a module, a task with semaphores) do not look:
     * before this, a run whose last -1 was held waited for another run's long
     * condition task to end. */
    weft__node *n = (weft__node *)job;
    if (ix < 4 && __builtin_expect(w->defer_obj != NULL, 0) && w->defer_obj != n->tf->active)
        weft__defer_settle_local(w);
    weft__job *next = ix >= 4 ? weft__node_run_prio(w, job) : taken_run(n)(w, job);
    return next ? next : weft__sched_next(w); /* see the end of wrapped() */
}

weft__job_fn const weft__prio_taken = taken;

/* Marks n queued (whoever takes it, any worker, runs `taken`) and fills in
 * what it reads first when taken, fetched while the tasks ahead of it run:
 * its argument, its cold part (not a plain task's), its successors. */
static inline void mark(weft__node *n, unsigned ix, weft__hints *h) {
    n->job.next = (weft__job *)(uintptr_t)ix;
    weft__node_set_run(n, taken);
    *h = (weft__hints){{n->arg, ix >= 4 ? NULL : (const void *)weft__cold(n)},
                       (const void *const *)weft__succ_array(n), n->nsucc};
    /* Above LOW it is often taken soon, before its lane comes to it (the lanes
     * prefetch in lane order): ask for its lines now. */
    if ((ix & 3) != 0) {
        __builtin_prefetch(h->line[0]);
        if (n->nsucc > 1) __builtin_prefetch(h->many);
    }
}

static inline void unmark(weft__node *n, unsigned ix) {
    weft__node_set_run(n, weft__prio_wrapper[ix]);
    n->job.next = NULL;
}

bool weft__prio_route(weft__worker *w, weft__node *n, unsigned ix) {
    weft__hints h;
    mark(n, ix, &h);
    if (weft__sched_submit_graph(w->ex, w, &n->job, (int)(ix & 3) - 1, &h) == WEFT_OK) return true;
    unmark(n, ix);
    return false;
}

__attribute__((noinline)) void weft__prio_route_all(weft__worker *w, weft__node *const *n, const uint8_t *ix,
                                                   unsigned k) {
    if (k == 0) return;
    weft__job *job[ROUTE_MAX];
    uint8_t level[ROUTE_MAX];
    weft__hints h[ROUTE_MAX];
    for (unsigned i = 0; i < k; i++) {
        mark(n[i], ix[i], &h[i]);
        job[i] = &n[i]->job;
        level[i] = ix[i] & 3;
    }
    for (size_t i = weft__sched_submit_graph_many(w->ex, w, k, job, level, h); i < k; i++) {
        unmark(n[i], ix[i]); /* no memory: its wrapper tries again when it runs */
        weft__push_local(w, &n[i]->job);
    }
}

/* weft__prio_route, or, should the layer lack memory, w's deque: its wrapper
 * tries again when it runs. */
static void route_or_push(weft__worker *w, weft__node *n, unsigned ix) {
    if (!weft__prio_route(w, n, ix)) weft__push_local(w, &n->job);
}

/* The wrapper of index ix (weft__prio_wrapper): a ready task that reached a
 * worker as a plain job (see the top of this file). */
static inline __attribute__((always_inline)) weft__job *wrapped(weft__worker *w, weft__job *job, unsigned ix) {
    /* The tasks readied with it wait on the deque, the newest on top.  Those
     * with a wrapper go to the queue with it, oldest first, before any of
     * them runs; the others go back to the deque as they were, below the
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
        if (weft__prio_index(more[i]->run) >= 0) mine |= (uint64_t)1 << i;
        else weft__push_local(w, more[i]); /* a thief may take it from here on */
    }
    bool queued = weft__prio_route(w, (weft__node *)job, ix);
    for (unsigned i = k; i-- > 0;)
        if (mine >> i & 1) route_or_push(w, (weft__node *)more[i], (unsigned)weft__prio_index(more[i]->run));
    if (!queued) return taken_run((weft__node *)job)(w, job); /* no memory to queue it: run it now */
    /* With nothing left on the deque, the worker would go searching and take
     * a NORMAL-or-above job from the layer first: taken here, the search (two
     * read-modify-writes of the shared sleep word) is saved.  A HIGH or
     * CRITICAL job left a ticket on the deque, which runs it next instead. */
    return weft__sched_next(w);
}

#define WRAPPER(ix) \
    static weft__job *wrapped_##ix(weft__worker *w, weft__job *job) { return wrapped(w, job, ix); }
WRAPPER(0) WRAPPER(1) WRAPPER(2) WRAPPER(3) WRAPPER(4) WRAPPER(5) WRAPPER(6) WRAPPER(7)
#undef WRAPPER

weft__job_fn const weft__prio_wrapper[8] = {wrapped_0, wrapped_1, wrapped_2, wrapped_3,
                                            wrapped_4, wrapped_5, wrapped_6, wrapped_7};

/* ---- releasing successors in a run with priorities ---- */

/* node_run.h's weft__hold_minus_one, with the wrapper's `taken` as the job
 * function that keeps the count held (in a run with priorities most tasks
 * come from the lanes). */
static weft__job *hold_minus_one_prio(weft__worker *w, weft__run *r) {
    weft__job *done = weft__hold_minus_one(w, r);
    if (w->defer_obj == r) w->defer_keep = weft__prio_taken; /* (else another run's count ended: none held) */
    return done;
}

/* run.c's release_many for weft__node_run_prio: a ready successor with a
 * wrapper is queued at its level at once, where the worker's search (or
 * weft__sched_next) takes it, and its wrapper runs once, to run it (without
 * this it would go to the deque first and its wrapper would queue it when
 * popped: two trips and two calls per task).
 *
 * The successors readied together are ordered as `wrapped` orders them: the
 * first, if it has no wrapper, runs at once (handed on); the other plain ones
 * go to the deque, below the tickets of the HIGH and CRITICAL ones, which are
 * queued last, in the order they became ready. */
static __attribute__((noinline)) weft__job *release_many(weft__worker *w, weft__run *r, weft__node *n) {
    weft__job *next = NULL, *buf[32];
    weft__node *pr[ROUTE_MAX];
    uint8_t lv[ROUTE_MAX];
    unsigned nb = 0, np = 0;
    bool queued = false; /* some were queued already (more than 32) */
    weft__node *const *succ = weft__succ_array(n);
    for (uint32_t i = 0; i < n->nsucc; i++) {
        weft__node *s = succ[i];
        if (s->num_deps != 1 && atomic_fetch_sub_explicit(&s->join, 1, memory_order_acq_rel) != 1) continue;
        int ix = weft__prio_index(s->job.run);
        if (ix >= 0) {
            lv[np] = (uint8_t)ix;
            pr[np++] = s;
        } else {
            /* A plain one runs soon (handed on or popped): its successors
             * will be read. */
            if (s->nsucc > 1) __builtin_prefetch(s->succ.many);
            if (!next && np == 0 && !queued) next = &s->job;
            else buf[nb++] = &s->job;
        }
        if (nb == 32 || np == ROUTE_MAX) {
            /* Counted before anyone can take them (and finish them). */
            atomic_fetch_add_explicit(&r->pending, nb + np, memory_order_relaxed);
            for (unsigned k = 0; k < nb; k++) weft__push_local(w, buf[k]);
            weft__prio_route_all(w, pr, lv, np);
            queued |= np != 0;
            nb = np = 0;
        }
    }
    /* This node is done (-1); the ready ones not yet counted. */
    int64_t delta = (int64_t)nb + np + (next != NULL) - 1;
    if (delta == -1) {
        weft__job *d = hold_minus_one_prio(w, r);
        return d || !queued ? d : weft__sched_next(w);
    }
    delta = weft__absorb(w, r, delta);
    /* When the count reaches 0 nothing is buffered, so `done` is all there is. */
    weft__job *done = delta != 0 ? weft__run_settle(w, r, delta) : NULL;
    for (unsigned k = 0; k < nb; k++) weft__push_local(w, buf[k]);
    weft__prio_route_all(w, pr, lv, np);
    if (next || done) return next ? next : done;
    return np || queued ? weft__sched_next(w) : NULL;
}

/* run.c's release for weft__node_run_prio. */
static inline weft__job *release(weft__worker *w, weft__run *r, weft__node *n) {
    if (n->nsucc > 1) return release_many(w, r, n);
    if (n->nsucc == 1) {
        weft__node *s = n->succ.one;
        if (s->num_deps == 1 || atomic_fetch_sub_explicit(&s->join, 1, memory_order_acq_rel) == 1) {
            int ix = weft__prio_index(s->job.run);
            if (ix < 0) return &s->job; /* takes over this node's count */
            route_or_push(w, s, (unsigned)ix); /* likewise */
            return weft__sched_next(w);
        }
    }
    return hold_minus_one_prio(w, r);
}

weft__job *weft__node_run_prio(weft__worker *w, weft__job *job) {
    weft__node *n = (weft__node *)job;
    weft__run *r = n->tf->active;
    if (__builtin_expect(w->defer_obj != NULL && w->defer_obj != r, 0)) weft__defer_settle_local(w);
    /* Tasks taken from the lanes run in priority order, far from where their
     * successors were last touched: ask for the successors' lines now (their
     * array came with the task's line, weft__prio_route), so that the misses
     * overlap the task's own. */
    weft__node *const *succ = weft__succ_array(n);
    for (uint32_t i = 0, k = n->nsucc < 8 ? n->nsucc : 8; i < k; i++) __builtin_prefetch(succ[i], 1, 3);
    weft__call_node(w, r, n);
    return release(w, r, n);
}

weft__job *weft__prio_sources_start(weft__worker *w, weft__run *r) {
    weft_taskflow *tf = r->tf;
    /* Every source is published below (none is kept to run here, so that the
     * best queued one runs first), and once the last is, the run may end and
     * its taskflow go before this loop has read tf again: a count of our own
     * keeps the iteration open until the loops are done (TSan caught the
     * read after weft_taskflow_destroy; gpu_tests.gpu_task_with_a_priority_runs_before_its_successor). */
    atomic_fetch_add_explicit(&r->pending, 1, memory_order_relaxed);
    /* The others first, the last source at the bottom: they pop in order, and
     * the tickets of HIGH and CRITICAL sources land above them. */
    size_t ns = weft__nsources(tf);
    weft__node *batch[ROUTE_MAX];
    uint8_t ixs[ROUTE_MAX];
    unsigned k = 0;
    /* A sealed deque hands every push to the policy (WEFT_SCHED_FIFO,
     * ROUND_ROBIN, RANDOM, a user's), and so does the routing of the others:
     * there, every source in index order, the plain and the prioritised ones
     * interleaved as they come.  Plain ones first and then the others, FIFO ran
     * sources N H N H N H as 0 2 4 1 3 5, where sched.h promises submission
     * order, priorities ignored (tests/sched_hunt42.c). */
    if (weft__deque_sealed(&w->deque)) {
        for (size_t i = 0; i < ns; i++) {
            weft__node *n = weft__source_at(tf, i);
            int ix = weft__prio_index(n->job.run);
            if (ix < 0) {
                weft__prio_route_all(w, batch, ixs, k), k = 0; /* the prioritised ones before it */
                weft__push_local(w, &n->job);
                continue;
            }
            batch[k] = n;
            ixs[k++] = (uint8_t)ix;
            if (k == ROUTE_MAX) weft__prio_route_all(w, batch, ixs, k), k = 0;
        }
        weft__prio_route_all(w, batch, ixs, k);
        return weft__run_settle(w, r, -1); /* our count; the job that ends the iteration, if it did */
    }
    for (size_t i = ns; i-- > 0;) {
        weft__node *n = weft__source_at(tf, i);
        if (weft__prio_index(n->job.run) < 0) weft__push_local(w, &n->job);
    }
    for (size_t i = 0; i < ns; i++) {
        weft__node *n = weft__source_at(tf, i);
        int ix = weft__prio_index(n->job.run);
        if (ix < 0) continue;
        batch[k] = n;
        ixs[k++] = (uint8_t)ix;
        if (k == ROUTE_MAX) weft__prio_route_all(w, batch, ixs, k), k = 0;
    }
    weft__prio_route_all(w, batch, ixs, k);
    return weft__run_settle(w, r, -1); /* our count; the job that ends the iteration, if it did */
}

void weft__prio_run_begin(weft__run *r) {
    weft_taskflow *tf = r->tf;
    if (r->prio) {
        /* A task's own level, or the run's. */
        WEFT__FOR_EACH_NODE(tf, n, { weft__node_set_run(n, wrapper_of(n, weft__task_level(n, r))); });
        return;
    }
    /* Tasks with priorities of their own: the plain ones queue their ready
     * successors with wrappers at once.  They stay so between runs (in a run
     * without priorities weft__node_run_prio finds none, at the cost of a few
     * compares per successor): a walk per run would cost a pass over every
     * node.  A node added since runs weft__node_run, also correct but its
     * ready successors wait on the deque (a wide fan then starts out of
     * order), until the next walk: the count of nodes changed, or whatever
     * else makes a plain task anew (weft_taskflow_clear, a reused slot, a
     * priority set back to NORMAL) set prio_armed to 0. */
    if (tf->prio_armed == tf->nnodes) return;
    WEFT__FOR_EACH_NODE(tf, n, {
        if (n->job.run == weft__node_run) weft__node_set_run(n, weft__node_run_prio);
    });
    tf->prio_armed = tf->nnodes;
}

void weft__prio_run_end(weft__run *r) {
    WEFT__FOR_EACH_NODE(r->tf, n, {
        if (!wrapped_alone(n)) weft__node_set_run(n, inner_of(n));
    });
    r->tf->prio_armed = 0; /* (inner_of gives plain tasks weft__node_run) */
}

weft_status weft_task_set_priority(weft_task t, weft_priority priority) {
    weft__node *n = t.node_;
    if (!n) return weft__fail(__func__, WEFT_EINVAL, "the task is the null task");
    if (!prio_ok((int)priority))
        return weft__tf_error(n->tf, WEFT_EINVAL, "weft_task_set_priority: %d is not a priority", (int)priority);
    if (weft__node_erased(n)) return weft__tf_error(n->tf, WEFT_EINVAL, "weft_task_set_priority: the task was erased");
    if (weft__tf_busy(n->tf)) return WEFT_EBUSY;
    weft__node_cold *c = weft__cold_mut(n);
    if (!c->prio) n->tf->nprio++;
    c->prio = (uint8_t)((int)priority + 2);
    /* NORMAL is the plain path's level: no wrapper, except in a run with a
     * priority, where it keeps the task NORMAL (weft__prio_run_begin). */
    weft__node_set_run(n, wrapped_alone(n) ? wrapper_of(n, c->prio) : inner_of(n));
    /* Back to plain (NORMAL), n runs weft__node_run: arm it again at the next run. */
    n->tf->prio_armed = 0;
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
