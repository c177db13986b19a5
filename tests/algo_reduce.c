/* Reductions: equal to the serial fold for every partitioner, size and worker
 * count; non-commutative operations keep their order; floating-point results are
 * the same bits on every run; min / max / find_if return the first match. */
#include "algo_test.h"

TEST(reduce_sum_equals_the_serial_sum_for_every_partitioner_size_and_worker_count) {
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (size_t s = 0; s < NSMALL; s++) {
            size_t n = SMALL_SIZES[s];
            uint64_t *v = random_u64(n, n), want = 42;
            for (size_t i = 0; i < n; i++) want += v[i];
            for (size_t c = 0; c < NCONFIGS; c++) {
                uint64_t got = 42, typed = 42;
                ASSERT_OK(weft_parallel_reduce(ex, v, n, 8, &got, add_u64, NULL, &CONFIGS[c]));
                ASSERT_OK(weft_u64_sum_reduce(ex, v, n, &typed, &CONFIGS[c]));
                ASSERT_EQ(got, want);
                ASSERT_EQ(typed, want);
            }
            free(v);
        }
        weft_executor_destroy(ex);
    }
}

TEST(reduce_keeps_the_order_of_a_non_commutative_matrix_product) {
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (size_t s = 0; s < NSMALL; s++) {
            size_t n = SMALL_SIZES[s];
            mat2 *m = random_mats(n, 11 + n), want = { 3, 1, 4, 1 };
            for (size_t i = 0; i < n; i++) want = mat2_mul(want, m[i]);
            for (size_t c = 0; c < NCONFIGS; c++) {
                mat2 got = { 3, 1, 4, 1 };
                ASSERT_OK(weft_parallel_reduce(ex, m, n, sizeof *m, &got, mat2_op, NULL, &CONFIGS[c]));
                ASSERT_TRUE(mat2_eq(got, want));
            }
            free(m);
        }
        weft_executor_destroy(ex);
    }
}

static double *random_doubles(size_t n, uint64_t seed) {
    double *v = xmalloc(n * sizeof *v);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) v[i] = (double)(test_rand(&s) >> 11) * 0x1p-53 * 1e6 - 5e5;
    return v;
}

/* Auto, static and dynamic chunking do not depend on the worker count; guided does,
 * so it is compared on one executor across runs. */
TEST(float_reduction_gives_the_same_bits_on_every_run_and_worker_count) {
    size_t n = big_size() / 10 + 17;
    double *v = random_doubles(n, 99);
    const weft_algo_config cfgs[] = { { .partitioner = WEFT_PARTITION_AUTO, .chunk = 0, .max_tasks = 0 }, { .partitioner = WEFT_PARTITION_STATIC, .chunk = 0, .max_tasks = 0 },
                                      { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 0, .max_tasks = 0 }, { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 100, .max_tasks = 0 } };
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        double first = 0;
        bool have = false;
        for (size_t w = 0; w < NWORKERS; w++) {
            weft_executor *ex = make_executor(WORKERS[w]);
            for (int r = 0; r < 5; r++) {
                double got = 0, typed = 0;
                ASSERT_OK(weft_parallel_reduce(ex, v, n, sizeof *v, &got, add_double, NULL, &cfgs[c]));
                ASSERT_OK(weft_double_sum_reduce(ex, v, n, &typed, &cfgs[c]));
                if (!have) first = got, have = true;
                ASSERT_TRUE(memcmp(&got, &first, sizeof got) == 0);
                ASSERT_TRUE(memcmp(&typed, &first, sizeof got) == 0);
            }
            weft_executor_destroy(ex);
        }
    }
    weft_executor *ex = make_executor(3);
    weft_algo_config guided = { .partitioner = WEFT_PARTITION_GUIDED, .chunk = 0, .max_tasks = 0 };
    double g0 = 0;
    ASSERT_OK(weft_parallel_reduce(ex, v, n, sizeof *v, &g0, add_double, NULL, &guided));
    for (int r = 0; r < 10; r++) {
        double g = 0;
        ASSERT_OK(weft_parallel_reduce(ex, v, n, sizeof *v, &g, add_double, NULL, &guided));
        ASSERT_TRUE(memcmp(&g, &g0, sizeof g) == 0);
    }
    weft_executor_destroy(ex);
    free(v);
}

static void square_to_u64(const void *in, void *out, void *arg) {
    (void)arg;
    uint32_t x = *(const uint32_t *)in;
    *(uint64_t *)out = (uint64_t)x * x;
}

TEST(transform_reduce_of_ten_million_equals_the_serial_loop) {
    weft_executor *ex = make_executor(2);
    size_t n = big_size();
    uint32_t *v = xmalloc(n * sizeof *v);
    uint64_t s = 5, want = 0;
    for (size_t i = 0; i < n; i++) v[i] = (uint32_t)test_rand(&s), want += (uint64_t)v[i] * v[i];
    for (size_t c = 0; c < NCONFIGS; c++) {
        if (CONFIGS[c].chunk == 1) continue;
        uint64_t got = 0;
        ASSERT_OK(weft_parallel_transform_reduce(ex, v, n, 4, 8, &got, square_to_u64, add_u64, NULL, &CONFIGS[c]));
        ASSERT_EQ(got, want);
    }
    free(v);
    weft_executor_destroy(ex);
}

static bool is_target(const void *e, void *arg) { return *(const uint64_t *)e == *(const uint64_t *)arg; }

TEST(min_max_and_find_if_return_the_first_match_like_a_serial_scan) {
    weft_executor *ex = make_executor(4);
    for (size_t s = 0; s < NSMALL; s++) {
        size_t n = SMALL_SIZES[s];
        uint64_t *v = random_u64(n, 21 + n);
        for (size_t i = 0; i < n; i++) v[i] %= 50; /* many ties */
        size_t lo = n, hi = n;
        for (size_t i = 0; i < n; i++) {
            if (lo == n || v[i] < v[lo]) lo = i;
            if (hi == n || v[i] > v[hi]) hi = i;
        }
        uint64_t target = 17;
        size_t found = n;
        for (size_t i = 0; i < n && found == n; i++)
            if (v[i] == target) found = i;
        for (size_t c = 0; c < NCONFIGS; c++) {
            size_t got = 12345;
            ASSERT_OK(weft_parallel_min_element(ex, v, n, 8, cmp_u64, NULL, &got, &CONFIGS[c]));
            ASSERT_EQ(got, lo);
            ASSERT_OK(weft_parallel_max_element(ex, v, n, 8, cmp_u64, NULL, &got, &CONFIGS[c]));
            ASSERT_EQ(got, hi);
            ASSERT_OK(weft_parallel_find_if(ex, v, n, 8, is_target, &target, &got, &CONFIGS[c]));
            ASSERT_EQ(got, found);
            uint64_t absent = 1000;
            ASSERT_OK(weft_parallel_find_if(ex, v, n, 8, is_target, &absent, &got, &CONFIGS[c]));
            ASSERT_EQ(got, n);
        }
        free(v);
    }
    weft_executor_destroy(ex);
}

/* The range form: the body sees [lo, hi) and writes the chunk's value. */
static void count_range(size_t lo, size_t hi, void *acc, void *arg) {
    (void)arg;
    *(uint64_t *)acc = hi - lo;
}

TEST(reduce_range_covers_the_range_once_in_chunks) {
    weft_executor *ex = make_executor(3);
    for (size_t s = 0; s < NSMALL; s++) {
        for (size_t c = 0; c < NCONFIGS; c++) {
            uint64_t got = 0;
            ASSERT_OK(weft_parallel_reduce_range(ex, SMALL_SIZES[s], 8, &got, count_range, add_u64, NULL, &CONFIGS[c]));
            ASSERT_EQ(got, SMALL_SIZES[s]);
        }
    }
    weft_executor_destroy(ex);
}
