/* Helpers of the MPI tests (tests/mpi*.c), each run under mpirun by ctest
 * (tests/mpi.cmake: `mpirun -np 2` and `-np 4`, some also 1 and 3). */
#ifndef WEFT_TEST_MPI_UTIL_H
#define WEFT_TEST_MPI_UTIL_H

#include <mpi.h>

#include "harness.h"
#include "weft.h"
#include "weft/mpi.h"

/* Initialises MPI at MPI_THREAD_FUNNELED; returns this rank, *size the count. */
static inline int mpi_test_init(int *size) {
    int provided = 0, rank = 0;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (size) MPI_Comm_size(MPI_COMM_WORLD, size);
    return rank;
}

/* A small executor: many ranks share two cores. */
static inline weft_executor *mpi_test_executor(void) {
    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2 }, &st);
    if (!ex) TEST_FAIL_("executor: %s", weft_strerror(st));
    return ex;
}

/* Sums a per-rank count over all ranks. */
static inline uint64_t mpi_test_sum(uint64_t v) {
    unsigned long long in = v, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return out;
}

/* The one-handle access list of a task. */
#define MPI_ACC(...) ((const weft_mpi_access[]){ __VA_ARGS__ })
#define MPI_NACC(...) (sizeof((const weft_mpi_access[]){ __VA_ARGS__ }) / sizeof(weft_mpi_access))

#endif
