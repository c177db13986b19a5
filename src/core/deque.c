/* Chase-Lev deque: the cold parts (creation, growth, destruction). */
#include "core/deque.h"
#include "core/alloc.h"
#include "weft/common.h"

static size_t ring_bytes(int64_t cap) { return sizeof(weft__ring) + (size_t)cap * sizeof(weft__job *); }

/* Zeroed memory, not a loop storing NULL in every slot (the same bits): a
 * big ring (deque_capacity up to 2^30 slots, 8 GiB) is then mapped lazily, so
 * only the slots a worker uses are ever touched, by that worker (first touch:
 * its NUMA node).  The loop wrote every page at create: 2^30 slots took 21 s
 * and 8 GiB of memory per worker, and a few workers' worth ended in the OOM
 * killer instead of WEFT_ENOMEM. */
static weft__ring *ring_new(int64_t cap) {
    weft__ring *r = weft__calloc(ring_bytes(cap));
    if (!r) return NULL;
    r->mask = cap - 1;
    r->retired_next = NULL;
    return r;
}

/* old leaves the deque: kept (a thief may still read it, weft_executor_metrics
 * its size) until weft__deque_destroy, and counted, or the metrics' bytes
 * left out up to half of what a grown deque held (owner only). */
static void retire(weft__deque *q, weft__ring *old) {
    old->retired_next = q->retired;
    q->retired = old;
    size_t b = atomic_load_explicit(&q->retired_bytes, memory_order_relaxed);
    atomic_store_explicit(&q->retired_bytes, b + ring_bytes(old->mask + 1), memory_order_relaxed);
}

size_t weft__deque_bytes(weft__deque *q) {
    /* Acquire: pairs with the release that publishes a grown (or rehomed)
     * ring, whose mask was written before. */
    const weft__ring *r = atomic_load_explicit(&q->ring, memory_order_acquire);
    return (r ? ring_bytes(r->mask + 1) : 0) + atomic_load_explicit(&q->retired_bytes, memory_order_relaxed);
}

static int64_t pow2_at_least(int64_t n) {
    int64_t cap = 16;
    while (cap < n) cap <<= 1;
    return cap;
}

int weft__deque_init(weft__deque *q, int64_t capacity) {
    weft__ring *r = ring_new(pow2_at_least(capacity));
    if (!r) return WEFT_ENOMEM;
    atomic_init(&q->top, 0);
    atomic_init(&q->bottom, 0);
    atomic_init(&q->ring, r);
    q->retired = NULL;
    atomic_init(&q->retired_bytes, 0);
    q->max_mask = INT64_MAX;
    q->top_seen = 0;
    return WEFT_OK;
}

void weft__deque_set_limit(weft__deque *q, int64_t limit) {
    q->max_mask = limit > 0 ? pow2_at_least(limit) - 1 : INT64_MAX;
}

int weft__deque_rehome(weft__deque *q) {
    weft__ring *old = atomic_load_explicit(&q->ring, memory_order_relaxed);
    if (old->mask < 0 || atomic_load_explicit(&q->bottom, memory_order_relaxed) != 0) return WEFT_OK;
    weft__ring *r = ring_new(old->mask + 1); /* written here: first touch */
    if (!r) return WEFT_ENOMEM;
    /* No thief holds the old ring: a steal loads the ring only after it has
     * seen a job (top < bottom), and nothing was ever pushed. */
    atomic_store_explicit(&q->ring, r, memory_order_release);
    /* Retired, not freed: weft_executor_metrics may be reading its size from
     * another thread (observe/metrics.c loads the ring with acquire). */
    retire(q, old);
    return WEFT_OK;
}

void weft__deque_destroy(weft__deque *q) {
    weft__ring *r = atomic_load_explicit(&q->ring, memory_order_relaxed);
    if (r) weft__free(r, ring_bytes(r->mask + 1));
    atomic_store_explicit(&q->ring, NULL, memory_order_relaxed);
    for (weft__ring *o = q->retired; o;) {
        weft__ring *next = o->retired_next;
        weft__free(o, ring_bytes(o->mask + 1));
        o = next;
    }
    q->retired = NULL;
    atomic_store_explicit(&q->retired_bytes, 0, memory_order_relaxed);
}

int weft__deque_seal(weft__deque *q) {
    weft__ring *sealed = ring_new(0); /* mask -1: every push finds it full */
    if (!sealed) return WEFT_ENOMEM;
    weft__ring *old = atomic_load_explicit(&q->ring, memory_order_relaxed);
    atomic_store_explicit(&q->ring, sealed, memory_order_release);
    retire(q, old);
    return WEFT_OK;
}

weft__ring *weft__deque_grow(weft__deque *q, weft__ring *old, int64_t top, int64_t bottom) {
    if (old->mask < 0 || old->mask >= q->max_mask) return NULL; /* sealed or at its limit: the push fails */
    weft__ring *n = ring_new((old->mask + 1) * 2);
    if (!n) return NULL;
    for (int64_t i = top; i < bottom; i++)
        atomic_store_explicit(&n->slot[i & n->mask],
                              atomic_load_explicit(&old->slot[i & old->mask], memory_order_relaxed),
                              memory_order_relaxed);
    /* Release: a thief that loads this ring sees the copied slots.  Thieves that
     * still hold the old ring read the same values there, since the old ring is
     * never written again. */
    atomic_store_explicit(&q->ring, n, memory_order_release);
    retire(q, old);
    return n;
}
