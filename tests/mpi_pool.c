/* Distributed work pools (weft_mpi_pool): every task runs exactly once
 * somewhere, outputs come home, uneven submissions end balanced by stealing,
 * a failure fails every rank. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_util.h"

/* Input: {seed, n} then n bytes; output: out_size bytes derived from both. */
typedef struct mix_in {
    uint64_t seed;
    uint32_t n, out_size;
} mix_in;

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static void mix_serial(const void *in, size_t in_size, unsigned char *out, size_t out_size) {
    const mix_in *m = in;
    uint64_t h = m->seed;
    for (size_t i = sizeof *m; i < in_size; i++) h = mix64(h + ((const unsigned char *)in)[i]);
    for (size_t i = 0; i < out_size; i++) out[i] = (unsigned char)(mix64(h + i) >> 7);
}

static int mix(weft_ctx *cx, const void *in, size_t in_size, void *out, size_t out_size, void *arg) {
    (void)cx; (void)arg;
    mix_serial(in, in_size, out, out_size);
    return 0;
}

/* Sleeps (off the CPU: many ranks share two cores) for the input's
 * microseconds; fails with code 7 when asked to. */
typedef struct nap_in {
    uint32_t us, fail;
    uint64_t value;
} nap_in;

static int nap(weft_ctx *cx, const void *in, size_t in_size, void *out, size_t out_size, void *arg) {
    (void)cx; (void)in_size; (void)out_size; (void)arg;
    const nap_in *n = in;
    nanosleep(&(struct timespec){ .tv_nsec = (long)n->us * 1000 }, NULL);
    *(uint64_t *)out = n->value * 3 + 1;
    return n->fail ? 7 : 0;
}

static const weft_mpi_pool_fn test_fns[] = { mix, nap };

static weft_mpi_pool *new_pool(void) {
    weft_status st = WEFT_OK;
    weft_mpi_pool *p = weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = test_fns, .nfns = 2 }, &st);
    if (!p) TEST_FAIL_("pool: %s: %s", weft_strerror(st), weft_mpi_flow_error_message(NULL));
    return p;
}

/* Each rank submits a different number of tasks with inputs and outputs of
 * many sizes (0 included); twice, to reuse the pool.  Outputs equal a serial
 * computation, and the ranks ran exactly as many tasks as were submitted. */
TEST(pool_runs_every_task_once_with_the_serial_results) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_mpi_pool *p = new_pool();
    for (int run = 0; run < 2; run++) {
        int n = 40 + 70 * rank + 13 * run;
        unsigned char **in = calloc((size_t)n, sizeof *in), **out = calloc((size_t)n, sizeof *out);
        size_t *in_size = calloc((size_t)n, sizeof *in_size), *out_size = calloc((size_t)n, sizeof *out_size);
        for (int i = 0; i < n; i++) {
            uint64_t r = mix64((uint64_t)(rank * 100003 + i * 7 + run) + 1);
            in_size[i] = sizeof(mix_in) + r % 301;
            out_size[i] = (r >> 20) % 97;
            in[i] = malloc(in_size[i]);
            out[i] = malloc(out_size[i] + 1);
            *(mix_in *)in[i] = (mix_in){ .seed = r };
            for (size_t k = sizeof(mix_in); k < in_size[i]; k++) in[i][k] = (unsigned char)(r >> (k % 56));
            memset(out[i], 0xAB, out_size[i] + 1);
            ASSERT_OK(weft_mpi_pool_submit(p, mix, in[i], in_size[i], out_size[i] ? out[i] : NULL, out_size[i]));
        }
        ASSERT_OK(weft_mpi_pool_run(ex, p));
        weft_mpi_pool_figures pf;
        ASSERT_OK(weft_mpi_pool_stats(p, &pf));
        ASSERT_EQ(pf.tasks_submitted, (uint64_t)n);
        ASSERT_EQ(mpi_test_sum(pf.tasks_run), mpi_test_sum((uint64_t)n));
        ASSERT_EQ(mpi_test_sum(pf.tasks_stolen), mpi_test_sum(pf.tasks_given));
        ASSERT_EQ(pf.runs, (uint64_t)run + 1);
        unsigned char want[128];
        for (int i = 0; i < n; i++) {
            mix_serial(in[i], in_size[i], want, out_size[i]);
            ASSERT_TRUE(memcmp(out[i], want, out_size[i]) == 0);
            ASSERT_EQ(out[i][out_size[i]], 0xAB); /* nothing written past the output */
            free(in[i]);
            free(out[i]);
        }
        free(in); free(out); free(in_size); free(out_size);
    }
    ASSERT_OK(weft_mpi_pool_destroy(p));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* All the work submitted on rank 0 (300 tasks of 1 ms): every other rank
 * steals some and runs some, and the outputs all come home. */
TEST(pool_all_work_on_rank_0_ends_spread_over_every_rank) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_mpi_pool *p = new_pool();
    enum { N = 300 };
    static uint64_t out[N];
    if (rank == 0)
        for (int i = 0; i < N; i++)
            ASSERT_OK(weft_mpi_pool_submit(p, nap, &(nap_in){ .us = 1000, .value = (uint64_t)i }, sizeof(nap_in),
                                           &out[i], sizeof out[i]));
    double t0 = MPI_Wtime();
    ASSERT_OK(weft_mpi_pool_run(ex, p));
    double wall = MPI_Wtime() - t0;
    weft_mpi_pool_figures pf;
    ASSERT_OK(weft_mpi_pool_stats(p, &pf));
    printf("rank %d: ran %llu, stole %llu, gave %llu, requests %llu (%llu empty), %.0f ms\n", rank,
           (unsigned long long)pf.tasks_run, (unsigned long long)pf.tasks_stolen, (unsigned long long)pf.tasks_given,
           (unsigned long long)pf.steal_requests, (unsigned long long)pf.steals_empty, wall * 1e3);
    ASSERT_TRUE(pf.tasks_run > 0);
    if (rank != 0) ASSERT_EQ(pf.tasks_stolen, pf.tasks_run);
    ASSERT_EQ(mpi_test_sum(pf.tasks_run), (uint64_t)N);
    ASSERT_EQ(mpi_test_sum(pf.tasks_stolen), mpi_test_sum(pf.tasks_given));
    if (rank == 0)
        for (int i = 0; i < N; i++) ASSERT_EQ(out[i], (uint64_t)i * 3 + 1);
    ASSERT_OK(weft_mpi_pool_destroy(p));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* One task of 200, all on rank 0, returns 7: every rank's run fails with the
 * same message, wherever the task ran; the pool can run again. */
TEST(pool_failing_task_fails_the_run_on_every_rank) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_mpi_pool *p = new_pool();
    enum { N = 200 };
    static uint64_t out[N];
    if (rank == 0)
        for (int i = 0; i < N; i++)
            ASSERT_OK(weft_mpi_pool_submit(p, nap, &(nap_in){ .us = 500, .fail = i == 150, .value = (uint64_t)i },
                                           sizeof(nap_in), &out[i], sizeof out[i]));
    ASSERT_EQ(weft_mpi_pool_run(ex, p), WEFT_ETASK);
    const char *msg = weft_mpi_pool_error_message(p);
    printf("rank %d: %s\n", rank, msg);
    ASSERT_TRUE(strstr(msg, "pool task #150 submitted on rank 0") != NULL);
    ASSERT_TRUE(strstr(msg, "with code 7") != NULL);
    /* The same text everywhere. */
    char all[256] = { 0 };
    snprintf(all, sizeof all, "%s", msg);
    MPI_Bcast(all, sizeof all, MPI_CHAR, 0, MPI_COMM_WORLD);
    ASSERT_TRUE(strcmp(all, msg) == 0);
    /* A run after a failure starts clean. */
    if (rank == 1) ASSERT_OK(weft_mpi_pool_submit(p, nap, &(nap_in){ .value = 5 }, sizeof(nap_in), &out[0], 8));
    ASSERT_OK(weft_mpi_pool_run(ex, p));
    if (rank == 1) ASSERT_EQ(out[0], 16u);
    ASSERT_TRUE(weft_mpi_pool_error_message(p)[0] == '\0');
    ASSERT_OK(weft_mpi_pool_destroy(p));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

static int not_listed(weft_ctx *cx, const void *in, size_t in_size, void *out, size_t out_size, void *arg) {
    (void)cx; (void)in; (void)in_size; (void)out; (void)out_size; (void)arg;
    return 0;
}

TEST(pool_bad_arguments_give_a_status) {
    mpi_test_init(NULL);
    weft_status st = WEFT_OK;
    ASSERT_TRUE(weft_mpi_pool_create(MPI_COMM_WORLD, NULL, &st) == NULL);
    ASSERT_EQ(st, WEFT_EINVAL);
    ASSERT_TRUE(weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .nfns = 1 }, &st) == NULL);
    ASSERT_EQ(st, WEFT_EINVAL);
    ASSERT_TRUE(weft_mpi_pool_create(MPI_COMM_NULL, &(weft_mpi_pool_config){ .fns = test_fns, .nfns = 2 }, &st) ==
                NULL);
    ASSERT_EQ(st, WEFT_EINVAL);
    weft_mpi_pool *p = new_pool();
    uint64_t x = 0;
    ASSERT_EQ(weft_mpi_pool_submit(NULL, mix, &x, sizeof x, &x, sizeof x), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_pool_submit(p, not_listed, &x, sizeof x, &x, sizeof x), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_pool_submit(p, NULL, &x, sizeof x, &x, sizeof x), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_pool_submit(p, mix, NULL, 8, &x, sizeof x), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_pool_submit(p, mix, &x, sizeof x, NULL, 8), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_pool_submit(p, mix, &x, (size_t)1 << 31, &x, 8), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_pool_run(NULL, NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_pool_stats(p, NULL), WEFT_EINVAL);
    ASSERT_TRUE(weft_mpi_pool_error_message(NULL) != NULL);
    /* An empty pool runs (nothing to do, on every rank). */
    ASSERT_OK(weft_mpi_pool_run(NULL, p));
    ASSERT_OK(weft_mpi_pool_destroy(p));
    ASSERT_OK(weft_mpi_pool_destroy(NULL));
    MPI_Finalize();
}
