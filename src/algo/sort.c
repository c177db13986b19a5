/* Parallel merge sort, driven by kernels (weft_sort_ops): T blocks are sorted in
 * parallel, then runs are merged pairwise in rounds.  Every round is split into
 * pieces of equal output size; a piece finds where it starts in both runs by
 * binary search (ops->split), so each round is parallel down to the last merge.
 * Rounds alternate between the array and a buffer of n elements; if the result
 * ends in the buffer it is copied back in parallel.
 *
 * Any comparator, not only a strict weak order (NaN doubles, an overflowing
 * `a - b`, a random one): the kernels loop within their bounds whatever the
 * comparisons say, so the only shared assumption is the pieces'.  Each cut
 * between two pieces is computed by both of them; with a comparator that is not
 * deterministic the two could differ, so the first value found is kept in
 * cuts[] and the other piece takes it.  With a comparator that is not a strict
 * weak order the cuts of one merge need not be monotone (a later cut taking
 * fewer elements of a run than an earlier one), so a piece whose cuts cross
 * merges nothing and marks the round bad; the caller then merges each pair
 * whole, which gives a permutation for any comparator (see merge_whole). */
#include <stdint.h>
#include <string.h>

#include "algo/algo.h"
#include "core/alloc.h"
#include "core/default_executor.h"
#include "core/error_detail.h"

enum { PIECES_PER_TASK = 4, MIN_PARALLEL = 4096, STACK_TASKS = 64 };

#define CUT_UNSET SIZE_MAX

typedef struct sorter {
    unsigned char *a, *buf; /* src and dst swap every round */
    size_t n, size;
    const weft_sort_ops *ops;
    void *arg;
    size_t *runs; /* run r is [runs[r], runs[r+1]) */
    size_t nruns, pieces;
    _Atomic size_t *cuts; /* cuts[j]: the split at piece j's start; CUT_UNSET */
    _Atomic bool bad;     /* a piece found crossing cuts this round */
    _Atomic size_t next;
} sorter;

/* Blocks t, t + n, ...: weft__par_tasks may run fewer jobs than the blocks
 * (out of memory for its job list), and a block no job sorted would be merged
 * as if it were sorted. */
static void sort_block(void *ctx, unsigned t, unsigned n) {
    sorter *s = ctx;
    for (size_t b = t; b < s->nruns; b += n) {
        size_t lo = s->runs[b], hi = s->runs[b + 1];
        s->ops->sort(s->a + lo * s->size, hi - lo, s->buf + lo * s->size, s->arg);
    }
}

/* The merge of runs 2p and 2p+1: a[0..na) and b[0..nb), output from base. */
typedef struct pair {
    const unsigned char *a, *b;
    size_t base, na, nb;
} pair;

static pair pair_at(const sorter *s, size_t p) {
    size_t r = 2 * p, base = s->runs[r], mid = s->runs[r + 1];
    size_t end = r + 2 <= s->nruns ? s->runs[r + 2] : mid;
    return (pair){ s->a + base * s->size, s->a + mid * s->size, base, mid - base, end - mid };
}

static size_t piece_start(const sorter *s, size_t j) { return s->n * j / s->pieces; }

/* Elements of a among the first k outputs of pair m, the same for every piece
 * that asks: the ends of a merge need no comparison, and a cut inside one is
 * piece boundary j's, computed once and shared through cuts[j].  A value
 * ops->split gives outside [k - nb, k] ∩ [0, na] (a kernel that lies) is
 * clamped into it and marks the round bad. */
static size_t cut_at(sorter *s, const pair *m, size_t k, size_t j) {
    if (k == 0) return 0;
    if (k == m->na + m->nb) return m->na;
    /* relaxed: the cut is a number, read with nothing it guards; the CAS's
     * single modification order is all that makes both pieces agree. */
    size_t got = atomic_load_explicit(&s->cuts[j], memory_order_relaxed);
    if (got != CUT_UNSET) return got;
    size_t lo = k > m->nb ? k - m->nb : 0, hi = k < m->na ? k : m->na;
    size_t i = s->ops->split(m->a, m->na, m->b, m->nb, k, s->arg);
    if (i < lo || i > hi) {
        atomic_store_explicit(&s->bad, true, memory_order_relaxed);
        i = i < lo ? lo : hi;
    }
    if (!atomic_compare_exchange_strong_explicit(&s->cuts[j], &got, i, memory_order_relaxed,
                                                 memory_order_relaxed))
        i = got;
    return i;
}

/* Output positions [lo, hi) of pair p (absolute); lo is piece j's start or the
 * pair's, hi piece j+1's start or the pair's end.  Cuts that cross (fewer of a
 * or of b taken at hi than at lo) merge nothing and mark the round bad. */
static void merge_part(sorter *s, size_t p, size_t lo, size_t hi, size_t j) {
    pair m = pair_at(s, p);
    size_t k0 = lo - m.base, k1 = hi - m.base;
    size_t i0 = cut_at(s, &m, k0, j), i1 = cut_at(s, &m, k1, j + 1);
    if (i1 < i0 || k1 - i1 < k0 - i0) {
        atomic_store_explicit(&s->bad, true, memory_order_relaxed);
        return;
    }
    s->ops->merge(m.a + i0 * s->size, i1 - i0, m.b + (k0 - i0) * s->size, (k1 - i1) - (k0 - i0),
                  s->buf + lo * s->size, s->arg);
}

/* A piece is an equal share of the output; it may cross several pairs. */
static void merge_piece(sorter *s, size_t j) {
    size_t lo = piece_start(s, j), hi = piece_start(s, j + 1);
    for (size_t p = 0; 2 * p < s->nruns && lo < hi; p++) {
        size_t end = 2 * p + 2 <= s->nruns ? s->runs[2 * p + 2] : s->runs[2 * p + 1];
        if (end <= lo) continue;
        size_t stop = hi < end ? hi : end;
        merge_part(s, p, lo, stop, j);
        lo = stop;
    }
}

/* After a bad round: every pair merged whole, on this thread.  Only a
 * comparator that is not a strict weak order (or a lying split) gets here. */
static void merge_whole(sorter *s) {
    for (size_t p = 0; 2 * p < s->nruns; p++) {
        pair m = pair_at(s, p);
        s->ops->merge(m.a, m.na, m.b, m.nb, s->buf + m.base * s->size, s->arg);
    }
}

static void merge_task(void *ctx, unsigned t, unsigned n) {
    sorter *s = ctx;
    (void)t, (void)n;
    /* relaxed: hands out piece numbers; the runs were published by the fork. */
    for (size_t j; (j = atomic_fetch_add_explicit(&s->next, 1, memory_order_relaxed)) < s->pieces;)
        merge_piece(s, j);
}

static void copy_task(void *ctx, unsigned t, unsigned n) {
    sorter *s = ctx;
    size_t lo = s->n * t / n, hi = s->n * (t + 1) / n;
    memcpy(s->buf + lo * s->size, s->a + lo * s->size, (hi - lo) * s->size);
}

/* One round: pairs of runs merged from s->a into s->buf; then the roles swap and
 * the run list halves. */
static void merge_round(weft_executor *ex, sorter *s, unsigned tasks) {
    for (size_t j = 0; j <= s->pieces; j++) atomic_store_explicit(&s->cuts[j], CUT_UNSET, memory_order_relaxed);
    atomic_store_explicit(&s->bad, false, memory_order_relaxed);
    atomic_store_explicit(&s->next, 0, memory_order_relaxed);
    weft__par_tasks(ex, tasks, merge_task, s);
    /* relaxed: par_tasks has joined every piece (its own acquire). */
    if (atomic_load_explicit(&s->bad, memory_order_relaxed)) merge_whole(s);
    size_t kept = 0;
    for (size_t r = 0; r < s->nruns; r += 2) s->runs[kept++] = s->runs[r];
    s->runs[kept] = s->n;
    s->nruns = kept;
    unsigned char *t = s->a;
    s->a = s->buf;
    s->buf = t;
}

/* A token stops the sort between phases only: after each phase, s->a holds
 * every element, so stopping there leaves a permutation.  Returns WEFT_OK or
 * WEFT_ECANCELED. */
static weft_status sort_parallel(weft_executor *ex, sorter *s, unsigned tasks, const weft_cancel_token *tok,
                                 const _Atomic int *run_stop) {
    unsigned char *orig = s->a;
    for (unsigned t = 0; t <= tasks; t++) s->runs[t] = s->n * t / tasks;
    s->nruns = tasks;
    weft_status st = WEFT_OK;
    if (weft__algo_stopped(tok, run_stop)) return WEFT_ECANCELED;
    weft__par_tasks(ex, tasks, sort_block, s);
    while (s->nruns > 1) {
        if (weft__algo_stopped(tok, run_stop)) {
            st = WEFT_ECANCELED;
            break;
        }
        merge_round(ex, s, tasks);
    }
    if (s->a != orig) { /* copy the result back: now buf is the array */
        s->buf = orig;
        weft__par_tasks(ex, tasks, copy_task, s);
    }
    return st;
}

static unsigned sort_tasks(weft_executor *ex, size_t n, const weft_algo_config *cfg) {
    return n < MIN_PARALLEL ? 1 : weft__task_limit(ex, cfg);
}

/* The run list and the cuts: on the stack up to STACK_TASKS tasks, else on the
 * heap.  False: out of memory (nothing is held then). */
static bool lists_get(sorter *s, unsigned tasks, size_t *stack_runs, _Atomic size_t *stack_cuts) {
    if (tasks <= STACK_TASKS) {
        s->runs = stack_runs;
        s->cuts = stack_cuts;
        return true;
    }
    s->runs = weft__alloc(((size_t)tasks + 1) * sizeof *s->runs);
    s->cuts = weft__alloc((s->pieces + 1) * sizeof *s->cuts);
    if (s->runs && s->cuts) return true;
    if (s->runs) weft__free(s->runs, ((size_t)tasks + 1) * sizeof *s->runs);
    if (s->cuts) weft__free(s->cuts, (s->pieces + 1) * sizeof *s->cuts);
    return false;
}

static void lists_put(sorter *s, unsigned tasks) {
    if (tasks <= STACK_TASKS) return;
    weft__free(s->runs, ((size_t)tasks + 1) * sizeof *s->runs);
    weft__free(s->cuts, (s->pieces + 1) * sizeof *s->cuts);
}

/* Its failures name `call`: weft_parallel_sort_ops, or weft_parallel_sort for the
 * generic sorts, whose callers pass no ops (sort_generic.c). */
weft_status weft__sort_ops(const char *call, weft_executor *ex, void *base, size_t n, size_t size,
                           const weft_sort_ops *ops, void *arg, const weft_algo_config *cfg) {
    if ((!base && n) || !size || !ops || !ops->sort || !ops->merge || !ops->split)
        return weft__fail(call, WEFT_EINVAL,
                          "size is 0, ops or one of its functions is NULL, or base is NULL with n > 0");
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return dst;
    if (cfg && cfg->partitioner > WEFT_PARTITION_GUIDED)
        return weft__fail(call, WEFT_EINVAL, "config partitioner %d is unknown", (int)cfg->partitioner);
    const weft_cancel_token *tok = cfg ? cfg->cancel : NULL;
    const _Atomic int *run_stop = weft__algo_take_run_stop(); /* an emplaced sort's run */
    /* One element is sorted, but a cancelled call says so as every algorithm's
     * one-chunk call does (nothing is left to skip only for n == 0). */
    if (n < 2) return n == 1 && weft__algo_stopped(tok, run_stop) ? WEFT_ECANCELED : WEFT_OK;
    size_t bytes = n * size;
    if (bytes / size != n) return weft__fail(call, WEFT_ENOMEM, "%zu elements of %zu bytes are too many", n, size);
    unsigned tasks = sort_tasks(ex, n, cfg);
    size_t stack_runs[STACK_TASKS + 1];
    _Atomic size_t stack_cuts[STACK_TASKS * PIECES_PER_TASK + 1];
    /* At most one piece per element, so that piece starts are distinct. */
    size_t pieces = (size_t)tasks * PIECES_PER_TASK;
    sorter s = { .a = base, .n = n, .size = size, .ops = ops, .arg = arg, .pieces = pieces < n ? pieces : n };
    s.buf = weft__alloc_aligned(bytes, 64);
    if (!s.buf) return weft__fail_st(call, WEFT_ENOMEM);
    if (!lists_get(&s, tasks, stack_runs, stack_cuts)) {
        weft__free_aligned(s.buf, bytes, 64);
        return weft__fail_st(call, WEFT_ENOMEM);
    }
    unsigned char *buf = s.buf;
    weft_status st = WEFT_OK;
    if (tasks > 1) st = sort_parallel(ex, &s, tasks, tok, run_stop);
    else if (weft__algo_stopped(tok, run_stop)) st = WEFT_ECANCELED;
    else ops->sort(base, n, buf, arg);
    lists_put(&s, tasks);
    weft__free_aligned(buf, bytes, 64);
    return st;
}

weft_status weft_parallel_sort_ops(weft_executor *ex, void *base, size_t n, size_t size,
                                   const weft_sort_ops *ops, void *arg, const weft_algo_config *cfg) {
    return weft__sort_ops(__func__, ex, base, n, size, ops, arg, cfg);
}
