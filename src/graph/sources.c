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
 * it does. */
#include "graph/node_run.h"
#include "core/alloc.h"

/* Below this many sources, pushing them one by one is cheaper than a range. */
#define RANGE_MIN 16

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

static weft__job *range_run(weft__worker *w, weft__job *job) {
    weft__range *g = (weft__range *)job;
    weft__run *r = g->r;
    uint32_t lo = g->lo, hi = g->hi;
    /* Done with g: the embedded range (r->range) is reused by the next
     * iteration, which cannot start before our sources have run; one a split
     * allocated is ours to free. */
    if (g != &r->range) weft__free(g, sizeof *g);
    weft__node *const *src = r->tf->sources;
    while (lo < hi) {
        if (hi - lo > 1 && weft__deque_size(&w->deque) == 0) hi = split(w, r, lo, hi);
        weft__node *n = src[lo++];
        if (n->job.run != weft__node_run) {
            weft__execute(w, &n->job);
            continue;
        }
        /* A plain task: weft__execute's step and weft__node_run's body inline
         * (node_run.h), without two calls per source (embarrassing_parallelism_rerun
         * at one worker: 19 instructions fewer per task, of about 145). */
        w->stats.jobs++; /* observe/: see weft__worker_stats */
        if (__builtin_expect(w->defer_flush != NULL, 0) && w->defer_keep != weft__node_run) weft__defer_settle_local(w);
        weft__job *next = weft__node_chain(w, n);
        if (next) weft__execute(w, next);
    }
    return NULL;
}

weft__job *weft__sources_start(weft__worker *w, weft__run *r) {
    weft_taskflow *tf = r->tf;
    /* Tasks with priorities are queued together first (priority.c). */
    if (__builtin_expect(tf->nprio != 0 || r->prio != 0, 0)) return weft__prio_sources_start(w, r);
    if (tf->nsources < RANGE_MIN) { /* (a taskflow holds fewer than 2^32 tasks) */
        for (size_t i = tf->nsources; i-- > 1;) weft__push_local(w, &tf->sources[i]->job);
        return &tf->sources[0]->job;
    }
    r->range = (weft__range){ { range_run, NULL }, r, 0, (uint32_t)tf->nsources };
    return &r->range.job;
}
