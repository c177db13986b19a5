/* METG (Task Bench's minimum effective task granularity) of weft::mpi: the
 * smallest task at which a distributed run keeps 50% efficiency.
 *
 *     mpirun -np R bench_mpi_metg_weft [columns_per_rank] [steps] [workers] [cores]
 *
 * The graph is Task Bench's stencil_1d: `steps` rows of R x columns_per_rank
 * tasks; task (t, c) reads cells c-1, c, c+1 of row t-1 and writes cell c of
 * row t (two buffers per column, so a row reads the previous one while it
 * writes its own); columns are dealt to ranks in blocks, so each block edge
 * crosses ranks every step.  Each task spins for a fixed number of loop
 * iterations (calibrated on this machine).  Efficiency = (tasks x task time)
 * / (run time x cores), with `cores` the cores the job really has (default:
 * R x workers, capped by the machine's; pass it on an oversubscribed box).
 * For task times from 1 us to 10 ms it prints the best of 3 reruns of a built
 * flow and two efficiencies: against the cores (Task Bench's, which a machine
 * shared with other jobs caps below 1), and against this run's own rate at the
 * coarsest task (`vs_coarse`: what the runtime's overhead costs, whatever
 * share of the machine the job gets).  METG: the smallest task time at which
 * vs_coarse is >= 50%, and the same for the cores' efficiency if reached. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "weft.h"
#include "weft/mpi.h"

static long iters_per_task;

static long spin(long n) {
    volatile long x = 0;
    for (long i = 0; i < n; i++) x += i;
    return x;
}

static int task(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx;
    size_t n = (size_t)(uintptr_t)arg; /* inputs, then the output */
    long s = spin(iters_per_task) & 1;
    for (size_t i = 0; i < n; i++) s += *(const long *)bufs[i];
    *(long *)bufs[n] = s;
    return 0;
}

/* Loop iterations per microsecond: measured on rank 0 (best of 5) while the
 * other ranks sleep (with 4 ranks on 2 cores, measuring everywhere at once
 * would halve the rate and the tasks), then shared. */
static double calibrate(int rank) {
    double best = 0;
    if (rank == 0)
        for (int r = 0; r < 5; r++) {
            double t0 = MPI_Wtime();
            spin(2000000);
            double rate = 2000000 / ((MPI_Wtime() - t0) * 1e6);
            if (rate > best) best = rate;
        }
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (int done = 0; !done;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done) nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    }
    MPI_Bcast(&best, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return best;
}

int main(int argc, char **argv) {
    int per = argc > 1 ? atoi(argv[1]) : 4, steps = argc > 2 ? atoi(argv[2]) : 40;
    int workers = argc > 3 ? atoi(argv[3]) : 1, provided = 0, rank = 0, size = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long hw = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = argc > 4 ? atoi(argv[4]) : (size * workers < hw ? size * workers : (int)hw);
    int width = per * size;
    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = (unsigned)workers }, &st);
    if (!ex) MPI_Abort(MPI_COMM_WORLD, 1);
    double rate = calibrate(rank);
    long *cells = calloc(2 * (size_t)width, sizeof *cells);
    weft_mpi_data *d = calloc(2 * (size_t)width, sizeof *d);
    static const double grains_us[] = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000 };
    enum { NG = sizeof grains_us / sizeof *grains_us };
    double run_s[NG] = { 0 };
    unsigned long long msgs_of[NG] = { 0 };
    if (rank == 0)
        printf("metg: %d ranks x %d workers on %d cores, stencil_1d %d columns x %d steps (%d tasks)\n", size, workers,
               cores, width, steps, width * steps);
    for (size_t g = 0; g < sizeof grains_us / sizeof *grains_us; g++) {
        iters_per_task = (long)(grains_us[g] * rate);
        weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "metg", &st);
        if (!f) MPI_Abort(MPI_COMM_WORLD, 1);
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < width; c++) {
                int o = c / per;
                d[b * width + c] = weft_mpi_data_register(f, o == rank ? &cells[b * width + c] : NULL, sizeof(long), o);
            }
        for (int t = 0; t < steps && st == WEFT_OK; t++) {
            weft_mpi_data *in = d + (t % 2) * width, *out = d + ((t + 1) % 2) * width;
            for (int c = 0; c < width && st == WEFT_OK; c++) {
                weft_mpi_access acc[4];
                size_t n = 0;
                for (int k = c - 1; k <= c + 1; k++)
                    if (k >= 0 && k < width) acc[n++] = (weft_mpi_access){ in[k], WEFT_MPI_R };
                acc[n] = (weft_mpi_access){ out[c], WEFT_MPI_W };
                st = weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = task, .arg = (void *)(uintptr_t)n, .access = acc,
                                                               .naccess = n + 1 });
            }
        }
        double best = 1e30;
        for (int r = 0; r < 4 && st == WEFT_OK; r++) { /* the first run seals: not counted */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            st = weft_mpi_run(ex, f);
            double t = MPI_Wtime() - t0;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r > 0 && t < best) best = t;
        }
        weft_mpi_stats ms = { 0 };
        (void)weft_mpi_flow_stats(f, &ms);
        unsigned long long msgs = ms.messages_sent;
        MPI_Allreduce(MPI_IN_PLACE, &msgs, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        (void)weft_mpi_flow_destroy(f);
        if (st != WEFT_OK) break;
        run_s[g] = best;
        msgs_of[g] = msgs;
    }
    double metg = -1, metg_cores = -1, coarse = grains_us[NG - 1] / run_s[NG - 1]; /* work per second */
    for (size_t g = 0; g < NG && st == WEFT_OK; g++) {
        double eff = (double)width * steps * grains_us[g] * 1e-6 / (run_s[g] * cores);
        double rel = grains_us[g] / run_s[g] / coarse;
        if (rel >= 0.5 && metg < 0) metg = grains_us[g];
        if (eff >= 0.5 && metg_cores < 0) metg_cores = grains_us[g];
        if (rank == 0)
            printf("grain_us=%g run_ms=%.3f efficiency=%.2f vs_coarse=%.2f messages=%llu\n", grains_us[g],
                   run_s[g] * 1e3, eff, rel, msgs_of[g]);
    }
    if (rank == 0 && st == WEFT_OK) {
        printf("METG(50%% of the coarse rate) = %g us\n", metg);
        if (metg_cores > 0) printf("METG(50%% of %d cores) = %g us\n", cores, metg_cores);
        else printf("METG(50%% of %d cores): not reached (the job never had the cores to itself)\n", cores);
    }
    free(cells);
    free(d);
    weft_executor_destroy(ex);
    MPI_Finalize();
    return st == WEFT_OK ? 0 : 1;
}
