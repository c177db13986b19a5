/* Scans: a single-pass blocked scan with decoupled look-back (Merrill and
 * Garland, 2016), and its one-task form.
 *
 * The result is defined by the chunks, whose boundaries never depend on the
 * worker count or timing: with agg(k) the reduce body's value for chunk k and
 * prefix(k) = prefix(k-1) op agg(k) (prefix(-1): init, or nothing), chunk k's
 * outputs are what the scan body writes from prefix(k-1).  Every path below
 * computes exactly those values, combined in that order, so floating-point
 * results are the same bits on every run and worker count.
 *
 * One task (one worker, max_tasks 1, or one chunk): the chunks in order, each
 * scanned from the running prefix.  With a one-pass body (scan_reduce) that is
 * one pass over the elements; without one, each chunk is reduced, then scanned
 * from cache.
 *
 * Several tasks: chunks are taken from a counter in index order, and each
 * publishes its state: nothing yet, its aggregate, or its inclusive prefix.
 * Chunk k looks back over its predecessors: the nearest one with a prefix,
 * then the aggregates after it, folded forward (left to right, for the bits).
 * If that succeeds without waiting, chunk k runs the one-pass body and
 * publishes its prefix: no second pass.  Otherwise it reduces its elements,
 * publishes the aggregate (so that later chunks can look past it), looks back
 * again, waiting on any predecessor that has published nothing, publishes its
 * prefix, and scans its elements from cache (8192 elements by default).  The
 * waits always end: a chunk that has published nothing is held by a running
 * task that is reducing it or scanning it in one pass, neither of which
 * waits.  A chunk spins and yields rather than running other jobs meanwhile,
 * since a job it ran could wait on a later chunk.
 *
 * Cancellation (weft__par_chunks) is looked at before a chunk is taken, and a
 * chunk taken always runs, so the chunks taken are a prefix of the array and
 * every wait is for a chunk that is taken. */
#include <string.h>

#include "algo/algo.h"
#include "core/abi.h" /* weft__config_read */
#include "core/alloc.h"
#include "core/default_executor.h"
#include "platform/files.h"    /* weft__last_level_cache_bytes */
#include "platform/platform.h" /* weft__spin_pause */
#include "core/error_detail.h"

/* Chunks of 8192 elements by default; at most MAX_SCAN_CHUNKS of them (a larger
 * chunk otherwise), as for reductions: each chunk keeps a state and four slots
 * on lines of their own, and chunk 1 over 10^7 elements asked for 680 MB. */
enum { SCAN_CHUNK = 8192, MAX_SCAN_CHUNKS = 65536 };

size_t weft_algo_stream_bytes(void) {
    /* Read once: the cache does not change while the process runs. */
    static _Atomic size_t bytes;
    size_t b = atomic_load_explicit(&bytes, memory_order_relaxed);
    if (b) return b;
    b = weft__last_level_cache_bytes();
    if (!b) b = (size_t)32 << 20;
    atomic_store_explicit(&bytes, b, memory_order_relaxed);
    return b;
}

/* A chunk's published state (scan_core.state[k]). */
enum { CHUNK_EMPTY = 0, CHUNK_AGGREGATE = 1, CHUNK_PREFIX = 2 };

/* Slots of a chunk, each acc_size bytes rounded up to 16 (weft__acc_slot):
 * its aggregate, its inclusive prefix, the scan body's running value, and a
 * scratch slot right after it (the exclusive element body's). */
enum { SLOT_AGG, SLOT_PREFIX, SLOT_WORK, SLOT_SCRATCH, SLOTS };

/* The one-task form keeps its slots on the stack for values up to this size. */
enum { STACK_ACC = 64 };

typedef struct scan_core {
    size_t acc_size, slot; /* a value's size; a slot's (rounded up to 16) */
    size_t stride;         /* a chunk's SLOTS slots, on cache lines of their own */
    const void *init;
    weft_reduce_range_fn reduce;
    weft_scan_range_fn scan;
    weft_scan_reduce_range_fn scan_reduce; /* NULL: reduce, then scan */
    weft_combine_fn op;
    void *arg;
    unsigned char *slots;
    _Atomic uint32_t *state;
    const char *call; /* the public call made, for the messages */
} scan_core;

static unsigned char *slot_of(const scan_core *s, size_t k, int which) {
    return s->slots + k * s->stride + (size_t)which * s->slot;
}

/* Reads chunk j's state; waits while it is CHUNK_EMPTY if `wait`.  acquire:
 * pairs with publish's release store, making the slots it covers visible. */
static uint32_t chunk_state(const scan_core *s, size_t j, bool wait) {
    uint32_t st = atomic_load_explicit(&s->state[j], memory_order_acquire);
    unsigned spins = 0;
    while (wait && st == CHUNK_EMPTY) {
        weft__spin_pause(&spins);
        st = atomic_load_explicit(&s->state[j], memory_order_acquire);
    }
    return st;
}

/* release: the slots written before it are visible to a chunk that reads
 * `st` (chunk_state's acquire). */
static void publish(const scan_core *s, size_t k, uint32_t st) {
    atomic_store_explicit(&s->state[k], st, memory_order_release);
}

/* Writes prefix(k-1), the combination of init and every element before chunk
 * k, to dst: 1, or 0 when there is none (k == 0 without init); -1 (dst
 * unspecified) when a predecessor has published nothing and !wait. */
static int look_back(const scan_core *s, size_t k, unsigned char *dst, bool wait) {
    size_t j = k; /* chunks j..k-1 have an aggregate; j-1 (if any) a prefix */
    while (j > 0) {
        uint32_t st = chunk_state(s, j - 1, wait);
        if (st == CHUNK_EMPTY) return -1;
        if (st == CHUNK_PREFIX) break;
        j--;
    }
    int has = 1;
    if (j > 0) memcpy(dst, slot_of(s, j - 1, SLOT_PREFIX), s->acc_size);
    else if (s->init) memcpy(dst, s->init, s->acc_size);
    else has = 0;
    for (; j < k; j++) { /* left to right: the order prefix(k-1) is defined in */
        const unsigned char *agg = slot_of(s, j, SLOT_AGG);
        if (has) s->op(dst, agg, s->arg);
        else memcpy(dst, agg, s->acc_size);
        has = 1;
    }
    return has;
}

/* prefix = carry op agg, or agg when there is no carry. */
static void extend(const scan_core *s, unsigned char *prefix, int has_carry, const unsigned char *agg) {
    if (has_carry) s->op(prefix, agg, s->arg);
    else memcpy(prefix, agg, s->acc_size);
}

static void scan_chunk(void *ctx, size_t k, size_t lo, size_t hi) {
    const scan_core *s = ctx;
    unsigned char *agg = slot_of(s, k, SLOT_AGG), *prefix = slot_of(s, k, SLOT_PREFIX),
                  *work = slot_of(s, k, SLOT_WORK);
    int has = s->scan_reduce ? look_back(s, k, prefix, false) : -1;
    if (has >= 0) { /* prefix(k-1) known now: one pass */
        if (has) memcpy(work, prefix, s->acc_size);
        s->scan_reduce(lo, hi, work, has, agg, s->arg);
        extend(s, prefix, has, agg);
        publish(s, k, CHUNK_PREFIX);
        return;
    }
    s->reduce(lo, hi, agg, s->arg);
    publish(s, k, CHUNK_AGGREGATE);
    has = look_back(s, k, prefix, true);
    if (has) memcpy(work, prefix, s->acc_size);
    extend(s, prefix, has, agg);
    publish(s, k, CHUNK_PREFIX);
    s->scan(lo, hi, work, has, s->arg);
}

/* One task: the chunks in order on the calling thread, with the token looked at
 * before each chunk as weft__par_chunks does. */
static weft_status scan_one_task(const weft__plan *p, const scan_core *s) {
    /* Slots on a cache line, as the several-task form's and the reductions'
     * are (weft/algo.h: 64-byte alignment).  They were 16-aligned here: a
     * typed scan of __m256d on one task (one worker, or n up to a chunk) got
     * an accumulator at 16 mod 32 from where the caller's stack happened to
     * be, and its vmovapd faulted. */
    _Alignas(WEFT__CACHE_LINE) unsigned char stack[SLOTS * STACK_ACC];
    size_t bytes = SLOTS * s->slot;
    unsigned char *mem = bytes <= sizeof stack ? stack : weft__alloc_aligned(bytes, WEFT__CACHE_LINE);
    if (!mem) return weft__fail_st(s->call, WEFT_ENOMEM);
    unsigned char *prefix = mem, *agg = mem + s->slot, *work = mem + 2 * s->slot; /* scratch after work */
    int has = s->init != NULL;
    if (has) memcpy(prefix, s->init, s->acc_size);
    weft_status st = WEFT_OK;
    for (size_t k = 0; k < p->nchunks; k++) {
        if (weft__algo_stopped(p->cancel, p->run_stop)) {
            st = WEFT_ECANCELED;
            break;
        }
        size_t lo, hi;
        weft__plan_chunk(p, k, &lo, &hi);
        if (has) memcpy(work, prefix, s->acc_size);
        if (s->scan_reduce) {
            s->scan_reduce(lo, hi, work, has, agg, s->arg);
        } else {
            s->reduce(lo, hi, agg, s->arg);
            s->scan(lo, hi, work, has, s->arg);
        }
        extend(s, prefix, has, agg);
        has = 1;
    }
    if (mem != stack) weft__free_aligned(mem, bytes, WEFT__CACHE_LINE);
    return st;
}

static weft_status scan_run(weft_executor *ex, size_t n, scan_core *s, const weft_algo_config *cfg) {
    if (!s->reduce || !s->scan || !s->op || !s->acc_size)
        return weft__fail(s->call, WEFT_EINVAL, "a function is NULL or the size is 0");
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return dst;
    s->slot = weft__acc_slot(s->acc_size);
    if (s->slot < s->acc_size || s->slot > SIZE_MAX / (2 * SLOTS))
        return weft__fail(s->call, WEFT_ENOMEM, "acc_size %zu is too large", s->acc_size);
    weft__plan p;
    /* a chunk's slots and its state flag */
    size_t per_chunk = weft__line_round(SLOTS * s->slot) + sizeof(uint32_t);
    int st = weft__plan_init(&p, ex, n, cfg,
                             (weft__plan_rules){ SCAN_CHUNK, weft__state_max_chunks(MAX_SCAN_CHUNKS, per_chunk), s->call });
    if (st != WEFT_OK) return st;
    if (p.nchunks == 0 || p.ntasks == 1) {
        st = p.nchunks ? scan_one_task(&p, s) : WEFT_OK;
        weft__plan_free(&p);
        return st;
    }
    s->stride = weft__line_round(SLOTS * s->slot);
    size_t flag_bytes = weft__line_round(p.nchunks * sizeof(uint32_t));
    /* One slot more, past the chunks': a copy of init.  Chunks read init
     * while others write their outputs, and init may point into the output
     * (a scan continuing from its array's element before): the copy is taken
     * before any body runs. */
    if (p.nchunks > (SIZE_MAX - flag_bytes - s->slot) / s->stride) {
        weft__plan_free(&p);
        return weft__fail_st(s->call, WEFT_ENOMEM);
    }
    size_t bytes = flag_bytes + p.nchunks * s->stride + s->slot;
    unsigned char *mem = weft__calloc_aligned(bytes, WEFT__CACHE_LINE);
    if (!mem) {
        weft__plan_free(&p);
        return weft__fail_st(s->call, WEFT_ENOMEM);
    }
    s->state = (_Atomic uint32_t *)mem; /* zeroed: CHUNK_EMPTY */
    s->slots = mem + flag_bytes;
    if (s->init) {
        unsigned char *copy = s->slots + p.nchunks * s->stride;
        memcpy(copy, s->init, s->acc_size);
        s->init = copy;
    }
    st = weft__par_chunks(ex, &p, true, scan_chunk, s);
    weft__free_aligned(mem, bytes, WEFT__CACHE_LINE);
    weft__plan_free(&p);
    return st;
}

weft_status weft_parallel_scan_range(weft_executor *ex, size_t n, size_t acc_size, const void *init,
                                     weft_reduce_range_fn reduce, weft_scan_range_fn scan,
                                     weft_combine_fn op, void *arg, const weft_algo_config *cfg) {
    scan_core s = { .acc_size = acc_size, .init = init, .reduce = reduce, .scan = scan, .op = op, .arg = arg,
                    .call = "weft_parallel_scan_range" };
    return scan_run(ex, n, &s, cfg);
}

/* Born with a size (docs/abi.md): the config is read at the caller's size. */
weft_status weft_parallel_scan_range_fused_sized(weft_executor *ex, size_t n, size_t acc_size,
                                                 const void *init, weft_reduce_range_fn reduce,
                                                 weft_scan_range_fn scan,
                                                 weft_scan_reduce_range_fn scan_reduce,
                                                 weft_combine_fn op, void *arg,
                                                 const weft_algo_config *cfg, size_t cfg_size) {
    weft_algo_config config;
    if (cfg) {
        weft_status st = weft__config_read(&config, sizeof config, cfg, cfg_size, "weft_algo_config");
        if (st != WEFT_OK) return st;
        cfg = &config;
    }
    scan_core s = { .acc_size = acc_size, .init = init, .reduce = reduce, .scan = scan,
                    .scan_reduce = scan_reduce, .op = op, .arg = arg, .call = "weft_parallel_scan_range_fused" };
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

/* *total = x when first, else *total op= x: the reduce body's fold, one element
 * at a time. */
static void fold(const elem_scan *e, void *total, const unsigned char *x, bool first) {
    if (first) memcpy(total, x, e->size);
    else e->op(total, x, e->arg);
}

static void elem_reduce(size_t lo, size_t hi, void *acc, void *ctx) {
    const elem_scan *e = ctx;
    for (size_t i = lo; i < hi; i++) fold(e, acc, e->in + i * e->size, i == lo);
}

/* The inclusive body, and the one-pass body when total is not NULL.  out may
 * equal in: each input is read before its output overwrites it. */
static void inclusive_pass(const elem_scan *e, size_t lo, size_t hi, void *acc, bool has_acc, void *total) {
    for (size_t i = lo; i < hi; i++) {
        const unsigned char *x = e->in + i * e->size;
        fold(e, acc, x, !has_acc);
        if (total) fold(e, total, x, i == lo);
        has_acc = true;
        memcpy(e->out + i * e->size, acc, e->size);
    }
}

static void inclusive_body(size_t lo, size_t hi, void *acc, bool has_acc, void *ctx) {
    inclusive_pass(ctx, lo, hi, acc, has_acc, NULL);
}

static void inclusive_fused(size_t lo, size_t hi, void *acc, bool has_acc, void *total, void *ctx) {
    inclusive_pass(ctx, lo, hi, acc, has_acc, total);
}

/* out may equal in: each input is saved to the scratch slot before its output
 * overwrites it.  has_acc is always true: exclusive scans need an initial value. */
static void exclusive_pass(const elem_scan *e, size_t lo, size_t hi, void *acc, void *total) {
    unsigned char *tmp = (unsigned char *)acc + e->slot; /* the chunk's scratch slot */
    for (size_t i = lo; i < hi; i++) {
        memcpy(tmp, e->in + i * e->size, e->size);
        if (total) fold(e, total, tmp, i == lo);
        memcpy(e->out + i * e->size, acc, e->size);
        e->op(acc, tmp, e->arg);
    }
}

static void exclusive_body(size_t lo, size_t hi, void *acc, bool has_acc, void *ctx) {
    (void)has_acc;
    exclusive_pass(ctx, lo, hi, acc, NULL);
}

static void exclusive_fused(size_t lo, size_t hi, void *acc, bool has_acc, void *total, void *ctx) {
    (void)has_acc;
    exclusive_pass(ctx, lo, hi, acc, total);
}

static void elem_op(void *acc, const void *x, void *ctx) {
    const elem_scan *e = ctx;
    e->op(acc, x, e->arg);
}

weft_status weft__scan(weft_executor *ex, const weft_scan_desc *d) {
    const char *call = d && d->exclusive ? "weft_parallel_exclusive_scan" : "weft_parallel_inclusive_scan";
    if (!d || ((!d->in || !d->out) && d->n) || !d->size || !d->op || (d->exclusive && !d->init))
        return weft__fail(call, WEFT_EINVAL,
                          "op is NULL, size is 0, in or out is NULL with n > 0, or init is NULL for an exclusive scan");
    if (weft__algo_too_many(d->n, d->size))
        return weft__fail(call, WEFT_EINVAL, "%zu elements of %zu bytes are more than an array can hold", d->n, d->size);
    elem_scan e = { d->in, d->out, d->size, weft__acc_slot(d->size), d->op, d->arg };
    scan_core s = { .acc_size = d->size, .init = d->init, .reduce = elem_reduce,
                    .scan = d->exclusive ? exclusive_body : inclusive_body,
                    .scan_reduce = d->exclusive ? exclusive_fused : inclusive_fused,
                    .op = elem_op, .arg = &e, .call = call };
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
