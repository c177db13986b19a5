/* Chase-Lev work-stealing deque with the C11 orderings of Lê, Pop, Cohen and
 * Zappa Nardelli (PPoPP 2013), growable.  docs/design.md explains every ordering.
 *
 * The owner pushes and pops at the bottom (LIFO); thieves steal at the top (FIFO).
 * Indices only grow; a slot is index & mask in the current ring.
 *
 * Growth: the owner copies the live range into a ring twice as large and publishes
 * it.  The old ring is never written again and is kept on a retired list until the
 * deque is destroyed, because a thief that loaded it may still read from it; the
 * retired rings together are smaller than the live one, so this at most doubles
 * the memory.  Two published bugs are avoided on purpose:
 *  - a push must write into the ring it just grew, never the old one (CDSChecker
 *    found a C11 deque doing that, losing tasks): push uses the pointer grow returns;
 *  - a steal must load the ring *after* loading bottom (acquire), so that a slot
 *    published after a resize is read from the new ring (the crossbeam
 *    CVE-2021-32810 class of bug: a steal racing a resize ran a task twice).
 */
#ifndef WEFT_CORE_DEQUE_H
#define WEFT_CORE_DEQUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/job.h"
#include "platform/platform.h"
#include "weft/common.h"

typedef struct weft__ring {
    int64_t mask; /* capacity - 1; capacity is a power of two */
    struct weft__ring *retired_next;
    _Atomic(weft__job *) slot[];
} weft__ring;

typedef struct weft__deque {
    _Alignas(WEFT__CACHE_LINE) _Atomic int64_t top; /* thieves CAS here */
    _Alignas(WEFT__CACHE_LINE) _Atomic int64_t bottom; /* owner writes here */
    _Atomic(weft__ring *) ring;
    weft__ring *retired; /* owner only */
    /* Bytes of the retired rings: written by the owner as it retires one,
     * read by weft_executor_metrics from any thread (weft__deque_bytes). */
    _Atomic size_t retired_bytes;
    int64_t max_mask; /* owner only: the largest ring a grow may make, less one (weft__deque_set_limit) */
    int64_t top_seen; /* owner only: a top it read lately (weft__deque_push_nopop) */
} weft__deque;

typedef enum weft__steal_result { WEFT__STEAL_EMPTY, WEFT__STEAL_OK, WEFT__STEAL_RETRY } weft__steal_result;

/* Bytes the deque holds: its ring and the rings it retired (kept until
 * weft__deque_destroy).  Any thread (weft_executor_metrics): a snapshot. */
size_t weft__deque_bytes(weft__deque *q);
/* Creates the deque with at least `capacity` slots.  0 or WEFT_ENOMEM. */
int weft__deque_init(weft__deque *q, int64_t capacity);
/* Frees the rings.  No other thread may use the deque any more. */
void weft__deque_destroy(weft__deque *q);
/* Before the owner starts, on an empty deque: every later push fails
 * (WEFT_ENOMEM, as if memory had run out) and thieves find it empty: for a
 * worker whose jobs a source takes (core/layer.h).  0 or WEFT_ENOMEM. */
int weft__deque_seal(weft__deque *q);
/* Owner only: true once the deque is sealed (weft__deque_seal): its pushes
 * go to the source, which keeps them in the order pushed (a FIFO policy runs
 * them in that order, not LIFO as the deque would). */
static inline bool weft__deque_sealed(const weft__deque *q) {
    return atomic_load_explicit(&q->ring, memory_order_relaxed)->mask < 0;
}
/* Before the owner starts: the deque never grows past `limit` jobs (rounded up
 * to a power of two, at least 16; 0: no limit): a push to a full deque fails
 * as one out of memory does, and the caller queues the job elsewhere. */
void weft__deque_set_limit(weft__deque *q, int64_t limit);
/* Owner only, on an empty deque that nothing has been pushed to (a worker's
 * first act): replaces the ring by a new one of the same size allocated and
 * written by the calling thread, so that its pages come from that thread's
 * NUMA node (first touch).  A sealed or non-empty deque is left as it is.
 * 0 or WEFT_ENOMEM (the old ring is kept). */
int weft__deque_rehome(weft__deque *q);
/* Owner only: doubles the ring.  Returns the new ring or NULL (out of memory; the
 * deque is unchanged). */
weft__ring *weft__deque_grow(weft__deque *q, weft__ring *old, int64_t top, int64_t bottom);

/* Owner only; wait-free except when it must grow.  0 or WEFT_ENOMEM (the deque is
 * unchanged: the caller keeps the job).  *before receives the number of jobs the
 * deque held before, as far as the owner can tell (at least the true number:
 * top only grows). */
static inline int weft__deque_push_sized(weft__deque *q, weft__job *job, int64_t *before) {
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
    *before = b - t;
    weft__ring *a = atomic_load_explicit(&q->ring, memory_order_relaxed);
    if (b - t > a->mask) {
        a = weft__deque_grow(q, a, t, b);
        if (!a) return WEFT_ENOMEM;
    }
    atomic_store_explicit(&a->slot[b & a->mask], job, memory_order_relaxed);
    /* Release: a thief that reads this bottom (acquire) sees the slot, the job's
     * contents and, after a grow, the new ring. (The paper's release fence +
     * relaxed store, written as a release store so ThreadSanitizer can see it.) */
    atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
    return 0;
}

/* weft__deque_push_nopop's common case in two steps, for a caller that must
 * do something between finding room and publishing the job (silent.c counts
 * it in flight): nopop_room gives the index the push goes to, or -1 when the
 * top the owner last read says the ring may be full (then call
 * weft__deque_push_nopop, which reads top and grows); nopop_put pushes there.
 * Owner only, nothing else pushed between the two. */
static inline int64_t weft__deque_nopop_room(weft__deque *q) {
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    weft__ring *a = atomic_load_explicit(&q->ring, memory_order_relaxed);
    return b - q->top_seen > a->mask ? -1 : b;
}
static inline void weft__deque_nopop_put(weft__deque *q, int64_t b, weft__job *job) {
    weft__ring *a = atomic_load_explicit(&q->ring, memory_order_relaxed);
    atomic_store_explicit(&a->slot[b & a->mask], job, memory_order_relaxed);
    atomic_store_explicit(&q->bottom, b + 1, memory_order_release); /* as weft__deque_push_sized */
}

/* Owner only, on a deque whose owner never pops (a submitter slot,
 * core/submitter.c).  As weft__deque_push, but top is read only when the
 * top the owner last read says the ring may be full.  top only grows, so a
 * stale one can only make the deque look fuller, never let a push overwrite a
 * slot a thief has yet to read: that slot's index is below the top the owner
 * read (acquire, from the thief's CAS) before it last found room.  Saves the
 * owner a cache miss per push while thieves take jobs (their CAS moves top's
 * line to them): async_task from main at 2 and more workers. */
static inline int weft__deque_push_nopop(weft__deque *q, weft__job *job) {
    int64_t b = weft__deque_nopop_room(q);
    if (b < 0) {
        b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
        weft__ring *a = atomic_load_explicit(&q->ring, memory_order_relaxed);
        int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
        q->top_seen = t;
        if (b - t > a->mask && !weft__deque_grow(q, a, t, b)) return WEFT_ENOMEM;
    }
    weft__deque_nopop_put(q, b, job);
    return 0;
}

static inline int weft__deque_push(weft__deque *q, weft__job *job) {
    int64_t before;
    return weft__deque_push_sized(q, job, &before);
}

/* Owner only; wait-free.  Returns the newest job or NULL when empty. */
static inline weft__job *weft__deque_pop(weft__deque *q) {
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    /* Cheap empty test first: top only grows, so even a stale top >= b proves the
     * deque empty, and the idle path then pays no fence. */
    if (atomic_load_explicit(&q->top, memory_order_relaxed) >= b) return NULL;
    b = b - 1;
    weft__ring *a = atomic_load_explicit(&q->ring, memory_order_relaxed);
    atomic_store_explicit(&q->bottom, b, memory_order_relaxed);
    /* The one costly instruction: the store of bottom must be visible before we
     * read top (StoreLoad), or a thief and the owner could both take the last job.
     * Pairs with the seq_cst fence in weft__deque_steal. */
    atomic_thread_fence(memory_order_seq_cst);
    int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
    weft__job *x = NULL;
    if (t <= b) {
        x = atomic_load_explicit(&a->slot[b & a->mask], memory_order_relaxed);
        if (t == b) {
            /* Last job: race the thieves for it on top. */
            if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst,
                                                         memory_order_relaxed))
                x = NULL;
            atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed);
        }
    } else {
        atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed);
    }
    return x;
}

/* Any thread; lock-free.  On WEFT__STEAL_OK *out holds the oldest job.  RETRY means
 * another thread won the race for that job (the deque may hold more). */
static inline weft__steal_result weft__deque_steal(weft__deque *q, weft__job **out) {
    int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
    /* Pairs with the owner's fence in pop: read top before bottom. */
    atomic_thread_fence(memory_order_seq_cst);
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_acquire);
    if (t >= b) return WEFT__STEAL_EMPTY;
    /* Load the ring only after bottom (see the header comment). */
    weft__ring *a = atomic_load_explicit(&q->ring, memory_order_acquire);
    weft__job *x = atomic_load_explicit(&a->slot[t & a->mask], memory_order_relaxed);
    if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return WEFT__STEAL_RETRY;
    *out = x;
    return WEFT__STEAL_OK;
}

/* Any thread; lock-free.  Batch steal (seed 003 5.2, Tokio's steal of half a
 * run queue): takes up to half of the jobs the victim holds (rounded up, so a
 * lone job is taken too), at most `max`, oldest first, into out[0..*n).
 * WEFT__STEAL_OK with *n >= 1; EMPTY or RETRY (as weft__deque_steal) with
 * *n == 0.  The thief runs out[0] and pushes the rest on its own deque in
 * order (weft__push_local), so its pops take the newest and its own thieves
 * the oldest, as they would have here.
 *
 * Orderings.  One CAS of top from t to t+k cannot claim k > 1 jobs: pop
 * takes any job but the last without a CAS, once its fence has ordered its
 * store of bottom before its read of top, and nothing orders a thief's later
 * CAS against that read; an owner popping down from b to t+1 meanwhile would
 * take job t+1 while the thief's CAS (top still t) claims it as well.  So
 * each job is claimed by a whole single steal of its own: the load of top
 * (for the next job: the value our CAS just wrote), the seq_cst fence that
 * pairs with pop's, a fresh acquire load of bottom (the owner may have popped
 * since the last claim: stop when the deque looks empty), a fresh acquire
 * load of the ring after it (a push after a grow publishes slots only in the
 * new ring: the CVE-2021-32810 rule) and the seq_cst CAS.  Every claim is
 * thus weft__deque_steal's, whose proof (docs/design.md) covers it: a job is
 * taken once.  The batch stops at the first lost race or empty look, keeping
 * what it has.  What it saves over k single steals is the victim search and
 * the cold misses on a new victim's lines; the fences stay (crossbeam's
 * steal_batch for a LIFO worker claims one job at a time for this reason). */
/* The same for a thief that has just taken `taken` jobs of this deque by
 * single steals (worker.c's steal_more, after weft__deque_steal): the half is
 * of all the jobs the deque held, those included, so the batch takes
 * ceil((held + taken) / 2) - taken more.  Counting only what was left made a
 * thief take a victim's two jobs out of two (and 51 of 100): a steal_batch
 * thief left the victim nothing to pop, so it went stealing back
 * (tests/seeds_hunt42.c). */
static inline weft__steal_result weft__deque_steal_batch_after(weft__deque *q, weft__job **out, unsigned max,
                                                               unsigned taken, unsigned *n) {
    *n = 0;
    if (max == 0) return WEFT__STEAL_EMPTY;
    int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
    int64_t want = 1;
    for (;;) {
        atomic_thread_fence(memory_order_seq_cst);
        int64_t b = atomic_load_explicit(&q->bottom, memory_order_acquire);
        if (t >= b) break;
        if (*n == 0) {
            want = (b - t + (int64_t)taken + 1) / 2 - (int64_t)taken;
            if (want > (int64_t)max) want = max;
            if (want <= 0) break;
        }
        weft__ring *a = atomic_load_explicit(&q->ring, memory_order_acquire);
        weft__job *x = atomic_load_explicit(&a->slot[t & a->mask], memory_order_relaxed);
        if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst,
                                                     memory_order_relaxed))
            return *n ? WEFT__STEAL_OK : WEFT__STEAL_RETRY;
        out[(*n)++] = x;
        if ((int64_t)*n >= want) break;
        t = t + 1;
    }
    return *n ? WEFT__STEAL_OK : WEFT__STEAL_EMPTY;
}

static inline weft__steal_result weft__deque_steal_batch(weft__deque *q, weft__job **out, unsigned max,
                                                         unsigned *n) {
    return weft__deque_steal_batch_after(q, out, max, 0, n);
}

/* Any thread, on a deque whose owner pushes and never pops (a submitter slot,
 * core/submitter.c): claims up to half of the jobs (rounded up), at most
 * `max`, oldest first, into out[0..*n) with ONE CAS of top from t to t+k.
 * weft__deque_steal_batch explains why one CAS cannot claim k > 1 jobs from a
 * deque whose owner pops; without pops nothing but thieves moves the range's
 * lower end, and the owner's pushes only add above bottom, so the jobs at
 * [t, t+k), published before the bottom we read (acquire), stay ours once the
 * CAS from t succeeds.  Their slots cannot have been reused: the owner writes
 * index i + capacity only after seeing top > i, which needs our CAS first.
 * The ring is loaded after bottom (the CVE-2021-32810 rule), and the slots are
 * read before the CAS (a later read could see a slot the owner reused after
 * our CAS moved top).  EMPTY, RETRY (another thief moved top) or OK. */
static inline weft__steal_result weft__deque_steal_many(weft__deque *q, weft__job **out, unsigned max,
                                                        unsigned *n) {
    *n = 0;
    int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
    atomic_thread_fence(memory_order_seq_cst);
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_acquire);
    if (t >= b || max == 0) return WEFT__STEAL_EMPTY;
    int64_t k = (b - t + 1) / 2;
    if (k > (int64_t)max) k = max;
    weft__ring *a = atomic_load_explicit(&q->ring, memory_order_acquire);
    for (int64_t i = 0; i < k; i++) out[i] = atomic_load_explicit(&a->slot[(t + i) & a->mask], memory_order_relaxed);
    if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + k, memory_order_seq_cst, memory_order_relaxed))
        return WEFT__STEAL_RETRY;
    *n = (unsigned)k;
    return WEFT__STEAL_OK;
}

/* Any thread: a racy size estimate (exact when the deque is quiescent). */
static inline int64_t weft__deque_size(weft__deque *q) {
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
    return b > t ? b - t : 0;
}

#endif
