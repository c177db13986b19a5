/* Distributed flows: data flow across ranks, caching, failures, errors. */
#include <string.h>

#include "mpi_util.h"

static int add_one(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx; (void)arg;
    *(long *)bufs[0] += 1;
    return 0;
}

/* x (owned by rank 0) is incremented by a task on every rank in turn, via a
 * per-rank accumulator: each step reads x and writes the next rank's slot. */
static int copy_plus_one(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx; (void)arg;
    *(long *)bufs[1] = *(const long *)bufs[0] + 1;
    return 0;
}

TEST(chain_across_ranks_gives_the_serial_result) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "chain", &st);
    ASSERT_OK(st);
    long slot = 0;
    weft_mpi_data *d = calloc((size_t)size, sizeof *d);
    for (int r = 0; r < size; r++) d[r] = weft_mpi_data_register(f, r == rank ? &slot : NULL, sizeof slot, r);
    int steps = 3 * size + 1;
    for (int s = 0; s < steps; s++) {
        weft_mpi_data from = d[s % size], to = d[(s + 1) % size];
        ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = copy_plus_one, .name = "step",
            .access = MPI_ACC({ from, WEFT_MPI_R }, { to, WEFT_MPI_W }), .naccess = 2 }));
    }
    ASSERT_OK(weft_mpi_run(ex, f));
    /* Step s leaves s + 1 in slot (s + 1) % size: each slot holds its last write. */
    long want = 0;
    for (int s = 0; s < steps; s++)
        if ((s + 1) % size == rank) want = s + 1;
    ASSERT_EQ(slot, want);
    weft_mpi_stats ms;
    ASSERT_OK(weft_mpi_flow_stats(f, &ms));
    /* Each step reads the value the previous step wrote on another rank. */
    ASSERT_EQ(mpi_test_sum(ms.messages_sent), size > 1 ? (uint64_t)steps : 0);
    ASSERT_EQ(mpi_test_sum(ms.messages_received), size > 1 ? (uint64_t)steps : 0);
    ASSERT_EQ(mpi_test_sum(ms.tasks_run), (uint64_t)steps);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    free(d);
    weft_executor_destroy(ex);
    MPI_Finalize();
}
