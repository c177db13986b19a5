/* The executor's priority queue: a binary heap of slot indices ordered by
 * (level high first, sequence number low first), with each slot knowing its
 * heap position so that a handle can re-prioritise or remove its task in
 * O(log n).  Every function here runs under q->lock (or at init/fini). */
#include "sched/sched.h"
#include "core/alloc.h"

#include <string.h>

enum { SLOT_FREE = 0, SLOT_RESERVED = 1, SLOT_QUEUED = 2 };
#define NO_SLOT UINT32_MAX

/* Marks for the queues, dealt in turn: executors alive at once differ (up to
 * 255 of them).  The first handle of every queue used to be {0, 1}, so one
 * executor's handle named a task of another (weft/sched.h: a handle is used
 * with the executor it came from; now that misuse is refused, api.c). */
static _Atomic uint32_t next_mark;

/* The generation after g in a queue marked `mark`: the low 24 bits count,
 * skipping 0, so a generation is never 0 and always carries the mark. */
static inline uint32_t gen_next(uint32_t mark, uint32_t g) {
    uint32_t low = (g + 1) & ~WEFT__GEN_MARK;
    return mark | (low ? low : 1u);
}

int weft__squeue_init(weft__sched_queue *q) {
    memset(q, 0, sizeof *q);
    q->mark = ((atomic_fetch_add_explicit(&next_mark, 1, memory_order_relaxed) % 255u) + 1u) << 24;
    q->free_head = NO_SLOT;
    for (unsigned l = 0; l < WEFT__LEVELS; l++) atomic_init(&q->count[l], 0);
    atomic_init(&q->next_seq, 0);
    return weft__mutex_init(&q->lock) == 0 ? WEFT_OK : WEFT_ENOMEM;
}

void weft__squeue_fini(weft__sched_queue *q) {
    weft__free(q->slots, sizeof *q->slots * q->cap);
    weft__free(q->heap, sizeof *q->heap * q->cap);
    weft__mutex_destroy(&q->lock);
}

static inline bool before(const weft__sched_queue *q, uint32_t a, uint32_t b) {
    const weft__sched_slot *x = &q->slots[a], *y = &q->slots[b];
    return x->level != y->level ? x->level > y->level : x->seq < y->seq;
}

static inline void place(weft__sched_queue *q, uint32_t i, uint32_t idx) {
    q->heap[i] = idx;
    q->slots[idx].pos = (int32_t)i;
}

static void sift_up(weft__sched_queue *q, uint32_t i) {
    uint32_t idx = q->heap[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!before(q, idx, q->heap[parent])) break;
        place(q, i, q->heap[parent]);
        i = parent;
    }
    place(q, i, idx);
}

static void sift_down(weft__sched_queue *q, uint32_t i) {
    uint32_t idx = q->heap[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= q->n) break;
        if (c + 1 < q->n && before(q, q->heap[c + 1], q->heap[c])) c++;
        if (!before(q, q->heap[c], idx)) break;
        place(q, i, q->heap[c]);
        i = c;
    }
    place(q, i, idx);
}

/* Room for one more slot: doubles both arrays (the heap never outgrows the slots). */
static int grow(weft__sched_queue *q) {
    uint32_t cap = q->cap ? q->cap * 2 : 64;
    if (cap <= q->cap) return WEFT_ENOMEM;
    weft__sched_slot *s = weft__realloc(q->slots, sizeof *s * q->cap, sizeof *s * cap);
    if (!s) return WEFT_ENOMEM;
    q->slots = s;
    uint32_t *h = weft__realloc(q->heap, sizeof *h * q->cap, sizeof *h * cap);
    if (!h) return WEFT_ENOMEM; /* slots grew alone: harmless, cap stays */
    q->heap = h;
    q->cap = cap;
    return WEFT_OK;
}

int weft__squeue_reserve_locked(weft__sched_queue *q, unsigned level, weft__sched_removed_fn on_remove,
                                weft_sched_handle *out) {
    uint32_t idx = q->free_head;
    if (idx != NO_SLOT) {
        q->free_head = q->slots[idx].next_free;
    } else {
        if (q->nslots == q->cap && grow(q) != WEFT_OK) return WEFT_ENOMEM;
        idx = q->nslots++;
        q->slots[idx].gen = gen_next(q->mark, 0);
    }
    weft__sched_slot *s = &q->slots[idx];
    s->job = NULL;
    s->on_remove = on_remove;
    /* The place among equals is taken at submission.  Relaxed: lanes read it
     * as a stamp, and only order against a thread's own earlier reservations. */
    s->seq = atomic_load_explicit(&q->next_seq, memory_order_relaxed);
    atomic_store_explicit(&q->next_seq, s->seq + 1, memory_order_relaxed);
    s->pos = -1;
    s->level = (uint8_t)level;
    s->state = SLOT_RESERVED;
    *out = (weft_sched_handle){idx, s->gen};
    return WEFT_OK;
}

weft__sched_slot *weft__squeue_slot_locked(weft__sched_queue *q, weft_sched_handle h) {
    if (h.slot >= q->nslots) return NULL;
    weft__sched_slot *s = &q->slots[h.slot];
    return s->gen == h.gen && s->state != SLOT_FREE ? s : NULL;
}

static inline void count_add(weft__sched_queue *q, unsigned level, int d) {
    uint32_t c = atomic_load_explicit(&q->count[level], memory_order_relaxed);
    atomic_store_explicit(&q->count[level], c + (uint32_t)d, memory_order_relaxed); /* under the lock */
}

void weft__squeue_insert_locked(weft__sched_queue *q, uint32_t idx, weft__job *job, uint64_t now) {
    weft__sched_slot *s = &q->slots[idx];
    s->job = job;
    s->state = SLOT_QUEUED;
    s->since = s->queued_at = now;
    q->heap[q->n] = idx;
    s->pos = (int32_t)q->n++;
    sift_up(q, (uint32_t)s->pos);
    count_add(q, s->level, 1);
}

void weft__squeue_set_level_locked(weft__sched_queue *q, uint32_t idx, unsigned level, uint64_t now) {
    weft__sched_slot *s = &q->slots[idx];
    unsigned old = s->level;
    if (old == level) return;
    s->level = (uint8_t)level;
    s->since = now;
    if (s->state != SLOT_QUEUED) return;
    count_add(q, old, -1);
    count_add(q, level, 1);
    if (level > old) sift_up(q, (uint32_t)s->pos);
    else sift_down(q, (uint32_t)s->pos);
}

void weft__squeue_erase_locked(weft__sched_queue *q, uint32_t idx) {
    weft__sched_slot *s = &q->slots[idx];
    uint32_t i = (uint32_t)s->pos;
    count_add(q, s->level, -1);
    s->pos = -1;
    uint32_t last = q->heap[--q->n];
    if (i == q->n) return;
    place(q, i, last);
    sift_up(q, i);
    sift_down(q, (uint32_t)q->slots[last].pos);
}

void weft__squeue_free_locked(weft__sched_queue *q, uint32_t idx) {
    weft__sched_slot *s = &q->slots[idx];
    s->state = SLOT_FREE;
    s->job = NULL;
    s->gen = gen_next(q->mark, s->gen); /* every handle to it is stale now */
    s->next_free = q->free_head;
    q->free_head = idx;
}

weft__job *weft__squeue_take_top_locked(weft__sched_queue *q) {
    uint32_t idx = q->heap[0];
    weft__job *j = q->slots[idx].job;
    weft__squeue_erase_locked(q, idx);
    weft__squeue_free_locked(q, idx);
    return j;
}

weft__job *weft__squeue_pop(weft__sched_queue *q, unsigned min_level) {
    weft__mutex_lock(&q->lock);
    weft__job *j = q->n && q->slots[q->heap[0]].level >= min_level ? weft__squeue_take_top_locked(q) : NULL;
    weft__mutex_unlock(&q->lock);
    return j;
}

size_t weft__squeue_escalate_locked(weft__sched_queue *q, const uint64_t thresholds[2], uint64_t now) {
    size_t moved = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        weft__sched_slot *s = &q->slots[q->heap[i]];
        /* `now` is read before the lock: a task queued (or re-prioritised)
         * since has a later `since`, and now - since wrapped to some 584
         * years: it was raised at once.  It has waited no time. */
        if (s->level >= 2 || now < s->since || now - s->since < thresholds[s->level]) continue;
        count_add(q, s->level, -1);
        s->level++;
        s->since = now;
        count_add(q, s->level, 1);
        moved++;
    }
    if (moved) /* levels rose anywhere: rebuild the heap, O(n) */
        for (uint32_t i = q->n / 2; i-- > 0;) sift_down(q, i);
    return moved;
}
