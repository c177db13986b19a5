/* A distributed work pool with weft::mpi: independent tasks, all submitted on
 * rank 0, spread over every rank by stealing.
 *
 *     mpirun -np 4 ./mpi_pool [tasks] [task_us] [workers] [sleep|spin] [steal|nosteal]
 *
 * Each task mixes its input (a seed) for about task_us microseconds, either
 * on the CPU (spin: a fixed number of rounds, calibrated on rank 0) or off it
 * (sleep: then a few rounds).  Rank 0 submits them all; idle ranks steal
 * batches (the inputs travel with them) and send the outputs back.  Rank 0
 * checks every output against a serial run and prints the time, and each
 * rank what it ran and stole.  `nosteal` runs the same with balancing off (all
 * on rank 0): the imbalanced baseline.  Exits 0 when the outputs are right.
 * docs/guide-mpi.md, "Work pools"; bench/mpi/README.md has figures.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "weft.h"
#include "weft/mpi.h"

typedef struct job {
    uint64_t seed;
    uint32_t rounds, sleep_us;
} job;

static uint64_t work(const job *j) {
    uint64_t x = j->seed;
    for (uint32_t r = 0; r < j->rounds; r++) {
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 29;
    }
    return x;
}

static int run_job(weft_ctx *cx, const void *in, size_t in_size, void *out, size_t out_size, void *arg) {
    (void)cx, (void)in_size, (void)out_size, (void)arg;
    const job *j = in;
    if (j->sleep_us) nanosleep(&(struct timespec){ .tv_nsec = (long)j->sleep_us * 1000 }, NULL);
    *(uint64_t *)out = work(j);
    return 0;
}

static const weft_mpi_pool_fn fns[] = { run_job };

/* Rounds of work() that take about `us` microseconds here. */
static uint32_t calibrate(int us) {
    uint32_t rounds = 1 << 16;
    for (;;) {
        double t0 = MPI_Wtime();
        volatile uint64_t sink = work(&(job){ .seed = 1, .rounds = rounds });
        (void)sink;
        double t = MPI_Wtime() - t0;
        if (t > 2e-3) return (uint32_t)((double)rounds * us * 1e-6 / t) + 1;
        rounds *= 2;
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 400, us = argc > 2 ? atoi(argv[2]) : 1000;
    int workers = argc > 3 ? atoi(argv[3]) : 2;
    int spin = argc > 4 && strcmp(argv[4], "spin") == 0, steal = !(argc > 5 && strcmp(argv[5], "nosteal") == 0);
    if (n < 0 || us < 0 || us > 999999 || workers < 1) return 2;
    int provided = 0, rank = 0, size = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = (unsigned)workers }, &st);
    weft_mpi_pool *p = ex ? weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){
                                .fns = fns, .nfns = 1, .no_steal = !steal }, &st) : NULL;
    if (!p) {
        fprintf(stderr, "rank %d: %s %s\n", rank, weft_strerror(st), weft_mpi_flow_error_message(NULL));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    job *jobs = calloc((size_t)n + 1, sizeof *jobs);
    uint64_t *out = calloc((size_t)n + 1, sizeof *out);
    if (rank == 0) {
        uint32_t rounds = spin ? calibrate(us) : 64;
        for (int i = 0; i < n; i++) {
            jobs[i] = (job){ .seed = (uint64_t)i * 0x9e3779b97f4a7c15ULL + 1, .rounds = rounds,
                             .sleep_us = spin ? 0 : (uint32_t)us };
            if ((st = weft_mpi_pool_submit(p, run_job, &jobs[i], sizeof jobs[i], &out[i], sizeof out[i])) != WEFT_OK)
                break;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (st == WEFT_OK) st = weft_mpi_pool_run(ex, p);
    double t = MPI_Wtime() - t0;
    if (st != WEFT_OK) fprintf(stderr, "rank %d: run: %s: %s\n", rank, weft_strerror(st), weft_mpi_pool_error_message(p));

    int bad = 0;
    if (rank == 0)
        for (int i = 0; i < n; i++) bad += out[i] != work(&jobs[i]);
    weft_mpi_pool_figures pf = { 0 };
    (void)weft_mpi_pool_stats(p, &pf);
    unsigned long long mine[3] = { pf.tasks_run, pf.tasks_stolen, pf.messages_sent }, all[3];
    MPI_Reduce(mine, all, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    unsigned long long *ran = rank == 0 ? calloc((size_t)size, sizeof *ran) : NULL;
    MPI_Gather(&mine[0], 1, MPI_UNSIGNED_LONG_LONG, ran, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    int ok = st == WEFT_OK && bad == 0;
    if (rank == 0) {
        printf("pool: %d tasks of %d us (%s) on rank 0, %d ranks x %d workers, %s: %.1f ms, stolen %llu, "
               "messages %llu, ran per rank:", n, us, spin ? "spin" : "sleep", size, workers,
               steal ? "stealing" : "no stealing", t * 1e3, all[1], all[2]);
        for (int r = 0; r < size; r++) printf(" %llu", ran[r]);
        printf(": %s\n", ok ? "PASS" : "FAIL");
    }
    free(ran);
    free(jobs);
    free(out);
    (void)weft_mpi_pool_destroy(p);
    weft_executor_destroy(ex);
    MPI_Finalize();
    return ok ? 0 : 1;
}
