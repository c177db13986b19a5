/* Session 47's hunt in the algorithms: what a Taskflow user porting loops,
 * reductions, scans and sorts would do, checked against the promises of
 * weft/algo.h. */
#include "algo_test.h"

#include <stdlib.h>
#include <string.h>

/* ---- chunk state stays within weft/algo.h's bound ---------------------------
 *
 * "a chunk size that would make more than 65536 chunks, or chunk state above
 * 16 MiB in all (...), is raised to make that many, but never fewer than 64
 * chunks".  The largest block weft allocates during a call is watched through
 * the allocator hook. */

static atomic_size_t biggest_block;

static void *track_alloc(void *ctx, size_t size) {
    (void)ctx;
    size_t b = atomic_load(&biggest_block);
    while (size > b && !atomic_compare_exchange_weak(&biggest_block, &b, size)) {
    }
    return malloc(size);
}
static void track_free(void *ctx, void *p, size_t size) {
    (void)ctx, (void)size;
    free(p);
}
static void *track_realloc(void *ctx, void *p, size_t old_size, size_t size) {
    (void)ctx, (void)old_size;
    size_t b = atomic_load(&biggest_block);
    while (size > b && !atomic_compare_exchange_weak(&biggest_block, &b, size)) {
    }
    return realloc(p, size);
}

enum { BIG_ACC = 256 * 1024, SCAN_ACC = 64 * 1024 };

/* A reduction's value: the count of elements, and the rest of a big accumulator
 * (a histogram, say) that the body clears. */
static void count_body(size_t lo, size_t hi, void *acc, void *arg) {
    memset(acc, 0, *(size_t *)arg);
    *(size_t *)acc = hi - lo;
}
static void count_op(void *acc, const void *x, void *arg) {
    (void)arg;
    *(size_t *)acc += *(const size_t *)x;
}
static void count_scan(size_t lo, size_t hi, void *acc, bool has_acc, void *arg) {
    (void)arg;
    if (!has_acc) memset(acc, 0, SCAN_ACC);
    *(size_t *)acc += hi - lo;
}
static void one_map(const void *in, void *out, void *arg) {
    (void)in, (void)arg;
    memset(out, 0, BIG_ACC);
    *(size_t *)out = 1;
}

TEST(reductions_and_scans_with_big_accumulators_keep_chunk_state_within_16_mib_under_every_partitioner) {
    weft_set_allocator(&(weft_allocator){ track_alloc, track_realloc, track_free, NULL });
    const weft_partitioner parts[] = { WEFT_PARTITION_AUTO, WEFT_PARTITION_STATIC, WEFT_PARTITION_DYNAMIC,
                                       WEFT_PARTITION_GUIDED };
    const unsigned workers[] = { 2, 16 };
    const size_t n = 1000000, mib16 = (size_t)16 << 20;
    size_t *acc = xmalloc(BIG_ACC);
    unsigned char *in = calloc(20000, 1);
    ASSERT_TRUE(in != NULL);
    for (size_t w = 0; w < 2; w++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers[w] }, NULL);
        ASSERT_TRUE(ex != NULL);
        for (size_t k = 0; k < 4; k++) {
            for (size_t chunk = 0; chunk < 2; chunk++) {
                weft_algo_config cfg = { .partitioner = parts[k], .chunk = chunk };
                /* reduce_range: a 256 KiB value a chunk; 64 chunks are 16 MiB. */
                size_t bytes = BIG_ACC;
                atomic_store(&biggest_block, 0);
                memset(acc, 0, BIG_ACC);
                ASSERT_OK(weft_parallel_reduce_range(ex, n, BIG_ACC, acc, count_body, count_op, &bytes, &cfg));
                ASSERT_EQ(acc[0], n);
                if (atomic_load(&biggest_block) > mib16 + 4096)
                    TEST_FAIL_("reduce_range, partitioner %d chunk %zu, %u workers: a block of %zu bytes (16 MiB: %zu)",
                               (int)parts[k], chunk, workers[w], atomic_load(&biggest_block), mib16);
                /* transform_reduce: a value and a scratch value a chunk. */
                atomic_store(&biggest_block, 0);
                memset(acc, 0, BIG_ACC);
                ASSERT_OK(weft_parallel_transform_reduce(ex, in, 20000, 1, BIG_ACC, acc, one_map, count_op, NULL,
                                                         &cfg));
                ASSERT_EQ(acc[0], 20000);
                if (atomic_load(&biggest_block) > 2 * mib16 + 4096)
                    TEST_FAIL_("transform_reduce, partitioner %d chunk %zu, %u workers: a block of %zu bytes",
                               (int)parts[k], chunk, workers[w], atomic_load(&biggest_block));
                /* scan_range: four 64 KiB slots a chunk; 64 chunks are 16 MiB. */
                atomic_store(&biggest_block, 0);
                bytes = SCAN_ACC;
                ASSERT_OK(weft_parallel_scan_range(ex, n, SCAN_ACC, NULL, count_body, count_scan, count_op, &bytes,
                                                   &cfg));
                if (atomic_load(&biggest_block) > mib16 + 2 * SCAN_ACC) /* plus a copy of init and the flags */
                    TEST_FAIL_("scan_range, partitioner %d chunk %zu, %u workers: a block of %zu bytes (16 MiB: %zu)",
                               (int)parts[k], chunk, workers[w], atomic_load(&biggest_block), mib16);
            }
        }
        weft_executor_destroy(ex);
    }
    free(in);
    free(acc);
    weft_set_allocator(NULL);
}
