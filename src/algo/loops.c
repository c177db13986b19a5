/* Loops: for over an index range, for_each over an array, transform. */
#include "algo/algo.h"
#include "core/default_executor.h"
#include "core/error_detail.h"

typedef struct range_loop {
    size_t first, last, step, count;
    weft_range_fn body;
    void *arg;
} range_loop;

/* Chunk [a, b) of the iteration numbers, as indices for the body. */
static void range_chunk(void *ctx, size_t k, size_t a, size_t b) {
    const range_loop *r = ctx;
    (void)k;
    size_t lo = r->first + a * r->step;
    size_t hi = b == r->count ? r->last : r->first + b * r->step;
    r->body(lo, hi, r->arg);
}

/* call: the public call made (weft_parallel_for, _for_each, _transform...
 * all come here), named in the messages. */
static weft_status for_range_as(weft_executor *ex, const weft_for_desc *d, const char *call) {
    if (!d || !d->body || d->step == 0)
        return weft__fail(call, WEFT_EINVAL, "body is NULL or step is 0");
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return dst;
    range_loop r = { d->first, d->last, d->step, 0, d->body, d->arg };
    if (d->first < d->last) r.count = (d->last - d->first - 1) / d->step + 1;
    return weft__par_plan_run(ex, r.count, &d->config, (weft__plan_rules){ 0, 0, call }, range_chunk, &r);
}

static weft_status loop_as(weft_executor *ex, size_t first, size_t last, size_t step, weft_range_fn body,
                           void *arg, const weft_algo_config *cfg, const char *call) {
    weft_for_desc d = { first, last, step, body, arg, cfg ? *cfg : (weft_algo_config){ 0 } };
    return for_range_as(ex, &d, call);
}

weft_status weft__for_range(weft_executor *ex, const weft_for_desc *d) {
    return for_range_as(ex, d, "weft_parallel_for_range");
}

weft_status weft_parallel_for_range(weft_executor *ex, size_t first, size_t last, size_t step,
                                    weft_range_fn body, void *arg, const weft_algo_config *cfg) {
    weft_for_desc d = { first, last, step, body, arg, cfg ? *cfg : (weft_algo_config){ 0 } };
    return weft__for_range(ex, &d);
}

typedef struct index_loop {
    size_t step;
    weft_index_fn fn;
    void *arg;
} index_loop;

/* Whether a per-element loop that just ran its k-th element (counting from 1)
 * with more left stops here: every WEFT__CUT_EVERY elements it looks at its
 * call's token (par.h, weft__chunk_cut).  A test per element, not blocks of
 * 64 as reduce.c runs: the block form executed 24% fewer instructions here
 * yet ran 15-19% slower (session 45, 1 worker, 10^6 ints, gcc 12 on the
 * project's EPYC VM), so it was taken back. */
static inline bool cut_due(size_t k) {
    return __builtin_expect(k % WEFT__CUT_EVERY == 0, 0) && weft__chunk_cut();
}

static void index_body(size_t lo, size_t hi, void *arg) {
    const index_loop *l = arg;
    size_t k = 0;
    for (size_t i = lo; i < hi; i += l->step) {
        l->fn(i, l->arg);
        if (hi - i <= l->step) break; /* i + step could wrap past SIZE_MAX */
        if (cut_due(++k)) return;
    }
}

weft_status weft_parallel_for(weft_executor *ex, size_t first, size_t last, size_t step,
                              weft_index_fn fn, void *arg, const weft_algo_config *cfg) {
    /* step 0 is checked here too, or weft_parallel_for_range's check would
     * name that call and a body this caller never passed. */
    if (!fn || step == 0) return weft__fail(__func__, WEFT_EINVAL, "fn is NULL or step is 0");
    index_loop l = { step, fn, arg };
    return loop_as(ex, first, last, step, index_body, &l, cfg, "weft_parallel_for");
}

typedef struct each_loop {
    unsigned char *base;
    size_t size;
    weft_elem_fn fn;
    void *arg;
} each_loop;

static void each_body(size_t lo, size_t hi, void *arg) {
    const each_loop *l = arg;
    for (size_t i = lo; i < hi; i++) {
        l->fn(l->base + i * l->size, l->arg);
        if (i + 1 < hi && cut_due(i + 1 - lo)) return;
    }
}

weft_status weft_parallel_for_each(weft_executor *ex, void *base, size_t n, size_t size,
                                   weft_elem_fn fn, void *arg, const weft_algo_config *cfg) {
    if ((!base && n) || !fn || size == 0)
        return weft__fail(__func__, WEFT_EINVAL, "fn is NULL, size is 0, or base is NULL with n > 0");
    if (weft__algo_too_many(n, size))
        return weft__fail(__func__, WEFT_EINVAL, "%zu elements of %zu bytes are more than an array can hold", n, size);
    each_loop l = { base, size, fn, arg };
    return loop_as(ex, 0, n, 1, each_body, &l, cfg, "weft_parallel_for_each");
}

/* ---- transform ---------------------------------------------------------------- */

static void transform_body(size_t lo, size_t hi, void *arg) {
    const weft_transform_desc *d = arg;
    const unsigned char *in = d->in;
    unsigned char *out = d->out;
    for (size_t i = lo; i < hi; i++) {
        d->f(in + i * d->in_size, out + i * d->out_size, d->arg);
        if (i + 1 < hi && cut_due(i + 1 - lo)) return;
    }
}

weft_status weft__transform(weft_executor *ex, const weft_transform_desc *d) {
    if (!d || ((!d->in || !d->out) && d->n) || !d->f || !d->in_size || !d->out_size)
        return weft__fail("weft_parallel_transform", WEFT_EINVAL,
                          "f is NULL, a size is 0, or in or out is NULL with n > 0");
    if (d->n && d->in == d->out && d->in_size != d->out_size) /* (NULL, 0) twice is empty */
        return weft__fail("weft_parallel_transform", WEFT_EINVAL, "in place (in == out) with in_size != out_size");
    if (weft__algo_too_many(d->n, d->in_size > d->out_size ? d->in_size : d->out_size))
        return weft__fail("weft_parallel_transform", WEFT_EINVAL, "%zu elements of %zu and %zu bytes are more than an array can hold",
                          d->n, d->in_size, d->out_size);
    return loop_as(ex, 0, d->n, 1, transform_body, (void *)d, &d->config, "weft_parallel_transform");
}

weft_status weft_parallel_transform(weft_executor *ex, const void *in, size_t in_size, void *out,
                                    size_t out_size, size_t n, weft_unary_fn f, void *arg,
                                    const weft_algo_config *cfg) {
    weft_transform_desc d = { in, in_size, out, out_size, n, f, arg, cfg ? *cfg : (weft_algo_config){ 0 } };
    return weft__transform(ex, &d);
}

typedef struct transform2 {
    const unsigned char *a, *b;
    unsigned char *out;
    size_t a_size, b_size, out_size;
    weft_binary_fn f;
    void *arg;
} transform2;

static void transform2_body(size_t lo, size_t hi, void *arg) {
    const transform2 *t = arg;
    for (size_t i = lo; i < hi; i++) {
        t->f(t->a + i * t->a_size, t->b + i * t->b_size, t->out + i * t->out_size, t->arg);
        if (i + 1 < hi && cut_due(i + 1 - lo)) return;
    }
}

weft_status weft_parallel_transform2(weft_executor *ex, const void *a, size_t a_size, const void *b,
                                     size_t b_size, void *out, size_t out_size, size_t n,
                                     weft_binary_fn f, void *arg, const weft_algo_config *cfg) {
    if (((!a || !b || !out) && n) || !f || !a_size || !b_size || !out_size)
        return weft__fail(__func__, WEFT_EINVAL, "f is NULL, a size is 0, or a, b or out is NULL with n > 0");
    /* In place over an input (out == a or out == b, as std::transform(a, a + n,
     * b, a, op) writes) is element-wise, so it needs that input's element size:
     * a wider or narrower out makes element i's write land on other elements'
     * inputs, read by other chunks meanwhile.  weft_parallel_transform refuses
     * its in == out with in_size != out_size; this refused nothing and wrote
     * over the inputs. */
    const char *over = !n ? NULL : out == a && a_size != out_size ? "a" : out == b && b_size != out_size ? "b" : NULL;
    if (over) return weft__fail(__func__, WEFT_EINVAL, "in place (out == %s) with %s_size != out_size", over, over);
    size_t widest = a_size > b_size ? a_size : b_size;
    if (weft__algo_too_many(n, widest > out_size ? widest : out_size))
        return weft__fail(__func__, WEFT_EINVAL, "%zu elements of up to %zu bytes are more than an array can hold", n,
                          widest > out_size ? widest : out_size);
    transform2 t = { a, b, out, a_size, b_size, out_size, f, arg };
    return loop_as(ex, 0, n, 1, transform2_body, &t, cfg, "weft_parallel_transform2");
}
