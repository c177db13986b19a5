/* weft-bench — the OpenMP peers of integrate, mandelbrot, merge_sort, primes and
 * matrix_multiplication, as Taskflow's benchmarks/<name>/omp.cpp: untied tasks +
 * taskwait (integrate), tasks + taskwait under `single` (merge_sort),
 * `for schedule(dynamic, 1)` (mandelbrot), `parallel for reduction(+)
 * schedule(dynamic, 10)` (primes), and four tasks with depend clauses whose
 * last holds a `parallel for` (matrix_multiplication: nested in a task, that
 * loop gets a team of one thread unless nesting is enabled, as in Taskflow's).
 * The thread count is set once by bench_omp.c (omp_set_num_threads).
 * SPDX-License-Identifier: MIT */
#include "tfsuite_work.h"

#include <omp.h>

/* ---- integrate ------------------------------------------------------------------ */

static double integrate(double x1, double y1, double x2, double y2, double area) {
    integ_split s;
    double r;
    if (integ_step(x1, y1, x2, y2, area, &s, &r)) return r;
    double left = s.left, right = s.right;
    #pragma omp task untied default(shared)
    left = integrate(x1, y1, s.x0, s.y0, left);
    right = integrate(s.x0, s.y0, x2, y2, right);
    #pragma omp taskwait
    return left + right;
}

static int omp_integrate(void *env, void *data) {
    integ_data *d = data;
    double r = 0;
    (void)env;
    #pragma omp parallel
    {
        #pragma omp single nowait
        r = integrate(0, integ_fn(0), d->v, integ_fn(d->v), 0.0);
    }
    d->result = r;
    return 0;
}
const bench_ops bench_omp_integrate = {omp_integrate, NULL, NULL, NULL};

/* ---- mandelbrot ----------------------------------------------------------------- */

static int omp_mandelbrot(void *env, void *data) {
    mandel_data *d = data;
    int h = d->h;
    (void)env;
    #pragma omp parallel
    {
        #pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < h; i++) mandel_column(d, i);
    }
    return 0;
}
const bench_ops bench_omp_mandelbrot = {omp_mandelbrot, NULL, NULL, NULL};

/* ---- merge_sort ----------------------------------------------------------------- */

static void msort(double *v, double *buf, size_t lo, size_t hi) {
    size_t n = hi - lo;
    if (n <= MS_CUTOFF) {
        msort_leaf(v, lo, hi);
        return;
    }
    size_t mid = lo + n / 2;
    #pragma omp task firstprivate(v, buf, mid, hi)
    msort(v, buf, mid, hi);
    msort(v, buf, lo, mid);
    #pragma omp taskwait
    msort_merge(v, buf, lo, mid, hi);
}

static int omp_merge_sort(void *env, void *data) {
    msort_data *d = data;
    (void)env;
    double *buf = msort_buffer(d->n);
    if (!buf) return -1;
    #pragma omp parallel
    {
        #pragma omp single
        msort(d->v, buf, 0, d->n);
    }
    msort_buffer_free(buf);
    return 0;
}
const bench_ops bench_omp_merge_sort = {omp_merge_sort, NULL, NULL, NULL};

/* ---- primes --------------------------------------------------------------------- */

static int omp_primes(void *env, void *data) {
    primes_data *d = data;
    size_t sum = 0, value = d->value, chunks = (value - 1 + PRIMES_CHUNK - 1) / PRIMES_CHUNK;
    (void)env;
    /* schedule(dynamic, PRIMES_CHUNK) over 1 .. value-1, written as dynamic
     * chunks of one over runs of PRIMES_CHUNK numbers so that every impl calls
     * primes_count once per chunk. */
    #pragma omp parallel for reduction(+ : sum) schedule(dynamic, 1)
    for (size_t k = 0; k < chunks; ++k) {
        size_t lo = 1 + k * PRIMES_CHUNK, hi = lo + PRIMES_CHUNK < value ? lo + PRIMES_CHUNK : value;
        sum += primes_count(lo, hi);
    }
    d->result = sum;
    return 0;
}
const bench_ops bench_omp_primes = {omp_primes, NULL, NULL, NULL};

/* ---- matrix_multiplication ------------------------------------------------------ */

static int omp_matrix_multiplication(void *env, void *data) {
    mm_data *d = data;
    double **a = d->a, **b = d->b, **c = d->c; /* named by the depend clauses only */
    int n = d->n;
    (void)env, (void)a, (void)b, (void)c;
    #pragma omp parallel
    {
        #pragma omp single
        {
            #pragma omp task depend(out : a)
            for (int i = 0; i < n; ++i) mm_init_a(d, i);
            #pragma omp task depend(out : b)
            for (int i = 0; i < n; ++i) mm_init_b(d, i);
            #pragma omp task depend(out : c)
            for (int i = 0; i < n; ++i) mm_init_c(d, i);
            #pragma omp task depend(in : a, b, c)
            {
                #pragma omp parallel for
                for (int i = 0; i < n; ++i) mm_row(d, i);
            }
        }
    }
    return 0;
}
const bench_ops bench_omp_matrix_multiplication = {omp_matrix_multiplication, NULL, NULL, NULL};
