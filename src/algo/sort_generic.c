/* Kernels of the generic (comparator) sort: a stable bottom-up merge sort on
 * elements of any size, moved with memcpy.  Stable, so it serves both
 * weft_parallel_sort and weft_parallel_stable_sort. */
#include <string.h>

#include "algo/algo.h"
#include "core/error_detail.h"

enum { INSERTION_RUN = 16 };

typedef struct generic {
    size_t size;
    weft_cmp_fn cmp;
    void *arg;
} generic;

static bool less(const generic *g, const unsigned char *x, const unsigned char *y) {
    return g->cmp(x, y, g->arg) < 0;
}

/* Stable insertion sort of a[0..n); tmp holds one element. */
static void insertion(const generic *g, unsigned char *a, size_t n, unsigned char *tmp) {
    size_t sz = g->size;
    for (size_t i = 1; i < n; i++) {
        size_t j = i;
        while (j > 0 && less(g, a + i * sz, a + (j - 1) * sz)) j--;
        if (j == i) continue;
        memcpy(tmp, a + i * sz, sz);
        memmove(a + (j + 1) * sz, a + j * sz, (i - j) * sz);
        memcpy(a + j * sz, tmp, sz);
    }
}

static void merge(const void *a_, size_t na, const void *b_, size_t nb, void *out_, void *arg) {
    const generic *g = arg;
    const unsigned char *a = a_, *b = b_;
    unsigned char *out = out_;
    size_t sz = g->size, i = 0, j = 0;
    while (i < na && j < nb) {
        if (less(g, b + j * sz, a + i * sz)) memcpy(out, b + j++ * sz, sz);
        else memcpy(out, a + i++ * sz, sz);
        out += sz;
    }
    memcpy(out, a + i * sz, (na - i) * sz);
    memcpy(out + (na - i) * sz, b + j * sz, (nb - j) * sz);
}

static size_t split(const void *a_, size_t na, const void *b_, size_t nb, size_t k, void *arg) {
    const generic *g = arg;
    const unsigned char *a = a_, *b = b_;
    size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;
    while (lo < hi) { /* smallest i such that a[i] does not belong to the first k */
        size_t i = lo + (hi - lo) / 2;
        if (!less(g, b + (k - i - 1) * g->size, a + i * g->size)) lo = i + 1;
        else hi = i;
    }
    return lo;
}

/* Runs of INSERTION_RUN, then merge passes between a and buf. */
static void sort(void *a_, size_t n, void *buf_, void *arg) {
    const generic *g = arg;
    unsigned char *a = a_, *buf = buf_, *src = a, *dst = buf;
    size_t sz = g->size;
    for (size_t lo = 0; lo < n; lo += INSERTION_RUN)
        insertion(g, a + lo * sz, n - lo < INSERTION_RUN ? n - lo : INSERTION_RUN, buf);
    for (size_t w = INSERTION_RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            merge(src + lo * sz, mid - lo, src + mid * sz, hi - mid, dst + lo * sz, arg);
        }
        unsigned char *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, n * sz);
}

static const weft_sort_ops generic_ops = { sort, merge, split };

weft_status weft__sort(weft_executor *ex, const weft_sort_desc *d) {
    /* The call made, in the messages: a stable sort's were weft_parallel_sort's. */
    const char *call = d && d->stable ? "weft_parallel_stable_sort" : "weft_parallel_sort";
    if (!d || !d->cmp) return weft__fail(call, WEFT_EINVAL, "cmp is NULL");
    if (!d->size || (!d->base && d->n))
        return weft__fail(call, WEFT_EINVAL, "size is 0, or base is NULL with n > 0");
    generic g = { d->size, d->cmp, d->arg };
    return weft__sort_ops(call, ex, d->base, d->n, d->size, &generic_ops, &g, &d->config);
}

weft_status weft_parallel_sort(weft_executor *ex, void *base, size_t n, size_t size, weft_cmp_fn cmp,
                               void *arg, const weft_algo_config *cfg) {
    weft_sort_desc d = { base, n, size, cmp, arg, false, cfg ? *cfg : (weft_algo_config){ 0 } };
    return weft__sort(ex, &d);
}

weft_status weft_parallel_stable_sort(weft_executor *ex, void *base, size_t n, size_t size,
                                      weft_cmp_fn cmp, void *arg, const weft_algo_config *cfg) {
    weft_sort_desc d = { base, n, size, cmp, arg, true, cfg ? *cfg : (weft_algo_config){ 0 } };
    return weft__sort(ex, &d);
}
