/* Injector: see injector.h for the design. */
#include "core/injector.h"
#include "core/alloc.h"
#include "weft/common.h"

enum { SLOT_WRITE = 1, SLOT_READ = 2, SLOT_DESTROY = 4 };
#define LAP 64 /* positions per block: 63 slots + one "end of block" position */
#define SHIFT 1
#define HAS_NEXT ((size_t)1)
#define ONE ((size_t)1 << SHIFT)

static weft__inj_block *block_new(void) {
    weft__inj_block *b = weft__alloc(sizeof *b);
    if (!b) return NULL;
    atomic_init(&b->next, NULL);
    for (int i = 0; i < WEFT__INJ_BLOCK_CAP; i++) {
        atomic_init(&b->slots[i].job, NULL);
        atomic_init(&b->slots[i].state, 0);
    }
    return b;
}

static void block_free(weft__inj_block *b) { weft__free(b, sizeof *b); }

static weft__inj_block *block_wait_next(weft__inj_block *b) {
    for (;;) {
        weft__inj_block *n = atomic_load_explicit(&b->next, memory_order_acquire);
        if (n) return n;
        weft__cpu_relax();
    }
}

/* Frees block b once slots [start, CAP-1) have all been read.  If a slot is still
 * being read, mark it DESTROY: its reader then continues the destruction. The last
 * slot is not checked: its reader is the one that calls destroy(b, 0). */
static void block_destroy(weft__inj_block *b, int start) {
    for (int i = start; i < WEFT__INJ_BLOCK_CAP - 1; i++) {
        weft__inj_slot *s = &b->slots[i];
        if ((atomic_load_explicit(&s->state, memory_order_acquire) & SLOT_READ) == 0 &&
            (atomic_fetch_or_explicit(&s->state, SLOT_DESTROY, memory_order_acq_rel) & SLOT_READ) == 0)
            return;
    }
    block_free(b);
}

int weft__injector_init(weft__injector *q) {
    weft__inj_block *b = block_new();
    if (!b) return WEFT_ENOMEM;
    atomic_init(&q->head_index, 0);
    atomic_init(&q->head_block, b);
    atomic_init(&q->tail_index, 0);
    atomic_init(&q->tail_block, b);
    atomic_init(&q->spare_n, 0);
    atomic_flag_clear(&q->spare_lock);
    q->spare_head = q->spare_tail = NULL;
    return WEFT_OK;
}

void weft__injector_destroy(weft__injector *q) {
    size_t head = atomic_load_explicit(&q->head_index, memory_order_relaxed) & ~HAS_NEXT;
    size_t tail = atomic_load_explicit(&q->tail_index, memory_order_relaxed) & ~HAS_NEXT;
    weft__inj_block *b = atomic_load_explicit(&q->head_block, memory_order_relaxed);
    /* Walk from head to tail, freeing each block when passing its end. */
    while (head != tail) {
        if ((head >> SHIFT) % LAP == WEFT__INJ_BLOCK_CAP) {
            weft__inj_block *n = atomic_load_explicit(&b->next, memory_order_relaxed);
            block_free(b);
            b = n;
        }
        head += ONE;
    }
    if (b) block_free(b);
    atomic_store_explicit(&q->head_block, NULL, memory_order_relaxed);
    atomic_store_explicit(&q->tail_block, NULL, memory_order_relaxed);
    q->spare_head = q->spare_tail = NULL; /* dropped, as the blocks' jobs */
    atomic_store_explicit(&q->spare_n, 0, memory_order_relaxed);
}

static void spare_lock(weft__injector *q) {
    while (atomic_flag_test_and_set_explicit(&q->spare_lock, memory_order_acquire)) weft__cpu_relax();
}
static void spare_unlock(weft__injector *q) { atomic_flag_clear_explicit(&q->spare_lock, memory_order_release); }

void weft__injector_push_spare(weft__injector *q, weft__job *job) {
    if (weft__injector_push(q, job) == 0) return;
    job->next = NULL;
    spare_lock(q);
    if (q->spare_tail) q->spare_tail->next = job;
    else q->spare_head = job;
    q->spare_tail = job;
    /* seq_cst: pairs with the fence of a pop that finds the blocks empty and
     * with weft__injector_empty, as the producers' CAS on tail does. */
    atomic_fetch_add_explicit(&q->spare_n, 1, memory_order_seq_cst);
    spare_unlock(q);
}

static weft__job *spare_pop(weft__injector *q) {
    spare_lock(q);
    weft__job *j = q->spare_head;
    if (j) {
        q->spare_head = j->next;
        if (!q->spare_head) q->spare_tail = NULL;
        atomic_fetch_sub_explicit(&q->spare_n, 1, memory_order_relaxed);
    }
    spare_unlock(q);
    return j;
}

int weft__injector_push(weft__injector *q, weft__job *job) {
    size_t tail = atomic_load_explicit(&q->tail_index, memory_order_acquire);
    weft__inj_block *block = atomic_load_explicit(&q->tail_block, memory_order_acquire);
    weft__inj_block *next_block = NULL;
    for (;;) {
        size_t offset = (tail >> SHIFT) % LAP;
        if (offset == WEFT__INJ_BLOCK_CAP) {
            /* Another producer is installing the next block: wait for it. */
            weft__cpu_relax();
            tail = atomic_load_explicit(&q->tail_index, memory_order_acquire);
            block = atomic_load_explicit(&q->tail_block, memory_order_acquire);
            continue;
        }
        /* Whoever takes the last slot installs the next block; allocate it before
         * claiming so that failure leaves the queue untouched. */
        if (offset + 1 == WEFT__INJ_BLOCK_CAP && !next_block) {
            next_block = block_new();
            if (!next_block) return WEFT_ENOMEM;
        }
        size_t new_tail = tail + ONE;
        if (atomic_compare_exchange_weak_explicit(&q->tail_index, &tail, new_tail, memory_order_seq_cst,
                                                  memory_order_acquire)) {
            if (offset + 1 == WEFT__INJ_BLOCK_CAP) {
                /* Skip the end-of-block position and move to the next block. Block
                 * before index: a thread that sees the new index sees the block. */
                atomic_store_explicit(&q->tail_block, next_block, memory_order_release);
                atomic_store_explicit(&q->tail_index, new_tail + ONE, memory_order_release);
                atomic_store_explicit(&block->next, next_block, memory_order_release);
                next_block = NULL;
            }
            weft__inj_slot *slot = &block->slots[offset];
            atomic_store_explicit(&slot->job, job, memory_order_relaxed);
            /* Release: the consumer that sees WRITE sees the job pointer and the
             * job's contents. */
            atomic_fetch_or_explicit(&slot->state, SLOT_WRITE, memory_order_release);
            if (next_block) block_free(next_block);
            return WEFT_OK;
        }
        block = atomic_load_explicit(&q->tail_block, memory_order_acquire);
        weft__cpu_relax();
    }
}

weft__job *weft__injector_pop(weft__injector *q) {
    size_t head = atomic_load_explicit(&q->head_index, memory_order_acquire);
    weft__inj_block *block = atomic_load_explicit(&q->head_block, memory_order_acquire);
    for (;;) {
        size_t offset = (head >> SHIFT) % LAP;
        if (offset == WEFT__INJ_BLOCK_CAP) {
            /* Another consumer is moving the head to the next block. */
            weft__cpu_relax();
            head = atomic_load_explicit(&q->head_index, memory_order_acquire);
            block = atomic_load_explicit(&q->head_block, memory_order_acquire);
            continue;
        }
        size_t new_head = head + ONE;
        if ((new_head & HAS_NEXT) == 0) {
            /* Pairs with the producers' seq_cst CAS on tail: decide emptiness on a
             * tail value no older than our head. */
            atomic_thread_fence(memory_order_seq_cst);
            size_t tail = atomic_load_explicit(&q->tail_index, memory_order_relaxed);
            if ((head >> SHIFT) == (tail >> SHIFT))
                return atomic_load_explicit(&q->spare_n, memory_order_seq_cst) ? spare_pop(q) : NULL;
            if ((head >> SHIFT) / LAP != (tail >> SHIFT) / LAP) new_head |= HAS_NEXT;
        }
        if (atomic_compare_exchange_weak_explicit(&q->head_index, &head, new_head, memory_order_seq_cst,
                                                  memory_order_acquire)) {
            if (offset + 1 == WEFT__INJ_BLOCK_CAP) {
                weft__inj_block *next = block_wait_next(block);
                size_t next_index = (new_head & ~HAS_NEXT) + ONE;
                if (atomic_load_explicit(&next->next, memory_order_relaxed)) next_index |= HAS_NEXT;
                atomic_store_explicit(&q->head_block, next, memory_order_release);
                atomic_store_explicit(&q->head_index, next_index, memory_order_release);
            }
            weft__inj_slot *slot = &block->slots[offset];
            while ((atomic_load_explicit(&slot->state, memory_order_acquire) & SLOT_WRITE) == 0)
                weft__cpu_relax(); /* the producer claimed the slot but has not written it */
            weft__job *job = atomic_load_explicit(&slot->job, memory_order_relaxed);
            if (offset + 1 == WEFT__INJ_BLOCK_CAP)
                block_destroy(block, 0);
            else if (atomic_fetch_or_explicit(&slot->state, SLOT_READ, memory_order_acq_rel) & SLOT_DESTROY)
                block_destroy(block, (int)offset + 1);
            return job;
        }
        block = atomic_load_explicit(&q->head_block, memory_order_acquire);
        weft__cpu_relax();
    }
}

bool weft__injector_empty(weft__injector *q) {
    size_t head = atomic_load_explicit(&q->head_index, memory_order_seq_cst);
    size_t tail = atomic_load_explicit(&q->tail_index, memory_order_seq_cst);
    return (head >> SHIFT) == (tail >> SHIFT) && atomic_load_explicit(&q->spare_n, memory_order_seq_cst) == 0;
}

size_t weft__injector_len(weft__injector *q) {
    size_t head = atomic_load_explicit(&q->head_index, memory_order_relaxed) >> SHIFT;
    size_t tail = atomic_load_explicit(&q->tail_index, memory_order_relaxed) >> SHIFT;
    size_t spare = atomic_load_explicit(&q->spare_n, memory_order_relaxed);
    if (tail <= head) return spare; /* read in that order, tail may lag a pop */
    /* Every LAP-th position is a block's end, which holds no job. */
    return (tail - head) - (tail / LAP - head / LAP) + spare;
}
