/* The injector: a lock-free, unbounded MPMC FIFO through which threads that are
 * not workers hand jobs to the executor.
 *
 * It is a linked list of blocks of 63 slots (the design of crossbeam's Injector).
 * Producers claim a slot by CAS on the tail index, consumers by CAS on the head
 * index; a slot's state bits say when its job is written (WRITE), taken (READ), or
 * when the block may be freed by whoever reads last (DESTROY).  A block is freed
 * once every slot in it has been read, so no consumer can touch freed memory
 * without any epoch scheme.  Indices carry the slot position shifted left by one;
 * bit 0 of the head index (HAS_NEXT) caches "a later block exists", which lets
 * consumers skip reading the tail.
 *
 * Progress: claiming is lock-free; a consumer whose slot was claimed but not yet
 * written, or a thread that meets a block boundary being installed, spins briefly.
 */
#ifndef WEFT_CORE_INJECTOR_H
#define WEFT_CORE_INJECTOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/job.h"
#include "platform/platform.h"

#define WEFT__INJ_BLOCK_CAP 63

typedef struct weft__inj_slot {
    _Atomic(weft__job *) job;
    _Atomic unsigned state;
} weft__inj_slot;

typedef struct weft__inj_block {
    _Atomic(struct weft__inj_block *) next;
    weft__inj_slot slots[WEFT__INJ_BLOCK_CAP];
} weft__inj_block;

typedef struct weft__injector {
    _Alignas(WEFT__CACHE_LINE) _Atomic size_t head_index;
    _Atomic(weft__inj_block *) head_block;
    _Alignas(WEFT__CACHE_LINE) _Atomic size_t tail_index;
    _Atomic(weft__inj_block *) tail_block;
    /* The spare list: jobs weft__injector_push_spare queued when no block could
     * be had, linked through their `next`, under spare_lock; spare_n counts
     * them (pop looks at it only when the blocks are empty). */
    _Alignas(WEFT__CACHE_LINE) _Atomic size_t spare_n;
    atomic_flag spare_lock;
    weft__job *spare_head, *spare_tail;
    _Alignas(WEFT__CACHE_LINE) char pad_;
} weft__injector;

/* 0 or WEFT_ENOMEM. */
int weft__injector_init(weft__injector *q);
/* Frees all blocks; jobs still queued are dropped.  No concurrent use. */
void weft__injector_destroy(weft__injector *q);
/* Any thread; lock-free.  0, or WEFT_ENOMEM when a new block was needed and could
 * not be allocated (the queue is unchanged). */
int weft__injector_push(weft__injector *q, weft__job *job);
/* weft__injector_push that cannot fail: without a block the job goes to the
 * spare list, taken after the blocks' jobs (so not in FIFO order with them).
 * For a hand-over that has no caller to report a failure to (a semaphore
 * waking a task of another executor): failing there left the task parked for
 * ever.  Any thread. */
void weft__injector_push_spare(weft__injector *q, weft__job *job);
/* Any thread; lock-free while the spare list is empty.  The oldest job of the
 * blocks, else one of the spare list, or NULL when both are empty. */
weft__job *weft__injector_pop(weft__injector *q);
/* Any thread.  True when no job is queued, spare list included (seq_cst
 * reads, for the sleep protocol). */
bool weft__injector_empty(weft__injector *q);
/* Any thread.  About how many jobs are queued (relaxed reads, for statistics). */
size_t weft__injector_len(weft__injector *q);

#endif
