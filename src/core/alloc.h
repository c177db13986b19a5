/* Internal allocation: everything goes through the user's weft_allocator hook. */
#ifndef WEFT_CORE_ALLOC_H
#define WEFT_CORE_ALLOC_H

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
/* Copies a string (NULL for NULL); free with weft__free_str. */
char *weft__strdup(const char *s);
void weft__free_str(char *s);

#endif
