/* Reductions: one accumulator per chunk, combined in chunk order after the
 * parallel part, so the result does not depend on which worker ran what. */
#include <string.h>

#include "algo/algo.h"
#include "core/alloc.h"
#include "core/default_executor.h"
#include "core/error_detail.h"

/* STACK_PARTIALS: AUTO's chunks (at most ~160, plan.c) of a line each stay on the stack. */
enum { MAX_REDUCE_CHUNKS = 65536, STACK_PARTIALS = 10240 };

typedef void (*slot_fn)(size_t lo, size_t hi, void *slot, void *ctx);

typedef struct reduce_job {
    size_t n, acc_size, slot_size; /* slot: acc_size bytes of value, then scratch */
    void *result;
    slot_fn body;
    void *body_ctx;
    weft_combine_fn op;
    void *op_arg;
    const char *call; /* the public call made, for the messages */
} reduce_job;

typedef struct reduce_run {
    const reduce_job *job;
    unsigned char *slots;
    size_t stride; /* bytes from one chunk's slot to the next: whole lines */
} reduce_run;

static void reduce_chunk(void *ctx, size_t k, size_t lo, size_t hi) {
    const reduce_run *r = ctx;
    r->job->body(lo, hi, r->slots + k * r->stride, r->job->body_ctx);
}

/* The engine: body(lo, hi, slot) leaves a chunk's value in its slot; then
 * *result = *result op slot0 op slot1 ... in chunk order. */
static weft_status reduce_core(weft_executor *ex, const reduce_job *j, const weft_algo_config *cfg) {
    if (!j->result || !j->op || j->acc_size == 0)
        return weft__fail(j->call, WEFT_EINVAL, "result or op is NULL, or the size is 0");
    /* An acc_size near SIZE_MAX wraps the slot size (weft__acc_slot) to a few
     * bytes, which the chunks would then overrun: refused as the scans refuse
     * it (the bound also keeps nchunks * stride from wrapping). */
    if (j->slot_size < j->acc_size || j->slot_size > SIZE_MAX / 2 / MAX_REDUCE_CHUNKS)
        return weft__fail(j->call, WEFT_ENOMEM, "acc_size %zu is too large", j->acc_size);
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return dst;
    weft__plan p;
    size_t stride = weft__line_round(j->slot_size);
    int st = weft__plan_init(&p, ex, j->n, cfg,
                             (weft__plan_rules){ 0, weft__state_max_chunks(MAX_REDUCE_CHUNKS, stride), j->call });
    if (st != WEFT_OK) return st;
    _Alignas(WEFT__CACHE_LINE) unsigned char stack[STACK_PARTIALS];
    size_t bytes = p.nchunks * stride;
    reduce_run r = { j, stack, stride };
    if (bytes > sizeof stack && !(r.slots = weft__alloc_aligned(bytes, WEFT__CACHE_LINE))) {
        weft__plan_free(&p);
        return weft__fail_st(j->call, WEFT_ENOMEM);
    }
    st = weft__par_chunks(ex, &p, false, reduce_chunk, &r);
    if (st == WEFT_OK) /* cancelled: skipped chunks left their slots unwritten */
        for (size_t k = 0; k < p.nchunks; k++) j->op(j->result, r.slots + k * stride, j->op_arg);
    if (r.slots != stack) weft__free_aligned(r.slots, bytes, WEFT__CACHE_LINE);
    weft__plan_free(&p);
    return st;
}


/* ---- the range form ----------------------------------------------------------- */

typedef struct range_reduce {
    weft_reduce_range_fn body;
    void *arg;
} range_reduce;

static void range_body(size_t lo, size_t hi, void *slot, void *ctx) {
    const range_reduce *r = ctx;
    r->body(lo, hi, slot, r->arg);
}

weft_status weft__reduce_range_as(const char *call, weft_executor *ex, size_t n, size_t acc_size, void *result,
                                  weft_reduce_range_fn body, weft_combine_fn op, void *arg,
                                  const weft_algo_config *cfg) {
    if (!body) return weft__fail(call, WEFT_EINVAL, "body is NULL");
    range_reduce r = { body, arg };
    reduce_job j = { n, acc_size, weft__acc_slot(acc_size), result, range_body, &r, op, arg, call };
    return reduce_core(ex, &j, cfg);
}

weft_status weft_parallel_reduce_range(weft_executor *ex, size_t n, size_t acc_size, void *result,
                                       weft_reduce_range_fn body, weft_combine_fn op, void *arg,
                                       const weft_algo_config *cfg) {
    return weft__reduce_range_as(__func__, ex, n, acc_size, result, body, op, arg, cfg);
}

/* ---- elements: reduce and transform_reduce ------------------------------------- */

typedef struct elem_reduce {
    const unsigned char *in;
    size_t size, acc_size;
    weft_unary_fn map; /* NULL: plain reduce */
    weft_combine_fn op;
    void *arg;
} elem_reduce;

/* A chunk's value starts from its first element: no identity element needed.
 * The calls are per element, so the chunk looks at the call's token every
 * WEFT__CUT_EVERY elements (par.h) as the loops do: a cancelled call with a
 * costly map stops within 64 elements of each running chunk, and reduce_core
 * then combines nothing (*result stays as it was). */
static void elem_body(size_t lo, size_t hi, void *slot, void *ctx) {
    const elem_reduce *e = ctx;
    unsigned char *acc = slot, *tmp = acc + weft__acc_slot(e->acc_size);
    if (!e->map) memcpy(acc, e->in + lo * e->size, e->size);
    else e->map(e->in + lo * e->size, acc, e->arg);
    for (size_t i = lo + 1; i < hi;) {
        size_t end = hi - i > WEFT__CUT_EVERY ? i + WEFT__CUT_EVERY : hi;
        if (!e->map)
            for (; i < end; i++) e->op(acc, e->in + i * e->size, e->arg);
        else
            for (; i < end; i++) {
                e->map(e->in + i * e->size, tmp, e->arg);
                e->op(acc, tmp, e->arg);
            }
        if (i < hi && weft__chunk_cut()) return;
    }
}

static weft_status elem_reduce_run(weft_executor *ex, const elem_reduce *e, size_t n, void *result,
                                   const weft_algo_config *cfg) {
    const char *call = e->map ? "weft_parallel_transform_reduce" : "weft_parallel_reduce";
    if ((!e->in && n) || !e->size || !e->op)
        return weft__fail(call, WEFT_EINVAL, "op is NULL, size is 0, or in is NULL with n > 0");
    if (weft__algo_too_many(n, e->size))
        return weft__fail(call, WEFT_EINVAL, "%zu elements of %zu bytes are more than an array can hold", n, e->size);
    size_t slot = weft__acc_slot(e->acc_size) * (e->map ? 2 : 1);
    reduce_job j = { n, e->acc_size, slot, result, elem_body, (void *)e, e->op, e->arg, call };
    return reduce_core(ex, &j, cfg);
}

weft_status weft__reduce(weft_executor *ex, const weft_reduce_desc *d) {
    if (!d) return weft__fail("weft_parallel_reduce", WEFT_EINVAL, "the descriptor is NULL");
    elem_reduce e = { d->in, d->size, d->size, NULL, d->op, d->arg };
    return elem_reduce_run(ex, &e, d->n, d->result, &d->config);
}

weft_status weft_parallel_reduce(weft_executor *ex, const void *in, size_t n, size_t size,
                                 void *result, weft_combine_fn op, void *arg,
                                 const weft_algo_config *cfg) {
    weft_reduce_desc d = { in, n, size, result, op, arg, cfg ? *cfg : (weft_algo_config){ 0 } };
    return weft__reduce(ex, &d);
}

weft_status weft_parallel_transform_reduce(weft_executor *ex, const void *in, size_t n,
                                           size_t in_size, size_t acc_size, void *result,
                                           weft_unary_fn map, weft_combine_fn op, void *arg,
                                           const weft_algo_config *cfg) {
    if (!map) return weft__fail(__func__, WEFT_EINVAL, "map is NULL");
    elem_reduce e = { in, in_size, acc_size, map, op, arg };
    return elem_reduce_run(ex, &e, n, result, cfg);
}
