/* A process-wide cache of large blocks that were freed, for the next user of the
 * same size.
 *
 * Building a big taskflow touches tens of megabytes of fresh node chunks; when
 * the taskflow is destroyed and another built (a program that builds a graph per
 * frame, per request, per benchmark repetition), handing the chunks back to the
 * C library only to get them again costs a page fault per page, or a memset of
 * reused heap memory.  Taskflow keeps a global node pool for the same reason.
 * The cache holds at most WEFT_BLOCK_CACHE_MB megabytes (default 256; 0 turns it
 * off), only blocks of the C library allocator, is emptied when the allocator
 * hook changes, and gives blocks back in
 * the state they were cached in (the graph caches chunks with their cold halves
 * zeroed).  Any thread; a spin lock guards it, held for a few instructions. */
#include "core/alloc.h"
#include "core/env.h"
#include "platform/platform.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#define NBUCKETS 16

typedef struct cached { struct cached *next; } cached;

static struct {
    atomic_flag lock;
    bool configured;
    size_t limit, held;
    struct { size_t size, align; cached *head; } bucket[NBUCKETS];
} cache = { ATOMIC_FLAG_INIT, false, 0, 0, {{0, 0, NULL}} };

static void lock(void) {
    while (atomic_flag_test_and_set_explicit(&cache.lock, memory_order_acquire)) weft__cpu_relax();
}
static void unlock(void) { atomic_flag_clear_explicit(&cache.lock, memory_order_release); }

static void configure(void) { /* under the lock */
    uint64_t mb = 256; /* WEFT_BLOCK_CACHE_MB=0 turns the cache off */
    if (!weft__env_uint("WEFT_BLOCK_CACHE_MB", (uint64_t)1 << 20, &mb, "256")) mb = 256;
    cache.limit = (size_t)mb << 20;
    cache.configured = true;
}

void *weft__block_cache_take(size_t size, size_t align) {
    void *p = NULL;
    lock();
    for (int i = 0; i < NBUCKETS && !p; i++) {
        if (cache.bucket[i].size != size || cache.bucket[i].align != align || !cache.bucket[i].head) continue;
        cached *c = cache.bucket[i].head;
        cache.bucket[i].head = c->next;
        cache.held -= size;
        p = c;
    }
    unlock();
    return p;
}

bool weft__block_cache_give(void *p, size_t size, size_t align) {
    bool kept = false;
    if (!weft__alloc_is_default()) return false;
    lock();
    if (!cache.configured) configure();
    if (cache.held + size <= cache.limit) {
        /* The bucket already holding this size, else an empty one: one size never
         * spreads over several buckets and crowds the others out. */
        int slot = -1;
        for (int i = 0; i < NBUCKETS; i++) {
            if (cache.bucket[i].head && cache.bucket[i].size == size && cache.bucket[i].align == align) {
                slot = i;
                break;
            }
            if (slot < 0 && !cache.bucket[i].head) slot = i;
        }
        if (slot >= 0) {
            cache.bucket[slot].size = size;
            cache.bucket[slot].align = align;
            ((cached *)p)->next = cache.bucket[slot].head;
            cache.bucket[slot].head = p;
            cache.held += size;
            kept = true;
        }
    }
    unlock();
    return kept;
}

void weft__block_cache_flush(void) {
    cached *lists[NBUCKETS];
    size_t size[NBUCKETS], align[NBUCKETS];
    lock();
    for (int i = 0; i < NBUCKETS; i++) {
        lists[i] = cache.bucket[i].head;
        size[i] = cache.bucket[i].size;
        align[i] = cache.bucket[i].align;
        cache.bucket[i].head = NULL;
    }
    cache.held = 0;
    unlock();
    for (int i = 0; i < NBUCKETS; i++)
        for (cached *c = lists[i], *next; c; c = next) {
            next = c->next;
            weft__free_aligned(c, size[i], align[i]);
        }
}
