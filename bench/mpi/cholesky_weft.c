/* Tiled Cholesky on weft::mpi, the peer of cholesky_starpu.c (bench/mpi/).
 *
 *     mpirun -np R bench_mpi_cholesky_weft [tiles] [tile_size] [workers] [reps]
 *
 * Each repetition times, on the slowest rank: "full" = create the flow,
 * register the tiles, insert every task, run, destroy (what StarPU-MPI does
 * each time: its graph is its submission); then "rerun" = the same flow run
 * again from the initial matrix (weft's flows can be rerun; StarPU's cannot).
 * Prints medians and bests in ms, messages and bytes, and the serial check. */
#include "chol_common.h"

#include "weft.h"
#include "weft/mpi.h"

static int B;

static int t_potrf(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    chol_potrf(B, bufs[0]);
    return 0;
}
static int t_trsm(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    chol_trsm(B, bufs[0], bufs[1]);
    return 0;
}
static int t_gemm(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    chol_gemm(B, bufs[0], bufs[1], bufs[2]);
    return 0;
}

typedef struct ins {
    weft_mpi_flow *f;
    weft_mpi_data *d;
    int nt;
    int err;
} ins;

static void insert(ins *s, weft_mpi_task_fn fn, const weft_mpi_access *acc, size_t n) {
    weft_status st = weft_mpi_insert(s->f, &(weft_mpi_task_desc){ .fn = fn, .access = acc, .naccess = n });
    if (st != WEFT_OK) s->err = st;
}
static void i_potrf(void *cx, int k) {
    ins *s = cx;
    insert(s, t_potrf, (weft_mpi_access[]){ { s->d[k * s->nt + k], WEFT_MPI_RW } }, 1);
}
static void i_trsm(void *cx, int k, int i) {
    ins *s = cx;
    insert(s, t_trsm, (weft_mpi_access[]){ { s->d[k * s->nt + k], WEFT_MPI_R }, { s->d[i * s->nt + k], WEFT_MPI_RW } },
           2);
}
static void i_gemm(void *cx, int k, int i, int j) {
    ins *s = cx;
    insert(s, t_gemm,
           (weft_mpi_access[]){ { s->d[i * s->nt + k], WEFT_MPI_R },
                                { s->d[j * s->nt + k], WEFT_MPI_R },
                                { s->d[i * s->nt + j], WEFT_MPI_RW } },
           3);
}

static void refill(double **mine, int nt) {
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++)
            if (mine[i * nt + j]) chol_fill(mine[i * nt + j], nt, B, i, j);
}

/* Builds the flow over this rank's tiles (NULL where not its own). */
static weft_mpi_flow *build(double **mine, int nt, int p, int q, weft_mpi_data *d, long *ntasks) {
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "cholesky", &st);
    if (!f) return NULL;
    size_t bytes = sizeof(double) * (size_t)B * (size_t)B;
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++) d[i * nt + j] = weft_mpi_data_register(f, mine[i * nt + j], bytes, chol_owner(i, j, p, q));
    ins s = { f, d, nt, 0 };
    *ntasks = chol_walk(nt, &(chol_visit){ i_potrf, i_trsm, i_gemm }, &s);
    if (s.err) {
        (void)weft_mpi_flow_destroy(f);
        return NULL;
    }
    return f;
}

int main(int argc, char **argv) {
    chol_args a = chol_parse(argc, argv);
    B = a.b;
    int provided = 0, rank = 0, size = 1, p, q;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    chol_grid(size, &p, &q);
    int nt = a.nt;
    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = (unsigned)a.workers }, &st);
    if (!ex) MPI_Abort(MPI_COMM_WORLD, 1);
    size_t bytes = sizeof(double) * (size_t)B * (size_t)B;
    double **mine = calloc((size_t)nt * (size_t)nt, sizeof *mine);
    weft_mpi_data *d = calloc((size_t)nt * (size_t)nt, sizeof *d);
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++)
            if (chol_owner(i, j, p, q) == rank) mine[i * nt + j] = malloc(bytes);
    double *full = calloc((size_t)a.reps, sizeof *full), *rerun = calloc((size_t)a.reps, sizeof *rerun);
    long ntasks = 0;
    weft_mpi_stats ms = { 0 };
    int ok = 1;
    for (int r = 0; r < a.reps && ok; r++) {
        refill(mine, nt);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        weft_mpi_flow *f = build(mine, nt, p, q, d, &ntasks);
        st = f ? weft_mpi_run(ex, f) : WEFT_ENOMEM;
        full[r] = chol_elapsed(t0);
        if (st == WEFT_OK) {
            refill(mine, nt);
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            st = weft_mpi_run(ex, f);
            rerun[r] = chol_elapsed(t0);
        }
        if (f) (void)weft_mpi_flow_stats(f, &ms);
        if (f) (void)weft_mpi_flow_destroy(f);
        ok = st == WEFT_OK;
    }
    double err = ok ? chol_check(nt, B, mine) : 1;
    unsigned long long cnt[2] = { ms.messages_sent, ms.bytes_sent };
    MPI_Allreduce(MPI_IN_PLACE, cnt, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    double fm, fb, rm, rb;
    chol_stats(full, a.reps, &fm, &fb);
    chol_stats(rerun, a.reps, &rm, &rb);
    if (rank == 0)
        printf("impl=weft ranks=%d grid=%dx%d tiles=%d b=%d workers=%d tasks=%ld reps=%d median_ms=%.3f best_ms=%.3f "
               "rerun_median_ms=%.3f rerun_best_ms=%.3f messages=%llu bytes=%llu check=%s\n",
               size, p, q, nt, B, a.workers, ntasks, a.reps, fm * 1e3, fb * 1e3, rm * 1e3, rb * 1e3, cnt[0], cnt[1],
               ok && err < 1e-9 ? "ok" : "FAIL");
    for (int i = 0; i < nt * nt; i++) free(mine[i]);
    free(mine);
    free(d);
    free(full);
    free(rerun);
    weft_executor_destroy(ex);
    MPI_Finalize();
    return ok && err < 1e-9 ? 0 : 1;
}
