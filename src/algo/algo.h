/* Shared by the algorithm files: the descriptor-driven entry points that both the
 * direct calls and the graph tasks use.  Internal. */
#ifndef WEFT_ALGO_ALGO_H
#define WEFT_ALGO_ALGO_H

#include "algo/par.h"

#include <stdbool.h>
#include <stdint.h>

/* True when n elements of `size` bytes cannot be one array: more bytes than an
 * object may have (PTRDIFF_MAX).  The element-array calls refuse such an n
 * with WEFT_EINVAL (weft/algo.h, "Errors"): they walked base + i * size for
 * every i < n, so a count that wraps (a negative count cast to size_t) ran the
 * callbacks on addresses far past the array. */
static inline bool weft__algo_too_many(size_t n, size_t size) {
    return size && n > (size_t)PTRDIFF_MAX / size;
}

/* Plans [0, n), runs fn over its chunks and frees the plan.  WEFT_EINVAL for a
 * bad partitioner, WEFT_ENOMEM. */
weft_status weft__par_plan_run(weft_executor *ex, size_t n, const weft_algo_config *cfg,
                               weft__plan_rules rules, weft__chunk_fn fn, void *ctx);

weft_status weft__for_range(weft_executor *ex, const weft_for_desc *d);
weft_status weft__transform(weft_executor *ex, const weft_transform_desc *d);
weft_status weft__reduce(weft_executor *ex, const weft_reduce_desc *d);
weft_status weft__scan(weft_executor *ex, const weft_scan_desc *d);
weft_status weft__sort(weft_executor *ex, const weft_sort_desc *d);
/* weft_parallel_reduce_range with its failures' messages naming `call`
 * (the searches built on it: reduce.c). */
weft_status weft__reduce_range_as(const char *call, weft_executor *ex, size_t n, size_t acc_size, void *result,
                                  weft_reduce_range_fn body, weft_combine_fn op, void *arg,
                                  const weft_algo_config *cfg);
/* weft_parallel_sort_ops with its failures' messages naming `call` (sort.c). */
weft_status weft__sort_ops(const char *call, weft_executor *ex, void *base, size_t n, size_t size,
                           const weft_sort_ops *ops, void *arg, const weft_algo_config *cfg);

#endif
