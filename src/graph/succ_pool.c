/* Successor arrays of a taskflow's nodes.
 *
 * A node with two or more successors keeps them in an array whose capacity is a
 * power of two.  Allocating each from the heap costs a malloc per node on graphs
 * with fan-out (and a free per node at destroy), so arrays are carved from large
 * blocks owned by the taskflow; an array outgrown by its node goes on the free
 * list of its size class, where the next node of that class takes it.  The
 * blocks are freed all at once when the taskflow is cleared or destroyed.
 * Blocks of the standard size go through the block cache (core/alloc.h): a
 * program that builds a graph per request would otherwise page-fault its edge
 * arrays in anew every time (the C library gives the heap's top back to the
 * system when the taskflow frees them). */
#include "graph/graph.h"
#include "core/alloc.h"

#include <string.h>

#define BLOCK_BYTES ((size_t)64 << 10)
#define STD_BYTES (sizeof(weft__succ_block) + BLOCK_BYTES) /* a block of the usual size */

struct weft__succ_block {
    weft__succ_block *next;
    size_t bytes; /* of the whole block, header included */
};

static unsigned size_class(uint32_t cap) { return (unsigned)__builtin_ctz(cap); }

/* A fresh block holding at least `need` bytes past its header.  NULL: out of memory. */
static bool grow(weft__succ_pool *p, size_t need) {
    size_t bytes = sizeof(weft__succ_block) + (need > BLOCK_BYTES ? need : BLOCK_BYTES);
    weft__succ_block *b = bytes == STD_BYTES ? weft__block_cache_take(bytes, WEFT__CACHE_LINE) : NULL;
    if (!b) b = weft__alloc_aligned(bytes, WEFT__CACHE_LINE);
    if (!b) return false;
    b->next = p->blocks;
    b->bytes = bytes;
    p->blocks = b;
    p->cur = (char *)(b + 1);
    p->left = bytes - sizeof *b;
    return true;
}

weft__node **weft__succ_alloc(weft__succ_pool *p, uint32_t cap) {
    unsigned c = size_class(cap);
    weft__node **a = p->free[c];
    if (a) { /* a free array keeps the next free one in its first slot */
        p->free[c] = (weft__node **)(void *)a[0];
        return a;
    }
    size_t need = (size_t)cap * sizeof *a;
    if (p->left < need && !grow(p, need)) return NULL;
    a = (weft__node **)(void *)p->cur;
    p->cur += need;
    p->left -= need;
    return a;
}

void weft__succ_free(weft__succ_pool *p, weft__node **a, uint32_t cap) {
    if (!a) return;
    unsigned c = size_class(cap);
    a[0] = (weft__node *)(void *)p->free[c];
    p->free[c] = a;
}

void weft__succ_pool_release(weft__succ_pool *p) {
    /* A pool that never grew is empty already (the free lists hold arrays
     * from blocks only): every clear of a small graph -- each execution of a
     * subflow task -- came here, and the call and the memset of the 280-byte
     * pool were ~45 instructions of a nested subflow task's ~970. */
    if (!p->blocks) return;
    for (weft__succ_block *b = p->blocks, *next; b; b = next) {
        next = b->next;
        if (b->bytes != STD_BYTES || !weft__block_cache_give(b, b->bytes, WEFT__CACHE_LINE))
            weft__free_aligned(b, b->bytes, WEFT__CACHE_LINE);
    }
    memset(p, 0, sizeof *p);
}
