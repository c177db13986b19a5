/* A hash index over names kept in a caller's array of records: each key (a
 * name and a small tag) maps to one record, the one set last.  The index
 * holds record numbers only; the caller's key function gives a record's key,
 * so growing the index re-reads the names from the records.  Used where a
 * search of the array per lookup made n lookups cost n^2 (composition
 * entries and exits, parameters). */
#ifndef WEFT_GRAPH_NAME_INDEX_H
#define WEFT_GRAPH_NAME_INDEX_H

#include <stdbool.h>
#include <stdint.h>

/* Record i's name, and its tag in *tag. */
typedef const char *(*weft__name_key_fn)(const void *ctx, uint32_t i, unsigned *tag);

typedef struct weft__name_index {
    uint32_t *slots; /* record + 1; 0: empty */
    uint32_t cap;    /* a power of two, or 0 */
    uint32_t used;   /* keys held */
} weft__name_index;

#define WEFT__NAME_NONE UINT32_MAX

/* The record the key (name, tag) maps to, or WEFT__NAME_NONE. */
uint32_t weft__name_find(const weft__name_index *x, const char *name, unsigned tag, weft__name_key_fn key,
                         const void *ctx);
/* Room for one more key (grows at half full).  False: out of memory, nothing
 * changed. */
bool weft__name_reserve(weft__name_index *x, weft__name_key_fn key, const void *ctx);
/* Maps (name, tag) to record `rec`, replacing the record it mapped to.  Room
 * reserved. */
void weft__name_set(weft__name_index *x, const char *name, unsigned tag, uint32_t rec, weft__name_key_fn key,
                    const void *ctx);
void weft__name_index_free(weft__name_index *x);

#endif
