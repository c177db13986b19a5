/* The block cache: blocks come back as given, by exact size and alignment, only
 * up to the limit, and never while a user allocator is installed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <stdlib.h>

#include <weft.h>

#include "core/alloc.h"

#define MB ((size_t)1 << 20)

TEST(block_cache_returns_a_block_of_the_same_size_and_alignment_only) {
    void *p = weft__alloc_aligned(MB, 64);
    ASSERT_TRUE(p != NULL);
    ((char *)p)[100] = 42;
    ASSERT_TRUE(weft__block_cache_give(p, MB, 64));
    ASSERT_TRUE(weft__block_cache_take(2 * MB, 64) == NULL);
    ASSERT_TRUE(weft__block_cache_take(MB, 4096) == NULL);
    void *q = weft__block_cache_take(MB, 64);
    ASSERT_TRUE(q == p);
    ASSERT_EQ(((char *)q)[100], 42); /* as it was given (past the list link) */
    ASSERT_TRUE(weft__block_cache_take(MB, 64) == NULL);
    weft__free_aligned(q, MB, 64);
}

TEST(block_cache_keeps_nothing_when_its_limit_is_zero) {
    setenv("WEFT_BLOCK_CACHE_MB", "0", 1); /* read at the cache's first use */
    void *p = weft__alloc_aligned(MB, 64);
    ASSERT_FALSE(weft__block_cache_give(p, MB, 64));
    weft__free_aligned(p, MB, 64);
}

TEST(block_cache_stops_at_its_limit) {
    setenv("WEFT_BLOCK_CACHE_MB", "3", 1);
    void *b[4];
    int kept = 0;
    for (int i = 0; i < 4; i++) {
        b[i] = weft__alloc_aligned(MB, 64);
        if (weft__block_cache_give(b[i], MB, 64)) kept++;
        else weft__free_aligned(b[i], MB, 64);
    }
    ASSERT_EQ(kept, 3);
    weft__block_cache_flush();
    ASSERT_TRUE(weft__block_cache_take(MB, 64) == NULL);
}

static void *my_alloc(void *ctx, size_t n) { return malloc(n); }
static void *my_realloc(void *ctx, void *p, size_t o, size_t n) { return realloc(p, n); }
static void my_free(void *ctx, void *p, size_t n) { free(p); }

TEST(block_cache_keeps_nothing_from_a_user_allocator_and_flushes_on_change) {
    void *p = weft__alloc_aligned(MB, 64);
    ASSERT_TRUE(weft__block_cache_give(p, MB, 64));
    weft_set_allocator(&(weft_allocator){my_alloc, my_realloc, my_free, NULL});
    ASSERT_TRUE(weft__block_cache_take(MB, 64) == NULL); /* flushed by the change */
    void *q = weft__alloc_aligned(MB, 64);
    ASSERT_FALSE(weft__block_cache_give(q, MB, 64));
    weft__free_aligned(q, MB, 64);
    weft_set_allocator(NULL);
}

/* A size goes to the bucket that already holds it, not to an empty one before
 * it, so it never takes two of the 16 buckets: after A is taken from the first
 * bucket, a second B still joins the first B, and 15 other sizes all find room. */
TEST(block_cache_keeps_each_size_in_one_bucket) {
    weft__block_cache_flush();
    const size_t K = 64 * 1024;
    void *a = weft__alloc_aligned(K, 64), *b1 = weft__alloc_aligned(2 * K, 64), *b2 = weft__alloc_aligned(2 * K, 64);
    ASSERT_TRUE(weft__block_cache_give(a, K, 64));
    ASSERT_TRUE(weft__block_cache_give(b1, 2 * K, 64));
    ASSERT_TRUE(weft__block_cache_take(K, 64) == a);
    weft__free_aligned(a, K, 64);
    ASSERT_TRUE(weft__block_cache_give(b2, 2 * K, 64));
    for (size_t i = 0; i < 15; i++) {
        size_t size = (3 + i) * K;
        void *c = weft__alloc_aligned(size, 64);
        if (!weft__block_cache_give(c, size, 64)) {
            weft__free_aligned(c, size, 64);
            TEST_FAIL_("size %zu found no bucket", size);
        }
    }
    weft__block_cache_flush();
}
