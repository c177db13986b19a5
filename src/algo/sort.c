/* Parallel merge sort, driven by kernels (weft_sort_ops): T blocks are sorted in
 * parallel, then runs are merged pairwise in rounds.  Every round is split into
 * pieces of equal output size; a piece finds where it starts in both runs by
 * binary search (ops->split), so each round is parallel down to the last merge.
 * Rounds alternate between the array and a buffer of n elements; if the result
 * ends in the buffer it is copied back in parallel. */
#include <string.h>

#include "algo/algo.h"
#include "core/alloc.h"

enum { PIECES_PER_TASK = 4, MIN_PARALLEL = 4096, STACK_RUNS = 65 };

typedef struct sorter {
    unsigned char *a, *buf; /* src and dst swap every round */
    size_t n, size;
    const weft_sort_ops *ops;
    void *arg;
    size_t *runs; /* run r is [runs[r], runs[r+1]) */
    size_t nruns, pieces;
    _Atomic size_t next;
} sorter;

static void sort_block(void *ctx, unsigned t, unsigned n) {
    sorter *s = ctx;
    size_t lo = s->runs[t], hi = s->runs[t + 1];
    (void)n;
    s->ops->sort(s->a + lo * s->size, hi - lo, s->buf + lo * s->size, s->arg);
}

/* Output positions [lo, hi) of the merge of runs 2p and 2p+1 (absolute). */
static void merge_part(sorter *s, size_t p, size_t lo, size_t hi) {
    size_t r = 2 * p, base = s->runs[r], mid = s->runs[r + 1];
    size_t end = r + 2 <= s->nruns ? s->runs[r + 2] : mid;
    const unsigned char *a = s->a + base * s->size, *b = s->a + mid * s->size;
    size_t na = mid - base, nb = end - mid, k0 = lo - base, k1 = hi - base;
    size_t i0 = s->ops->split(a, na, b, nb, k0, s->arg), i1 = s->ops->split(a, na, b, nb, k1, s->arg);
    s->ops->merge(a + i0 * s->size, i1 - i0, b + (k0 - i0) * s->size, (k1 - i1) - (k0 - i0),
                  s->buf + lo * s->size, s->arg);
}

/* A piece is an equal share of the output; it may cross several pairs. */
static void merge_piece(sorter *s, size_t j) {
    size_t lo = s->n * j / s->pieces, hi = s->n * (j + 1) / s->pieces;
    for (size_t p = 0; 2 * p < s->nruns && lo < hi; p++) {
        size_t end = 2 * p + 2 <= s->nruns ? s->runs[2 * p + 2] : s->runs[2 * p + 1];
        if (end <= lo) continue;
        size_t stop = hi < end ? hi : end;
        merge_part(s, p, lo, stop);
        lo = stop;
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
    s->pieces = (size_t)tasks * PIECES_PER_TASK;
    atomic_store_explicit(&s->next, 0, memory_order_relaxed);
    weft__par_tasks(ex, tasks, merge_task, s);
    size_t kept = 0;
    for (size_t r = 0; r < s->nruns; r += 2) s->runs[kept++] = s->runs[r];
    s->runs[kept] = s->n;
    s->nruns = kept;
    unsigned char *t = s->a;
    s->a = s->buf;
    s->buf = t;
}

static void sort_parallel(weft_executor *ex, sorter *s, unsigned tasks) {
    unsigned char *orig = s->a;
    for (unsigned t = 0; t <= tasks; t++) s->runs[t] = s->n * t / tasks;
    s->nruns = tasks;
    weft__par_tasks(ex, tasks, sort_block, s);
    while (s->nruns > 1) merge_round(ex, s, tasks);
    if (s->a != orig) { /* copy the result back: now buf is the array */
        s->buf = orig;
        weft__par_tasks(ex, tasks, copy_task, s);
    }
}

static unsigned sort_tasks(weft_executor *ex, size_t n, const weft_algo_config *cfg) {
    return n < MIN_PARALLEL ? 1 : weft__task_limit(ex, cfg);
}

weft_status weft_parallel_sort_ops(weft_executor *ex, void *base, size_t n, size_t size,
                                   const weft_sort_ops *ops, void *arg, const weft_algo_config *cfg) {
    if (!ex || !base || !size || !ops || !ops->sort || !ops->merge || !ops->split) return WEFT_EINVAL;
    if (cfg && cfg->partitioner > WEFT_PARTITION_GUIDED) return WEFT_EINVAL;
    if (n < 2) return WEFT_OK;
    size_t bytes = n * size;
    if (bytes / size != n) return WEFT_ENOMEM;
    unsigned tasks = sort_tasks(ex, n, cfg);
    size_t stack_runs[STACK_RUNS], runs_bytes = ((size_t)tasks + 1) * sizeof(size_t);
    sorter s = { .a = base, .n = n, .size = size, .ops = ops, .arg = arg, .runs = stack_runs };
    s.buf = weft__alloc_aligned(bytes, 64);
    if (tasks + 1 > STACK_RUNS) s.runs = weft__alloc(runs_bytes);
    if (!s.buf || !s.runs) {
        if (s.buf) weft__free_aligned(s.buf, bytes, 64);
        return WEFT_ENOMEM;
    }
    unsigned char *buf = s.buf;
    if (tasks == 1) ops->sort(base, n, buf, arg);
    else sort_parallel(ex, &s, tasks);
    if (s.runs != stack_runs) weft__free(s.runs, runs_bytes);
    weft__free_aligned(buf, bytes, 64);
    return WEFT_OK;
}
