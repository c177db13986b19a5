/* Scans: inclusive and exclusive, with and without an initial value, in place,
 * generic and typed, equal to the serial scan for every partitioner, size and
 * worker count; a non-commutative operation keeps its order. */
#include "algo_test.h"
#include "graph2_util.h" /* install_failing_allocator */

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

/* ---- the single-pass scan: one-pass bodies, look-back, bits, failures ---------- */

/* The scan's definition, computed serially: chunks of `chunk` elements, prefix(k) =
 * prefix(k-1) + (the chunk's left-to-right sum), each chunk scanned from
 * prefix(k-1).  Every worker count must give exactly these bits. */
static void chunked_model(const double *in, double *out, size_t n, size_t chunk, bool exclusive, double init) {
    double prefix = init;
    bool has = exclusive; /* exclusive scans have an init; inclusive ones here none */
    for (size_t lo = 0; lo < n; lo += chunk) {
        size_t hi = lo + chunk < n ? lo + chunk : n;
        double agg = in[lo], s = prefix;
        for (size_t i = lo + 1; i < hi; i++) agg += in[i];
        for (size_t i = lo; i < hi; i++) {
            if (exclusive) out[i] = s, s += in[i];
            else out[i] = s = (has || i > lo) ? s + in[i] : in[i];
        }
        prefix = has ? prefix + agg : agg;
        has = true;
    }
}

static double *random_doubles(size_t n, uint64_t seed) {
    double *v = xmalloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = (double)(test_rand(&seed) >> 11) * 0x1p-40 - 1000.0;
    return v;
}

TEST(scans_give_the_chunked_bits_on_1_to_4_workers_around_chunk_edges) {
    static const size_t sizes[] = { 0, 1, 8191, 8192, 8193, 2 * 8192, 5 * 8192 + 1, 100003 };
    size_t nmax = 100003;
    double *in = random_doubles(nmax, 5), *want = xmalloc(nmax * 8), *out = xmalloc(nmax * 8);
    for (unsigned w = 1; w <= 4; w++) {
        weft_executor *ex = make_executor(w);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            chunked_model(in, want, n, 8192, false, 0);
            ASSERT_OK(weft_double_sum_inclusive_scan(ex, in, out, n, NULL, NULL));
            ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);
            ASSERT_OK(weft_parallel_inclusive_scan(ex, in, out, n, 8, NULL, add_double, NULL, NULL));
            ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);
            chunked_model(in, want, n, 8192, true, 0.25);
            ASSERT_OK(weft_double_sum_exclusive_scan(ex, in, out, n, 0.25, NULL));
            ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);
            double init = 0.25;
            memcpy(out, in, n * 8); /* in place */
            ASSERT_OK(weft_parallel_exclusive_scan(ex, out, out, n, 8, &init, add_double, NULL, NULL));
            ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);
            /* a small explicit chunk: hundreds of chunks, many look-backs */
            weft_algo_config small = { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 97 };
            chunked_model(in, want, n, 97, false, 0);
            memcpy(out, in, n * 8);
            ASSERT_OK(weft_double_sum_inclusive_scan(ex, out, out, n, NULL, &small));
            ASSERT_TRUE(n == 0 || memcmp(out, want, n * 8) == 0);
        }
        weft_executor_destroy(ex);
    }
    free(in), free(want), free(out);
}

/* Range bodies over doubles that count what they touch: the reduce body's
 * elements, and per element how many times an output was written. */
typedef struct counted {
    const double *in;
    double *out;
    _Atomic size_t reduced;
    _Atomic unsigned char *written;
} counted;

static void counted_reduce(size_t lo, size_t hi, void *acc, void *arg) {
    counted *c = arg;
    double s = c->in[lo];
    for (size_t i = lo + 1; i < hi; i++) s += c->in[i];
    *(double *)acc = s;
    atomic_fetch_add_explicit(&c->reduced, hi - lo, memory_order_relaxed);
}
static void counted_scan(size_t lo, size_t hi, void *acc, bool has, void *arg) {
    counted *c = arg;
    double s = has ? *(double *)acc : 0;
    for (size_t i = lo; i < hi; i++) {
        c->out[i] = s = (has || i > lo) ? s + c->in[i] : c->in[i];
        atomic_fetch_add_explicit(&c->written[i], 1, memory_order_relaxed);
    }
}
static void counted_scan_reduce(size_t lo, size_t hi, void *acc, bool has, void *total, void *arg) {
    counted *c = arg;
    double s = has ? *(double *)acc : 0, t = c->in[lo];
    for (size_t i = lo; i < hi; i++) {
        if (i > lo) t += c->in[i];
        c->out[i] = s = (has || i > lo) ? s + c->in[i] : c->in[i];
        atomic_fetch_add_explicit(&c->written[i], 1, memory_order_relaxed);
    }
    *(double *)total = t;
}

static void counted_run(weft_executor *ex, counted *c, size_t n, const weft_algo_config *cfg, bool fused) {
    atomic_store(&c->reduced, 0);
    for (size_t i = 0; i < n; i++) atomic_store(&c->written[i], 0);
    if (fused)
        ASSERT_OK(weft_parallel_scan_range_fused(ex, n, sizeof(double), NULL, counted_reduce, counted_scan,
                                                 counted_scan_reduce, add_double, c, cfg));
    else
        ASSERT_OK(weft_parallel_scan_range(ex, n, sizeof(double), NULL, counted_reduce, counted_scan,
                                           add_double, c, cfg));
    for (size_t i = 0; i < n; i++) ASSERT_EQ(atomic_load(&c->written[i]), 1);
}

TEST(one_task_scan_with_a_one_pass_body_reads_each_element_once) {
    size_t n = 100003;
    double *in = random_doubles(n, 9), *want = xmalloc(n * 8);
    counted c = { .in = in, .out = xmalloc(n * 8), .written = xmalloc(n) };
    chunked_model(in, want, n, 8192, false, 0);
    weft_executor *one = make_executor(1), *two = make_executor(2);
    counted_run(one, &c, n, NULL, true);
    ASSERT_EQ(atomic_load(&c.reduced), 0); /* no second pass */
    ASSERT_TRUE(memcmp(c.out, want, n * 8) == 0);
    weft_algo_config single = { .max_tasks = 1 };
    counted_run(two, &c, n, &single, true);
    ASSERT_EQ(atomic_load(&c.reduced), 0);
    ASSERT_TRUE(memcmp(c.out, want, n * 8) == 0);
    counted_run(one, &c, n, NULL, false); /* without one: reduce, then scan */
    ASSERT_EQ(atomic_load(&c.reduced), n);
    ASSERT_TRUE(memcmp(c.out, want, n * 8) == 0);
    weft_executor_destroy(one), weft_executor_destroy(two);
    free(in), free(want), free(c.out), free((void *)c.written);
}

/* Many runs on 2-4 workers with small chunks: every element is written once,
 * whichever chunks ran in one pass, and the bits never change. */
TEST(scan_stress_loses_no_chunk_and_keeps_its_bits) {
    size_t n = 20011;
    double *in = random_doubles(n, 13), *want = xmalloc(n * 8);
    counted c = { .in = in, .out = xmalloc(n * 8), .written = xmalloc(n) };
    unsigned runs = (unsigned)test_scale(200);
    if (runs < 10) runs = 10;
    for (unsigned w = 2; w <= 4; w++) {
        weft_executor *ex = make_executor(w);
        for (unsigned r = 0; r < runs; r++) {
            size_t chunk = 1 + r % 61;
            weft_algo_config cfg = { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = chunk };
            chunked_model(in, want, n, chunk, false, 0);
            counted_run(ex, &c, n, &cfg, r % 4 != 3);
            ASSERT_TRUE(memcmp(c.out, want, n * 8) == 0);
        }
        weft_executor_destroy(ex);
    }
    free(in), free(want), free(c.out), free((void *)c.written);
}

/* A token that fires from inside the scan: the call ends (a chunk waits on its
 * predecessors, so a skipped middle chunk would hang it), says WEFT_ECANCELED,
 * and what it wrote is a prefix of whole chunks, each right. */
typedef struct cancel_at {
    weft_cancel_token *tok;
    size_t at;
} cancel_at;
static void add_u64_cancelling(void *acc, const void *x, void *arg) {
    cancel_at *c = arg;
    *(uint64_t *)acc += *(const uint64_t *)x;
    if (*(const uint64_t *)x == c->at) (void)weft_cancel_token_cancel(c->tok);
}

TEST(cancelled_scan_ends_with_a_right_prefix_of_chunks) {
    size_t n = 40 * 8192 + 5;
    uint64_t *in = xmalloc(n * 8), *out = xmalloc(n * 8);
    for (size_t i = 0; i < n; i++) in[i] = i + 1;
    for (unsigned w = 1; w <= 4; w++) {
        weft_executor *ex = make_executor(w);
        for (int exclusive = 0; exclusive < 2; exclusive++) {
            cancel_at c = { weft_cancel_token_create(NULL, NULL), 3 * 8192 + 17 };
            ASSERT_TRUE(c.tok != NULL);
            memset(out, 0xff, n * 8);
            weft_algo_config cfg = { .cancel = c.tok };
            uint64_t init = 7;
            weft_status st = exclusive
                ? weft_parallel_exclusive_scan(ex, in, out, n, 8, &init, add_u64_cancelling, &c, &cfg)
                : weft_parallel_inclusive_scan(ex, in, out, n, 8, &init, add_u64_cancelling, &c, &cfg);
            ASSERT_STATUS(st, WEFT_ECANCELED);
            uint64_t acc = init;
            size_t i = 0;
            for (; i < n && out[i] != UINT64_MAX; i++) {
                if (exclusive) ASSERT_EQ(out[i], acc);
                acc += in[i];
                if (!exclusive) ASSERT_EQ(out[i], acc);
            }
            ASSERT_TRUE(i > 3 * 8192 + 17 && i < n && i % 8192 == 0); /* whole chunks, not all */
            for (; i < n; i++) ASSERT_EQ(out[i], UINT64_MAX);
            weft_cancel_token_destroy(c.tok);
        }
        weft_executor_destroy(ex);
    }
    free(in), free(out);
}

/* Out of memory: a one-task scan of small values needs no allocation at all;
 * one that needs its per-call array says WEFT_ENOMEM, writes nothing, and the
 * next call works.  (graph2_util.h's allocator fails its fail_at-th call.) */
typedef struct big_acc { uint64_t v[12]; } big_acc; /* over the one-task form's stack slots */
static void big_add(void *acc, const void *x, void *arg) {
    (void)arg;
    for (int i = 0; i < 12; i++) ((big_acc *)acc)->v[i] += ((const big_acc *)x)->v[i];
}

TEST(scan_out_of_memory_writes_nothing_and_one_task_small_scans_need_no_memory) {
    install_failing_allocator();
    weft_executor *one = make_executor(1), *two = make_executor(2);
    size_t n = 30011;
    uint64_t *in = random_u64(n, 3), *out = xmalloc(n * 8), *want = xmalloc(n * 8);
    big_acc *bin = calloc(n, sizeof *bin), *bout = calloc(n, sizeof *bout);
    ASSERT_TRUE(bin && bout);
    serial_scan(in, want, n, 0, false, false);
    atomic_store(&calls, 0);
    atomic_store(&fail_at, 1); /* the call's first allocation fails */
    ASSERT_OK(weft_u64_sum_inclusive_scan(one, in, out, n, NULL, NULL));
    ASSERT_OK(weft_parallel_inclusive_scan(one, in, out, n, 8, NULL, add_u64, NULL, NULL));
    ASSERT_EQ(atomic_load(&calls), 0);
    ASSERT_TRUE(memcmp(out, want, n * 8) == 0);
    memset(out, 0, n * 8);
    atomic_store(&calls, 0);
    ASSERT_STATUS(weft_u64_sum_inclusive_scan(two, in, out, n, NULL, NULL), WEFT_ENOMEM);
    atomic_store(&calls, 0);
    ASSERT_STATUS(weft_parallel_inclusive_scan(two, in, out, n, 8, NULL, add_u64, NULL, NULL), WEFT_ENOMEM);
    for (size_t i = 0; i < n; i++) ASSERT_EQ(out[i], 0);
    atomic_store(&calls, 0);
    ASSERT_STATUS(weft_parallel_inclusive_scan(one, bin, bout, n, sizeof *bin, NULL, big_add, NULL, NULL),
                  WEFT_ENOMEM);
    atomic_store(&fail_at, 0);
    ASSERT_OK(weft_u64_sum_inclusive_scan(two, in, out, n, NULL, NULL));
    ASSERT_TRUE(memcmp(out, want, n * 8) == 0);
    for (size_t i = 0; i < n; i++) bin[i].v[i % 12] = i;
    ASSERT_OK(weft_parallel_inclusive_scan(one, bin, bout, n, sizeof *bin, NULL, big_add, NULL, NULL));
    big_acc acc = { { 0 } };
    for (size_t i = 0; i < n; i++) {
        big_add(&acc, &bin[i], NULL);
        ASSERT_TRUE(memcmp(&bout[i], &acc, sizeof acc) == 0);
    }
    weft_executor_destroy(one), weft_executor_destroy(two);
    weft_set_allocator(NULL);
    free(in), free(out), free(want), free(bin), free(bout);
}

TEST(inclusive_scans_in_place_equal_the_serial_scan_on_every_worker_count) {
    size_t n = 3 * 8192 + 11;
    uint64_t *in = random_u64(n, 17), *out = xmalloc(n * 8), *want = xmalloc(n * 8), init = 5;
    serial_scan(in, want, n, init, true, false);
    for (unsigned w = 1; w <= 4; w++) {
        weft_executor *ex = make_executor(w);
        memcpy(out, in, n * 8);
        ASSERT_OK(weft_parallel_inclusive_scan(ex, out, out, n, 8, &init, add_u64, NULL, NULL));
        ASSERT_TRUE(memcmp(out, want, n * 8) == 0);
        memcpy(out, in, n * 8);
        ASSERT_OK(weft_u64_sum_inclusive_scan(ex, out, out, n, &init, NULL));
        ASSERT_TRUE(memcmp(out, want, n * 8) == 0);
        weft_executor_destroy(ex);
    }
    free(in), free(out), free(want);
}

/* init may point into the output: a scan that continues from an element of
 * the array it writes (out[i] = out[k] + ...).  Range bodies reduce a chunk,
 * publish its aggregate, then look back; a chunk that looked back past every
 * predecessor to init read it while chunk 0 could be writing its outputs
 * (chunk 0 writes after it published its prefix): a race TSan reports, and a
 * wrong prefix when the read comes late.  A slow combine keeps chunk 0
 * between its aggregate and its prefix a while, so later chunks look back to
 * init often.  The scan now copies init before any body runs. */
struct into_out {
    const uint64_t *in;
    uint64_t *out;
};
static void into_reduce(size_t lo, size_t hi, void *acc, void *arg) {
    const struct into_out *a = arg;
    uint64_t s = 0;
    for (size_t i = lo; i < hi; i++) s += a->in[i];
    *(uint64_t *)acc = s;
}
static void into_scan(size_t lo, size_t hi, void *acc, bool has_acc, void *arg) {
    const struct into_out *a = arg;
    uint64_t s = has_acc ? *(uint64_t *)acc : 0;
    for (size_t i = lo; i < hi; i++) {
        s = (i == lo && !has_acc) ? a->in[i] : s + a->in[i];
        a->out[i] = s;
    }
}
static atomic_int first_add;
static void slow_add(void *acc, const void *x, void *arg) {
    (void)arg;
    /* The round's first combine (chunk 0's, the first chunk taken) takes 2 ms. */
    if (atomic_exchange(&first_add, 0)) {
        uint64_t until = now_ns() + 2000000;
        while (now_ns() < until) {
        }
    }
    *(uint64_t *)acc += *(const uint64_t *)x;
}

TEST(a_scan_whose_init_points_into_its_output_uses_the_value_before_the_call) {
    enum { N = 16 * 64, K = 5, ROUNDS = 40 };
    uint64_t *in = random_u64(N, 7), *out = xmalloc(N * 8), *want = xmalloc(N * 8);
    struct into_out a = { in, out };
    weft_algo_config cfg = { .chunk = 64 };
    weft_executor *ex = make_executor(4);
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t i = 0; i < N; i++) out[i] = 1000 + i;
        serial_scan(in, want, N, out[K], true, false);
        atomic_store(&first_add, 1);
        ASSERT_OK(weft_parallel_scan_range(ex, N, 8, &out[K], into_reduce, into_scan, slow_add, &a, &cfg));
        ASSERT_TRUE(memcmp(out, want, N * 8) == 0);
    }
    weft_executor_destroy(ex);
    /* The element scans, whose chunks never look back to init past chunk 0. */
    ex = make_executor(2);
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t i = 0; i < N; i++) out[i] = 1000 + i;
        serial_scan(in, want, N, out[K], true, false);
        ASSERT_OK(weft_parallel_inclusive_scan(ex, in, out, N, 8, &out[K], add_u64, NULL, &cfg));
        ASSERT_TRUE(memcmp(out, want, N * 8) == 0);
    }
    weft_executor_destroy(ex);
    free(in), free(out), free(want);
}

/* A scan keeps state per chunk, so its chunk count is capped as a reduction's
 * is (65536): chunk 1 over 2^20 elements took one block of ~70 MB (10^7
 * elements: 680 MB), and the result is still the serial scan's. */
static _Atomic size_t largest;
static void *track_alloc(void *ctx, size_t size) {
    (void)ctx;
    size_t was = atomic_load(&largest);
    while (size > was && !atomic_compare_exchange_weak(&largest, &was, size)) {
    }
    return malloc(size);
}

TEST(a_scan_with_chunk_1_over_a_million_elements_keeps_its_state_small) {
    weft_executor *ex = make_executor(2);
    size_t n = (size_t)1 << 20;
    uint64_t *in = random_u64(n, 5), *out = xmalloc(n * 8), *want = xmalloc(n * 8);
    serial_scan(in, want, n, 0, false, false);
    weft_set_allocator(&(weft_allocator){ .alloc = track_alloc });
    atomic_store(&largest, 0);
    weft_algo_config cfg = { .partitioner = WEFT_PARTITION_STATIC, .chunk = 1 };
    ASSERT_OK(weft_parallel_inclusive_scan(ex, in, out, n, 8, NULL, add_u64, NULL, &cfg));
    /* Destroyed before the allocator goes back: a worker may still be freeing
     * the call's shared state after the call returned, and weft_set_allocator
     * is not safe against concurrent weft work (weft/common.h; TSan saw the
     * race once in CI). */
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
    ASSERT_TRUE(memcmp(out, want, n * 8) == 0);
    size_t big = atomic_load(&largest);
    if (big > ((size_t)16 << 20)) TEST_FAIL_("the scan allocated a block of %zu bytes", big);
    free(in), free(out), free(want);
}

/* Outputs of weft_algo_stream_bytes() or more are written with streaming
 * stores (x86-64): the typed scans of 4- and 8-byte elements just past that
 * size, inclusive and exclusive, on one and two workers, give the serial
 * scan's values (floats: the chunked bits, the same as a size below it), and an
 * in-place scan of that size (never streamed) too. */
TEST(typed_scans_of_outputs_past_the_streaming_size_equal_the_serial_scan) {
    size_t bytes = weft_algo_stream_bytes();
    ASSERT_TRUE(bytes >= ((size_t)1 << 16));
    size_t n8 = bytes / 8 + 1001, n4 = bytes / 4 + 1001;
    uint64_t *in = random_u64(n8, 77), *out = xmalloc(n8 * 8), *want = xmalloc(n8 * 8);
    int32_t *in4 = xmalloc(n4 * 4), *out4 = xmalloc(n4 * 4);
    for (size_t i = 0; i < n4; i++) in4[i] = (int32_t)(i % 1000) - 500;
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        serial_scan(in, want, n8, 0, false, false);
        ASSERT_OK(weft_u64_sum_inclusive_scan(ex, in, out, n8, NULL, NULL));
        ASSERT_TRUE(memcmp(out, want, n8 * 8) == 0);
        serial_scan(in, want, n8, 7, true, true);
        ASSERT_OK(weft_u64_sum_exclusive_scan(ex, in, out, n8, 7, NULL));
        ASSERT_TRUE(memcmp(out, want, n8 * 8) == 0);
        memcpy(out, in, n8 * 8); /* in place: not streamed */
        ASSERT_OK(weft_u64_sum_exclusive_scan(ex, out, out, n8, 7, NULL));
        ASSERT_TRUE(memcmp(out, want, n8 * 8) == 0);
        /* 4-byte elements, inclusive with an init and exclusive. */
        int32_t s = 3;
        ASSERT_OK(weft_i32_sum_inclusive_scan(ex, in4, out4, n4, &s, NULL));
        for (size_t i = 0; i < n4; i++) {
            s += in4[i];
            if (out4[i] != s) TEST_FAIL_("i32 inclusive: out[%zu] = %d, want %d", i, out4[i], s);
        }
        ASSERT_OK(weft_i32_sum_exclusive_scan(ex, in4, out4, n4, 3, NULL));
        s = 3;
        for (size_t i = 0; i < n4; i++) {
            if (out4[i] != s) TEST_FAIL_("i32 exclusive: out[%zu] = %d, want %d", i, out4[i], s);
            s += in4[i];
        }
        weft_executor_destroy(ex);
    }
    free(in), free(out), free(want), free(in4), free(out4);
}
