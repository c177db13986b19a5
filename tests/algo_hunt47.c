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

/* ---- probes that found nothing (kept: cheap and deterministic) ------------- */

/* Merge rounds over an odd number of runs (max_tasks 3, 5, 7 on 8 workers: a
 * run without a partner in each round), on duplicates, sorted and reversed
 * input, generic and typed, stable and not. */
typedef struct krec { unsigned key, idx; } krec;
static int krec_cmp(const void *a, const void *b, void *arg) {
    (void)arg;
    const krec *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}
#define KREC_LT(a, b) ((a).key < (b).key)
WEFT_ALGO_SORT(krec, krec, KREC_LT)

static void check_sorted(const krec *v, size_t n, bool stable, const char *what, unsigned mt, int shape) {
    for (size_t i = 1; i < n; i++) {
        if (v[i - 1].key > v[i].key) TEST_FAIL_("%s, max_tasks %u, shape %d, n %zu: unsorted at %zu", what, mt, shape, n, i);
        if (stable && v[i - 1].key == v[i].key && v[i - 1].idx > v[i].idx)
            TEST_FAIL_("%s, max_tasks %u, shape %d, n %zu: ties out of order at %zu", what, mt, shape, n, i);
    }
}

TEST(sorts_with_odd_task_counts_merge_every_run_on_duplicates_sorted_and_reversed_input) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 8 }, NULL);
    ASSERT_TRUE(ex != NULL);
    const size_t sizes[] = { 4096, 4097, 12289 };
    krec *v[4];
    for (size_t si = 0; si < 3; si++) {
        size_t n = sizes[si];
        for (int k = 0; k < 4; k++) v[k] = xmalloc(n * sizeof(krec));
        for (unsigned mt = 3; mt <= 7; mt += 2)
            for (int shape = 0; shape < 4; shape++) {
                uint64_t s = 77 + mt;
                for (size_t i = 0; i < n; i++) {
                    unsigned r = (unsigned)test_rand(&s);
                    unsigned key = shape == 0 ? r % 5 : shape == 1 ? (unsigned)i : shape == 2 ? (unsigned)(n - i) : r;
                    v[0][i] = (krec){ key, (unsigned)i };
                }
                for (int k = 1; k < 4; k++) memcpy(v[k], v[0], n * sizeof(krec));
                weft_algo_config cfg = { .max_tasks = mt };
                ASSERT_OK(weft_parallel_sort(ex, v[0], n, sizeof(krec), krec_cmp, NULL, &cfg));
                ASSERT_OK(weft_parallel_stable_sort(ex, v[1], n, sizeof(krec), krec_cmp, NULL, &cfg));
                ASSERT_OK(krec_sort(ex, v[2], n, &cfg));
                ASSERT_OK(krec_stable_sort(ex, v[3], n, &cfg));
                check_sorted(v[0], n, true, "weft_parallel_sort", mt, shape); /* generic: stable too */
                check_sorted(v[1], n, true, "weft_parallel_stable_sort", mt, shape);
                check_sorted(v[2], n, false, "typed sort", mt, shape);
                check_sorted(v[3], n, true, "typed stable sort", mt, shape);
            }
        for (int k = 0; k < 4; k++) free(v[k]);
    }
    weft_executor_destroy(ex);
}

/* An exclusive scan in place (out == in) with a non-commutative operation,
 * around the 8192-element chunks, under every partitioner, on 1 to 4 workers;
 * and transform_reduce of a non-commutative product through a map. */
static void u64_to_mat(const void *in, void *out, void *arg) {
    (void)arg;
    uint64_t x = *(const uint64_t *)in;
    *(mat2 *)out = (mat2){ x | 1, x >> 5, x >> 9, (x >> 13) | 1 };
}

TEST(in_place_exclusive_scans_and_transform_reduces_of_a_matrix_product_keep_serial_order) {
    const size_t sizes[] = { 0, 1, 2, 8191, 8192, 8193, 40000 };
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = WORKERS[w] }, NULL);
        ASSERT_TRUE(ex != NULL);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (size_t c = 0; c < NCONFIGS; c++) {
                size_t n = sizes[si];
                uint64_t *raw = random_u64(n, 1000 + n);
                mat2 *v = xmalloc(n * sizeof *v), *want = xmalloc(n * sizeof *v), init = { 3, 5, 7, 11 }, acc = init;
                for (size_t i = 0; i < n; i++) u64_to_mat(&raw[i], &v[i], NULL);
                for (size_t i = 0; i < n; i++) want[i] = acc, acc = mat2_mul(acc, v[i]);
                ASSERT_OK(weft_parallel_exclusive_scan(ex, v, v, n, sizeof *v, &init, mat2_op, NULL, &CONFIGS[c]));
                for (size_t i = 0; i < n; i++)
                    if (!mat2_eq(v[i], want[i]))
                        TEST_FAIL_("exclusive scan in place, n %zu, config %zu, %u workers: wrong at %zu", n, c, WORKERS[w], i);
                mat2 got = init;
                ASSERT_OK(weft_parallel_transform_reduce(ex, raw, n, sizeof *raw, sizeof got, &got, u64_to_mat, mat2_op, NULL,
                                                         &CONFIGS[c]));
                if (!mat2_eq(got, acc)) TEST_FAIL_("transform_reduce, n %zu, config %zu, %u workers", n, c, WORKERS[w]);
                free(raw), free(v), free(want);
            }
        weft_executor_destroy(ex);
    }
}

/* ---- accumulators aligned for SIMD types on every path ------------------------
 *
 * weft/algo.h: the values a call keeps itself are aligned to 64 bytes.  The
 * one-task scan (one worker, max_tasks 1, or n within one chunk) kept its
 * slots in a 16-aligned stack buffer: an accumulator landed at 16 mod 32 or
 * mod 64 depending on the caller's stack, and a typed scan of __m256d
 * faulted on its aligned load (SIGSEGV).  The calls are made at four stack
 * depths, 16 bytes apart, so that a 16-aligned buffer is misaligned for one
 * of them at least. */

typedef struct v8 {
    _Alignas(64) double d[8];
} v8;

static atomic_int misaligned;

static void check_aligned(const void *p) {
    if ((uintptr_t)p % 64 != 0) atomic_fetch_add(&misaligned, 1);
}
static void v8_reduce(size_t lo, size_t hi, void *acc, void *arg) {
    (void)arg;
    check_aligned(acc);
    v8 *a = acc;
    for (int k = 0; k < 8; k++) a->d[k] = (double)(hi - lo);
}
static void v8_scan(size_t lo, size_t hi, void *acc, bool has_acc, void *arg) {
    check_aligned(acc);
    double *out = arg;
    v8 *a = acc;
    if (!has_acc)
        for (int k = 0; k < 8; k++) a->d[k] = 0;
    for (size_t i = lo; i < hi; i++) out[i] = a->d[0] += 1;
}
static void v8_op(void *acc, const void *x, void *arg) {
    (void)arg;
    check_aligned(acc);
    check_aligned(x);
    v8 *a = acc;
    const v8 *b = x;
    for (int k = 0; k < 8; k++) a->d[k] += b->d[k];
}
static void v8_map(const void *in, void *out, void *arg) {
    (void)arg;
    check_aligned(out);
    v8 *o = out;
    for (int k = 0; k < 8; k++) o->d[k] = *(const double *)in;
}

static v8 v8_add(v8 a, v8 b) {
    for (int k = 0; k < 8; k++) a.d[k] += b.d[k];
    return a;
}
#define V8_ADD(a, b) v8_add((a), (b))
WEFT_ALGO_SCAN(v8s, v8, V8_ADD)
WEFT_ALGO_REDUCE(v8r, v8, V8_ADD)

/* The calls, from a frame `depth` * 16 bytes further down the stack. */
static __attribute__((noinline)) void v8_calls_at(weft_executor *ex, const weft_algo_config *cfg, size_t n,
                                                   unsigned depth) {
    volatile char pad[16 * depth + 1];
    pad[0] = 0;
    double *out = xmalloc(n * sizeof *out), *in = xmalloc(n * sizeof *in);
    v8 *vin = aligned_alloc(64, n * sizeof(v8)), *vout = aligned_alloc(64, n * sizeof(v8));
    ASSERT_TRUE(vin && vout);
    for (size_t i = 0; i < n; i++) {
        in[i] = 1;
        for (int k = 0; k < 8; k++) vin[i].d[k] = 1;
    }
    v8 res = { { 0 } };
    ASSERT_OK(weft_parallel_scan_range(ex, n, sizeof(v8), NULL, v8_reduce, v8_scan, v8_op, out, cfg));
    ASSERT_EQ(out[n - 1], n);
    ASSERT_OK(weft_parallel_reduce_range(ex, n, sizeof(v8), &res, v8_reduce, v8_op, NULL, cfg));
    ASSERT_EQ(res.d[7], n);
    res = (v8){ { 0 } };
    ASSERT_OK(weft_parallel_transform_reduce(ex, in, n, sizeof *in, sizeof(v8), &res, v8_map, v8_op, NULL, cfg));
    ASSERT_EQ(res.d[3], n);
    /* the typed macros, whose operation the compiler may give aligned loads */
    ASSERT_OK(v8s_inclusive_scan(ex, vin, vout, n, NULL, cfg));
    ASSERT_EQ(vout[n - 1].d[5], n);
    ASSERT_OK(v8s_exclusive_scan(ex, vin, vout, n, (v8){ { 0 } }, cfg));
    ASSERT_EQ(vout[n - 1].d[5], n - 1);
    res = (v8){ { 0 } };
    ASSERT_OK(v8r_reduce(ex, vin, n, &res, cfg));
    ASSERT_EQ(res.d[0], n);
    free(out), free(in), free(vin), free(vout);
    (void)pad[0];
}

TEST(accumulators_of_a_64_byte_aligned_type_are_aligned_on_one_task_and_on_several) {
    const unsigned workers[] = { 1, 2 };
    const size_t sizes[] = { 1, 100, 8192, 30000 };
    for (size_t w = 0; w < 2; w++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers[w] }, NULL);
        ASSERT_TRUE(ex != NULL);
        for (unsigned mt = 0; mt < 2; mt++)
            for (size_t si = 0; si < 4; si++)
                for (unsigned depth = 0; depth < 4; depth++) {
                    weft_algo_config cfg = { .max_tasks = mt };
                    atomic_store(&misaligned, 0);
                    v8_calls_at(ex, &cfg, sizes[si], depth);
                    if (atomic_load(&misaligned))
                        TEST_FAIL_("%u workers, max_tasks %u, n %zu, 16 x %u bytes down the stack: %d accumulators "
                                   "not aligned to 64",
                                   workers[w], mt, sizes[si], depth, atomic_load(&misaligned));
                }
        weft_executor_destroy(ex);
    }
}
