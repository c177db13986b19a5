/* Internal allocation: everything goes through the user's weft_allocator hook. */
#ifndef WEFT_CORE_ALLOC_H
#define WEFT_CORE_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

void *weft__alloc(size_t size);
/* Zeroed memory. */
void *weft__calloc(size_t size);
void *weft__realloc(void *ptr, size_t old_size, size_t new_size);
void weft__free(void *ptr, size_t size);
/* Memory aligned to `align` (a power of two); free with weft__free_aligned and the
 * same size and alignment.  The calloc form zeroes it. */
void *weft__alloc_aligned(size_t size, size_t align);
void *weft__calloc_aligned(size_t size, size_t align);
void weft__free_aligned(void *ptr, size_t size, size_t align);
/* True while the C library allocator is in use (no hook installed). */
bool weft__alloc_is_default(void);

/* The block cache (block_cache.c): large aligned blocks (from
 * weft__alloc_aligned or weft__calloc_aligned) kept after use for the next
 * request of the same size and alignment.  take: a cached block, as it was
 * given, or NULL.  give: true if the cache kept p, else the caller frees it;
 * only blocks of the C library allocator are kept, so a user allocator sees
 * every block come back at once.  flush: frees every cached block (done when
 * the allocator hook changes).  Any thread. */
void *weft__block_cache_take(size_t size, size_t align);
bool weft__block_cache_give(void *p, size_t size, size_t align);
void weft__block_cache_flush(void);

/* Blocks a layer keeps for the process, past every object (cancel/'s
 * deadline heap): the layer registers `flush`, which weft_set_allocator calls
 * before it switches, so that each such block goes back to the allocator that
 * gave it, as the block cache does.  Registering one twice is a no-op; at most
 * four.  Any thread (a layer's setup, once). */
void weft__alloc_on_switch(void (*flush)(void));

/* Copies a string (NULL for NULL); free with weft__free_str. */
char *weft__strdup(const char *s);
void weft__free_str(char *s);

#endif
