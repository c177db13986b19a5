/* The _sized entry points of weft/algo.h: each reads the caller's
 * weft_algo_config at the caller's size (core/abi.h) and makes the call of
 * its name.  The exported names without _sized are the implementations and
 * read this library's layout, which is the 1.0 layout as long as the assert
 * below holds. */
#include "core/abi.h"
#include "weft/algo.h"

_Static_assert(WEFT__ENDS_AT(weft_algo_config, cancel),
               "weft_algo_config grew past its 1.0 layout: binaries built before the sizes "
               "were passed call weft_parallel_for & co. with a 1.0-sized struct, so those "
               "names must now read WEFT__SIZE_TO(weft_algo_config, cancel) bytes through "
               "weft__config_read (docs/abi.md, \"Growing a config struct\")");

weft_status weft_parallel_for_sized(weft_executor *ex, size_t first, size_t last, size_t step,
                                    weft_index_fn fn, void *arg, const weft_algo_config *cfg,
                                    size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_for(ex, first, last, step, fn, arg, cfg);
}

weft_status weft_parallel_for_range_sized(weft_executor *ex, size_t first, size_t last, size_t step,
                                          weft_range_fn body, void *arg,
                                          const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_for_range(ex, first, last, step, body, arg, cfg);
}

weft_status weft_parallel_for_each_sized(weft_executor *ex, void *base, size_t n, size_t size,
                                         weft_elem_fn fn, void *arg, const weft_algo_config *cfg,
                                         size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_for_each(ex, base, n, size, fn, arg, cfg);
}

weft_status weft_parallel_transform_sized(weft_executor *ex, const void *in, size_t in_size,
                                          void *out, size_t out_size, size_t n, weft_unary_fn f,
                                          void *arg, const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_transform(ex, in, in_size, out, out_size, n, f, arg, cfg);
}

weft_status weft_parallel_transform2_sized(weft_executor *ex, const void *a, size_t a_size,
                                           const void *b, size_t b_size, void *out, size_t out_size,
                                           size_t n, weft_binary_fn f, void *arg,
                                           const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_transform2(ex, a, a_size, b, b_size, out, out_size, n, f, arg, cfg);
}

weft_status weft_parallel_reduce_sized(weft_executor *ex, const void *in, size_t n, size_t size,
                                       void *result, weft_combine_fn op, void *arg,
                                       const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_reduce(ex, in, n, size, result, op, arg, cfg);
}

weft_status weft_parallel_transform_reduce_sized(weft_executor *ex, const void *in, size_t n,
                                                 size_t in_size, size_t acc_size, void *result,
                                                 weft_unary_fn map, weft_combine_fn op, void *arg,
                                                 const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_transform_reduce(ex, in, n, in_size, acc_size, result, map, op, arg, cfg);
}

weft_status weft_parallel_reduce_range_sized(weft_executor *ex, size_t n, size_t acc_size,
                                             void *result, weft_reduce_range_fn body,
                                             weft_combine_fn op, void *arg,
                                             const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_reduce_range(ex, n, acc_size, result, body, op, arg, cfg);
}

weft_status weft_parallel_min_element_sized(weft_executor *ex, const void *in, size_t n,
                                            size_t size, weft_cmp_fn cmp, void *arg, size_t *index,
                                            const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_min_element(ex, in, n, size, cmp, arg, index, cfg);
}

weft_status weft_parallel_max_element_sized(weft_executor *ex, const void *in, size_t n,
                                            size_t size, weft_cmp_fn cmp, void *arg, size_t *index,
                                            const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_max_element(ex, in, n, size, cmp, arg, index, cfg);
}

weft_status weft_parallel_find_if_sized(weft_executor *ex, const void *in, size_t n, size_t size,
                                        weft_elem_pred_fn pred, void *arg, size_t *index,
                                        const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_find_if(ex, in, n, size, pred, arg, index, cfg);
}

weft_status weft_parallel_inclusive_scan_sized(weft_executor *ex, const void *in, void *out,
                                               size_t n, size_t size, const void *init,
                                               weft_combine_fn op, void *arg,
                                               const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_inclusive_scan(ex, in, out, n, size, init, op, arg, cfg);
}

weft_status weft_parallel_exclusive_scan_sized(weft_executor *ex, const void *in, void *out,
                                               size_t n, size_t size, const void *init,
                                               weft_combine_fn op, void *arg,
                                               const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_exclusive_scan(ex, in, out, n, size, init, op, arg, cfg);
}

weft_status weft_parallel_scan_range_sized(weft_executor *ex, size_t n, size_t acc_size,
                                           const void *init, weft_reduce_range_fn reduce,
                                           weft_scan_range_fn scan, weft_combine_fn op, void *arg,
                                           const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_scan_range(ex, n, acc_size, init, reduce, scan, op, arg, cfg);
}

weft_status weft_parallel_sort_sized(weft_executor *ex, void *base, size_t n, size_t size,
                                     weft_cmp_fn cmp, void *arg, const weft_algo_config *cfg,
                                     size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_sort(ex, base, n, size, cmp, arg, cfg);
}

weft_status weft_parallel_stable_sort_sized(weft_executor *ex, void *base, size_t n, size_t size,
                                            weft_cmp_fn cmp, void *arg, const weft_algo_config *cfg,
                                            size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_stable_sort(ex, base, n, size, cmp, arg, cfg);
}

weft_status weft_parallel_sort_ops_sized(weft_executor *ex, void *base, size_t n, size_t size,
                                         const weft_sort_ops *ops, void *arg,
                                         const weft_algo_config *cfg, size_t cfg_size) {
    WEFT__CONFIG_IN(weft_algo_config, cfg, cfg_size);
    return weft_parallel_sort_ops(ex, base, n, size, ops, arg, cfg);
}
