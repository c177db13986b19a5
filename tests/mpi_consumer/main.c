/* Built against an installed weft::mpi (tests/mpi_install.sh): rank 0's value
 * reaches rank 1 through one distributed flow.  Prints PASS on rank 0. */
#include <stdio.h>

#include <mpi.h>

#include "weft.h"
#include "weft/mpi.h"

static int set(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    *(int *)bufs[0] = 41;
    return 0;
}
static int add(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    *(int *)bufs[1] = *(const int *)bufs[0] + 1;
    return 0;
}

int main(int argc, char **argv) {
    int provided = 0, rank = 0, size = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int x = 0, y = 0, last = size - 1;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "consumer", NULL);
    weft_mpi_data dx = weft_mpi_data_register(f, &x, sizeof x, 0);
    weft_mpi_data dy = weft_mpi_data_register(f, &y, sizeof y, last);
    weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = set, .access = (weft_mpi_access[]){ { dx, WEFT_MPI_W } },
                                              .naccess = 1 });
    weft_mpi_insert(f, &(weft_mpi_task_desc){
                           .fn = add, .access = (weft_mpi_access[]){ { dx, WEFT_MPI_R }, { dy, WEFT_MPI_W } },
                           .naccess = 2 });
    weft_status st = weft_mpi_run(NULL, f);
    int ok = st == WEFT_OK && (rank != last || y == 42);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) printf("%s\n", ok ? "PASS" : "FAIL");
    weft_mpi_flow_destroy(f);
    MPI_Finalize();
    return ok ? 0 : 1;
}
