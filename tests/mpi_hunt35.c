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
