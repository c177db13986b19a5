/* Session 42: seed 003's "Work-Stealing in Distributed Memory (MPI)" as a
 * checker reads weft's mpi.h: a steal takes ceil(unstarted / ranks) of the
 * victim's tasks, at most batch_max; no_steal keeps every task where it was
 * submitted, every request then answered "nothing left". */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "mpi_util.h"

static int nap42(weft_ctx *cx, const void *in, size_t in_size, void *out, size_t out_size, void *arg) {
    (void)cx; (void)in_size; (void)out_size; (void)arg;
    uint64_t v = *(const uint64_t *)in;
    nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL); /* off the CPU: ranks share two cores */
    *(uint64_t *)out = v * 5 + 2;
    return 0;
}
static const weft_mpi_pool_fn fns42[] = { nap42 };

TEST(pool_steals_take_at_most_batch_max_and_a_ranks_share_and_no_steal_takes_none) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    enum { N = 120 };
    static uint64_t in[N], out[N];
    static const struct { size_t batch_max; bool no_steal; } cfg[] = { { 1, false }, { 3, false }, { 0, false }, { 0, true } };
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        weft_status st = WEFT_OK;
        weft_mpi_pool *p = weft_mpi_pool_create(
            MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = fns42, .nfns = 1, .batch_max = cfg[c].batch_max, .no_steal = cfg[c].no_steal },
            &st);
        if (!p) TEST_FAIL_("pool: %s", weft_strerror(st));
        if (rank == 0)
            for (int i = 0; i < N; i++) {
                in[i] = (uint64_t)i;
                out[i] = 0;
                ASSERT_OK(weft_mpi_pool_submit(p, nap42, &in[i], sizeof in[i], &out[i], sizeof out[i]));
            }
        ASSERT_OK(weft_mpi_pool_run(ex, p));
        weft_mpi_pool_figures pf;
        ASSERT_OK(weft_mpi_pool_stats(p, &pf));
        uint64_t ok_steals = pf.steal_requests - pf.steals_empty;
        uint64_t per_steal = cfg[c].batch_max ? cfg[c].batch_max : (N + (uint64_t)size - 1) / (uint64_t)size;
        if (pf.tasks_stolen > per_steal * ok_steals)
            TEST_FAIL_("config %zu, rank %d: %llu tasks stolen in %llu steals, more than %llu a steal", c, rank,
                       (unsigned long long)pf.tasks_stolen, (unsigned long long)ok_steals, (unsigned long long)per_steal);
        ASSERT_LE(pf.steals_empty, pf.steal_requests);
        if (cfg[c].no_steal) {
            ASSERT_EQ(pf.tasks_stolen, 0);
            ASSERT_EQ(pf.tasks_given, 0);
            ASSERT_EQ(pf.steals_empty, pf.steal_requests);
            ASSERT_EQ(pf.tasks_run, rank == 0 ? (uint64_t)N : 0);
        }
        if (rank != 0) ASSERT_EQ(pf.tasks_run, pf.tasks_stolen);
        ASSERT_EQ(pf.tasks_submitted, rank == 0 ? (uint64_t)N : 0);
        ASSERT_EQ(mpi_test_sum(pf.tasks_run), (uint64_t)N);
        ASSERT_EQ(mpi_test_sum(pf.tasks_stolen), mpi_test_sum(pf.tasks_given));
        ASSERT_EQ(pf.runs, 1);
        if (rank == 0)
            for (int i = 0; i < N; i++) ASSERT_EQ(out[i], (uint64_t)i * 5 + 2);
        ASSERT_OK(weft_mpi_pool_destroy(p));
    }
    weft_executor_destroy(ex);
    MPI_Finalize();
}
