/* Distributed flows under awkward use (adversarial round 35): taskflows
 * edited before they are distributed, and runs started from the wrong
 * thread. */
#include <string.h>

#include "mpi_util.h"

/* ---- a taskflow with an erased task ------------------------------------------- */

static long h35_out[4];

/* Task i's output from its predecessor's (task 0 has none). */
static int h35_step(weft_ctx *cx, void *arg) {
    (void)cx;
    int i = (int)(intptr_t)arg;
    h35_out[i] = i == 0 ? 5 : h35_out[i == 2 ? 0 : 2] * 10 + i;
    return 0;
}

static int h35_rank_of(weft_task t, void *arg) {
    int size = *(const int *)arg;
    return (int)((weft_task_index(t) + 1) % (size_t)size);
}

static void *h35_output_of(weft_task t, size_t *size, void *arg) {
    (void)arg;
    *size = sizeof h35_out[0];
    return &h35_out[weft_task_index(t)];
}

/* Erasing a task leaves a hole in the indices (0, 2, 3 here): the taskflow
 * is still an ordinary static one and distributes as such (it used to be
 * refused with WEFT_EINVAL, "task indices out of range: task '(unnamed)'"). */
TEST(a_taskflow_with_an_erased_task_is_distributed_like_any_other) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_taskflow *tf = weft_taskflow_create("erased", NULL);
    weft_task t[4];
    for (int i = 0; i < 4; i++) t[i] = weft_emplace(tf, h35_step, (void *)(intptr_t)i);
    ASSERT_OK(weft_precede(t[0], t[2]));
    ASSERT_OK(weft_precede(t[2], t[3]));
    ASSERT_OK(weft_precede(t[1], t[3]));
    ASSERT_OK(weft_task_erase(t[1]));
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "erased", &st);
    ASSERT_OK(st);
    ASSERT_OK(weft_mpi_insert_taskflow(f, tf, &(weft_mpi_taskflow_map){ h35_rank_of, h35_output_of, &size }));
    ASSERT_STREQ(weft_mpi_flow_error_message(f), "");
    ASSERT_EQ(weft_mpi_flow_num_tasks(f), 3);
    for (int run = 0; run < 3; run++) {
        memset(h35_out, 0, sizeof h35_out);
        ASSERT_OK(weft_mpi_run(ex, f));
        /* Each task's rank holds its output: 5, then 52, then 523. */
        if (rank == 1 % size) ASSERT_EQ(h35_out[0], 5);
        if (rank == 3 % size) ASSERT_EQ(h35_out[2], 52);
        if (rank == 4 % size) ASSERT_EQ(h35_out[3], 523);
        ASSERT_EQ(h35_out[1], 0);
    }
    weft_mpi_stats ms;
    ASSERT_OK(weft_mpi_flow_stats(f, &ms));
    ASSERT_EQ(mpi_test_sum(ms.tasks_run), 3);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- runs started from a worker ------------------------------------------------- */

static weft_mpi_flow *h35_flow;
static weft_mpi_pool *h35_pool;
static int h35_flow_st, h35_pool_st;
static char h35_msg[256];

static int h35_run_inside(weft_ctx *cx, void *arg) {
    (void)arg;
    h35_flow_st = weft_mpi_run(weft_ctx_executor(cx), h35_flow);
    snprintf(h35_msg, sizeof h35_msg, "%s", weft_mpi_flow_error_message(h35_flow));
    h35_pool_st = weft_mpi_pool_run(weft_ctx_executor(cx), h35_pool);
    return 0;
}

static int h35_add(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    *(long *)bufs[0] += 1;
    return 0;
}

static int h35_square(weft_ctx *cx, const void *in, size_t n, void *out, size_t m, void *arg) {
    (void)cx, (void)n, (void)m, (void)arg;
    *(long *)out = *(const long *)in * *(const long *)in;
    return 0;
}

/* At MPI_THREAD_FUNNELED a worker is never MPI's main thread, and the run
 * used to say so (WEFT_EINVAL, "call weft_mpi_* from the main thread")
 * instead of the status mpi.h documents for a run from a worker of its
 * executor.  Every rank makes the mistake, so none waits for another. */
TEST(a_run_from_a_worker_of_its_executor_is_edeadlk_at_funneled) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;
    h35_flow = weft_mpi_flow_create(MPI_COMM_WORLD, "inside", &st);
    ASSERT_OK(st);
    static const weft_mpi_pool_fn fns[] = { h35_square };
    h35_pool = weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = fns, .nfns = 1 }, &st);
    ASSERT_OK(st);
    long v = 1, in = 3, out = 0;
    weft_mpi_data d = weft_mpi_data_register(h35_flow, rank == 0 ? &v : NULL, sizeof v, 0);
    for (int r = 0; r < size; r++)
        ASSERT_OK(weft_mpi_insert(h35_flow, &(weft_mpi_task_desc){ .fn = h35_add, .access = MPI_ACC({ d, WEFT_MPI_RW }),
                                                                   .naccess = 1, .rank_set = true, .rank = r }));
    ASSERT_OK(weft_mpi_pool_submit(h35_pool, h35_square, &in, sizeof in, &out, sizeof out));
    h35_flow_st = h35_pool_st = 99;
    ASSERT_OK(weft_silent_async(ex, h35_run_inside, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_STATUS(h35_flow_st, WEFT_EDEADLK);
    ASSERT_TRUE(strstr(h35_msg, "worker") != NULL);
    ASSERT_STATUS(h35_pool_st, WEFT_EDEADLK);
    /* Nothing ran; from the main thread both run as usual. */
    ASSERT_EQ(v, 1);
    ASSERT_OK(weft_mpi_run(ex, h35_flow));
    if (rank == 0) ASSERT_EQ(v, 1 + size);
    ASSERT_OK(weft_mpi_pool_run(ex, h35_pool));
    ASSERT_EQ(out, 9);
    ASSERT_OK(weft_mpi_flow_destroy(h35_flow));
    ASSERT_OK(weft_mpi_pool_destroy(h35_pool));
    weft_executor_destroy(ex);
    MPI_Finalize();
}
