/* A distributed wavefront with weft::mpi: a dynamic-programming sweep over an
 * n x n grid, cut into blocks.
 *
 *     mpirun -np 4 ./mpi_wavefront [blocks] [block_size] [workers] [repetitions]
 *
 * Cell (x, y) is half the sum of the cells above and to the left, plus a
 * weight of its own (like the recurrences of sequence alignment).  Block (i, j)
 * therefore waits for block (i-1, j) and block (i, j-1); the blocks of the
 * same anti-diagonal run in parallel.  Block columns are dealt to the ranks in
 * turn (column j on rank j mod P), so a wave crosses a rank boundary at every
 * column: each block hands its right neighbour on the next rank one message.
 * Every rank inserts the same tasks; each checks its blocks against a serial
 * sweep of the whole grid.  Exits 0 when they agree (bit for bit: the same
 * operations in the same order).  docs/guide-mpi.md points here.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "weft.h"
#include "weft/mpi.h"

static int NB, B; /* blocks per side, cells per block side */

static double weight(int x, int y) {
    uint32_t h = (uint32_t)x * 2654435761u ^ (uint32_t)y * 2246822519u;
    h ^= h >> 15;
    return (double)(h % 1000) / 1000.0;
}

/* Sweeps block (i, j) of b x b cells: `up` and `left` are the neighbouring
 * blocks (NULL at the grid's edge, where the cells outside count as 0). */
static void sweep(double *blk, const double *up, const double *left, int i, int j) {
    for (int r = 0; r < B; r++)
        for (int c = 0; c < B; c++) {
            double above = r > 0 ? blk[(r - 1) * B + c] : up ? up[(B - 1) * B + c] : 0;
            double before = c > 0 ? blk[r * B + c - 1] : left ? left[r * B + B - 1] : 0;
            blk[r * B + c] = 0.5 * (above + before) + weight(i * B + r, j * B + c);
        }
}

/* A block's task: bufs[0] is the block, then the block above (if i > 0), then
 * the one to the left (if j > 0).  arg is the block's number. */
static int t_sweep(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx;
    int id = (int)(intptr_t)arg, i = id / NB, j = id % NB, k = 1;
    const double *up = i > 0 ? bufs[k++] : NULL;
    const double *left = j > 0 ? bufs[k] : NULL;
    sweep(bufs[0], up, left, i, j);
    return 0;
}

static int insert_all(weft_mpi_flow *f, const weft_mpi_data *d) {
    for (int i = 0; i < NB; i++)
        for (int j = 0; j < NB; j++) {
            weft_mpi_access acc[3] = { { d[i * NB + j], WEFT_MPI_W } };
            size_t n = 1;
            if (i > 0) acc[n++] = (weft_mpi_access){ d[(i - 1) * NB + j], WEFT_MPI_R };
            if (j > 0) acc[n++] = (weft_mpi_access){ d[i * NB + j - 1], WEFT_MPI_R };
            weft_status st = weft_mpi_insert(f, &(weft_mpi_task_desc){
                .fn = t_sweep, .arg = (void *)(intptr_t)(i * NB + j), .name = "sweep", .access = acc, .naccess = n });
            if (st != WEFT_OK) return st;
        }
    return WEFT_OK;
}

int main(int argc, char **argv) {
    NB = argc > 1 ? atoi(argv[1]) : 8;
    B = argc > 2 ? atoi(argv[2]) : 32;
    int workers = argc > 3 ? atoi(argv[3]) : 2, reps = argc > 4 ? atoi(argv[4]) : 1;
    if (NB < 1 || B < 1 || workers < 1 || reps < 1) return 2;
    int provided = 0, rank = 0, size = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = (unsigned)workers }, &st);
    weft_mpi_flow *f = ex ? weft_mpi_flow_create(MPI_COMM_WORLD, "wavefront", &st) : NULL;
    if (!f) {
        fprintf(stderr, "rank %d: %s %s\n", rank, weft_strerror(st), weft_mpi_flow_error_message(NULL));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* This rank's blocks (its columns); the others' are NULL: weft allocates
     * a copy where a task here reads one. */
    size_t bytes = sizeof(double) * (size_t)B * (size_t)B;
    double **mine = calloc((size_t)NB * (size_t)NB, sizeof *mine);
    weft_mpi_data *d = calloc((size_t)NB * (size_t)NB, sizeof *d);
    for (int id = 0; id < NB * NB; id++) {
        int o = id % NB % size;
        if (o == rank) mine[id] = calloc(1, bytes);
        d[id] = weft_mpi_data_register(f, mine[id], bytes, o);
    }
    if ((st = insert_all(f, d)) != WEFT_OK) {
        fprintf(stderr, "rank %d: insert: %s\n", rank, weft_strerror(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double best = 1e30;
    for (int r = 0; r < reps && st == WEFT_OK; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        st = weft_mpi_run(ex, f);
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (t < best) best = t;
    }
    if (st != WEFT_OK) fprintf(stderr, "rank %d: run: %s: %s\n", rank, weft_strerror(st), weft_mpi_flow_error_message(f));

    /* The serial sweep, block by block in row order (each block's inputs are
     * done before it), then this rank's blocks compared. */
    double **ref = calloc((size_t)NB * (size_t)NB, sizeof *ref);
    double t0 = MPI_Wtime();
    for (int i = 0; i < NB; i++)
        for (int j = 0; j < NB; j++) {
            ref[i * NB + j] = calloc(1, bytes);
            sweep(ref[i * NB + j], i > 0 ? ref[(i - 1) * NB + j] : NULL, j > 0 ? ref[i * NB + j - 1] : NULL, i, j);
        }
    double serial = MPI_Wtime() - t0, err = 0;
    for (int id = 0; id < NB * NB; id++)
        if (mine[id])
            for (int e = 0; e < B * B; e++) err = fmax(err, fabs(mine[id][e] - ref[id][e]));
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    weft_mpi_stats ms = { 0 };
    (void)weft_mpi_flow_stats(f, &ms);
    unsigned long long cnt[2] = { ms.messages_sent, ms.bytes_sent };
    MPI_Allreduce(MPI_IN_PLACE, cnt, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    int ok = st == WEFT_OK && err == 0;
    if (rank == 0)
        printf("wavefront %dx%d blocks of %d on %d ranks, %d workers: %.3f ms (serial %.3f ms), %zu tasks, "
               "%llu messages, %llu bytes, max error %.2e: %s\n",
               NB, NB, B, size, workers, best * 1e3, serial * 1e3, weft_mpi_flow_num_tasks(f), cnt[0], cnt[1], err,
               ok ? "PASS" : "FAIL");

    for (int id = 0; id < NB * NB; id++) {
        free(mine[id]);
        free(ref[id]);
    }
    free(mine);
    free(ref);
    free(d);
    (void)weft_mpi_flow_destroy(f);
    weft_executor_destroy(ex);
    MPI_Finalize();
    return ok ? 0 : 1;
}
