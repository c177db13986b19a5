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
    atomic_init(&l->mask, 0);
    atomic_init(&l->count, 0);
    return weft__mutex_init(&l->lock) == 0 ? WEFT_OK : WEFT_ENOMEM;
}

void weft__lanes_fini(weft__lanes *l) {
    for (unsigned i = 0; i < WEFT__LANES; i++) weft__free(l->lane[i].a, sizeof *l->lane[i].a * l->lane[i].cap);
    weft__mutex_destroy(&l->lock);
}

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

/* Under l->lock, after lanes of `level` changed by d items: the hints. */
static void publish(weft__lanes *l, unsigned level, int d) {
    bool any = level == 3 ? l->lane[6].n != 0 : false;
    for (unsigned b = 0; level < 3 && b <= level; b++) any |= l->lane[lane_ix(level, b)].n != 0;
    uint32_t m = atomic_load_explicit(&l->mask, memory_order_relaxed);
    m = any ? m | 1u << level : m & ~(1u << level);
    atomic_store_explicit(&l->mask, m, memory_order_relaxed);
    uint32_t c = atomic_load_explicit(&l->count, memory_order_relaxed);
    atomic_store_explicit(&l->count, c + (uint32_t)d, memory_order_relaxed);
}

int weft__lanes_push(weft__lanes *l, unsigned level, weft__job *job, uint64_t stamp) {
    uint64_t now = weft__ticks();
    weft__mutex_lock(&l->lock);
    weft__lane *ln = &l->lane[lane_ix(level, level)];
    if (lane_reserve(ln, 1) != WEFT_OK) {
        weft__mutex_unlock(&l->lock);
        return WEFT_ENOMEM;
    }
    *at(ln, ln->n++) = (weft__lane_item){job, stamp, l->lseq++, now};
    if (ln->n == 1) publish(l, level, 1);
    else atomic_store_explicit(&l->count, atomic_load_explicit(&l->count, memory_order_relaxed) + 1,
                               memory_order_relaxed); /* the mask has the level already */
    weft__mutex_unlock(&l->lock);
    return WEFT_OK;
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

/* Under l->lock: takes ln's head (of level `level`). */
static weft__job *lane_take(weft__lanes *l, weft__lane *ln, unsigned level) {
    weft__job *j = ln->a[ln->head].job;
    ln->head = (ln->head + 1) & (ln->cap - 1);
    ln->n--;
    /* The next one is likely taken next, long after it was queued: its job
     * (a graph node) has left the cache meanwhile. */
    if (ln->n) __builtin_prefetch(ln->a[ln->head].job);
    publish(l, level, -1);
    return j;
}

weft__job *weft__lanes_pop(weft__lanes *l, unsigned level) {
    weft__mutex_lock(&l->lock);
    weft__lane *ln = first_lane(l, level);
    weft__job *j = ln ? lane_take(l, ln, level) : NULL;
    weft__mutex_unlock(&l->lock);
    return j;
}

weft__job *weft__lanes_pop_or_heap(weft__lanes *l, unsigned level, weft__sched_queue *q) {
    weft__mutex_lock(&l->lock);
    weft__lane *ln = first_lane(l, level);
    weft__job *j = NULL;
    if (ln) {
        uint64_t stamp = at(ln, 0)->stamp;
        weft__mutex_lock(&q->lock); /* lock order: lanes, then the queue */
        if (q->n && q->slots[q->heap[0]].level == level && q->slots[q->heap[0]].seq < stamp)
            j = weft__squeue_take_top_locked(q);
        weft__mutex_unlock(&q->lock);
        if (!j) j = lane_take(l, ln, level);
    }
    weft__mutex_unlock(&l->lock);
    return j;
}

/* Under l->lock: moves the prefix of lane (now, base) that waited `after`
 * ticks since it was queued to the end of lane (now + 1, base).  Returns how
 * many moved (fewer if memory is short: the rest move at a later tick). */
static size_t lane_escalate(weft__lanes *l, unsigned now, unsigned base, uint64_t after, uint64_t t) {
    weft__lane *src = &l->lane[lane_ix(now, base)], *dst = &l->lane[lane_ix(now + 1, base)];
    uint32_t k = 0;
    while (k < src->n && t - at(src, k)->queued >= after) k++;
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
    weft__mutex_lock(&l->lock);
    /* NORMAL -> HIGH first, so that no item climbs two levels in one tick. */
    moved += lane_escalate(l, 1, 1, after_ticks[1], now);
    moved += lane_escalate(l, 1, 0, after_ticks[0] + after_ticks[1], now);
    moved += lane_escalate(l, 0, 0, after_ticks[0], now);
    weft__mutex_unlock(&l->lock);
    return moved;
}

size_t weft__lanes_copy(weft__lanes *l, weft_sched_entry *out, size_t cap, uint64_t now, double ns_per_tick) {
    static const uint8_t level_of[WEFT__LANES] = {0, 1, 1, 2, 2, 2, 3};
    weft__mutex_lock(&l->lock);
    size_t k = 0;
    for (unsigned x = 0; x < WEFT__LANES; x++) {
        weft__lane *ln = &l->lane[x];
        for (uint32_t i = 0; i < ln->n && k < cap; i++, k++) {
            const weft__lane_item *it = at(ln, i);
            out[k] = (weft_sched_entry){{0, 0}, (weft_priority)((int)level_of[x] - 1), it->stamp,
                                        (uint64_t)((double)(now - it->queued) * ns_per_tick)};
        }
    }
    weft__mutex_unlock(&l->lock);
    return k;
}
