/* Scans: a blocked scan whose chunks hand their running prefix along in order.
 *
 * Chunks are taken from a counter in index order.  Chunk k first reduces its own
 * elements (in parallel with every other chunk), then waits until chunk k-1 has
 * published its inclusive prefix, publishes prefix(k-1) op local(k) at once, and
 * only then scans its elements starting from prefix(k-1).  The wait is short (one
 * combine after the predecessor's reduce), and chunks are small enough (8192
 * elements by default) that the scan pass reads them from cache, so the scan
 * costs about one pass over memory.  The waiting chunk spins and yields rather
 * than running other jobs: the chunk it waits for is held by a running task that
 * never waits on a later chunk, so the wait always ends. */
#include <string.h>

#include "algo/algo.h"
#include "core/alloc.h"
#include "core/default_executor.h"
#include "platform/platform.h" /* weft__spin_pause */

enum { SCAN_CHUNK = 8192 };

typedef struct scan_core {
    size_t acc_size, slot; /* per chunk three slots: published prefix, work, scratch */
    size_t stride;         /* the three, on cache lines of their own */
    const void *init;
    weft_reduce_range_fn reduce;
    weft_scan_range_fn scan;
    weft_combine_fn op;
    void *arg;
    unsigned char *slots;
    _Atomic uint32_t *ready;
} scan_core;

static unsigned char *pub_slot(const scan_core *s, size_t k) { return s->slots + k * s->stride; }

static const unsigned char *wait_prefix(const scan_core *s, size_t k) {
    unsigned spins = 0;
    /* acquire: pairs with the release store below, making prefix(k) visible. */
    while (!atomic_load_explicit(&s->ready[k], memory_order_acquire)) weft__spin_pause(&spins);
    return pub_slot(s, k);
}

static void scan_chunk(void *ctx, size_t k, size_t lo, size_t hi) {
    const scan_core *s = ctx;
    unsigned char *pub = pub_slot(s, k), *work = pub + s->slot;
    const unsigned char *carry = k ? NULL : s->init;
    s->reduce(lo, hi, work, s->arg);
    if (k) carry = wait_prefix(s, k - 1);
    if (carry) {
        memcpy(pub, carry, s->acc_size);
        s->op(pub, work, s->arg);
    } else {
        memcpy(pub, work, s->acc_size);
    }
    /* release: publishes prefix(k) to chunk k+1's acquire load. */
    atomic_store_explicit(&s->ready[k], 1, memory_order_release);
    if (carry) memcpy(work, carry, s->acc_size);
    s->scan(lo, hi, work, carry != NULL, s->arg);
}

static weft_status scan_run(weft_executor *ex, size_t n, scan_core *s, const weft_algo_config *cfg) {
    if (!s->reduce || !s->scan || !s->op || !s->acc_size) return WEFT_EINVAL;
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return dst;
    weft__plan p;
    int st = weft__plan_init(&p, ex, n, cfg, (weft__plan_rules){ SCAN_CHUNK, 0 });
    if (st != WEFT_OK) return st;
    s->slot = weft__acc_slot(s->acc_size);
    s->stride = weft__line_round(3 * s->slot);
    size_t flag_bytes = weft__line_round(p.nchunks * sizeof(uint32_t));
    size_t bytes = flag_bytes + p.nchunks * s->stride;
    unsigned char *mem = bytes ? weft__calloc_aligned(bytes, 64) : NULL;
    if (bytes && !mem) {
        weft__plan_free(&p);
        return WEFT_ENOMEM;
    }
    s->ready = (_Atomic uint32_t *)mem; /* zeroed: no chunk ready */
    s->slots = mem + flag_bytes;
    st = weft__par_chunks(ex, &p, true, scan_chunk, s);
    if (mem) weft__free_aligned(mem, bytes, 64);
    weft__plan_free(&p);
    return st;
}

weft_status weft_parallel_scan_range(weft_executor *ex, size_t n, size_t acc_size, const void *init,
                                     weft_reduce_range_fn reduce, weft_scan_range_fn scan,
                                     weft_combine_fn op, void *arg, const weft_algo_config *cfg) {
    scan_core s = { .acc_size = acc_size, .init = init, .reduce = reduce, .scan = scan, .op = op, .arg = arg };
    return scan_run(ex, n, &s, cfg);
}

/* ---- element scans --------------------------------------------------------------- */

typedef struct elem_scan {
    const unsigned char *in;
    unsigned char *out;
    size_t size, slot;
    weft_combine_fn op;
    void *arg;
} elem_scan;

static void elem_reduce(size_t lo, size_t hi, void *acc, void *ctx) {
    const elem_scan *e = ctx;
    memcpy(acc, e->in + lo * e->size, e->size);
    for (size_t i = lo + 1; i < hi; i++) e->op(acc, e->in + i * e->size, e->arg);
}

static void inclusive_body(size_t lo, size_t hi, void *acc, bool has_acc, void *ctx) {
    const elem_scan *e = ctx;
    for (size_t i = lo; i < hi; i++) {
        if (has_acc) e->op(acc, e->in + i * e->size, e->arg);
        else memcpy(acc, e->in + i * e->size, e->size);
        has_acc = true;
        memcpy(e->out + i * e->size, acc, e->size);
    }
}

/* out may equal in: each input is saved to the scratch slot before its output
 * overwrites it. */
static void exclusive_body(size_t lo, size_t hi, void *acc, bool has_acc, void *ctx) {
    const elem_scan *e = ctx;
    unsigned char *tmp = (unsigned char *)acc + e->slot; /* the chunk's scratch slot */
    (void)has_acc; /* always true: exclusive scans need an initial value */
    for (size_t i = lo; i < hi; i++) {
        memcpy(tmp, e->in + i * e->size, e->size);
        memcpy(e->out + i * e->size, acc, e->size);
        e->op(acc, tmp, e->arg);
    }
}

static void elem_op(void *acc, const void *x, void *ctx) {
    const elem_scan *e = ctx;
    e->op(acc, x, e->arg);
}

weft_status weft__scan(weft_executor *ex, const weft_scan_desc *d) {
    if (!d || ((!d->in || !d->out) && d->n) || !d->size || !d->op || (d->exclusive && !d->init))
        return WEFT_EINVAL;
    elem_scan e = { d->in, d->out, d->size, weft__acc_slot(d->size), d->op, d->arg };
    scan_core s = { .acc_size = d->size, .init = d->init, .reduce = elem_reduce,
                    .scan = d->exclusive ? exclusive_body : inclusive_body, .op = elem_op, .arg = &e };
    return scan_run(ex, d->n, &s, &d->config);
}

static weft_status elem_scan_call(weft_executor *ex, const void *in, void *out, size_t n, size_t size,
                                  const void *init, weft_combine_fn op, void *arg, bool exclusive,
                                  const weft_algo_config *cfg) {
    weft_scan_desc d = { in, out, n, size, init, op, arg, exclusive, cfg ? *cfg : (weft_algo_config){ 0 } };
    return weft__scan(ex, &d);
}

weft_status weft_parallel_inclusive_scan(weft_executor *ex, const void *in, void *out, size_t n,
                                         size_t size, const void *init, weft_combine_fn op, void *arg,
                                         const weft_algo_config *cfg) {
    return elem_scan_call(ex, in, out, n, size, init, op, arg, false, cfg);
}

weft_status weft_parallel_exclusive_scan(weft_executor *ex, const void *in, void *out, size_t n,
                                         size_t size, const void *init, weft_combine_fn op, void *arg,
                                         const weft_algo_config *cfg) {
    return elem_scan_call(ex, in, out, n, size, init, op, arg, true, cfg);
}
