/* Sorts: generic and typed, equal to qsort's order on random inputs with many
 * duplicates, sorted, reversed and constant inputs; the stable sorts keep equal
 * keys in input order. */
#include "algo_test.h"

static int qcmp_u64(const void *a, const void *b) { return cmp_u64(a, b, NULL); }

static bool sorted_same(const uint64_t *got, const uint64_t *in, size_t n) {
    uint64_t *ref = xmalloc(n * 8 + 8);
    memcpy(ref, in, n * 8);
    qsort(ref, n, 8, qcmp_u64);
    bool same = n == 0 || memcmp(ref, got, n * 8) == 0;
    free(ref);
    return same;
}

/* Shapes: random, few distinct values, sorted, reversed, constant. */
static uint64_t *make_input(size_t n, int shape, uint64_t seed) {
    uint64_t *v = random_u64(n, seed);
    for (size_t i = 0; i < n; i++) {
        if (shape == 1) v[i] %= 5;
        if (shape == 2) v[i] = i;
        if (shape == 3) v[i] = n - i;
        if (shape == 4) v[i] = 9;
    }
    return v;
}

static void check_sorts(weft_executor *ex, size_t n, const weft_algo_config *cfg) {
    for (int shape = 0; shape < 5; shape++) {
        uint64_t *in = make_input(n, shape, 100 + n), *v = xmalloc(n * 8 + 8);
        memcpy(v, in, n * 8);
        ASSERT_OK(weft_parallel_sort(ex, v, n, 8, cmp_u64, NULL, cfg));
        if (!sorted_same(v, in, n)) TEST_FAIL_("generic sort, n=%zu shape=%d", n, shape);
        memcpy(v, in, n * 8);
        ASSERT_OK(weft_u64_sort(ex, v, n, cfg));
        if (!sorted_same(v, in, n)) TEST_FAIL_("typed sort, n=%zu shape=%d", n, shape);
        memcpy(v, in, n * 8);
        ASSERT_OK(weft_u64_stable_sort(ex, v, n, cfg));
        if (!sorted_same(v, in, n)) TEST_FAIL_("typed stable sort, n=%zu shape=%d", n, shape);
        free(in), free(v);
    }
}

TEST(sorts_match_qsort_for_every_size_shape_and_worker_count) {
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (size_t s = 0; s < NSMALL; s++) check_sorts(ex, SMALL_SIZES[s], NULL);
        check_sorts(ex, 200003, NULL);
        weft_algo_config three = { .partitioner = WEFT_PARTITION_STATIC, .chunk = 0, .max_tasks = 3 };
        check_sorts(ex, 100019, &three);
        weft_executor_destroy(ex);
    }
}

TEST(typed_sort_of_ten_million_doubles_with_duplicates_is_sorted) {
    weft_executor *ex = make_executor(2);
    size_t n = big_size();
    double *v = xmalloc(n * sizeof *v), *ref = xmalloc(n * sizeof *v);
    uint64_t s = 8;
    for (size_t i = 0; i < n; i++) v[i] = ref[i] = (double)(test_rand(&s) % (n / 4 + 1)) - 1000.5;
    ASSERT_OK(weft_double_sort(ex, v, n, NULL));
    for (size_t i = 1; i < n; i++)
        if (v[i - 1] > v[i]) TEST_FAIL_("not sorted at %zu", i);
    /* The same multiset: the stable sort (another algorithm) gives the same array. */
    ASSERT_OK(weft_double_stable_sort(ex, ref, n, NULL));
    ASSERT_TRUE(memcmp(v, ref, n * sizeof *v) == 0);
    free(v), free(ref);
    weft_executor_destroy(ex);
}

/* Stability: records (key, seq) sorted by key only. */
typedef struct rec { uint32_t key, seq; } rec;

static int cmp_key(const void *a, const void *b, void *arg) {
    (void)arg;
    uint32_t x = ((const rec *)a)->key, y = ((const rec *)b)->key;
    return (x > y) - (x < y);
}
#define REC_LT(a, b) ((a).key < (b).key)
WEFT_ALGO_SORT(rec, rec, REC_LT)

static void check_stable(const rec *r, size_t n) {
    for (size_t i = 1; i < n; i++) {
        if (r[i - 1].key > r[i].key) TEST_FAIL_("keys out of order at %zu", i);
        if (r[i - 1].key == r[i].key && r[i - 1].seq > r[i].seq) TEST_FAIL_("equal keys reordered at %zu", i);
    }
}

TEST(stable_sorts_keep_equal_keys_in_input_order) {
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        size_t sizes[] = { 0, 1, 2, 3, 101, 8191, 100003, big_size() / 20 };
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k];
            rec *r = xmalloc(n * sizeof *r + 1), *t = xmalloc(n * sizeof *r + 1);
            uint64_t s = 4 + n;
            for (size_t i = 0; i < n; i++) r[i] = (rec){ (uint32_t)(test_rand(&s) % 17), (uint32_t)i };
            memcpy(t, r, n * sizeof *r);
            ASSERT_OK(weft_parallel_stable_sort(ex, t, n, sizeof *t, cmp_key, NULL, NULL));
            check_stable(t, n);
            memcpy(t, r, n * sizeof *r);
            ASSERT_OK(rec_stable_sort(ex, t, n, NULL));
            check_stable(t, n);
            memcpy(t, r, n * sizeof *r);
            ASSERT_OK(rec_sort(ex, t, n, NULL)); /* unstable: keys in order only */
            for (size_t i = 1; i < n; i++) ASSERT_LE(t[i - 1].key, t[i].key);
            free(r), free(t);
        }
        weft_executor_destroy(ex);
    }
}

TEST(every_typed_instance_sorts_reduces_and_scans) {
    weft_executor *ex = make_executor(2);
    enum { N = 30011 };
    static float f[N];
    static int32_t i32[N], o32[N];
    static int64_t i64[N];
    for (size_t i = 0; i < N; i++) {
        f[i] = (float)((i * 7919) % N) - 100.0f;
        i32[i] = (int32_t)((i * 104729) % 1000) - 500;
        i64[i] = (int64_t)((i * 15485863) % 100000) - 50000;
    }
    ASSERT_OK(weft_float_sort(ex, f, N, NULL));
    ASSERT_OK(weft_i64_stable_sort(ex, i64, N, NULL));
    for (size_t i = 1; i < N; i++) ASSERT_TRUE(f[i - 1] <= f[i] && i64[i - 1] <= i64[i]);
    int32_t sum = 0, want = 0;
    for (size_t i = 0; i < N; i++) want += i32[i];
    ASSERT_OK(weft_i32_sum_reduce(ex, i32, N, &sum, NULL));
    ASSERT_EQ(sum, want);
    ASSERT_OK(weft_i32_sum_exclusive_scan(ex, i32, o32, N, 5, NULL));
    ASSERT_EQ(o32[0], 5);
    ASSERT_EQ(o32[N - 1] + i32[N - 1], want + 5);
    ASSERT_OK(weft_i32_sort(ex, i32, N, NULL));
    for (size_t i = 1; i < N; i++) ASSERT_LE(i32[i - 1], i32[i]);
    weft_executor_destroy(ex);
}
