/* min_element, max_element, find_if: reductions over element indices.  The
 * value of a chunk is an index (SIZE_MAX: none), combined in chunk order, so ties
 * go to the first such element as in a serial scan. */
#include <stdint.h>

#include "algo/algo.h"
#include "core/error_detail.h"

typedef struct search {
    const unsigned char *in;
    size_t size;
    weft_cmp_fn cmp;
    weft_elem_pred_fn pred;
    void *arg;
    int sign; /* -1: min, +1: max */
    _Atomic size_t found; /* find_if: smallest match seen so far */
} search;

static const void *at(const search *s, size_t i) { return s->in + i * s->size; }

/* True if element x should replace the current best b (strictly better only). */
static bool better(const search *s, size_t x, size_t b) {
    int c = s->cmp(at(s, x), at(s, b), s->arg);
    return s->sign < 0 ? c < 0 : c > 0;
}

static void extreme_body(size_t lo, size_t hi, void *acc, void *ctx) {
    const search *s = ctx;
    size_t best = lo;
    for (size_t i = lo + 1; i < hi; i++)
        if (better(s, i, best)) best = i;
    *(size_t *)acc = best;
}

static void extreme_op(void *acc, const void *x, void *ctx) {
    size_t *a = acc, b = *(const size_t *)x;
    if (*a == SIZE_MAX || better(ctx, b, *a)) *a = b;
}

static weft_status extreme(weft_executor *ex, search *s, size_t n, size_t *index,
                           const weft_algo_config *cfg) {
    if ((!s->in && n) || !s->size || !s->cmp || !index)
        return weft__fail(s->sign < 0 ? "weft_parallel_min_element" : "weft_parallel_max_element", WEFT_EINVAL,
                          "cmp or index is NULL, size is 0, or in is NULL with n > 0");
    if (weft__algo_too_many(n, s->size))
        return weft__fail(s->sign < 0 ? "weft_parallel_min_element" : "weft_parallel_max_element", WEFT_EINVAL,
                          "%zu elements of %zu bytes are more than an array can hold", n, s->size);
    size_t best = SIZE_MAX;
    weft_status st = weft__reduce_range_as(s->sign < 0 ? "weft_parallel_min_element" : "weft_parallel_max_element", ex, n,
                                           sizeof best, &best, extreme_body, extreme_op, s, cfg);
    if (st == WEFT_OK) *index = best == SIZE_MAX ? n : best;
    return st;
}

weft_status weft_parallel_min_element(weft_executor *ex, const void *in, size_t n, size_t size,
                                      weft_cmp_fn cmp, void *arg, size_t *index,
                                      const weft_algo_config *cfg) {
    search s = { .in = in, .size = size, .cmp = cmp, .arg = arg, .sign = -1 };
    return extreme(ex, &s, n, index, cfg);
}

weft_status weft_parallel_max_element(weft_executor *ex, const void *in, size_t n, size_t size,
                                      weft_cmp_fn cmp, void *arg, size_t *index,
                                      const weft_algo_config *cfg) {
    search s = { .in = in, .size = size, .cmp = cmp, .arg = arg, .sign = 1 };
    return extreme(ex, &s, n, index, cfg);
}

/* Chunks past a match already found elsewhere stop early. */
static void find_body(size_t lo, size_t hi, void *acc, void *ctx) {
    search *s = ctx;
    size_t hit = SIZE_MAX;
    for (size_t i = lo; i < hi; i++) {
        /* relaxed: only a hint to stop; the answer comes from the chunk values. */
        if (i > atomic_load_explicit(&s->found, memory_order_relaxed)) break;
        if (s->pred(at(s, i), s->arg)) {
            hit = i;
            break;
        }
    }
    *(size_t *)acc = hit;
    size_t seen = atomic_load_explicit(&s->found, memory_order_relaxed);
    while (hit < seen &&
           !atomic_compare_exchange_weak_explicit(&s->found, &seen, hit, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

static void find_op(void *acc, const void *x, void *ctx) {
    (void)ctx;
    size_t *a = acc;
    if (*a == SIZE_MAX) *a = *(const size_t *)x;
}

weft_status weft_parallel_find_if(weft_executor *ex, const void *in, size_t n, size_t size,
                                  weft_elem_pred_fn pred, void *arg, size_t *index,
                                  const weft_algo_config *cfg) {
    if ((!in && n) || !size || !pred || !index)
        return weft__fail(__func__, WEFT_EINVAL, "pred or index is NULL, size is 0, or in is NULL with n > 0");
    if (weft__algo_too_many(n, size))
        return weft__fail(__func__, WEFT_EINVAL, "%zu elements of %zu bytes are more than an array can hold", n, size);
    search s = { .in = in, .size = size, .pred = pred, .arg = arg };
    atomic_init(&s.found, SIZE_MAX);
    size_t hit = SIZE_MAX;
    weft_status st = weft__reduce_range_as("weft_parallel_find_if", ex, n, sizeof hit, &hit, find_body, find_op, &s, cfg);
    if (st == WEFT_OK) *index = hit == SIZE_MAX ? n : hit;
    return st;
}
