/* Starting an iteration's sources.
 *
 * A few sources are pushed to the worker's deque one by one, as any ready job.
 * Many (a subflow that spawned a million children, a wide fan of independent
 * tasks) would cost a push, a pop (whose fence is the dearest instruction of the
 * pop) and a shared decrement of the run's pending count each.  They run as one
 * range job instead, split lazily (Tzannes et al., "Lazy binary splitting"):
 * while its range holds more than one source and the worker's deque is empty,
 * so that a thief would find nothing, the job pushes the upper half as a new
 * range job; then it runs the next source itself.  One worker alone splits
 * O(log n) times; each steal leads to about one split.
 *
 * The sources a range runs that ready no successor (sinks, like a subflow's
 * children) hold their -1s back on the worker like any task (run.c), so they
 * cost no shared atomic each either.
 *
 * Every source runs through its own job function and whatever it readies runs
 * as from any job (weft__execute), so ranges change when work runs, not what
 * it does.
 *
 * What a plain source costs is most of what a wide graph of independent tasks
 * costs to run (embarrassing_parallelism at one worker, before session 37: about
 * 190 instructions a task in all, against OpenMP's 156; now fewer).  So a range:
 * - looks at its deque every SPLIT_LOOK sources, not before each: two loads of
 *   the deque's ends, one of them a line thieves write; and on an executor of
 *   one worker only before its first source, where no thief can take the
 *   upper half (one split per range job, as before: the waiting case below);
 * - makes a plain source's context once (one weft_ctx for the range, only its
 *   task changed per source), where weft__call_node fills eight fields a task;
 * - skips the join re-arm of weft__node_enter: a source has no strong
 *   predecessor, so nothing to re-arm;
 * - reads the sources from the slots themselves while the taskflow has no edge
 *   (graph.h, sources_mode IMPLICIT), and asks for a node well ahead. */
#include "graph/node_run.h"
#include "core/alloc.h"

/* Below this many sources, pushing them one by one is cheaper than a range. */
#define RANGE_MIN 16
/* Sources a range runs between two looks at its deque (see the top).  A thief
 * that finds nothing waits for at most this many of them before the owner
 * splits again; the owner's first look, before its first source, splits at
 * once. */
#define SPLIT_LOOK 4
/* How many sources ahead a range asks for a source's node (see range_run). */
#define PREFETCH_AHEAD 128

static weft__job *range_run(weft__worker *w, weft__job *job);

/* Splits [lo, hi) of r at its middle: the upper half goes to the deque as a
 * new range job; returns the new upper bound of ours.  Out of memory: no split
 * (this worker runs it all, which is always correct). */
static uint32_t split(weft__worker *w, weft__run *r, uint32_t lo, uint32_t hi) {
    weft__range *g = weft__alloc(sizeof *g);
    if (!g) return hi;
    uint32_t mid = lo + (hi - lo) / 2;
    *g = (weft__range){ { range_run, NULL }, r, mid, hi };
    weft__push_local(w, &g->job);
    return mid;
}

/* The worker's look at the shared queues is due (weft__fair_due): a job it
 * finds there is returned, to run first, and [lo, hi) goes to the deque as a
 * range job, to run after it; NULL: nothing waits there, the range goes on.
 * A range is one job however many sources it runs, so without this a
 * CRITICAL task from another thread waited for the whole of it (half a wide
 * fan at one worker).  Out of memory for the range job, the job found goes to
 * the deque instead, to run after the range (late, not lost). */
static __attribute__((noinline, cold)) weft__job *yield_rest(weft__worker *w, weft__run *r, uint32_t lo,
                                                              uint32_t hi) {
    weft__job *found = weft__fair_look(w);
    if (!found) return NULL;
    weft__range *g = weft__alloc(sizeof *g);
    if (!g) {
        weft__push_local(w, found);
        return NULL;
    }
    *g = (weft__range){ { range_run, NULL }, r, lo, hi };
    weft__push_local(w, &g->job);
    return found;
}

/* Sources from lo to the range's next look: `every` (the split interval), or
 * fewer when the worker's look at the shared queues comes sooner (each source
 * counts at least one job, so that look is due by then). */
static inline uint32_t next_look(const weft__worker *w, uint32_t lo, uint32_t every) {
    int32_t fair = (int32_t)(w->fair_next - (uint32_t)w->stats.jobs);
    uint32_t d = fair > 0 ? (uint32_t)fair : 1;
    return lo + (d < every ? d : every);
}

/* weft__node_enter for a source of a run that stopped (it counts the skip),
 * out of the loop: inline, its hooks took registers from every source. */
static __attribute__((noinline, cold)) bool source_enter(weft__worker *w, weft__node *n, weft__run *r) {
    return weft__node_enter(w, n, r->top);
}

/* Plain source n of run r (job function weft__node_run), in context cx: what
 * weft__node_chain does for its first node, and the chain it readies after.
 * Returns the first job readied that is not a plain task, or NULL.  A source is
 * of r (the taskflow's active run while r's sources run), has no strong
 * predecessor (no join to re-arm), and a count held back for another run was
 * applied by the caller. */
static inline __attribute__((always_inline)) weft__job *run_source(weft__worker *w, weft__run *r, weft__node *n,
                                                                   weft_ctx *cx) {
    bool go = (atomic_load_explicit(cx->stop, memory_order_acquire) & WEFT__STOP_MASK) == 0 || source_enter(w, n, r);
    if (go && n->fn) {
        cx->task = n;
        w->ctx = cx;
        int rc = weft__hook_task_call(w, weft__obs_get(w->ex), n, r, n->fn, cx, n->arg);
        if (__builtin_expect(weft__fj_left_unsynced(w, cx), 0)) {
            int left = weft__fj_sync_left(w, cx);
            if (rc == 0) rc = left;
            cx->fj_head0 = w->fj.head; /* the slow path may have marked it */
            cx->fj_ovf0 = 0;
        }
        w->ctx = cx->outer;
        if (rc != 0) weft__fail_node(r, n, rc);
    } else if (go && __builtin_expect(weft__obs_get(w->ex) != NULL, 0)) {
        weft__noop_observed(w, r, n); /* a placeholder: counted as run */
    }
    weft__job *next = weft__release(w, r, n);
    if (!next || next->run != weft__node_run) return next;
    w->stats.jobs++; /* observe/: see weft__worker_stats */
    return weft__node_chain(w, (weft__node *)next);
}

/* Where a range reads its sources: the list, or (the list implicit: every slot
 * is a source, graph.h) the slots themselves, walked a chunk at a time. */
typedef struct cursor {
    weft__node *const *src; /* the list, or NULL: implicit */
    weft__node *at, *end;   /* implicit: the next slot, and its chunk's end */
} cursor;

static inline void cursor_init(cursor *c, const weft_taskflow *tf) {
    *c = (cursor){tf->sources_mode == WEFT__SOURCES_IMPLICIT ? NULL : tf->sources, NULL, NULL};
}

/* Source lo of the range (lo is the last index read plus one, or the first). */
static inline __attribute__((always_inline)) weft__node *cursor_next(cursor *c, const weft_taskflow *tf, uint32_t lo,
                                                                     uint32_t hi, const bool implicit) {
    /* Ask for a node well ahead: a wide graph's nodes are a stream, but one
     * the hardware prefetcher falls behind on (a 2^20-source run at one
     * worker, trivial tasks: 3.7 ms without, 2.5 with, 3.4 with 8 ahead). */
    if (!implicit) {
        if (lo + 1 + PREFETCH_AHEAD < hi) __builtin_prefetch(c->src[lo + 1 + PREFETCH_AHEAD]);
        return c->src[lo];
    }
    if (c->at == c->end) { /* the first source, or a new chunk */
        size_t slot, k = weft__chunk_locate(lo, &slot);
        c->at = &tf->chunks[k][slot];
        c->end = &tf->chunks[k][weft__chunk_capacity(k)];
    }
    if (c->at + PREFETCH_AHEAD < c->end) __builtin_prefetch(c->at + PREFETCH_AHEAD);
    return c->at++;
}

static inline __attribute__((always_inline)) weft__job *range_body(weft__worker *w, weft__run *r, uint32_t lo,
                                                                   uint32_t hi, const bool implicit) {
    const weft_taskflow *tf = r->tf;
    cursor c;
    cursor_init(&c, tf);
    /* The next lo at which to look at the deque: at once, then every
     * SPLIT_LOOK sources while thieves may want some.  With one worker the
     * first look is the only one that splits, as splitting was before: a
     * source that waits (and helps) while a later source of the range has to
     * run can then run the upper half from the deque.  A look also comes when
     * the worker's look at the shared queues is due (next_look), and the range
     * yields to what that look finds (yield_rest). */
    uint32_t look = lo;
    const uint32_t every = w->ex->nworkers > 1 ? SPLIT_LOOK : UINT32_MAX;
    const uint32_t first = lo;
    /* The context of its plain sources: weft__call_node's, with the task set
     * per source; made again after anything else ran on the worker (a job a
     * source readied), which could leave the frame stack elsewhere. */
    weft_ctx cx = weft__run_ctx(w, r, NULL);
    while (lo < hi) {
        if (lo == look) {
            /* Not before the first source: the worker has just taken this job. */
            if (lo != first && weft__fair_due(w)) {
                weft__job *found = yield_rest(w, r, lo, hi);
                if (found) return found;
            }
            /* One worker: a split before the first source only (see above). */
            if ((lo == first || every != UINT32_MAX) && hi - lo > 1 && weft__deque_size(&w->deque) == 0)
                hi = split(w, r, lo, hi);
            look = next_look(w, lo, every);
        }
        weft__node *n = cursor_next(&c, tf, lo++, hi, implicit);
        if (n->job.run != weft__node_run) {
            weft__execute(w, &n->job);
            /* Only if a source is left: after our last one the run may have
             * ended, and r been freed (ASan: flow_tests'
             * random_condition_graphs_match_a_serial_interpreter). */
            if (lo < hi) cx = weft__run_ctx(w, r, NULL);
            continue;
        }
        /* A plain task: weft__execute's step and weft__node_run's body inline
         * (node_run.h), without two calls per source (embarrassing_parallelism_rerun
         * at one worker: 19 instructions fewer per task, of about 145). */
        w->stats.jobs++; /* observe/: see weft__worker_stats */
        /* Counts held back: after the first source, normally this run's -1s,
         * which stay held (only the graph layer holds a run's count, with
         * defer_keep weft__node_run, and a range's run has no priorities).
         * Anything else is applied first, as weft__execute and
         * weft__node_chain would. */
        if (__builtin_expect(w->defer_obj != r, 0)) {
            weft__job_next(w, &n->job);
            if (w->defer_obj != NULL && w->defer_obj != r) weft__defer_settle_local(w);
        }
        weft__job *next = run_source(w, r, n, &cx);
        if (next) {
            weft__execute(w, next);
            if (lo < hi) cx = weft__run_ctx(w, r, NULL); /* as above */
        }
    }
    return NULL;
}

static weft__job *range_run(weft__worker *w, weft__job *job) {
    weft__range *g = (weft__range *)job;
    weft__run *r = g->r;
    uint32_t lo = g->lo, hi = g->hi;
    /* Done with g: the embedded range (r->range) is reused by the next
     * iteration, which cannot start before our sources have run; one a split
     * allocated is ours to free. */
    if (g != &r->range) weft__free(g, sizeof *g);
    /* (a run's taskflow is not changed while it runs: the mode holds) */
    return r->tf->sources_mode == WEFT__SOURCES_IMPLICIT ? range_body(w, r, lo, hi, true)
                                                          : range_body(w, r, lo, hi, false);
}

weft__job *weft__sources_start(weft__worker *w, weft__run *r) {
    weft_taskflow *tf = r->tf;
    /* Tasks with priorities are queued together first (priority.c). */
    if (__builtin_expect(tf->nprio != 0 || r->prio != 0, 0)) return weft__prio_sources_start(w, r);
    size_t ns = weft__nsources(tf);
    if (ns < RANGE_MIN) { /* (a taskflow holds fewer than 2^32 tasks) */
        /* Pushed last to first, so that the deque's LIFO pops take them first
         * to last.  A sealed deque (a policy takes every job: WEFT_SCHED_FIFO,
         * ROUND_ROBIN, a user's) hands them to the policy as pushed, and FIFO
         * ran sources 0, 5, 4, 3, 2, 1 where sched.h promises submission
         * order (tests/seeds_hunt42.c): there, first to last. */
        if (weft__deque_sealed(&w->deque))
            for (size_t i = 1; i < ns; i++) weft__push_local(w, &weft__source_at(tf, i)->job);
        else
            for (size_t i = ns; i-- > 1;) weft__push_local(w, &weft__source_at(tf, i)->job);
        return &weft__source_at(tf, 0)->job;
    }
    r->range = (weft__range){ { range_run, NULL }, r, 0, (uint32_t)ns };
    return &r->range.job;
}
