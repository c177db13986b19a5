/* Scans: inclusive and exclusive, with and without an initial value, in place,
 * generic and typed, equal to the serial scan for every partitioner, size and
 * worker count; a non-commutative operation keeps its order. */
#include "algo_test.h"

static void serial_scan(const uint64_t *in, uint64_t *out, size_t n, uint64_t init, bool has_init,
                        bool exclusive) {
    uint64_t acc = init;
    for (size_t i = 0; i < n; i++) {
        if (exclusive) {
            uint64_t x = in[i];
            out[i] = acc;
            acc += x;
        } else {
            acc = (i == 0 && !has_init) ? in[i] : acc + in[i];
            out[i] = acc;
        }
    }
}

static void check_scans(weft_executor *ex, size_t n, const weft_algo_config *cfg) {
    uint64_t *in = random_u64(n, 31 + n), *out = xmalloc(n * 8 + 8), *want = xmalloc(n * 8 + 8);
    uint64_t init = 1000;
    serial_scan(in, want, n, 0, false, false);
    ASSERT_OK(weft_parallel_inclusive_scan(ex, in, out, n, 8, NULL, add_u64, NULL, cfg));
    ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);
    ASSERT_OK(weft_u64_sum_inclusive_scan(ex, in, out, n, NULL, cfg));
    ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);

    serial_scan(in, want, n, init, true, false);
    ASSERT_OK(weft_parallel_inclusive_scan(ex, in, out, n, 8, &init, add_u64, NULL, cfg));
    ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);
    ASSERT_OK(weft_u64_sum_inclusive_scan(ex, in, out, n, &init, cfg));
    ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);

    serial_scan(in, want, n, init, true, true);
    ASSERT_OK(weft_parallel_exclusive_scan(ex, in, out, n, 8, &init, add_u64, NULL, cfg));
    ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);
    ASSERT_OK(weft_u64_sum_exclusive_scan(ex, in, out, n, init, cfg));
    ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);

    memcpy(out, in, n * 8); /* in place */
    ASSERT_OK(weft_parallel_exclusive_scan(ex, out, out, n, 8, &init, add_u64, NULL, cfg));
    ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);
    memcpy(out, in, n * 8);
    ASSERT_OK(weft_u64_sum_exclusive_scan(ex, out, out, n, init, cfg));
    ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);
    free(in), free(out), free(want);
}

TEST(scans_equal_the_serial_scan_for_every_partitioner_size_and_worker_count) {
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (size_t s = 0; s < NSMALL; s++)
            for (size_t c = 0; c < NCONFIGS; c++) check_scans(ex, SMALL_SIZES[s], &CONFIGS[c]);
        weft_executor_destroy(ex);
    }
}

TEST(scans_of_ten_million_equal_the_serial_scan) {
    weft_executor *ex = make_executor(2);
    check_scans(ex, big_size(), NULL);
    weft_algo_config guided = { .partitioner = WEFT_PARTITION_GUIDED, .chunk = 0, .max_tasks = 0 };
    check_scans(ex, big_size(), &guided);
    weft_executor_destroy(ex);
}

TEST(scan_keeps_the_order_of_a_non_commutative_matrix_product) {
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (size_t s = 0; s < NSMALL; s++) {
            size_t n = SMALL_SIZES[s];
            mat2 *m = random_mats(n, 77 + n), *out = xmalloc(n * sizeof *m + 1), init = { 2, 7, 1, 8 };
            for (size_t c = 0; c < NCONFIGS; c++) {
                ASSERT_OK(weft_parallel_inclusive_scan(ex, m, out, n, sizeof *m, &init, mat2_op, NULL, &CONFIGS[c]));
                mat2 acc = init;
                for (size_t i = 0; i < n; i++) {
                    acc = mat2_mul(acc, m[i]);
                    ASSERT_TRUE(mat2_eq(out[i], acc));
                }
                ASSERT_OK(weft_parallel_exclusive_scan(ex, m, out, n, sizeof *m, &init, mat2_op, NULL, &CONFIGS[c]));
                acc = init;
                for (size_t i = 0; i < n; i++) {
                    ASSERT_TRUE(mat2_eq(out[i], acc));
                    acc = mat2_mul(acc, m[i]);
                }
            }
            free(m), free(out);
        }
        weft_executor_destroy(ex);
    }
}

TEST(float_scan_gives_the_same_bits_on_every_run_and_worker_count) {
    size_t n = 100003;
    double *in = xmalloc(n * sizeof *in), *first = xmalloc(n * sizeof *in), *out = xmalloc(n * sizeof *in);
    uint64_t s = 3;
    for (size_t i = 0; i < n; i++) in[i] = (double)(test_rand(&s) >> 11) * 0x1p-40 - 1000.0;
    bool have = false;
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (int r = 0; r < 4; r++) {
            ASSERT_OK(weft_double_sum_inclusive_scan(ex, in, out, n, NULL, NULL));
            if (!have) memcpy(first, out, n * sizeof *out), have = true;
            ASSERT_TRUE(memcmp(first, out, n * sizeof *out) == 0);
            ASSERT_OK(weft_parallel_inclusive_scan(ex, in, out, n, sizeof *in, NULL, add_double, NULL, NULL));
            ASSERT_TRUE(memcmp(first, out, n * sizeof *out) == 0);
        }
        weft_executor_destroy(ex);
    }
    free(in), free(first), free(out);
}
