/* A distributed tiled Cholesky factorisation (A = L L^T) with weft::mpi.
 *
 *     mpirun -np 4 ./mpi_cholesky [tiles] [tile_size] [workers] [repetitions]
 *
 * The matrix is a grid of tiles; tile (i, j) lives on one rank (2-D block
 * cyclic, as ScaLAPACK lays it out).  Every rank inserts the same tasks; each
 * runs where the tile it updates lives, and the tiles it reads from other
 * ranks arrive by themselves (one message per tile and reader rank, however
 * many tasks there read it).  Each rank then checks its tiles against a
 * serial factorisation of the same matrix.  Exits 0 when they agree.
 * docs/guide-mpi.md walks through it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "weft.h"
#include "weft/mpi.h"

static int B; /* tile size (rows = columns) */

/* ---- kernels on b x b row-major tiles (naive: the point is the graph) ---- */

/* a = L, lower triangular, with L L^T = a (the upper part is left alone). */
static void potrf(double *a) {
    for (int j = 0; j < B; j++) {
        double d = a[j * B + j];
        for (int k = 0; k < j; k++) d -= a[j * B + k] * a[j * B + k];
        d = sqrt(d);
        a[j * B + j] = d;
        for (int i = j + 1; i < B; i++) {
            double s = a[i * B + j];
            for (int k = 0; k < j; k++) s -= a[i * B + k] * a[j * B + k];
            a[i * B + j] = s / d;
        }
    }
}

/* x = x L^-T: solves X L^T = X row by row. */
static void trsm(const double *l, double *x) {
    for (int r = 0; r < B; r++)
        for (int j = 0; j < B; j++) {
            double s = x[r * B + j];
            for (int k = 0; k < j; k++) s -= x[r * B + k] * l[j * B + k];
            x[r * B + j] = s / l[j * B + j];
        }
}

/* c -= a b^T (syrk is the case a == b). */
static void gemm(const double *a, const double *b, double *c) {
    for (int r = 0; r < B; r++)
        for (int col = 0; col < B; col++) {
            double s = 0;
            for (int k = 0; k < B; k++) s += a[r * B + k] * b[col * B + k];
            c[r * B + col] -= s;
        }
}

/* ---- the tasks: bufs[] are the tiles in the order they were declared ---- */

static int t_potrf(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    potrf(bufs[0]);
    return 0;
}
static int t_trsm(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    trsm(bufs[0], bufs[1]);
    return 0;
}
static int t_gemm(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    gemm(bufs[0], bufs[1], bufs[2]);
    return 0;
}

/* ---- the matrix ----------------------------------------------------------- */

/* A symmetric, diagonally dominant (so positive definite) matrix, element by
 * element, so that every rank can make its own tiles and the serial copy. */
static double element(int n, int gi, int gj) {
    unsigned lo = (unsigned)(gi < gj ? gi : gj), hi = (unsigned)(gi < gj ? gj : gi);
    unsigned h = lo * 2654435761u ^ hi * 2246822519u;
    h ^= h >> 15;
    h *= 2654435761u;
    return (double)(h % 1000) / 1000.0 + (gi == gj ? n : 0);
}

static void fill_tile(double *t, int n, int ti, int tj) {
    for (int r = 0; r < B; r++)
        for (int c = 0; c < B; c++) t[r * B + c] = element(n, ti * B + r, tj * B + c);
}

/* Owner of tile (i, j) on a p x q grid of ranks. */
static int owner(int i, int j, int p, int q) { return (i % p) * q + (j % q); }

/* The tasks of the factorisation, in the order of the serial algorithm.
 * Without a flow (f NULL) it runs them here instead, on tiles[id - 1] for a
 * handle's id: the serial reference. */
static int insert_all(weft_mpi_flow *f, int nt, weft_mpi_data *d, double **tiles) {
#define TILE(i, j) ((i) * nt + (j))
#define TASK(fn_, ...) do {                                                               \
        const weft_mpi_access acc_[] = { __VA_ARGS__ };                                   \
        size_t n_ = sizeof acc_ / sizeof acc_[0];                                         \
        if (f) {                                                                          \
            weft_status st_ = weft_mpi_insert(f, &(weft_mpi_task_desc){                   \
                .fn = fn_, .name = #fn_, .access = acc_, .naccess = n_ });                \
            if (st_ != WEFT_OK) return st_;                                               \
        } else {                                                                          \
            void *bufs_[3];                                                               \
            for (size_t i_ = 0; i_ < n_; i_++) bufs_[i_] = tiles[acc_[i_].data.id_ - 1];  \
            fn_(NULL, bufs_, NULL);                                                       \
        }                                                                                 \
    } while (0)
    for (int k = 0; k < nt; k++) {
        TASK(t_potrf, { d[TILE(k, k)], WEFT_MPI_RW });
        for (int i = k + 1; i < nt; i++) TASK(t_trsm, { d[TILE(k, k)], WEFT_MPI_R }, { d[TILE(i, k)], WEFT_MPI_RW });
        for (int i = k + 1; i < nt; i++)
            for (int j = k + 1; j <= i; j++)
                TASK(t_gemm, { d[TILE(i, k)], WEFT_MPI_R }, { d[TILE(j, k)], WEFT_MPI_R },
                     { d[TILE(i, j)], WEFT_MPI_RW });
    }
    return WEFT_OK;
#undef TASK
}

int main(int argc, char **argv) {
    int nt = argc > 1 ? atoi(argv[1]) : 6, workers = argc > 3 ? atoi(argv[3]) : 2;
    int reps = argc > 4 ? atoi(argv[4]) : 1;
    B = argc > 2 ? atoi(argv[2]) : 32;
    if (nt < 1 || B < 1 || workers < 1 || reps < 1) return 2;
    int provided = 0, rank = 0, size = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int p = 1;
    while ((p + 1) * (p + 1) <= size) p++;
    while (size % p) p--;
    int q = size / p, n = nt * B;

    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = (unsigned)workers }, &st);
    weft_mpi_flow *f = ex ? weft_mpi_flow_create(MPI_COMM_WORLD, "cholesky", &st) : NULL;
    if (!f) {
        fprintf(stderr, "rank %d: %s %s\n", rank, weft_strerror(st), weft_mpi_flow_error_message(NULL));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Tiles of the lower triangle: this rank's own (filled), others as NULL
     * (weft allocates a copy where one is needed). */
    size_t tile_bytes = sizeof(double) * (size_t)B * (size_t)B;
    double **mine = calloc((size_t)nt * (size_t)nt, sizeof *mine);
    double **ref = calloc((size_t)nt * (size_t)nt, sizeof *ref);
    weft_mpi_data *d = calloc((size_t)nt * (size_t)nt, sizeof *d);
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++) {
            int o = owner(i, j, p, q);
            ref[TILE(i, j)] = malloc(tile_bytes);
            fill_tile(ref[TILE(i, j)], n, i, j);
            if (o == rank) {
                mine[TILE(i, j)] = malloc(tile_bytes);
                memcpy(mine[TILE(i, j)], ref[TILE(i, j)], tile_bytes);
            }
            d[TILE(i, j)] = weft_mpi_data_register(f, mine[TILE(i, j)], tile_bytes, o);
        }
    if ((st = insert_all(f, nt, d, NULL)) != WEFT_OK) {
        fprintf(stderr, "rank %d: insert: %s\n", rank, weft_strerror(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        if (r > 0) /* start again from A */
            for (int i = 0; i < nt; i++)
                for (int j = 0; j <= i; j++)
                    if (mine[TILE(i, j)]) fill_tile(mine[TILE(i, j)], n, i, j);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        st = weft_mpi_run(ex, f);
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (t < best) best = t;
        if (st != WEFT_OK) break;
    }
    if (st != WEFT_OK) fprintf(stderr, "rank %d: run: %s: %s\n", rank, weft_strerror(st), weft_mpi_flow_error_message(f));

    /* The serial reference: the same kernels in the same order. */
    double t0 = MPI_Wtime();
    for (int t = 0; t < nt * nt; t++) d[t] = (weft_mpi_data){ (uint32_t)t + 1 }; /* ids name tiles here */
    (void)insert_all(NULL, nt, d, ref);
    double serial = MPI_Wtime() - t0;
    double err = 0;
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++)
            if (mine[TILE(i, j)])
                for (int e = 0; e < B * B; e++) {
                    bool lower = i != j || e / B >= e % B;
                    double diff = lower ? fabs(mine[TILE(i, j)][e] - ref[TILE(i, j)][e]) : 0;
                    if (diff > err) err = diff;
                }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    weft_mpi_stats ms = { 0 };
    (void)weft_mpi_flow_stats(f, &ms);
    unsigned long long cnt[2] = { ms.messages_sent, ms.bytes_sent };
    MPI_Allreduce(MPI_IN_PLACE, cnt, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    bool ok = st == WEFT_OK && err <= 1e-9;
    if (rank == 0)
        printf("cholesky %dx%d tiles of %d on %d ranks (%dx%d), %d workers: %.3f ms (serial %.3f ms), "
               "%zu tasks, %llu messages, %llu bytes, max error %.2e: %s\n",
               nt, nt, B, size, p, q, workers, best * 1e3, serial * 1e3, weft_mpi_flow_num_tasks(f), cnt[0],
               cnt[1], err, ok ? "PASS" : "FAIL");

    for (int i = 0; i < nt * nt; i++) {
        free(mine[i]);
        free(ref[i]);
    }
    free(mine);
    free(ref);
    free(d);
    (void)weft_mpi_flow_destroy(f);
    weft_executor_destroy(ex);
    MPI_Finalize();
    return ok ? 0 : 1;
}
