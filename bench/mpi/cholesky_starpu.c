/* Tiled Cholesky on StarPU-MPI 1.3, the peer of cholesky_weft.c (bench/mpi/):
 * the same kernels, tiles, owner map and task order (chol_common.h).
 *
 *     mpirun -np R bench_mpi_cholesky_starpu [tiles] [tile_size] [workers] [reps]
 *
 * Each repetition times, on the slowest rank, registering the tiles, inserting
 * every task with starpu_mpi_task_insert (StarPU runs them as they come) and
 * starpu_mpi_wait_for_all: the like of weft's "full" figure.  The cache is
 * flushed and the tiles unregistered after the clock stops.  `workers` CPU
 * workers; StarPU-MPI's own progress thread comes on top, as weft's caller. */
#include "chol_common.h"

#include <starpu.h>
#include <starpu_mpi.h>

static int B;

static void k_potrf(void *buffers[], void *arg) {
    (void)arg;
    chol_potrf(B, (double *)STARPU_MATRIX_GET_PTR(buffers[0]));
}
static void k_trsm(void *buffers[], void *arg) {
    (void)arg;
    chol_trsm(B, (const double *)STARPU_MATRIX_GET_PTR(buffers[0]), (double *)STARPU_MATRIX_GET_PTR(buffers[1]));
}
static void k_gemm(void *buffers[], void *arg) {
    (void)arg;
    chol_gemm(B, (const double *)STARPU_MATRIX_GET_PTR(buffers[0]), (const double *)STARPU_MATRIX_GET_PTR(buffers[1]),
              (double *)STARPU_MATRIX_GET_PTR(buffers[2]));
}

static struct starpu_codelet cl_potrf = { .cpu_funcs = { k_potrf }, .nbuffers = 1, .modes = { STARPU_RW }, .name = "potrf" };
static struct starpu_codelet cl_trsm = { .cpu_funcs = { k_trsm }, .nbuffers = 2, .modes = { STARPU_R, STARPU_RW }, .name = "trsm" };
static struct starpu_codelet cl_gemm = {
    .cpu_funcs = { k_gemm }, .nbuffers = 3, .modes = { STARPU_R, STARPU_R, STARPU_RW }, .name = "gemm" };

typedef struct ins {
    starpu_data_handle_t *h;
    int nt, err;
} ins;

static void i_potrf(void *cx, int k) {
    ins *s = cx;
    if (starpu_mpi_task_insert(MPI_COMM_WORLD, &cl_potrf, STARPU_RW, s->h[k * s->nt + k], 0)) s->err = 1;
}
static void i_trsm(void *cx, int k, int i) {
    ins *s = cx;
    if (starpu_mpi_task_insert(MPI_COMM_WORLD, &cl_trsm, STARPU_R, s->h[k * s->nt + k], STARPU_RW, s->h[i * s->nt + k],
                               0))
        s->err = 1;
}
static void i_gemm(void *cx, int k, int i, int j) {
    ins *s = cx;
    if (starpu_mpi_task_insert(MPI_COMM_WORLD, &cl_gemm, STARPU_R, s->h[i * s->nt + k], STARPU_R, s->h[j * s->nt + k],
                               STARPU_RW, s->h[i * s->nt + j], 0))
        s->err = 1;
}

int main(int argc, char **argv) {
    chol_args a = chol_parse(argc, argv);
    B = a.b;
    int provided = 0, rank = 0, size = 1, p, q;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = a.workers;
    conf.ncuda = 0;
    conf.nopencl = 0;
    if (starpu_mpi_init_conf(&argc, &argv, 0, MPI_COMM_WORLD, &conf) != 0) {
        fprintf(stderr, "starpu_mpi_init_conf failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    chol_grid(size, &p, &q);
    int nt = a.nt;
    size_t bytes = sizeof(double) * (size_t)B * (size_t)B;
    double **mine = calloc((size_t)nt * (size_t)nt, sizeof *mine);
    starpu_data_handle_t *h = calloc((size_t)nt * (size_t)nt, sizeof *h);
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++)
            if (chol_owner(i, j, p, q) == rank) mine[i * nt + j] = malloc(bytes);
    double *t = calloc((size_t)a.reps, sizeof *t);
    long ntasks = 0;
    int ok = 1;
    for (int r = 0; r < a.reps && ok; r++) {
        for (int i = 0; i < nt; i++)
            for (int j = 0; j <= i; j++)
                if (mine[i * nt + j]) chol_fill(mine[i * nt + j], nt, B, i, j);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < nt; i++)
            for (int j = 0; j <= i; j++) {
                int o = chol_owner(i, j, p, q);
                double *buf = mine[i * nt + j];
                starpu_matrix_data_register(&h[i * nt + j], buf ? STARPU_MAIN_RAM : -1, (uintptr_t)buf, (uint32_t)B,
                                            (uint32_t)B, (uint32_t)B, sizeof(double));
                starpu_mpi_data_register(h[i * nt + j], i * nt + j, o);
            }
        ins s = { h, nt, 0 };
        ntasks = chol_walk(nt, &(chol_visit){ i_potrf, i_trsm, i_gemm }, &s);
        starpu_mpi_wait_for_all(MPI_COMM_WORLD);
        t[r] = chol_elapsed(t0);
        ok = !s.err;
        starpu_mpi_cache_flush_all_data(MPI_COMM_WORLD);
        for (int i = 0; i < nt; i++)
            for (int j = 0; j <= i; j++) starpu_data_unregister(h[i * nt + j]);
    }
    double err = ok ? chol_check(nt, B, mine) : 1;
    double med, best;
    chol_stats(t, a.reps, &med, &best);
    if (rank == 0)
        printf("impl=starpu ranks=%d grid=%dx%d tiles=%d b=%d workers=%d tasks=%ld reps=%d median_ms=%.3f best_ms=%.3f "
               "check=%s\n",
               size, p, q, nt, B, starpu_cpu_worker_get_count(), ntasks, a.reps, med * 1e3, best * 1e3,
               ok && err < 1e-9 ? "ok" : "FAIL");
    for (int i = 0; i < nt * nt; i++) free(mine[i]);
    free(mine);
    free(h);
    free(t);
    starpu_mpi_shutdown();
    MPI_Finalize();
    return ok && err < 1e-9 ? 0 : 1;
}
