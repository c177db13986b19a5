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
 * children) do not decrement r->pending each: the range sums their -1s and
 * applies them once at its end.  A decrement applied late only delays the
 * iteration's end, which needs every range to finish anyway; increments (a
 * source that readies several successors) are applied at once, as always.
 *
 * Every source still goes through its own job function path: plain tasks by
 * weft__node_run_deferred, other kinds (conditions, subflows, modules) by their
 * job functions, and whatever a source readies runs in the same way as from any
 * job (weft__execute), so ranges change when work runs, not what it does. */
#include "graph/graph.h"
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
    *g = (weft__range){ { range_run, NULL }, r, mid, hi, true };
    weft__push_local(w, &g->job);
    return mid;
}

static weft__job *range_run(weft__worker *w, weft__job *job) {
    weft__range *g = (weft__range *)job;
    weft__run *r = g->r;
    uint32_t lo = g->lo, hi = g->hi;
    /* Done with g: an embedded range (r->range) may be reused by the next
     * iteration as soon as our sum below is applied; an owned one is ours. */
    if (g->owned) weft__free(g, sizeof *g);
    weft__node *const *src = r->tf->sources;
    int64_t done = 0; /* the -1s of finished sinks, not yet applied */
    while (lo < hi) {
        if (hi - lo > 1 && weft__deque_size(&w->deque) == 0) hi = split(w, r, lo, hi);
        weft__node *n = src[lo++];
        w->stats.jobs++; /* observe/: each source starts as a job of its own */
        weft__job *next = n->job.run == weft__node_run ? weft__node_run_deferred(w, r, n, &done)
                                                       : n->job.run(w, &n->job);
        weft__execute(w, next);
    }
    return done ? weft__run_settle(w, r, done) : NULL;
}

weft__job *weft__sources_start(weft__worker *w, weft__run *r) {
    weft_taskflow *tf = r->tf;
    if (tf->nsources < RANGE_MIN || tf->nsources > UINT32_MAX) {
        for (size_t i = tf->nsources; i-- > 1;) weft__push_local(w, &tf->sources[i]->job);
        return &tf->sources[0]->job;
    }
    r->range = (weft__range){ { range_run, NULL }, r, 0, (uint32_t)tf->nsources, false };
    return &r->range.job;
}
