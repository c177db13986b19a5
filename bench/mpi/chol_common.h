/* Tiled Cholesky for the distributed benchmarks (bench/mpi/): the kernels,
 * the matrix, the 2-D block-cyclic owner map, the serial check and the
 * figures, shared by the weft::mpi and the StarPU-MPI programs so that both
 * run exactly the same tasks on the same tiles.  Kernels are the naive loops
 * of examples/mpi_cholesky.c: the point is the runtime, not BLAS. */
#ifndef WEFT_BENCH_MPI_CHOL_COMMON_H
#define WEFT_BENCH_MPI_CHOL_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/* Command line: tiles tile_size workers repetitions. */
typedef struct chol_args {
    int nt, b, workers, reps;
} chol_args;

static inline chol_args chol_parse(int argc, char **argv) {
    chol_args a = { 8, 64, 2, 10 };
    if (argc > 1) a.nt = atoi(argv[1]);
    if (argc > 2) a.b = atoi(argv[2]);
    if (argc > 3) a.workers = atoi(argv[3]);
    if (argc > 4) a.reps = atoi(argv[4]);
    return a;
}

static inline void chol_potrf(int b, double *a) {
    for (int j = 0; j < b; j++) {
        double d = a[j * b + j];
        for (int k = 0; k < j; k++) d -= a[j * b + k] * a[j * b + k];
        d = sqrt(d);
        a[j * b + j] = d;
        for (int i = j + 1; i < b; i++) {
            double s = a[i * b + j];
            for (int k = 0; k < j; k++) s -= a[i * b + k] * a[j * b + k];
            a[i * b + j] = s / d;
        }
    }
}

static inline void chol_trsm(int b, const double *l, double *x) {
    for (int r = 0; r < b; r++)
        for (int j = 0; j < b; j++) {
            double s = x[r * b + j];
            for (int k = 0; k < j; k++) s -= x[r * b + k] * l[j * b + k];
            x[r * b + j] = s / l[j * b + j];
        }
}

/* c -= a b^T */
static inline void chol_gemm(int b, const double *x, const double *y, double *c) {
    for (int r = 0; r < b; r++)
        for (int col = 0; col < b; col++) {
            double s = 0;
            for (int k = 0; k < b; k++) s += x[r * b + k] * y[col * b + k];
            c[r * b + col] -= s;
        }
}

static inline double chol_element(int n, int gi, int gj) {
    unsigned lo = (unsigned)(gi < gj ? gi : gj), hi = (unsigned)(gi < gj ? gj : gi);
    unsigned h = lo * 2654435761u ^ hi * 2246822519u;
    h ^= h >> 15;
    h *= 2654435761u;
    return (double)(h % 1000) / 1000.0 + (gi == gj ? n : 0);
}

static inline void chol_fill(double *t, int nt, int b, int ti, int tj) {
    for (int r = 0; r < b; r++)
        for (int c = 0; c < b; c++) t[r * b + c] = chol_element(nt * b, ti * b + r, tj * b + c);
}

/* The p x q grid of `size` ranks (as square as it divides) and tile owners. */
static inline void chol_grid(int size, int *p, int *q) {
    int pp = 1;
    while ((pp + 1) * (pp + 1) <= size) pp++;
    while (size % pp) pp--;
    *p = pp;
    *q = size / pp;
}
static inline int chol_owner(int i, int j, int p, int q) { return (i % p) * q + (j % q); }

/* The task sequence of the factorisation, as callbacks: both programs and the
 * serial check walk the same loop. */
typedef struct chol_visit {
    void (*potrf)(void *cx, int k);
    void (*trsm)(void *cx, int k, int i);
    void (*gemm)(void *cx, int k, int i, int j); /* tile (i,j) -= (i,k) (j,k)^T */
} chol_visit;

static inline long chol_walk(int nt, const chol_visit *v, void *cx) {
    long tasks = 0;
    for (int k = 0; k < nt; k++) {
        v->potrf(cx, k), tasks++;
        for (int i = k + 1; i < nt; i++) v->trsm(cx, k, i), tasks++;
        for (int i = k + 1; i < nt; i++)
            for (int j = k + 1; j <= i; j++) v->gemm(cx, k, i, j), tasks++;
    }
    return tasks;
}

/* Serial reference on full tiles ref[i*nt+j] (lower triangle). */
typedef struct chol_serial {
    int nt, b;
    double **t;
} chol_serial;
static inline void chol_s_potrf(void *cx, int k) {
    chol_serial *s = cx;
    chol_potrf(s->b, s->t[k * s->nt + k]);
}
static inline void chol_s_trsm(void *cx, int k, int i) {
    chol_serial *s = cx;
    chol_trsm(s->b, s->t[k * s->nt + k], s->t[i * s->nt + k]);
}
static inline void chol_s_gemm(void *cx, int k, int i, int j) {
    chol_serial *s = cx;
    chol_gemm(s->b, s->t[i * s->nt + k], s->t[j * s->nt + k], s->t[i * s->nt + j]);
}

/* Largest difference between this rank's tiles mine[] (NULL where not its
 * own) and a serial factorisation, over all ranks (collective). */
static inline double chol_check(int nt, int b, double **mine) {
    chol_serial s = { nt, b, calloc((size_t)nt * (size_t)nt, sizeof(double *)) };
    size_t bytes = sizeof(double) * (size_t)b * (size_t)b;
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++) {
            s.t[i * nt + j] = malloc(bytes);
            chol_fill(s.t[i * nt + j], nt, b, i, j);
        }
    (void)chol_walk(nt, &(chol_visit){ chol_s_potrf, chol_s_trsm, chol_s_gemm }, &s);
    double err = 0;
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++) {
            if (mine[i * nt + j])
                for (int e = 0; e < b * b; e++) {
                    int lower = i != j || e / b >= e % b;
                    double d = lower ? fabs(mine[i * nt + j][e] - s.t[i * nt + j][e]) : 0;
                    if (d > err) err = d;
                }
            free(s.t[i * nt + j]);
        }
    free(s.t);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return err;
}

static int chol_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and best of n times (sorts t). */
static inline void chol_stats(double *t, int n, double *median, double *best) {
    qsort(t, (size_t)n, sizeof *t, chol_cmp_double);
    *best = t[0];
    *median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* The slowest rank's time since t0 (collective). */
static inline double chol_elapsed(double t0) {
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

#endif
