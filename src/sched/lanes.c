/* Lanes: each worker's FIFOs per level for prioritised jobs without a handle
 * (graph tasks), the common case that needs no slot (docs/design.md,
 * "Scheduling").  A lane is a ring of items in the order its worker queued
 * them; a worker's lanes share one lock, which only its owner takes on the
 * hot path (push, pop), so it stays in the owner's cache: other workers take
 * it to steal, the ticker to escalate, a snapshot to read.  A mask of the
 * levels with items, written under the lock, lets every other worker see
 * without the lock which levels a worker holds.
 *
 * Order: an item carries `stamp`, the heap's next sequence number when it was
 * queued (read, not taken: heap entries are rare, so the counter's line stays
 * shared), and `lseq`, its worker's own count.  Within a worker lseq orders
 * every item, across lanes too; an item goes before a heap entry of its level
 * when stamp <= the entry's seq (the entry was reserved after the item was
 * stamped).
 *
 * Escalation: an item queued at level b is at level b + 1 once it has waited
 * esc[b], and b + 2 after esc[b] + esc[b + 1], counted from when it was queued
 * (the heap counts each step from the last change: the same bound).  Items of
 * one (level, queued-at level) lane are due in lane order, so a tick moves a
 * prefix of one lane to the end of the next lane up, which keeps lseq order
 * (everything already there came from the same lane earlier), in O(moved). */
#include "sched/sched.h"
#include "core/alloc.h"

#include <string.h>

/* The lane of items at level `now` queued at level `base` (base <= now). */
static inline unsigned lane_ix(unsigned now, unsigned base) { return now == 3 ? 6 : now * (now + 1) / 2 + base; }

int weft__lanes_init(weft__lanes *l) {
    memset(l, 0, sizeof *l);
    atomic_init(&l->lock, 0);
    atomic_init(&l->mask, 0);
    atomic_init(&l->count, 0);
    return WEFT_OK;
}

void weft__lanes_fini(weft__lanes *l) {
    for (unsigned i = 0; i < WEFT__LANES; i++) weft__free(l->lane[i].a, sizeof *l->lane[i].a * l->lane[i].cap);
}

/* The lanes' lock: a test-and-test-and-set spin lock.  A mutex costs the owner
 * ~60 instructions a pair on every push and pop; this costs one exchange and
 * one store, and waiters are rare (a thief, the ticker) and brief.  Acquire:
 * the holder sees what the last holder wrote; release: pairs with it. */
static inline void lock(weft__lanes *l) {
    unsigned spins = 0;
    while (atomic_exchange_explicit(&l->lock, 1, memory_order_acquire) != 0)
        while (atomic_load_explicit(&l->lock, memory_order_relaxed) != 0) weft__spin_pause(&spins);
}

static inline void unlock(weft__lanes *l) { atomic_store_explicit(&l->lock, 0, memory_order_release); }

static inline weft__lane_item *at(weft__lane *ln, uint32_t i) { return &ln->a[(ln->head + i) & (ln->cap - 1)]; }

/* Room for `more` items in ln (capacity a power of two). */
static int lane_reserve(weft__lane *ln, uint32_t more) {
    if (ln->n + more <= ln->cap) return WEFT_OK;
    uint32_t cap = ln->cap ? ln->cap : 64;
    while (cap < ln->n + more) {
        if (cap > UINT32_MAX / 2) return WEFT_ENOMEM;
        cap *= 2;
    }
    weft__lane_item *a = weft__alloc(sizeof *a * cap);
    if (!a) return WEFT_ENOMEM;
    for (uint32_t i = 0; i < ln->n; i++) a[i] = *at(ln, i);
    weft__free(ln->a, sizeof *a * ln->cap);
    ln->a = a, ln->cap = cap, ln->head = 0;
    return WEFT_OK;
}

/* Under l->lock, after lanes of `level` changed by d items: the hints.  The
 * mask is stored only when it changes (other workers read its line). */
static inline void publish(weft__lanes *l, unsigned level, int d) {
    l->per_level[level] += (uint32_t)d;
    uint32_t old = atomic_load_explicit(&l->mask, memory_order_relaxed);
    uint32_t m = l->per_level[level] ? old | 1u << level : old & ~(1u << level);
    if (m != old) atomic_store_explicit(&l->mask, m, memory_order_relaxed);
    atomic_store_explicit(&l->count, atomic_load_explicit(&l->count, memory_order_relaxed) + (uint32_t)d,
                          memory_order_relaxed);
}

size_t weft__lanes_push_many(weft__lanes *l, size_t k, const uint8_t *level, weft__job *const *job,
                             const weft__hints *hint, uint64_t stamp) {
    uint64_t now = weft__ticks(); /* (one clock read and one lock for all k) */
    lock(l);
    size_t i = 0;
    for (; i < k; i++) {
        weft__lane *ln = &l->lane[lane_ix(level[i], level[i])];
        if (lane_reserve(ln, 1) != WEFT_OK) break;
        *at(ln, ln->n++) = (weft__lane_item){job[i], stamp, l->lseq++, now,
                                             hint ? hint[i] : (weft__hints){{NULL, NULL}, NULL, 0}};
        publish(l, level[i], 1);
    }
    unlock(l);
    return i;
}

int weft__lanes_push(weft__lanes *l, unsigned level, weft__job *job, const weft__hints *hint, uint64_t stamp) {
    uint8_t lv = (uint8_t)level;
    return weft__lanes_push_many(l, 1, &lv, &job, hint, stamp) == 1 ? WEFT_OK : WEFT_ENOMEM;
}

/* Under l->lock: the lane of `level` whose head was queued first, or NULL. */
static weft__lane *first_lane(weft__lanes *l, unsigned level) {
    if (level == 3) return l->lane[6].n ? &l->lane[6] : NULL;
    weft__lane *best = NULL;
    for (unsigned b = 0; b <= level; b++) {
        weft__lane *ln = &l->lane[lane_ix(level, b)];
        if (ln->n && (!best || at(ln, 0)->lseq < at(best, 0)->lseq)) best = ln;
    }
    return best;
}

/* Prefetching for the takes to come (weft__hints): AHEAD items on, the job,
 * its lines and its array; for the next but one, whose array came by now, the
 * lines the array points to (MANY of them at most).  A task's time is often
 * shorter than a miss. */
enum { AHEAD = 3, MANY = 8 };

static inline void prefetch_item(const weft__lane_item *it) {
    __builtin_prefetch(it->job);
    if (it->hints.line[0]) __builtin_prefetch(it->hints.line[0]);
    if (it->hints.line[1]) __builtin_prefetch(it->hints.line[1]);
    if (it->hints.many) __builtin_prefetch(it->hints.many);
}

static inline void prefetch_many(const weft__lane_item *it) {
    for (uint32_t i = 0, k = it->hints.nmany < MANY ? it->hints.nmany : MANY; i < k; i++)
        __builtin_prefetch(it->hints.many[i], 1);
}

/* Under l->lock: takes ln's head (of level `level`). */
static weft__job *lane_take(weft__lanes *l, weft__lane *ln, unsigned level) {
    weft__job *j = ln->a[ln->head].job;
    ln->head = (ln->head + 1) & (ln->cap - 1);
    ln->n--;
    if (ln->n) prefetch_item(at(ln, 0)); /* (a lane refilled since, short) */
    if (ln->n > AHEAD) prefetch_item(at(ln, AHEAD));
    if (ln->n > 1) prefetch_many(at(ln, 1));
    publish(l, level, -1);
    return j;
}

weft__job *weft__lanes_pop(weft__lanes *l, unsigned level) {
    lock(l);
    weft__lane *ln = first_lane(l, level);
    weft__job *j = ln ? lane_take(l, ln, level) : NULL;
    unlock(l);
    return j;
}

weft__job *weft__lanes_pop_or_heap(weft__lanes *l, unsigned level, weft__sched_queue *q, bool *from_heap) {
    lock(l);
    weft__lane *ln = first_lane(l, level);
    weft__job *j = NULL;
    *from_heap = false;
    if (ln) {
        uint64_t stamp = at(ln, 0)->stamp;
        weft__mutex_lock(&q->lock); /* lock order: lanes, then the queue */
        if (q->n && q->slots[q->heap[0]].level == level && q->slots[q->heap[0]].seq < stamp)
            j = weft__squeue_take_top_locked(q);
        weft__mutex_unlock(&q->lock);
        *from_heap = j != NULL;
        if (!j) j = lane_take(l, ln, level);
    }
    unlock(l);
    return j;
}

/* Under l->lock: moves the prefix of lane (now, base) that waited `after`
 * ticks since it was queued to the end of lane (now + 1, base).  Returns how
 * many moved (fewer if memory is short: the rest move at a later tick). */
static size_t lane_escalate(weft__lanes *l, unsigned now, unsigned base, uint64_t after, uint64_t t) {
    weft__lane *src = &l->lane[lane_ix(now, base)], *dst = &l->lane[lane_ix(now + 1, base)];
    uint32_t k = 0;
    /* t is read before the lock (sched.c, escalate_all): an item queued since
     * has a later time, and t - queued wrapped to a huge wait: it climbed at
     * once.  It (and every item after it) has waited no time. */
    while (k < src->n && t > at(src, k)->queued && t - at(src, k)->queued >= after) k++;
    if (k == 0 || lane_reserve(dst, k) != WEFT_OK) return 0;
    for (uint32_t i = 0; i < k; i++) *at(dst, dst->n++) = *at(src, i);
    src->head = (src->head + k) & (src->cap - 1);
    src->n -= k;
    publish(l, now, -(int)k);
    publish(l, now + 1, (int)k);
    return k;
}

size_t weft__lanes_escalate(weft__lanes *l, const uint64_t after_ticks[2], uint64_t now) {
    size_t moved = 0;
    lock(l);
    /* NORMAL -> HIGH first, so that no item climbs two levels in one tick. */
    moved += lane_escalate(l, 1, 1, after_ticks[1], now);
    moved += lane_escalate(l, 1, 0, after_ticks[0] + after_ticks[1], now);
    moved += lane_escalate(l, 0, 0, after_ticks[0], now);
    unlock(l);
    return moved;
}

size_t weft__lanes_copy(weft__lanes *l, weft_sched_entry *out, size_t cap, uint64_t now, double ns_per_tick) {
    static const uint8_t level_of[WEFT__LANES] = {0, 1, 1, 2, 2, 2, 3};
    lock(l);
    size_t k = 0;
    for (unsigned x = 0; x < WEFT__LANES; x++) {
        weft__lane *ln = &l->lane[x];
        for (uint32_t i = 0; i < ln->n && k < cap; i++, k++) {
            const weft__lane_item *it = at(ln, i);
            /* now is read before the lock: an item queued since waited 0, not
             * a wrapped difference (a wait of centuries, and a double too
             * large for a uint64_t: undefined). */
            uint64_t waited = now > it->queued ? now - it->queued : 0;
            out[k] = (weft_sched_entry){{0, 0}, (weft_priority)((int)level_of[x] - 1), it->stamp,
                                        (uint64_t)((double)waited * ns_per_tick)};
        }
    }
    unlock(l);
    return k;
}
