/* A hash index over names kept in a caller's array (name_index.h): open
 * addressing, linear probing, FNV-1a of the name mixed with the tag. */
#include "graph/name_index.h"
#include "core/alloc.h"

#include <string.h>

static uint32_t hash(const char *name, unsigned tag) {
    uint64_t h = 0xcbf29ce484222325ull ^ tag;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 0x100000001b3ull;
    return (uint32_t)(h ^ (h >> 32));
}

/* The slot holding (name, tag), or the empty one where it would go. */
static uint32_t probe(const weft__name_index *x, const char *name, unsigned tag, weft__name_key_fn key,
                      const void *ctx) {
    uint32_t mask = x->cap - 1, i = hash(name, tag) & mask;
    for (; x->slots[i]; i = (i + 1) & mask) {
        unsigned t;
        const char *n = key(ctx, x->slots[i] - 1, &t);
        if (t == tag && strcmp(n, name) == 0) break;
    }
    return i;
}

uint32_t weft__name_find(const weft__name_index *x, const char *name, unsigned tag, weft__name_key_fn key,
                         const void *ctx) {
    if (!x->cap) return WEFT__NAME_NONE;
    uint32_t s = x->slots[probe(x, name, tag, key, ctx)];
    return s ? s - 1 : WEFT__NAME_NONE;
}

bool weft__name_reserve(weft__name_index *x, weft__name_key_fn key, const void *ctx) {
    if ((x->used + 1) * 2 <= x->cap) return true;
    if (x->cap >= (UINT32_C(1) << 31)) return false;
    weft__name_index n = {.cap = x->cap ? 2 * x->cap : 16, .used = x->used};
    if (!(n.slots = weft__calloc(n.cap * sizeof *n.slots))) return false;
    for (uint32_t i = 0; i < x->cap; i++)
        if (x->slots[i]) {
            unsigned t;
            const char *name = key(ctx, x->slots[i] - 1, &t);
            n.slots[probe(&n, name, t, key, ctx)] = x->slots[i];
        }
    weft__name_index_free(x);
    *x = n;
    return true;
}

void weft__name_set(weft__name_index *x, const char *name, unsigned tag, uint32_t rec, weft__name_key_fn key,
                    const void *ctx) {
    uint32_t i = probe(x, name, tag, key, ctx);
    if (!x->slots[i]) x->used++;
    x->slots[i] = rec + 1;
}

void weft__name_index_free(weft__name_index *x) {
    weft__free(x->slots, x->cap * sizeof *x->slots);
    *x = (weft__name_index){0};
}
