/* weft-bench — data, kernels and serial versions of integrate, mandelbrot,
 * merge_sort, primes and matrix_multiplication (tfsuite_work.h).
 * SPDX-License-Identifier: MIT */
#include "tfsuite_work.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- integrate ------------------------------------------------------------------ */

static double integ_serial(double x1, double y1, double x2, double y2, double area) {
    integ_split s;
    double r;
    if (integ_step(x1, y1, x2, y2, area, &s, &r)) return r;
    double left = integ_serial(x1, y1, s.x0, s.y0, s.left);
    double right = integ_serial(s.x0, s.y0, x2, y2, s.right);
    return left + right;
}

static size_t integ_shape(size_t req) { return req < 1 ? 1 : req; }
static void *integ_create(size_t v) {
    integ_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->v = (double)v;
    d->want = integ_serial(0, integ_fn(0), d->v, integ_fn(d->v), 0.0);
    d->exact = 0.25 * d->v * d->v * (d->v * d->v + 2);
    return d;
}
static void integ_reset(void *p) { ((integ_data *)p)->result = -1; }
static int integ_verify(const void *p, char *msg, size_t len) {
    const integ_data *d = p;
    /* Every implementation adds the same halves in the same order: the same bits. */
    if (d->result == d->want && fabs(d->result - d->exact) <= 1e-6 * d->exact) return 0;
    snprintf(msg, len, "integral over [0, %g] = %.17g, want %.17g (closed form %.17g)", d->v, d->result,
             d->want, d->exact);
    return -1;
}
const bench_work bench_work_integrate = {integ_shape, integ_create, integ_reset, integ_verify, free};

static int serial_integrate(void *env, void *p) {
    integ_data *d = p;
    (void)env;
    d->result = integ_serial(0, integ_fn(0), d->v, integ_fn(d->v), 0.0);
    return 0;
}
const bench_ops bench_serial_integrate = {serial_integrate, NULL, NULL, NULL};

/* ---- mandelbrot ----------------------------------------------------------------- */

#define MANDEL_D 2
#define MANDEL_XL (-2.5)
#define MANDEL_XR 1.0
#define MANDEL_YB (-1.0)
#define MANDEL_YT 1.0

/* mandel.hpp's escape_time: z -> |z|^n (cos n arg z + i sin n arg z) + c. */
static int mandel_escape(double px, double py, int n) {
    double x = px, y = py, x2 = x * x, y2 = y * y, cr = px, ci = py, xtmp;
    int i;
    for (i = 0; (x2 + y2) <= 4.0 && i < MANDEL_MAX_ITER; i++) {
        xtmp = pow((x * x + y * y), (n / 2.0)) * cos(n * atan2(y, x)) + cr;
        y = pow((x * x + y * y), (n / 2.0)) * sin(n * atan2(y, x)) + ci;
        x = xtmp;
        x2 = x * x;
        y2 = y * y;
    }
    return i;
}

static const unsigned char mandel_colors[16][3] = {
    {66, 30, 15},    {25, 7, 26},     {9, 1, 47},      {4, 4, 73},    {0, 7, 100},   {12, 44, 138},
    {24, 82, 177},   {57, 125, 209},  {134, 181, 229}, {211, 236, 248}, {241, 233, 191}, {248, 201, 95},
    {255, 170, 0},   {204, 128, 0},   {153, 87, 0},    {106, 52, 3},
};

/* `n` is read through a volatile so that the compiler cannot fold
 * pow(r, n / 2.0) to r: Taskflow's kernel takes the exponent as a run-time
 * argument too. */
static volatile int mandel_d = MANDEL_D;

void mandel_column(const mandel_data *d, int i) {
    const int w = d->w, h = d->h, n = mandel_d;
    for (int j = 0; j < w; j++) {
        double xx = MANDEL_XL + (MANDEL_XR - MANDEL_XL) / w * i;
        double yy = MANDEL_YB + (MANDEL_YT - MANDEL_YB) / h * j;
        int value = mandel_escape(xx, yy, n);
        unsigned char *px = &d->rgb[3 * ((size_t)j * (size_t)w + (size_t)i)];
        if (value < MANDEL_MAX_ITER && value) {
            memcpy(px, mandel_colors[value % 16], 3);
        } else {
            px[0] = px[1] = px[2] = 0;
        }
    }
}

static size_t mandel_side(size_t req) {
    size_t n = (size_t)sqrt((double)req);
    while ((n + 1) * (n + 1) <= req) n++;
    while (n > 1 && n * n > req) n--;
    return n < 1 ? 1 : n;
}
static size_t mandel_shape(size_t req) {
    size_t n = mandel_side(req);
    return n * n;
}
static void mandel_destroy(void *p) {
    mandel_data *d = p;
    if (!d) return;
    free(d->rgb);
    free(d->want);
    free(d);
}
static void *mandel_create(size_t pixels) {
    mandel_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->w = d->h = (int)mandel_side(pixels);
    size_t bytes = 3 * (size_t)d->w * (size_t)d->h;
    d->rgb = malloc(bytes);
    d->want = malloc(bytes);
    if (!d->rgb || !d->want) {
        mandel_destroy(d);
        return NULL;
    }
    for (int i = 0; i < d->h; i++) mandel_column(d, i);
    memcpy(d->want, d->rgb, bytes);
    return d;
}
/* 0xff everywhere: no colour is (255, 255, 255), so a pixel left unwritten shows. */
static void mandel_reset(void *p) {
    mandel_data *d = p;
    memset(d->rgb, 0xff, 3 * (size_t)d->w * (size_t)d->h);
}
static int mandel_verify(const void *p, char *msg, size_t len) {
    const mandel_data *d = p;
    size_t bytes = 3 * (size_t)d->w * (size_t)d->h;
    for (size_t k = 0; k < bytes; k++) {
        if (d->rgb[k] != d->want[k]) {
            snprintf(msg, len, "pixel %zu channel %zu = %u, want %u", k / 3, k % 3, d->rgb[k], d->want[k]);
            return -1;
        }
    }
    return 0;
}
const bench_work bench_work_mandelbrot = {mandel_shape, mandel_create, mandel_reset, mandel_verify, mandel_destroy};

static int serial_mandelbrot(void *env, void *p) {
    mandel_data *d = p;
    (void)env;
    for (int i = 0; i < d->h; i++) mandel_column(d, i);
    return 0;
}
const bench_ops bench_serial_mandelbrot = {serial_mandelbrot, NULL, NULL, NULL};

/* ---- merge_sort ----------------------------------------------------------------- */

double *msort_buffer(size_t n) {
    double *b = malloc((n ? n : 1) * sizeof *b);
    if (b) memset(b, 0, n * sizeof *b);
    return b;
}
void msort_buffer_free(double *buf) { free(buf); }

static void ms_insertion(double *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        double v = a[i];
        size_t j = i;
        for (; j > 0 && v < a[j - 1]; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}
static void ms_swap(double *x, double *y) {
    double t = *x;
    *x = *y;
    *y = t;
}
/* Quicksort with a median of three, insertion sort below 16 elements, the
 * smaller side first (std::sort's introsort without its heapsort fallback:
 * the leaves are 1024 random doubles at most). */
static void ms_quick(double *a, size_t n) {
    while (n > 16) {
        size_t m = n / 2;
        if (a[m] < a[0]) ms_swap(&a[m], &a[0]);
        if (a[n - 1] < a[m]) {
            ms_swap(&a[n - 1], &a[m]);
            if (a[m] < a[0]) ms_swap(&a[m], &a[0]);
        }
        double pivot = a[m];
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pivot) i++;
            while (pivot < a[j]) j--;
            if (i >= j) break;
            ms_swap(&a[i], &a[j]);
            i++;
            j--;
        }
        size_t left = j + 1;
        if (left < n - left) {
            ms_quick(a, left);
            a += left;
            n -= left;
        } else {
            ms_quick(a + left, n - left);
            n = left;
        }
    }
    ms_insertion(a, n);
}
void msort_leaf(double *v, size_t lo, size_t hi) { ms_quick(v + lo, hi - lo); }

void msort_merge(double *v, double *buf, size_t lo, size_t mid, size_t hi) {
    size_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi) buf[k++] = v[j] < v[i] ? v[j++] : v[i++];
    while (i < mid) buf[k++] = v[i++];
    while (j < hi) buf[k++] = v[j++];
    memcpy(v + lo, buf + lo, (hi - lo) * sizeof *v);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static size_t msort_shape(size_t req) { return req < 2 ? 2 : req; }
static void msort_destroy(void *p) {
    msort_data *d = p;
    if (!d) return;
    free(d->v);
    free(d->orig);
    free(d->want);
    free(d);
}
static void *msort_create(size_t n) {
    msort_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->v = malloc(n * sizeof *d->v);
    d->orig = malloc(n * sizeof *d->orig);
    d->want = malloc(n * sizeof *d->want);
    if (!d->v || !d->orig || !d->want) {
        msort_destroy(d);
        return NULL;
    }
    /* merge_sort/main.cpp fills the vector with ::rand(); a fixed LCG here. */
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        d->orig[i] = (double)(s >> 33);
    }
    memcpy(d->want, d->orig, n * sizeof *d->want);
    qsort(d->want, n, sizeof *d->want, cmp_double);
    return d;
}
static void msort_reset(void *p) {
    msort_data *d = p;
    memcpy(d->v, d->orig, d->n * sizeof *d->v);
}
static int msort_verify(const void *p, char *msg, size_t len) {
    const msort_data *d = p;
    for (size_t i = 0; i < d->n; i++) {
        if (d->v[i] != d->want[i]) {
            snprintf(msg, len, "v[%zu] = %.17g, want %.17g", i, d->v[i], d->want[i]);
            return -1;
        }
    }
    return 0;
}
const bench_work bench_work_merge_sort = {msort_shape, msort_create, msort_reset, msort_verify, msort_destroy};

static void msort_serial(double *v, double *buf, size_t lo, size_t hi) {
    size_t n = hi - lo;
    if (n <= MS_CUTOFF) {
        msort_leaf(v, lo, hi);
        return;
    }
    size_t mid = lo + n / 2;
    msort_serial(v, buf, mid, hi);
    msort_serial(v, buf, lo, mid);
    msort_merge(v, buf, lo, mid, hi);
}
static int serial_merge_sort(void *env, void *p) {
    msort_data *d = p;
    (void)env;
    double *buf = msort_buffer(d->n);
    if (!buf) return -1;
    msort_serial(d->v, buf, 0, d->n);
    msort_buffer_free(buf);
    return 0;
}
const bench_ops bench_serial_merge_sort = {serial_merge_sort, NULL, NULL, NULL};

/* ---- primes --------------------------------------------------------------------- */

/* primes.hpp's is_prime, with its int divisor (n % i and i * i <= n compare as
 * size_t, as there). */
static inline int is_prime(size_t n) {
    if (n == 2 || n == 3) return 1;
    if (n <= 1 || n % 2 == 0 || n % 3 == 0) return 0;
    for (int i = 5; (size_t)(i * i) <= n; i += 6) {
        if (n % (size_t)i == 0 || n % (size_t)(i + 2) == 0) return 0;
    }
    return 1;
}
size_t primes_count(size_t lo, size_t hi) {
    size_t s = 0;
    for (size_t i = lo; i < hi; i++) s += (size_t)is_prime(i);
    return s;
}

static size_t primes_shape(size_t req) { return req < 2 ? 2 : req; }
static void *primes_create(size_t value) {
    primes_data *d = calloc(1, sizeof *d);
    char *composite = calloc(value, 1);
    if (!d || !composite) {
        free(d);
        free(composite);
        return NULL;
    }
    d->value = value;
    /* An independent count: the sieve of Eratosthenes below value. */
    for (size_t i = 2; i < value; i++) {
        if (composite[i]) continue;
        d->want++;
        for (size_t j = i * i; i <= value / i && j < value; j += i) composite[j] = 1;
    }
    free(composite);
    return d;
}
static void primes_reset(void *p) { ((primes_data *)p)->result = (size_t)-1; }
static int primes_verify(const void *p, char *msg, size_t len) {
    const primes_data *d = p;
    if (d->result == d->want) return 0;
    snprintf(msg, len, "%zu primes below %zu, want %zu", d->result, d->value, d->want);
    return -1;
}
const bench_work bench_work_primes = {primes_shape, primes_create, primes_reset, primes_verify, free};

static int serial_primes(void *env, void *p) {
    primes_data *d = p;
    (void)env;
    d->result = primes_count(1, d->value);
    return 0;
}
const bench_ops bench_serial_primes = {serial_primes, NULL, NULL, NULL};

/* ---- matrix_multiplication ------------------------------------------------------ */

void mm_init_a(const mm_data *d, int i) {
    for (int j = 0; j < d->n; ++j) d->a[i][j] = i + j;
}
void mm_init_b(const mm_data *d, int i) {
    for (int j = 0; j < d->n; ++j) d->b[i][j] = i * j;
}
void mm_init_c(const mm_data *d, int i) {
    for (int j = 0; j < d->n; ++j) d->c[i][j] = 0;
}
void mm_row(const mm_data *d, int i) {
    double **a = d->a, **b = d->b, **c = d->c;
    for (int j = 0; j < d->n; ++j) {
        for (int k = 0; k < d->n; k++) c[i][j] += a[i][k] * b[k][j];
    }
}

static size_t mm_shape(size_t req) { return mandel_shape(req); }
static void mm_destroy(void *p) {
    mm_data *d = p;
    if (!d) return;
    for (int i = 0; i < d->n; i++) {
        if (d->a) free(d->a[i]);
        if (d->b) free(d->b[i]);
        if (d->c) free(d->c[i]);
    }
    free(d->a);
    free(d->b);
    free(d->c);
    free(d);
}
static void *mm_create(size_t cells) {
    mm_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    int n = (int)mandel_side(cells);
    d->a = calloc((size_t)n, sizeof *d->a);
    d->b = calloc((size_t)n, sizeof *d->b);
    d->c = calloc((size_t)n, sizeof *d->c);
    if (!d->a || !d->b || !d->c) {
        mm_destroy(d);
        return NULL;
    }
    d->n = n;
    for (int i = 0; i < n; i++) {
        d->a[i] = malloc((size_t)n * sizeof **d->a);
        d->b[i] = malloc((size_t)n * sizeof **d->b);
        d->c[i] = malloc((size_t)n * sizeof **d->c);
        if (!d->a[i] || !d->b[i] || !d->c[i]) {
            mm_destroy(d);
            return NULL;
        }
    }
    return d;
}
/* Values the timed run must overwrite: its three init loops are part of it. */
static void mm_reset(void *p) {
    mm_data *d = p;
    for (int i = 0; i < d->n; i++) {
        for (int j = 0; j < d->n; j++) d->a[i][j] = d->b[i][j] = d->c[i][j] = -1;
    }
}
/* c[i][j] = sum_k (i + k) k j = j (i S1 + S2), S1 = sum k, S2 = sum k^2: whole
 * numbers below 2^53 for the sizes used, so every partial sum is exact. */
static int mm_verify(const void *p, char *msg, size_t len) {
    const mm_data *d = p;
    double n = d->n, s1 = n * (n - 1) / 2, s2 = (n - 1) * n * (2 * n - 1) / 6;
    for (int i = 0; i < d->n; i++) {
        for (int j = 0; j < d->n; j++) {
            double want = (double)j * ((double)i * s1 + s2);
            if (d->c[i][j] != want || d->a[i][j] != i + j || d->b[i][j] != (double)(i * j)) {
                snprintf(msg, len, "c[%d][%d] = %.17g, want %.17g", i, j, d->c[i][j], want);
                return -1;
            }
        }
    }
    return 0;
}
const bench_work bench_work_matrix_multiplication = {mm_shape, mm_create, mm_reset, mm_verify, mm_destroy};

static int serial_matrix_multiplication(void *env, void *p) {
    mm_data *d = p;
    (void)env;
    for (int i = 0; i < d->n; i++) mm_init_a(d, i);
    for (int i = 0; i < d->n; i++) mm_init_b(d, i);
    for (int i = 0; i < d->n; i++) mm_init_c(d, i);
    for (int i = 0; i < d->n; i++) mm_row(d, i);
    return 0;
}
const bench_ops bench_serial_matrix_multiplication = {serial_matrix_multiplication, NULL, NULL, NULL};
