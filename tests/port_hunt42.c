/* Session 42 (h42-4): oneTBB's example programs and test shapes, and the
 * Barcelona OpenMP Tasks Suite's kernels, written again from what each
 * computes (no code of theirs) against weft's C API: algo.h loops and
 * reductions, forkjoin.h spawns and task groups, pipeline.h, graph.h and
 * dependent async tasks.  Each result is checked exactly against a serial run
 * of the same computation (same operations in the same order, so doubles are
 * compared bit for bit) on 1, 2, 3, 4 and 8 workers.  Sizes are small: each
 * test stays well under a second. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fj_util.h"

#include <weft/algo.h>
#include <weft/async.h>
#include <weft/pipeline.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

static const unsigned kW[] = {1, 2, 3, 4, 8};
#define NW (sizeof kW / sizeof kW[0])

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* Runs fn(arg) as a root task of ex and asserts it returned 0. */
static void root(weft_executor *ex, weft_task_fn fn, void *arg) {
    int res = -1;
    ASSERT_OK(weft_run_root_status(ex, fn, arg, &res));
    ASSERT_EQ(res, 0);
}

static const weft_partitioner kParts[] = {WEFT_PARTITION_AUTO, WEFT_PARTITION_STATIC, WEFT_PARTITION_DYNAMIC,
                                          WEFT_PARTITION_GUIDED};

/* ==== oneTBB seismic: a 2D wave, stress then velocity per frame, rows in parallel ==== */

enum { SH = 41, SW = 67 };
struct seismic {
    double v[SH][SW], s[SH][SW], t[SH][SW], m[SH][SW], d[SH][SW], l[SH][SW];
};
static void seismic_init(struct seismic *u) {
    memset(u, 0, sizeof *u);
    for (int i = 0; i < SH; i++)
        for (int j = 0; j < SW; j++) {
            uint64_t h = mix64((uint64_t)(i * SW + j));
            u->m[i][j] = 0.1 + (double)(h % 1000) / 4000.0;
            u->d[i][j] = 0.95 + (double)((h >> 20) % 100) / 2500.0;
            u->l[i][j] = 0.2 + (double)((h >> 40) % 100) / 1000.0;
        }
}
static void seismic_stress_rows(size_t lo, size_t hi, void *arg) {
    struct seismic *u = arg;
    for (size_t i = lo; i < hi; i++)
        for (int j = 1; j < SW - 1; j++) {
            u->s[i][j] += u->m[i][j] * (u->v[i][j + 1] - u->v[i][j]);
            u->t[i][j] += u->m[i][j] * (u->v[i + 1][j] - u->v[i][j]);
        }
}
static void seismic_velocity_rows(size_t lo, size_t hi, void *arg) {
    struct seismic *u = arg;
    for (size_t i = lo; i < hi; i++)
        for (int j = 1; j < SW - 1; j++)
            u->v[i][j] = u->d[i][j] * (u->v[i][j] + u->l[i][j] * (u->s[i][j] - u->s[i][j - 1] + u->t[i][j] -
                                                                  u->t[i - 1][j]));
}
static void seismic_pulse(struct seismic *u, int frame) {
    u->v[SH / 2][SW / 3] += (frame % 7) - 3.0;
}

TEST(tbb_seismic_rows_updated_by_parallel_for_range_give_the_serial_wave_bit_for_bit) {
    struct seismic *ser = malloc(sizeof *ser), *par = malloc(sizeof *par);
    ASSERT_NOT_NULL(ser);
    ASSERT_NOT_NULL(par);
    enum { FRAMES = 24 };
    seismic_init(ser);
    for (int f = 0; f < FRAMES; f++) {
        seismic_pulse(ser, f);
        seismic_stress_rows(1, SH - 1, ser);
        seismic_velocity_rows(1, SH - 1, ser);
    }
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        seismic_init(par);
        for (int f = 0; f < FRAMES; f++) {
            weft_algo_config c = {.partitioner = kParts[f % 4], .chunk = (size_t)(f % 3)};
            seismic_pulse(par, f);
            ASSERT_OK(weft_parallel_for_range(ex, 1, SH - 1, 1, seismic_stress_rows, par, &c));
            ASSERT_OK(weft_parallel_for_range(ex, 1, SH - 1, 1, seismic_velocity_rows, par, &c));
        }
        if (memcmp(ser->v, par->v, sizeof ser->v) || memcmp(ser->s, par->s, sizeof ser->s) ||
            memcmp(ser->t, par->t, sizeof ser->t))
            TEST_FAIL_("seismic differs from the serial wave on %u workers", kW[w]);
        weft_executor_destroy(ex);
    }
    free(ser);
    free(par);
}

/* ==== oneTBB tachyon: independent rows (and 2D tiles) of an image ==== */

enum { TW = 93, TH = 57 };
static uint32_t shade(size_t x, size_t y) {
    /* a sphere lit from one side, with a hashed texture: any pure function */
    double dx = ((double)x - TW / 2.0) / (TW / 2.0), dy = ((double)y - TH / 2.0) / (TH / 2.0);
    double r2 = dx * dx + dy * dy;
    uint32_t tex = (uint32_t)(mix64(x * 131 + y) & 0xff);
    if (r2 >= 1.0) return tex;
    double z = 1.0 - r2;
    double lum = 0.3 + 0.7 * (z * 0.8 + dx * 0.2);
    return (uint32_t)(lum * 255.0) << 8 | tex;
}
struct image {
    uint32_t px[TH][TW];
    atomic_uint visits[TH][TW];
};
static void tachyon_rows(size_t lo, size_t hi, void *arg) {
    struct image *im = arg;
    for (size_t y = lo; y < hi; y++)
        for (size_t x = 0; x < TW; x++) {
            im->px[y][x] = shade(x, y);
            atomic_fetch_add_explicit(&im->visits[y][x], 1, memory_order_relaxed);
        }
}
/* blocked_range2d: an outer loop over row tiles whose body runs an inner
 * parallel loop over column tiles (nested direct calls from chunks). */
struct tile_row {
    struct image *im;
    size_t ylo, yhi;
    weft_executor *ex;
};
static void tachyon_cols(size_t lo, size_t hi, void *arg) {
    struct tile_row *tr = arg;
    for (size_t y = tr->ylo; y < tr->yhi; y++)
        for (size_t x = lo; x < hi; x++) {
            tr->im->px[y][x] = shade(x, y);
            atomic_fetch_add_explicit(&tr->im->visits[y][x], 1, memory_order_relaxed);
        }
}
static atomic_int g_nested_fail;
static void tachyon_row_tiles(size_t lo, size_t hi, void *arg) {
    struct tile_row tr = *(struct tile_row *)arg;
    tr.ylo = lo;
    tr.yhi = hi;
    weft_algo_config c = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 7};
    if (weft_parallel_for_range(tr.ex, 0, TW, 1, tachyon_cols, &tr, &c) != WEFT_OK)
        atomic_fetch_add(&g_nested_fail, 1);
}

TEST(tbb_tachyon_rows_and_2d_tiles_render_the_serial_image_with_each_pixel_once) {
    struct image *im = calloc(1, sizeof *im);
    uint32_t(*ref)[TW] = malloc(sizeof(uint32_t) * TH * TW);
    ASSERT_NOT_NULL(im);
    ASSERT_NOT_NULL(ref);
    for (size_t y = 0; y < TH; y++)
        for (size_t x = 0; x < TW; x++) ref[y][x] = shade(x, y);
    atomic_store(&g_nested_fail, 0);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        for (int form = 0; form < 6; form++) {
            memset(im, 0, sizeof *im);
            if (form < 4) {
                weft_algo_config c = {.partitioner = kParts[form], .chunk = 1};
                ASSERT_OK(weft_parallel_for_range(ex, 0, TH, 1, tachyon_rows, im, &c));
            } else {
                struct tile_row tr = {im, 0, 0, ex};
                weft_algo_config c = {.partitioner = form == 4 ? WEFT_PARTITION_STATIC : WEFT_PARTITION_GUIDED,
                                      .chunk = 5};
                ASSERT_OK(weft_parallel_for_range(ex, 0, TH, 1, tachyon_row_tiles, &tr, &c));
            }
            for (size_t y = 0; y < TH; y++)
                for (size_t x = 0; x < TW; x++)
                    if (im->px[y][x] != ref[y][x] || atomic_load(&im->visits[y][x]) != 1)
                        TEST_FAIL_("pixel (%zu,%zu) form %d on %u workers: %u visits", x, y, form, kW[w],
                                   atomic_load(&im->visits[y][x]));
        }
        weft_executor_destroy(ex);
    }
    ASSERT_EQ(atomic_load(&g_nested_fail), 0);
    free(im);
    free(ref);
}

/* ==== blocked_range2d matrix product: nested range loops, odd shapes ==== */

enum { MA = 37, MB = 53, MC = 29 };
struct mm {
    const int64_t *a, *b;
    int64_t *c;
    weft_executor *ex;
    size_t ilo, ihi;
    atomic_uint *touch;
};
static void mm_cols(size_t lo, size_t hi, void *arg) {
    struct mm *m = arg;
    for (size_t i = m->ilo; i < m->ihi; i++)
        for (size_t j = lo; j < hi; j++) {
            int64_t s = 0;
            for (size_t k = 0; k < MB; k++) s += m->a[i * MB + k] * m->b[k * MC + j];
            m->c[i * MC + j] = s;
            atomic_fetch_add_explicit(&m->touch[i * MC + j], 1, memory_order_relaxed);
        }
}
static void mm_rows(size_t lo, size_t hi, void *arg) {
    struct mm m = *(struct mm *)arg;
    m.ilo = lo;
    m.ihi = hi;
    weft_algo_config c = {.partitioner = WEFT_PARTITION_STATIC, .chunk = 3};
    if (weft_parallel_for_range(m.ex, 0, MC, 1, mm_cols, &m, &c) != WEFT_OK) atomic_fetch_add(&g_nested_fail, 1);
}

TEST(tbb_blocked_range2d_product_of_37x53_by_53x29_equals_the_triple_loop_on_every_partitioner) {
    int64_t *a = malloc(sizeof(int64_t) * MA * MB), *b = malloc(sizeof(int64_t) * MB * MC);
    int64_t *c = malloc(sizeof(int64_t) * MA * MC), *ref = malloc(sizeof(int64_t) * MA * MC);
    atomic_uint *touch = malloc(sizeof(atomic_uint) * MA * MC);
    ASSERT_TRUE(a && b && c && ref && touch);
    for (size_t i = 0; i < MA * MB; i++) a[i] = (int64_t)(mix64(i) % 201) - 100;
    for (size_t i = 0; i < MB * MC; i++) b[i] = (int64_t)(mix64(i + 7777) % 201) - 100;
    for (size_t i = 0; i < MA; i++)
        for (size_t j = 0; j < MC; j++) {
            int64_t s = 0;
            for (size_t k = 0; k < MB; k++) s += a[i * MB + k] * b[k * MC + j];
            ref[i * MC + j] = s;
        }
    atomic_store(&g_nested_fail, 0);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        for (int p = 0; p < 4; p++) {
            memset(c, 0, sizeof(int64_t) * MA * MC);
            for (size_t i = 0; i < MA * MC; i++) atomic_init(&touch[i], 0);
            struct mm m = {a, b, c, ex, 0, 0, touch};
            weft_algo_config cfg = {.partitioner = kParts[p], .chunk = (size_t)p};
            ASSERT_OK(weft_parallel_for_range(ex, 0, MA, 1, mm_rows, &m, &cfg));
            for (size_t i = 0; i < MA * MC; i++)
                if (c[i] != ref[i] || atomic_load(&touch[i]) != 1)
                    TEST_FAIL_("element %zu partitioner %d on %u workers", i, p, kW[w]);
        }
        weft_executor_destroy(ex);
    }
    ASSERT_EQ(atomic_load(&g_nested_fail), 0);
    free(a);
    free(b);
    free(c);
    free(ref);
    free(touch);
}

/* ==== oneTBB primes: a segmented sieve as a range reduction ==== */

struct sieve {
    size_t n;          /* count primes in [0, n) */
    const uint32_t *base; /* primes below sqrt(n) */
    size_t nbase;
};
static void sieve_count(size_t lo, size_t hi, void *acc, void *arg) {
    const struct sieve *s = arg;
    size_t len = hi - lo;
    unsigned char *comp = calloc(len, 1);
    if (!comp) abort();
    for (size_t k = 0; k < s->nbase; k++) {
        size_t p = s->base[k];
        if (p * p >= hi) break;
        size_t start = p * p;
        if (start < lo) start = (lo + p - 1) / p * p;
        for (size_t m = start; m < hi; m += p) comp[m - lo] = 1;
    }
    uint64_t c = 0;
    for (size_t i = lo; i < hi; i++)
        if (i >= 2 && !comp[i - lo]) c++;
    free(comp);
    *(uint64_t *)acc = c;
}
static void add_u64(void *acc, const void *x, void *arg) { *(uint64_t *)acc += *(const uint64_t *)x; }
static uint64_t primes_serial(size_t n) {
    uint64_t c = 0;
    for (size_t i = 2; i < n; i++) {
        bool p = true;
        for (size_t d = 2; d * d <= i; d++)
            if (i % d == 0) {
                p = false;
                break;
            }
        c += p;
    }
    return c;
}

TEST(tbb_primes_by_a_segmented_sieve_reduction_count_pi_of_n_for_awkward_n) {
    static const size_t ns[] = {0, 1, 2, 3, 4, 5, 100, 101, 9973, 9974, 65537, 200003};
    uint32_t base[512];
    size_t nbase = 0;
    for (uint32_t i = 2; i < 460; i++) {
        bool p = true;
        for (uint32_t d = 2; d * d <= i; d++)
            if (i % d == 0) p = false;
        if (p) base[nbase++] = i;
    }
    uint64_t want[sizeof ns / sizeof ns[0]];
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) want[k] = ns[k] <= 65537 ? primes_serial(ns[k]) : 17984;
    ASSERT_EQ(want[6], 25);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
            for (int p = 0; p < 4; p++) {
                struct sieve s = {ns[k], base, nbase};
                uint64_t got = 0;
                weft_algo_config c = {.partitioner = kParts[p], .chunk = p == 3 ? 97 : 0};
                ASSERT_OK(weft_parallel_reduce_range(ex, ns[k], sizeof got, &got, sieve_count, add_u64, &s, &c));
                if (got != want[k])
                    TEST_FAIL_("pi(%zu) = %" PRIu64 ", want %" PRIu64 " (partitioner %d, %u workers)", ns[k], got,
                               want[k], p, kW[w]);
            }
        weft_executor_destroy(ex);
    }
}

/* ==== oneTBB convex_hull: extremes by reduction, quickhull by spawns ==== */

typedef struct {
    int64_t x, y;
} pt;
static int64_t cross(pt o, pt a, pt b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }
/* acc = {index of min (x,y), index of max (x,y)} over points */
struct ext {
    size_t lo, hi;
};
struct hull_in {
    const pt *p;
};
static bool pt_less(pt a, pt b) { return a.x < b.x || (a.x == b.x && a.y < b.y); }
static void ext_range(size_t lo, size_t hi, void *acc, void *arg) {
    const pt *p = ((struct hull_in *)arg)->p;
    struct ext e = {lo, lo};
    for (size_t i = lo + 1; i < hi; i++) {
        if (pt_less(p[i], p[e.lo])) e.lo = i;
        if (pt_less(p[e.hi], p[i])) e.hi = i;
    }
    *(struct ext *)acc = e;
}
static void ext_join(void *acc, const void *x, void *arg) {
    const pt *p = ((struct hull_in *)arg)->p;
    struct ext *a = acc;
    const struct ext *b = x;
    if (pt_less(p[b->lo], p[a->lo])) a->lo = b->lo;
    if (pt_less(p[a->hi], p[b->hi])) a->hi = b->hi;
}

/* One quickhull step: the points of set strictly left of a->b, and the farthest. */
struct qh {
    const pt *set;
    size_t n;
    pt a, b;
    pt *out; /* hull points strictly between a and b, in order */
    size_t nout;
    weft_executor *ex;
    int depth;
};
struct far_acc {
    size_t idx;
    int64_t d;
};
static void far_range(size_t lo, size_t hi, void *acc, void *arg) {
    struct qh *q = arg;
    struct far_acc f = {lo, cross(q->a, q->b, q->set[lo])};
    for (size_t i = lo + 1; i < hi; i++) {
        int64_t d = cross(q->a, q->b, q->set[i]);
        if (d > f.d) f = (struct far_acc){i, d};
    }
    *(struct far_acc *)acc = f;
}
static void far_join(void *acc, const void *x, void *arg) {
    struct far_acc *a = acc;
    const struct far_acc *b = x;
    if (b->d > a->d) *a = *b; /* ties keep the first: the serial answer */
}
static int qh_step(weft_ctx *cx, void *arg);
/* Serial quickhull with the same choices: the reference. */
static size_t qh_serial(const pt *set, size_t n, pt a, pt b, pt *out) {
    pt *left = malloc(sizeof(pt) * (n ? n : 1));
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (cross(a, b, set[i]) > 0) left[m++] = set[i];
    if (m == 0) {
        free(left);
        return 0;
    }
    size_t fi = 0;
    for (size_t i = 1; i < m; i++)
        if (cross(a, b, left[i]) > cross(a, b, left[fi])) fi = i;
    pt f = left[fi];
    size_t k = qh_serial(left, m, a, f, out);
    out[k++] = f;
    k += qh_serial(left, m, f, b, out + k);
    free(left);
    return k;
}
/* flags for a scan-based filter: keep[i] = point left of a->b */
struct filt {
    struct qh *q;
    size_t *pos;
    pt *left;
};
static void mark_left(size_t lo, size_t hi, void *arg) {
    struct filt *f = arg;
    for (size_t i = lo; i < hi; i++) f->pos[i] = cross(f->q->a, f->q->b, f->q->set[i]) > 0;
}
static void add_size(void *acc, const void *x, void *arg) { *(size_t *)acc += *(const size_t *)x; }
static void scatter_left(size_t lo, size_t hi, void *arg) {
    struct filt *f = arg;
    for (size_t i = lo; i < hi; i++)
        if (cross(f->q->a, f->q->b, f->q->set[i]) > 0) f->left[f->pos[i]] = f->q->set[i];
}
static int qh_step(weft_ctx *cx, void *arg) {
    struct qh *q = arg;
    q->nout = 0;
    if (q->n == 0) return 0;
    /* filter by a parallel loop, an exclusive scan and a scatter, from this task */
    size_t *pos = malloc(sizeof(size_t) * q->n);
    pt *left = malloc(sizeof(pt) * q->n);
    if (!pos || !left) return 1;
    struct filt f = {q, pos, left};
    size_t zero = 0, m = 0;
    if (weft_parallel_for_range(q->ex, 0, q->n, 1, mark_left, &f, NULL) != WEFT_OK) return 2;
    m = q->n ? pos[q->n - 1] : 0;
    if (weft_parallel_exclusive_scan(q->ex, pos, pos, q->n, sizeof(size_t), &zero, add_size, NULL, NULL) != WEFT_OK)
        return 3;
    m += pos[q->n - 1];
    if (weft_parallel_for_range(q->ex, 0, q->n, 1, scatter_left, &f, NULL) != WEFT_OK) return 4;
    free(pos);
    if (m == 0) {
        free(left);
        return 0;
    }
    struct qh sub = *q;
    sub.set = left;
    sub.n = m;
    struct far_acc fa = {0, INT64_MIN};
    if (weft_parallel_reduce_range(q->ex, m, sizeof fa, &fa, far_range, far_join, &sub, NULL) != WEFT_OK) return 5;
    pt far = left[fa.idx];
    pt *ra = malloc(sizeof(pt) * m), *rb = malloc(sizeof(pt) * m);
    if (!ra || !rb) return 6;
    struct qh l = {left, m, q->a, far, ra, 0, q->ex, q->depth + 1};
    struct qh r = {left, m, far, q->b, rb, 0, q->ex, q->depth + 1};
    weft_spawn(cx, qh_step, &l);
    int sr = qh_step(cx, &r);
    int sl = weft_sync(cx);
    if (sl || sr) return sl ? sl : sr;
    memcpy(q->out, ra, sizeof(pt) * l.nout);
    q->out[l.nout] = far;
    memcpy(q->out + l.nout + 1, rb, sizeof(pt) * r.nout);
    q->nout = l.nout + 1 + r.nout;
    free(ra);
    free(rb);
    free(left);
    return 0;
}
struct hull_root {
    const pt *p;
    size_t n;
    weft_executor *ex;
    pt *up, *down;
    size_t nup, ndown;
    pt lo, hi;
};
static int hull_root(weft_ctx *cx, void *arg) {
    struct hull_root *h = arg;
    struct hull_in in = {h->p};
    struct ext e = {0, 0};
    if (weft_parallel_reduce_range(h->ex, h->n - 1, sizeof e, &e, ext_range, ext_join, &in, NULL) != WEFT_OK)
        return 1;
    /* the reduction's initial value is element 0's: the range covers [0, n-1),
     * so fold in the last point by hand */
    if (pt_less(h->p[h->n - 1], h->p[e.lo])) e.lo = h->n - 1;
    if (pt_less(h->p[e.hi], h->p[h->n - 1])) e.hi = h->n - 1;
    h->lo = h->p[e.lo];
    h->hi = h->p[e.hi];
    struct qh up = {h->p, h->n, h->lo, h->hi, h->up, 0, h->ex, 0};
    struct qh down = {h->p, h->n, h->hi, h->lo, h->down, 0, h->ex, 0};
    weft_task_group g;
    weft_task_group_init(&g, cx);
    weft_task_group_spawn(&g, qh_step, &up);
    weft_task_group_spawn(&g, qh_step, &down);
    int st = weft_task_group_wait(&g);
    h->nup = up.nout;
    h->ndown = down.nout;
    return st;
}

TEST(tbb_convex_hull_by_reductions_scans_and_spawned_halves_equals_the_serial_quickhull) {
    enum { NP = 3000 };
    pt *p = malloc(sizeof(pt) * NP), *su = malloc(sizeof(pt) * NP), *sd = malloc(sizeof(pt) * NP);
    pt *pu = malloc(sizeof(pt) * NP), *pd = malloc(sizeof(pt) * NP);
    ASSERT_TRUE(p && su && sd && pu && pd);
    /* awkward inputs too: 1, 2, 3 and 7 points, all equal, all on a line */
    static const size_t sizes[] = {NP, NP, NP, 1, 2, 3, 7, NP, NP};
    for (size_t shape = 0; shape < sizeof sizes / sizeof sizes[0]; shape++) {
        const size_t np = sizes[shape];
        for (size_t i = 0; i < np; i++) {
            uint64_t h = mix64(i * 3 + shape);
            int64_t x = (int64_t)(h % 2001) - 1000, y = (int64_t)((h >> 24) % 2001) - 1000;
            if (shape == 1 && x * x + y * y > 1000000) x /= 2, y /= 2;   /* disc-ish */
            if (shape == 2) y = (x * x) / 1000 + (int64_t)((h >> 48) % 3); /* near a parabola */
            if (shape == 7) x = 5, y = -5;                                /* all equal */
            if (shape == 8) y = 2 * x + 1;                                /* collinear */
            p[i] = (pt){x, y};
        }
        size_t lo = 0, hi = 0;
        for (size_t i = 1; i < np; i++) {
            if (pt_less(p[i], p[lo])) lo = i;
            if (pt_less(p[hi], p[i])) hi = i;
        }
        size_t nsu = qh_serial(p, np, p[lo], p[hi], su);
        size_t nsd = qh_serial(p, np, p[hi], p[lo], sd);
        if (np == NP && shape < 3) ASSERT_GT(nsu + nsd, 2);
        if (shape >= 7) ASSERT_EQ(nsu + nsd, 0);
        for (size_t w = 0; w < NW; w++) {
            weft_executor *ex = make_executor(kW[w]);
            struct hull_root h = {p, np, ex, pu, pd, 0, 0, {0, 0}, {0, 0}};
            root(ex, hull_root, &h);
            ASSERT_TRUE(h.lo.x == p[lo].x && h.lo.y == p[lo].y && h.hi.x == p[hi].x && h.hi.y == p[hi].y);
            ASSERT_EQ(h.nup, nsu);
            ASSERT_EQ(h.ndown, nsd);
            ASSERT_TRUE(memcmp(pu, su, sizeof(pt) * nsu) == 0);
            ASSERT_TRUE(memcmp(pd, sd, sizeof(pt) * nsd) == 0);
            weft_executor_destroy(ex);
        }
    }
    free(p);
    free(su);
    free(sd);
    free(pu);
    free(pd);
}

/* ==== oneTBB parallel_preorder: cells of a DAG evaluated after their inputs ==== */

enum { NCELL = 400, MAXIN = 3 };
struct cell {
    int nin;
    int in[MAXIN];
    int op;
    uint64_t value;
    atomic_int ready_inputs; /* the feeder form's reference count */
    atomic_int evals;
    int nsucc;
    int *succ;
};
struct dag {
    struct cell c[NCELL];
    int succ_store[NCELL * MAXIN];
};
static void dag_build(struct dag *g, uint64_t seed) {
    memset(g, 0, sizeof *g);
    int used = 0;
    for (int i = 0; i < NCELL; i++) {
        uint64_t h = mix64(seed * 1000003 + (uint64_t)i);
        struct cell *c = &g->c[i];
        c->nin = i == 0 ? 0 : (int)(h % (MAXIN + 1));
        if (i < 8) c->nin = 0; /* several sources */
        for (int k = 0; k < c->nin; k++) c->in[k] = (int)((h >> (8 + 12 * k)) % (uint64_t)i);
        c->op = (int)((h >> 50) % 3);
    }
    for (int i = 0; i < NCELL; i++) {
        g->c[i].succ = &g->succ_store[used];
        for (int j = i + 1; j < NCELL; j++)
            for (int k = 0; k < g->c[j].nin; k++)
                if (g->c[j].in[k] == i) g->c[i].succ[g->c[i].nsucc++] = j, used++;
    }
}
static void cell_eval(struct dag *g, int i) {
    struct cell *c = &g->c[i];
    uint64_t v = (uint64_t)i + 1;
    for (int k = 0; k < c->nin; k++) {
        uint64_t x = g->c[c->in[k]].value;
        v = c->op == 0 ? v + x : c->op == 1 ? v * (x | 1) : v ^ (x * 0x9e3779b97f4a7c15ull);
    }
    c->value = v;
    atomic_fetch_add(&c->evals, 1);
}
struct cell_task {
    struct dag *g;
    int i;
};
static int cell_graph_task(weft_ctx *cx, void *arg) {
    struct cell_task *t = arg;
    cell_eval(t->g, t->i);
    return 0;
}
/* parallel_do with a feeder: a finished cell feeds every successor whose last
 * input it was, as a child of its own task group. */
static int cell_feed(weft_ctx *cx, void *arg) {
    struct cell_task *t = arg;
    struct dag *g = t->g;
    cell_eval(g, t->i);
    struct cell *c = &g->c[t->i];
    struct cell_task *kids = malloc(sizeof *kids * (size_t)(c->nsucc ? c->nsucc : 1));
    if (!kids) return 1;
    int nk = 0;
    for (int k = 0; k < c->nsucc; k++) {
        int s = c->succ[k];
        /* an input may be listed twice: count references, not cells */
        if (atomic_fetch_sub(&g->c[s].ready_inputs, 1) == 1) kids[nk++] = (struct cell_task){g, s};
    }
    weft_task_group grp;
    weft_task_group_init(&grp, cx);
    for (int k = 0; k < nk; k++)
        if (weft_task_group_spawn(&grp, cell_feed, &kids[k]) != WEFT_OK) return 1;
    int st = weft_task_group_wait(&grp);
    free(kids);
    return st;
}
struct feed_root {
    struct dag *g;
};
static int feed_root(weft_ctx *cx, void *arg) {
    struct dag *g = ((struct feed_root *)arg)->g;
    struct cell_task roots[NCELL];
    int nr = 0;
    for (int i = 0; i < NCELL; i++) {
        atomic_store(&g->c[i].ready_inputs, g->c[i].nin);
        atomic_store(&g->c[i].evals, 0);
        if (g->c[i].nin == 0) roots[nr++] = (struct cell_task){g, i};
    }
    weft_task_group grp;
    weft_task_group_init(&grp, cx);
    for (int k = 0; k < nr; k++) weft_task_group_spawn(&grp, cell_feed, &roots[k]);
    return weft_task_group_wait(&grp);
}

TEST(tbb_parallel_preorder_dag_evaluates_each_cell_once_after_its_inputs_by_graph_and_by_feeder) {
    struct dag *g = malloc(sizeof *g);
    uint64_t *ref = malloc(sizeof(uint64_t) * NCELL);
    struct cell_task *ct = malloc(sizeof *ct * NCELL);
    ASSERT_TRUE(g && ref && ct);
    for (uint64_t seed = 1; seed <= 2; seed++) {
        dag_build(g, seed);
        for (int i = 0; i < NCELL; i++) cell_eval(g, i);
        for (int i = 0; i < NCELL; i++) ref[i] = g->c[i].value;
        for (size_t w = 0; w < NW; w++) {
            weft_executor *ex = make_executor(kW[w]);
            /* a taskflow: one task per cell, an edge per input (duplicates too) */
            weft_taskflow *tf = make_taskflow("preorder");
            weft_task t[NCELL];
            for (int i = 0; i < NCELL; i++) {
                ct[i] = (struct cell_task){g, i};
                t[i] = must_emplace(tf, cell_graph_task, &ct[i]);
            }
            for (int i = 0; i < NCELL; i++)
                for (int k = 0; k < g->c[i].nin; k++) ASSERT_OK(weft_precede(t[g->c[i].in[k]], t[i]));
            for (int i = 0; i < NCELL; i++) g->c[i].value = 0, atomic_store(&g->c[i].evals, 0);
            weft_future *f = NULL;
            ASSERT_OK(weft_run_n(ex, tf, 3, &f));
            ASSERT_OK(weft_future_wait(f));
            weft_future_destroy(f);
            for (int i = 0; i < NCELL; i++) {
                ASSERT_EQ(g->c[i].value, ref[i]);
                ASSERT_EQ(atomic_load(&g->c[i].evals), 3);
            }
            weft_taskflow_destroy(tf);
            /* the feeder form */
            for (int i = 0; i < NCELL; i++) g->c[i].value = 0;
            struct feed_root fr = {g};
            root(ex, feed_root, &fr);
            for (int i = 0; i < NCELL; i++) {
                ASSERT_EQ(g->c[i].value, ref[i]);
                ASSERT_EQ(atomic_load(&g->c[i].evals), 1);
            }
            weft_executor_destroy(ex);
        }
    }
    free(g);
    free(ref);
    free(ct);
}

/* ==== oneTBB task_group: fibonacci and sudoku ==== */

struct tgfib {
    int n;
    long r;
};
static int tg_fib(weft_ctx *cx, void *arg) {
    struct tgfib *a = arg;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    struct tgfib x = {a->n - 1, 0}, y = {a->n - 2, 0};
    weft_task_group g;
    weft_task_group_init(&g, cx);
    weft_task_group_spawn(&g, tg_fib, &x);
    weft_task_group_spawn(&g, tg_fib, &y);
    int st = weft_task_group_wait(&g);
    a->r = x.r + y.r;
    return st;
}

/* Sudoku: count every completion of a grid; each candidate of the first empty
 * cell is a child with its own copy of the grid. */
struct sud {
    unsigned char g[81];
    atomic_long *count;
    int depth;
};
static bool sud_ok(const unsigned char *g, int pos, int v) {
    int r = pos / 9, c = pos % 9, br = r / 3 * 3, bc = c / 3 * 3;
    for (int k = 0; k < 9; k++)
        if (g[r * 9 + k] == v || g[k * 9 + c] == v || g[(br + k / 3) * 9 + bc + k % 3] == v) return false;
    return true;
}
static long sud_serial(unsigned char *g) {
    int pos = 0;
    while (pos < 81 && g[pos]) pos++;
    if (pos == 81) return 1;
    long n = 0;
    for (int v = 1; v <= 9; v++)
        if (sud_ok(g, pos, v)) {
            g[pos] = (unsigned char)v;
            n += sud_serial(g);
            g[pos] = 0;
        }
    return n;
}
static int sud_task(weft_ctx *cx, void *arg) {
    struct sud *s = arg;
    int pos = 0;
    while (pos < 81 && s->g[pos]) pos++;
    if (pos == 81) {
        atomic_fetch_add(s->count, 1);
        return 0;
    }
    struct sud kids[9];
    int nk = 0;
    for (int v = 1; v <= 9; v++)
        if (sud_ok(s->g, pos, v)) {
            kids[nk] = *s;
            kids[nk].g[pos] = (unsigned char)v;
            kids[nk].depth++;
            nk++;
        }
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int k = 0; k < nk; k++) weft_task_group_spawn(&g, sud_task, &kids[k]);
    return weft_task_group_wait(&g);
}

TEST(tbb_task_group_fibonacci_and_sudoku_count_exactly_on_every_worker_count) {
    static const char *puzzle = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
    unsigned char base[81];
    for (int i = 0; i < 81; i++) base[i] = puzzle[i] == '.' ? 0 : (unsigned char)(puzzle[i] - '0');
    /* the unique solution, then fewer givens: many completions */
    unsigned char holes[81];
    memcpy(holes, base, 81);
    for (int i = 0; i < 81; i += 9) holes[i] = 0; /* 70 completions */
    unsigned char tmp[81];
    memcpy(tmp, base, 81);
    long want1 = sud_serial(tmp);
    memcpy(tmp, holes, 81);
    long want2 = sud_serial(tmp);
    ASSERT_EQ(want1, 1);
    ASSERT_GT(want2, 1);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        for (int n = 0; n <= 16; n += 4) {
            struct tgfib a = {n, -1};
            root(ex, tg_fib, &a);
            long x = 0, y = 1;
            for (int k = 0; k < n; k++) {
                long t = x + y;
                x = y;
                y = t;
            }
            ASSERT_EQ(a.r, x);
        }
        atomic_long cnt;
        atomic_init(&cnt, 0);
        struct sud s = {{0}, &cnt, 0};
        memcpy(s.g, base, 81);
        root(ex, sud_task, &s);
        ASSERT_EQ(atomic_load(&cnt), want1);
        atomic_store(&cnt, 0);
        memcpy(s.g, holes, 81);
        root(ex, sud_task, &s);
        ASSERT_EQ(atomic_load(&cnt), want2);
        weft_executor_destroy(ex);
    }
}

/* ==== oneTBB text_filter: read slices, capitalize words in parallel, write in order ==== */

enum { TXT = 20000, SLICE = 97 };
struct tf_text {
    const char *in;
    size_t n, pos; /* input cursor (serial input stage) */
    char *out;
    size_t outn;
    char (*buf)[SLICE + 1]; /* per line */
    size_t *len;             /* per line */
    atomic_int in_flight, max_in_flight;
    size_t lines;
    int bad_line;
};
static size_t slice_end(const char *s, size_t pos, size_t n) {
    size_t end = pos + SLICE < n ? pos + SLICE : n;
    if (end < n) {
        size_t e = end;
        while (e > pos && s[e - 1] != ' ' && s[e - 1] != '\n') e--;
        if (e > pos) end = e; /* a word longer than a slice is cut */
    }
    return end;
}
static void capitalize(char *s, size_t n, bool at_word_start) {
    for (size_t i = 0; i < n; i++) {
        bool start = i == 0 ? at_word_start : (s[i - 1] == ' ' || s[i - 1] == '\n');
        if (start && s[i] >= 'a' && s[i] <= 'z') s[i] = (char)(s[i] - 'a' + 'A');
    }
}
static int tf_read(weft_pipeflow *pf, void *arg) {
    struct tf_text *t = arg;
    if (t->pos >= t->n) return (int)weft_pipeflow_stop(pf);
    size_t l = weft_pipeflow_line(pf);
    if (l != weft_pipeflow_token(pf) % t->lines) t->bad_line = 1;
    size_t end = slice_end(t->in, t->pos, t->n);
    /* the slice keeps one byte before it: whether its first char starts a word */
    t->buf[l][0] = t->pos == 0 ? ' ' : t->in[t->pos - 1];
    memcpy(t->buf[l] + 1, t->in + t->pos, end - t->pos);
    t->len[l] = end - t->pos;
    t->pos = end;
    int f = atomic_fetch_add(&t->in_flight, 1) + 1;
    int m = atomic_load(&t->max_in_flight);
    while (f > m && !atomic_compare_exchange_weak(&t->max_in_flight, &m, f)) {
    }
    return 0;
}
static int tf_transform(weft_pipeflow *pf, void *arg) {
    struct tf_text *t = arg;
    size_t l = weft_pipeflow_line(pf);
    char before = t->buf[l][0];
    capitalize(t->buf[l] + 1, t->len[l], before == ' ' || before == '\n');
    return 0;
}
static int tf_write(weft_pipeflow *pf, void *arg) {
    struct tf_text *t = arg;
    size_t l = weft_pipeflow_line(pf);
    memcpy(t->out + t->outn, t->buf[l] + 1, t->len[l]);
    t->outn += t->len[l];
    atomic_fetch_sub(&t->in_flight, 1);
    return 0;
}
static int tf_rewind(weft_ctx *cx, void *arg) {
    struct tf_text *t = arg;
    t->pos = 0;
    t->outn = 0;
    return 0;
}

TEST(tbb_text_filter_pipeline_capitalizes_every_word_in_order_for_each_line_count_and_scheduling) {
    char *in = malloc(TXT), *want = malloc(TXT), *out = malloc(TXT);
    ASSERT_TRUE(in && want && out);
    size_t n = 0;
    for (uint64_t k = 0; n < TXT - 40; k++) {
        uint64_t h = mix64(k);
        size_t wl = 1 + h % (k % 50 == 0 ? 30 : 9); /* now and then a word longer than most slices */
        for (size_t i = 0; i < wl; i++) in[n++] = (char)('a' + (h >> (i % 8 * 5)) % 26);
        in[n++] = (h >> 60) % 7 == 0 ? '\n' : ' ';
    }
    memcpy(want, in, n);
    capitalize(want, n, true);
    static const size_t lines[] = {1, 2, 3, 4, 9};
    static const weft_pipeline_scheduling sch[] = {WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE};
    char(*buf)[SLICE + 1] = malloc(sizeof *buf * 9);
    size_t len[9];
    ASSERT_NOT_NULL(buf);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        for (size_t li = 0; li < 5; li++)
            for (size_t si = 0; si < 3; si++) {
                struct tf_text t = {in, n, 0, out, 0, buf, len, 0, 0, lines[li], 0};
                weft_stage st[] = {{WEFT_STAGE_SERIAL, tf_read, &t, "read"},
                                   {WEFT_STAGE_PARALLEL, tf_transform, &t, "capitalize"},
                                   {WEFT_STAGE_SERIAL, tf_write, &t, "write"}};
                weft_status err = WEFT_OK;
                weft_pipeline *p = weft_pipeline_create(lines[li], st, 3, &err);
                ASSERT_NOT_NULL(p);
                ASSERT_OK(weft_pipeline_set_scheduling(p, sch[si]));
                weft_taskflow *tf = make_taskflow("text_filter");
                weft_task rw = must_emplace(tf, tf_rewind, &t);
                weft_task pt = weft_pipeline_emplace(tf, p);
                ASSERT_FALSE(weft_task_is_null(pt));
                ASSERT_OK(weft_precede(rw, pt));
                weft_future *f = NULL;
                ASSERT_OK(weft_run_n(ex, tf, 2, &f)); /* the second run rewinds and filters again */
                ASSERT_OK(weft_future_wait(f));
                weft_future_destroy(f);
                ASSERT_EQ(t.outn, n);
                if (memcmp(out, want, n) != 0)
                    TEST_FAIL_("text differs: %zu lines, scheduling %d, %u workers", lines[li], (int)sch[si], kW[w]);
                ASSERT_EQ(t.bad_line, 0);
                ASSERT_LE((size_t)atomic_load(&t.max_in_flight), lines[li]);
                weft_taskflow_destroy(tf);
                ASSERT_OK(weft_pipeline_destroy(p));
            }
        weft_executor_destroy(ex);
    }
    free(buf);
    free(in);
    free(want);
    free(out);
}

/* ==== oneTBB test shapes: concurrent nested parallel_for; isolated waits ==== */

enum { NI = 48, NJ = 40 };
struct nest {
    weft_executor *ex;
    atomic_uchar *hits; /* NTHR x NI x NJ */
    size_t thr, i;
    atomic_int fails;
};
static void nest_inner(size_t lo, size_t hi, void *arg) {
    struct nest *a = arg;
    for (size_t j = lo; j < hi; j++) atomic_fetch_add(&a->hits[(a->thr * NI + a->i) * NJ + j], 1);
}
static void nest_outer(size_t i, void *arg) {
    struct nest a = *(struct nest *)arg; /* a copy per iteration: its own i */
    a.i = i;
    weft_algo_config c = {.partitioner = kParts[i % 4], .chunk = i % 5};
    if (weft_parallel_for_range(a.ex, 0, NJ, 1, nest_inner, &a, &c) != WEFT_OK)
        atomic_fetch_add(&((struct nest *)arg)->fails, 1);
}
static void *nest_thread(void *arg) {
    struct nest *a = arg;
    weft_algo_config c = {.partitioner = kParts[a->thr % 4], .chunk = 1};
    if (weft_parallel_for(a->ex, 0, NI, 1, nest_outer, a, &c) != WEFT_OK) atomic_fetch_add(&a->fails, 1);
    return NULL;
}

TEST(tbb_concurrent_nested_parallel_for_from_four_threads_visits_every_pair_once) {
    enum { NTHR = 4 };
    atomic_uchar *hits = malloc(NTHR * NI * NJ);
    ASSERT_NOT_NULL(hits);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        for (size_t k = 0; k < NTHR * NI * NJ; k++) atomic_init(&hits[k], 0);
        struct nest a[NTHR];
        pthread_t th[NTHR];
        for (size_t t = 0; t < NTHR; t++) {
            a[t].ex = ex;
            a[t].hits = hits;
            a[t].thr = t;
            a[t].i = 0;
            atomic_init(&a[t].fails, 0);
            ASSERT_EQ(pthread_create(&th[t], NULL, nest_thread, &a[t]), 0);
        }
        for (size_t t = 0; t < NTHR; t++) {
            pthread_join(th[t], NULL);
            ASSERT_EQ(atomic_load(&a[t].fails), 0);
        }
        for (size_t k = 0; k < NTHR * NI * NJ; k++)
            if (atomic_load(&hits[k]) != 1) TEST_FAIL_("pair %zu ran %d times on %u workers", k, hits[k], kW[w]);
        weft_executor_destroy(ex);
    }
    free(hits);
}

/* this_task_arena::isolate's test, on weft_sync: a worker waiting at a sync
 * runs only work descended from the child it waits for (forkjoin.h), so a
 * thread-local value set before the spawns is still there after the wait,
 * even when every child was stolen. */
static _Thread_local long tl_owner = -1;
static atomic_int g_iso_bad;
struct iso {
    long id;
    int depth;
};
static int iso_leaf_work(void) {
    volatile int x = 0;
    for (int k = 0; k < 200; k++) x += k;
    return x;
}
static int iso_task(weft_ctx *cx, void *arg) {
    struct iso *a = arg;
    long saved = tl_owner;
    tl_owner = a->id;
    if (a->depth < 6) {
        struct iso kids[3];
        weft_task_group g;
        weft_task_group_init(&g, cx);
        for (int k = 0; k < 3; k++) {
            kids[k] = (struct iso){a->id * 4 + k + 1, a->depth + 1};
            weft_task_group_spawn(&g, iso_task, &kids[k]);
        }
        (void)iso_leaf_work();
        int st = weft_task_group_wait(&g);
        if (st) return st;
    } else {
        (void)iso_leaf_work();
    }
    if (tl_owner != a->id) atomic_fetch_add(&g_iso_bad, 1);
    tl_owner = saved;
    return 0;
}
struct iso_outer {
    atomic_int done;
};
static int iso_root(weft_ctx *cx, void *arg) {
    struct iso roots[4];
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int k = 0; k < 4; k++) {
        roots[k] = (struct iso){(long)k + 1, 1};
        weft_task_group_spawn(&g, iso_task, &roots[k]);
    }
    return weft_task_group_wait(&g);
}

TEST(tbb_isolation_a_task_waiting_on_its_group_runs_no_unrelated_task_between_set_and_check) {
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        atomic_store(&g_iso_bad, 0);
        for (int rep = 0; rep < 3; rep++) root(ex, iso_root, NULL);
        ASSERT_EQ(atomic_load(&g_iso_bad), 0);
        weft_executor_destroy(ex);
    }
}

/* ==== oneTBB wavefront (migration example): block (i,j) after (i-1,j) and (i,j-1) ==== */

enum { WB = 9, WN = 12 }; /* 9 x 9 blocks of 12 x 12 cells */
struct wave {
    uint64_t *g; /* (WB*WN) x (WB*WN) */
    int bi, bj;
};
static void wave_block(uint64_t *g, int bi, int bj) {
    const int n = WB * WN;
    for (int i = bi * WN; i < (bi + 1) * WN; i++)
        for (int j = bj * WN; j < (bj + 1) * WN; j++) {
            uint64_t up = i ? g[(i - 1) * n + j] : (uint64_t)j, left = j ? g[i * n + j - 1] : (uint64_t)i;
            g[i * n + j] = mix64(up * 31 + left) % 1000003;
        }
}
static int wave_task(weft_ctx *cx, void *arg) {
    struct wave *w = arg;
    wave_block(w->g, w->bi, w->bj);
    return 0;
}

TEST(tbb_wavefront_by_dependent_async_tasks_equals_the_serial_sweep) {
    const int n = WB * WN;
    uint64_t *ref = calloc((size_t)n * n, 8), *g = calloc((size_t)n * n, 8);
    ASSERT_TRUE(ref && g);
    for (int bi = 0; bi < WB; bi++)
        for (int bj = 0; bj < WB; bj++) wave_block(ref, bi, bj);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        memset(g, 0, (size_t)n * n * 8);
        struct wave args[WB][WB];
        weft_future *fut[WB][WB];
        for (int bi = 0; bi < WB; bi++)
            for (int bj = 0; bj < WB; bj++) {
                args[bi][bj] = (struct wave){g, bi, bj};
                weft_future *deps[2];
                size_t nd = 0;
                if (bi) deps[nd++] = fut[bi - 1][bj];
                if (bj) deps[nd++] = fut[bi][bj - 1];
                ASSERT_OK(weft_dependent_async(ex, wave_task, &args[bi][bj], deps, nd, &fut[bi][bj]));
            }
        ASSERT_OK(weft_future_wait(fut[WB - 1][WB - 1]));
        for (int bi = 0; bi < WB; bi++)
            for (int bj = 0; bj < WB; bj++) {
                ASSERT_OK(weft_future_wait(fut[bi][bj]));
                weft_future_destroy(fut[bi][bj]);
            }
        ASSERT_TRUE(memcmp(g, ref, (size_t)n * n * 8) == 0);
        weft_executor_destroy(ex);
    }
    free(ref);
    free(g);
}

/* ==== BOTS nqueens: a board copy per task, counts kept per worker ==== */

struct nq {
    int n, row;
    unsigned char cols[16];
    long *per_worker; /* "threadprivate" counters, by weft_ctx_worker_id */
    int nworkers;
    atomic_int *bad_id;
};
static bool nq_ok(const unsigned char *c, int row, int col) {
    for (int r = 0; r < row; r++) {
        int d = c[r] - col;
        if (d == 0 || d == row - r || d == r - row) return false;
    }
    return true;
}
static int nq_task(weft_ctx *cx, void *arg) {
    struct nq *a = arg;
    if (a->row == a->n) {
        int id = weft_ctx_worker_id(cx);
        if (id < 0 || id >= a->nworkers) {
            atomic_fetch_add(a->bad_id, 1);
            return 0;
        }
        a->per_worker[id]++; /* only this worker writes its slot */
        return 0;
    }
    struct nq kids[16];
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int col = 0; col < a->n; col++)
        if (nq_ok(a->cols, a->row, col)) {
            kids[col] = *a;
            kids[col].cols[a->row] = (unsigned char)col;
            kids[col].row++;
            weft_task_group_spawn(&g, nq_task, &kids[col]);
        }
    return weft_task_group_wait(&g);
}

TEST(bots_nqueens_copies_the_board_per_task_and_sums_per_worker_counts_to_the_known_totals) {
    static const long want[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724};
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        int nwork = (int)weft_executor_workers(ex);
        long per[8];
        atomic_int bad;
        atomic_init(&bad, 0);
        for (int n = 1; n <= 10; n++) {
            memset(per, 0, sizeof per);
            struct nq a = {n, 0, {0}, per, nwork, &bad};
            root(ex, nq_task, &a);
            long sum = 0;
            for (int k = 0; k < nwork; k++) sum += per[k];
            ASSERT_EQ(atomic_load(&bad), 0);
            if (sum != want[n]) TEST_FAIL_("%d queens: %ld, want %ld (%u workers)", n, sum, want[n], kW[w]);
        }
        weft_executor_destroy(ex);
    }
}

/* ==== BOTS sparselu: blocked LU of a sparse block matrix ==== */

enum { LB = 10, LS = 8 }; /* 10 x 10 blocks of 8 x 8 doubles */
typedef double lblock[LS][LS];
struct slu {
    lblock *blk[LB][LB];
};
static void slu_gen(struct slu *m) {
    for (int i = 0; i < LB; i++)
        for (int j = 0; j < LB; j++) {
            bool null = (i < j && i % 3 != 0) || (i > j && j % 3 != 0);
            if (i == j || i == j + 1 || j == i + 1) null = false;
            if (null) {
                m->blk[i][j] = NULL;
                continue;
            }
            m->blk[i][j] = malloc(sizeof(lblock));
            for (int a = 0; a < LS; a++)
                for (int b = 0; b < LS; b++)
                    (*m->blk[i][j])[a][b] =
                        (double)(mix64((uint64_t)((i * LB + j) * 64 + a * LS + b)) % 1000) / 100.0 + (a == b && i == j ? 50.0 : 0.0);
        }
}
static void slu_free(struct slu *m) {
    for (int i = 0; i < LB; i++)
        for (int j = 0; j < LB; j++) free(m->blk[i][j]), m->blk[i][j] = NULL;
}
static void lu0(lblock *d) {
    for (int k = 0; k < LS; k++)
        for (int i = k + 1; i < LS; i++) {
            (*d)[i][k] /= (*d)[k][k];
            for (int j = k + 1; j < LS; j++) (*d)[i][j] -= (*d)[i][k] * (*d)[k][j];
        }
}
static void fwd(lblock *d, lblock *c) {
    for (int j = 0; j < LS; j++)
        for (int k = 0; k < LS; k++)
            for (int i = k + 1; i < LS; i++) (*c)[i][j] -= (*d)[i][k] * (*c)[k][j];
}
static void bdiv(lblock *d, lblock *r) {
    for (int i = 0; i < LS; i++)
        for (int k = 0; k < LS; k++) {
            (*r)[i][k] /= (*d)[k][k];
            for (int j = k + 1; j < LS; j++) (*r)[i][j] -= (*r)[i][k] * (*d)[k][j];
        }
}
static void bmod(lblock *r, lblock *c, lblock *x) {
    for (int i = 0; i < LS; i++)
        for (int j = 0; j < LS; j++)
            for (int k = 0; k < LS; k++) (*x)[i][j] -= (*r)[i][k] * (*c)[k][j];
}
static void slu_serial(struct slu *m) {
    for (int kk = 0; kk < LB; kk++) {
        lu0(m->blk[kk][kk]);
        for (int jj = kk + 1; jj < LB; jj++)
            if (m->blk[kk][jj]) fwd(m->blk[kk][kk], m->blk[kk][jj]);
        for (int ii = kk + 1; ii < LB; ii++)
            if (m->blk[ii][kk]) bdiv(m->blk[kk][kk], m->blk[ii][kk]);
        for (int ii = kk + 1; ii < LB; ii++)
            if (m->blk[ii][kk])
                for (int jj = kk + 1; jj < LB; jj++)
                    if (m->blk[kk][jj]) {
                        if (!m->blk[ii][jj]) m->blk[ii][jj] = calloc(1, sizeof(lblock));
                        bmod(m->blk[ii][kk], m->blk[kk][jj], m->blk[ii][jj]);
                    }
    }
}
struct slu_op {
    int kind; /* 0 lu0, 1 fwd, 2 bdiv, 3 bmod */
    lblock *a, *b, *c;
};
static int slu_op_run(weft_ctx *cx, void *arg) {
    struct slu_op *o = arg;
    switch (o->kind) {
    case 0: lu0(o->a); break;
    case 1: fwd(o->a, o->b); break;
    case 2: bdiv(o->a, o->b); break;
    default: bmod(o->a, o->b, o->c); break;
    }
    return 0;
}
/* The "single" version: a root task spawning each phase's tasks and waiting. */
static int slu_root(weft_ctx *cx, void *arg) {
    struct slu *m = arg;
    static struct slu_op ops[LB * LB];
    for (int kk = 0; kk < LB; kk++) {
        lu0(m->blk[kk][kk]);
        weft_task_group g;
        weft_task_group_init(&g, cx);
        int n = 0;
        for (int jj = kk + 1; jj < LB; jj++)
            if (m->blk[kk][jj]) {
                ops[n] = (struct slu_op){1, m->blk[kk][kk], m->blk[kk][jj], NULL};
                weft_task_group_spawn(&g, slu_op_run, &ops[n++]);
            }
        for (int ii = kk + 1; ii < LB; ii++)
            if (m->blk[ii][kk]) {
                ops[n] = (struct slu_op){2, m->blk[kk][kk], m->blk[ii][kk], NULL};
                weft_task_group_spawn(&g, slu_op_run, &ops[n++]);
            }
        int st = weft_task_group_wait(&g);
        if (st) return st;
        n = 0;
        for (int ii = kk + 1; ii < LB; ii++)
            if (m->blk[ii][kk])
                for (int jj = kk + 1; jj < LB; jj++)
                    if (m->blk[kk][jj]) {
                        if (!m->blk[ii][jj]) m->blk[ii][jj] = calloc(1, sizeof(lblock));
                        ops[n] = (struct slu_op){3, m->blk[ii][kk], m->blk[kk][jj], m->blk[ii][jj]};
                        weft_task_group_spawn(&g, slu_op_run, &ops[n++]);
                    }
        st = weft_task_group_wait(&g);
        if (st) return st;
    }
    return 0;
}
static bool slu_equal(const struct slu *a, const struct slu *b) {
    for (int i = 0; i < LB; i++)
        for (int j = 0; j < LB; j++) {
            if (!a->blk[i][j] != !b->blk[i][j]) return false;
            if (a->blk[i][j] && memcmp(a->blk[i][j], b->blk[i][j], sizeof(lblock))) return false;
        }
    return true;
}

TEST(bots_sparselu_by_task_group_phases_and_by_a_dependency_graph_equals_the_serial_lu) {
    struct slu ref, m;
    slu_gen(&ref);
    slu_serial(&ref);
    struct slu_op *gops = malloc(sizeof *gops * LB * LB * LB);
    ASSERT_NOT_NULL(gops);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        slu_gen(&m);
        root(ex, slu_root, &m);
        ASSERT_TRUE(slu_equal(&ref, &m));
        slu_free(&m);
        /* the same as a taskflow: one task per block operation, an edge from
         * the last writer of each block it reads or writes (the fill-in is
         * known from the structure, so the blocks are allocated up front) */
        slu_gen(&m);
        weft_taskflow *tf = make_taskflow("sparselu");
        weft_task last[LB][LB];
        bool has[LB][LB];
        memset(has, 0, sizeof has);
        size_t nops = 0;
#define SLU_DEP(t, i, j)                                                                          \
    do {                                                                                          \
        if (has[i][j]) ASSERT_OK(weft_precede(last[i][j], (t)));                                  \
    } while (0)
        for (int kk = 0; kk < LB; kk++) {
            gops[nops] = (struct slu_op){0, m.blk[kk][kk], NULL, NULL};
            weft_task t = must_emplace(tf, slu_op_run, &gops[nops++]);
            SLU_DEP(t, kk, kk);
            last[kk][kk] = t, has[kk][kk] = true;
            for (int jj = kk + 1; jj < LB; jj++)
                if (m.blk[kk][jj]) {
                    gops[nops] = (struct slu_op){1, m.blk[kk][kk], m.blk[kk][jj], NULL};
                    weft_task f = must_emplace(tf, slu_op_run, &gops[nops++]);
                    SLU_DEP(f, kk, kk);
                    SLU_DEP(f, kk, jj);
                    last[kk][jj] = f, has[kk][jj] = true;
                }
            for (int ii = kk + 1; ii < LB; ii++)
                if (m.blk[ii][kk]) {
                    gops[nops] = (struct slu_op){2, m.blk[kk][kk], m.blk[ii][kk], NULL};
                    weft_task b = must_emplace(tf, slu_op_run, &gops[nops++]);
                    SLU_DEP(b, kk, kk);
                    SLU_DEP(b, ii, kk);
                    last[ii][kk] = b, has[ii][kk] = true;
                }
            for (int ii = kk + 1; ii < LB; ii++)
                if (m.blk[ii][kk])
                    for (int jj = kk + 1; jj < LB; jj++)
                        if (m.blk[kk][jj]) {
                            if (!m.blk[ii][jj]) m.blk[ii][jj] = calloc(1, sizeof(lblock));
                            gops[nops] = (struct slu_op){3, m.blk[ii][kk], m.blk[kk][jj], m.blk[ii][jj]};
                            weft_task x = must_emplace(tf, slu_op_run, &gops[nops++]);
                            SLU_DEP(x, ii, kk);
                            SLU_DEP(x, kk, jj);
                            SLU_DEP(x, ii, jj);
                            last[ii][jj] = x, has[ii][jj] = true;
                        }
        }
#undef SLU_DEP
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_TRUE(slu_equal(&ref, &m));
        weft_taskflow_destroy(tf);
        slu_free(&m);
        weft_executor_destroy(ex);
    }
    slu_free(&ref);
    free(gops);
}

/* ==== BOTS strassen: seven spawned sub-products per level ==== */

/* Matrices are n x n views with a row stride. */
typedef struct {
    int64_t *p;
    size_t ld;
} mview;
static mview mv_sub(mview m, size_t r, size_t c, size_t h) { return (mview){m.p + r * h * m.ld + c * h, m.ld}; }
#define MV(m, i, j) ((m).p[(i) * (m).ld + (j)])
static void mv_addsub(mview a, mview b, mview out, size_t n, int sign) {
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) MV(out, i, j) = MV(a, i, j) + sign * MV(b, i, j);
}
static void mv_naive(mview a, mview b, mview c, size_t n) {
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int64_t s = 0;
            for (size_t k = 0; k < n; k++) s += MV(a, i, k) * MV(b, k, j);
            MV(c, i, j) = s;
        }
}
struct strassen {
    mview a, b, c;
    size_t n;
};
static int strassen_task(weft_ctx *cx, void *arg) {
    struct strassen *s = arg;
    size_t n = s->n, h = n / 2;
    if (n <= 8) {
        mv_naive(s->a, s->b, s->c, n);
        return 0;
    }
    /* 7 products, each with its own operand sums: 14 temporaries + 7 results */
    int64_t *buf = malloc(sizeof(int64_t) * h * h * 21);
    if (!buf) return 1;
    mview t[21];
    for (int k = 0; k < 21; k++) t[k] = (mview){buf + (size_t)k * h * h, h};
    mview a11 = mv_sub(s->a, 0, 0, h), a12 = mv_sub(s->a, 0, 1, h), a21 = mv_sub(s->a, 1, 0, h),
          a22 = mv_sub(s->a, 1, 1, h);
    mview b11 = mv_sub(s->b, 0, 0, h), b12 = mv_sub(s->b, 0, 1, h), b21 = mv_sub(s->b, 1, 0, h),
          b22 = mv_sub(s->b, 1, 1, h);
    mv_addsub(a11, a22, t[0], h, 1), mv_addsub(b11, b22, t[1], h, 1);  /* M1 */
    mv_addsub(a21, a22, t[2], h, 1), mv_addsub(b11, b11, t[3], h, 0);  /* M2 = (a21+a22) b11 */
    mv_addsub(a11, a11, t[4], h, 0), mv_addsub(b12, b22, t[5], h, -1); /* M3 = a11 (b12-b22) */
    mv_addsub(a22, a22, t[6], h, 0), mv_addsub(b21, b11, t[7], h, -1); /* M4 = a22 (b21-b11) */
    mv_addsub(a11, a12, t[8], h, 1), mv_addsub(b22, b22, t[9], h, 0);  /* M5 = (a11+a12) b22 */
    mv_addsub(a21, a11, t[10], h, -1), mv_addsub(b11, b12, t[11], h, 1); /* M6 */
    mv_addsub(a12, a22, t[12], h, -1), mv_addsub(b21, b22, t[13], h, 1); /* M7 */
    struct strassen sub[7];
    for (int k = 0; k < 7; k++) sub[k] = (struct strassen){t[2 * k], t[2 * k + 1], t[14 + k], h};
    /* BOTS's shape: six spawned, the seventh run here, one sync each */
    for (int k = 0; k < 6; k++) weft_spawn(cx, strassen_task, &sub[k]);
    int st = strassen_task(cx, &sub[6]);
    for (int k = 0; k < 6; k++) {
        int r = weft_sync(cx);
        if (r && !st) st = r;
    }
    if (st) {
        free(buf);
        return st;
    }
    mview m1 = t[14], m2 = t[15], m3 = t[16], m4 = t[17], m5 = t[18], m6 = t[19], m7 = t[20];
    mview c11 = mv_sub(s->c, 0, 0, h), c12 = mv_sub(s->c, 0, 1, h), c21 = mv_sub(s->c, 1, 0, h),
          c22 = mv_sub(s->c, 1, 1, h);
    for (size_t i = 0; i < h; i++)
        for (size_t j = 0; j < h; j++) {
            MV(c11, i, j) = MV(m1, i, j) + MV(m4, i, j) - MV(m5, i, j) + MV(m7, i, j);
            MV(c12, i, j) = MV(m3, i, j) + MV(m5, i, j);
            MV(c21, i, j) = MV(m2, i, j) + MV(m4, i, j);
            MV(c22, i, j) = MV(m1, i, j) - MV(m2, i, j) + MV(m3, i, j) + MV(m6, i, j);
        }
    free(buf);
    return 0;
}

TEST(bots_strassen_with_six_spawns_and_a_call_per_level_equals_the_naive_product) {
    enum { SN = 64 };
    int64_t *a = malloc(8 * SN * SN), *b = malloc(8 * SN * SN), *c = malloc(8 * SN * SN), *r = malloc(8 * SN * SN);
    ASSERT_TRUE(a && b && c && r);
    for (size_t i = 0; i < SN * SN; i++) a[i] = (int64_t)(mix64(i) % 19) - 9, b[i] = (int64_t)(mix64(i + 99) % 19) - 9;
    mv_naive((mview){a, SN}, (mview){b, SN}, (mview){r, SN}, SN);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        for (size_t n = 8; n <= SN; n *= 2) {
            memset(c, 0, 8 * SN * SN);
            struct strassen s = {{a, SN}, {b, SN}, {c, SN}, n};
            root(ex, strassen_task, &s);
            int64_t *rr = malloc(8 * n * n);
            mv_naive((mview){a, SN}, (mview){b, SN}, (mview){rr, n}, n);
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                    if (c[i * SN + j] != rr[i * n + j]) TEST_FAIL_("n %zu (%zu,%zu) on %u workers", n, i, j, kW[w]);
            free(rr);
        }
        ASSERT_TRUE(memcmp(c, r, 8 * SN * SN) == 0);
        weft_executor_destroy(ex);
    }
    free(a);
    free(b);
    free(c);
    free(r);
}

/* ==== BOTS fft: recursive radix-2 with spawned halves and a split twiddle loop ==== */

typedef struct {
    double re, im;
} cplx;
struct fft {
    const cplx *in;
    cplx *out;
    size_t n, stride;
    const cplx *w; /* w[k] = exp(-2 pi i k / N) for the full N */
    size_t wstep;  /* N / n */
    int par;
};
struct twid {
    struct fft *f;
    size_t lo, hi;
};
static void twiddle_range(struct fft *f, size_t lo, size_t hi) {
    size_t h = f->n / 2;
    for (size_t k = lo; k < hi; k++) {
        cplx e = f->out[k], o = f->out[k + h], w = f->w[k * f->wstep];
        cplx t = {w.re * o.re - w.im * o.im, w.re * o.im + w.im * o.re};
        f->out[k] = (cplx){e.re + t.re, e.im + t.im};
        f->out[k + h] = (cplx){e.re - t.re, e.im - t.im};
    }
}
static int twiddle_task(weft_ctx *cx, void *arg) {
    struct twid *t = arg;
    if (t->hi - t->lo <= 16) {
        twiddle_range(t->f, t->lo, t->hi);
        return 0;
    }
    size_t mid = t->lo + (t->hi - t->lo) / 2;
    struct twid a = {t->f, t->lo, mid}, b = {t->f, mid, t->hi};
    weft_spawn(cx, twiddle_task, &a);
    int sb = twiddle_task(cx, &b);
    int sa = weft_sync(cx);
    return sa ? sa : sb;
}
static int fft_task(weft_ctx *cx, void *arg) {
    struct fft *f = arg;
    if (f->n == 1) {
        f->out[0] = f->in[0];
        return 0;
    }
    size_t h = f->n / 2;
    struct fft e = {f->in, f->out, h, f->stride * 2, f->w, f->wstep * 2, f->par};
    struct fft o = {f->in + f->stride, f->out + h, h, f->stride * 2, f->w, f->wstep * 2, f->par};
    if (f->par) {
        weft_spawn(cx, fft_task, &e);
        int so = fft_task(cx, &o);
        int se = weft_sync(cx);
        if (se || so) return se ? se : so;
        struct twid t = {f, 0, h};
        return twiddle_task(cx, &t);
    }
    fft_task(cx, &e);
    fft_task(cx, &o);
    twiddle_range(f, 0, h);
    return 0;
}

/* cos by its series (no libm in the test link; any fixed table will do). */
static double taylor_cos(double x) {
    double term = 1, sum = 1;
    for (int k = 1; k < 40; k++) {
        term *= -x * x / ((2.0 * k - 1) * (2.0 * k));
        sum += term;
    }
    return sum;
}

TEST(bots_fft_by_spawned_halves_and_split_twiddles_equals_the_serial_fft_bit_for_bit) {
    enum { FN = 4096 };
    cplx *in = malloc(sizeof(cplx) * FN), *ref = malloc(sizeof(cplx) * FN), *out = malloc(sizeof(cplx) * FN);
    cplx *w = malloc(sizeof(cplx) * FN);
    ASSERT_TRUE(in && ref && out && w);
    for (size_t k = 0; k < FN; k++) {
        /* exact twiddles are not needed: any fixed table gives the same bits both ways */
        double a = -2.0 * 3.14159265358979323846 * (double)k / FN;
        w[k] = (cplx){taylor_cos(a), taylor_cos(a - 3.14159265358979323846 / 2)};
        in[k] = (cplx){(double)(mix64(k) % 1000) / 7.0, (double)(mix64(k + FN) % 1000) / 11.0};
    }
    for (size_t n = 1; n <= FN; n *= 8) {
        struct fft s = {in, ref, n, 1, w, FN / n, 0};
        fft_task(NULL, &s);
        for (size_t wi = 0; wi < NW; wi++) {
            weft_executor *ex = make_executor(kW[wi]);
            struct fft p = {in, out, n, 1, w, FN / n, 1};
            root(ex, fft_task, &p);
            if (memcmp(out, ref, sizeof(cplx) * n)) TEST_FAIL_("fft of %zu differs on %u workers", n, kW[wi]);
            weft_executor_destroy(ex);
        }
    }
    free(in);
    free(ref);
    free(out);
    free(w);
}

/* ==== BOTS health: a tree of villages simulated step by step ==== */

enum { HKIDS = 4, HDEPTH = 3, HMAXP = 4096 };
struct village {
    int id, nkids;
    struct village *kids[HKIDS];
    uint64_t rng;
    uint32_t waiting[HMAXP];
    size_t nwait;
    uint32_t up[HMAXP]; /* patients sent to the parent this step */
    size_t nup;
    uint64_t treated, checksum;
    uint32_t next_patient;
};
static uint32_t vrand(struct village *v) {
    v->rng = v->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(v->rng >> 33);
}
static struct village *village_make(int *next_id, int depth) {
    struct village *v = calloc(1, sizeof *v);
    v->id = (*next_id)++;
    v->rng = mix64((uint64_t)v->id);
    if (depth < HDEPTH) {
        v->nkids = HKIDS;
        for (int k = 0; k < HKIDS; k++) v->kids[k] = village_make(next_id, depth + 1);
    }
    return v;
}
static void village_free(struct village *v) {
    for (int k = 0; k < v->nkids; k++) village_free(v->kids[k]);
    free(v);
}
/* After the children's step: take their patients in child order, make new
 * ones, treat some here and send the rest up (the root keeps them). */
static void village_own_step(struct village *v, bool is_root) {
    for (int k = 0; k < v->nkids; k++) {
        struct village *c = v->kids[k];
        for (size_t i = 0; i < c->nup && v->nwait < HMAXP; i++) v->waiting[v->nwait++] = c->up[i];
        c->nup = 0;
    }
    if (vrand(v) % 3 == 0 && v->nwait < HMAXP) v->waiting[v->nwait++] = (uint32_t)v->id << 16 | v->next_patient++;
    size_t keep = 0;
    for (size_t i = 0; i < v->nwait; i++) {
        uint32_t p = v->waiting[i], r = vrand(v) % 10;
        if (r < 3) {
            v->treated++;
            v->checksum = v->checksum * 31 + p;
        } else if (r < 5 && !is_root) {
            v->up[v->nup++] = p;
        } else {
            v->waiting[keep++] = p;
        }
    }
    v->nwait = keep;
}
static void village_step_serial(struct village *v, bool is_root) {
    for (int k = 0; k < v->nkids; k++) village_step_serial(v->kids[k], false);
    village_own_step(v, is_root);
}
struct vstep {
    struct village *v;
    bool is_root;
};
static int village_step_task(weft_ctx *cx, void *arg) {
    struct vstep *s = arg;
    struct vstep kids[HKIDS];
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int k = 0; k < s->v->nkids; k++) {
        kids[k] = (struct vstep){s->v->kids[k], false};
        weft_task_group_spawn(&g, village_step_task, &kids[k]);
    }
    int st = weft_task_group_wait(&g);
    village_own_step(s->v, s->is_root);
    return st;
}
static void village_sum(const struct village *v, uint64_t *treated, uint64_t *check, uint64_t *waiting) {
    *treated += v->treated;
    *check = *check * 1000003 + v->checksum;
    *waiting = *waiting * 7 + v->nwait;
    for (int k = 0; k < v->nkids; k++) village_sum(v->kids[k], treated, check, waiting);
}

TEST(bots_health_village_tree_over_forty_steps_treats_the_same_patients_as_the_serial_run) {
    int id = 0;
    struct village *ref = village_make(&id, 0);
    for (int s = 0; s < 40; s++) village_step_serial(ref, true);
    uint64_t rt = 0, rc = 0, rw = 0;
    village_sum(ref, &rt, &rc, &rw);
    ASSERT_GT(rt, 10);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        id = 0;
        struct village *v = village_make(&id, 0);
        struct vstep st = {v, true};
        for (int s = 0; s < 40; s++) root(ex, village_step_task, &st);
        uint64_t t = 0, c = 0, wt = 0;
        village_sum(v, &t, &c, &wt);
        ASSERT_EQ(t, rt);
        ASSERT_EQ(c, rc);
        ASSERT_EQ(wt, rw);
        village_free(v);
        weft_executor_destroy(ex);
    }
    village_free(ref);
}

/* ==== BOTS floorplan: branch and bound with a shared best bound ==== */

enum { FC = 10, FALT = 3 };
struct fp_shape {
    int w, h;
};
static struct fp_shape g_fp[FC][FALT];
static long fp_serial(int k, long wsum, long hmax) {
    if (k == FC) return wsum * hmax;
    long best = -1;
    for (int a = 0; a < FALT; a++) {
        long h = hmax > g_fp[k][a].h ? hmax : g_fp[k][a].h;
        long r = fp_serial(k + 1, wsum + g_fp[k][a].w, h);
        if (best < 0 || r < best) best = r;
    }
    return best;
}
struct fp {
    int k;
    long wsum, hmax;
    atomic_long *best;
    atomic_long *nodes;
};
static int fp_task(weft_ctx *cx, void *arg) {
    struct fp *f = arg;
    atomic_fetch_add_explicit(f->nodes, 1, memory_order_relaxed);
    long bound = f->wsum * f->hmax;
    if (bound >= atomic_load(f->best)) return 0; /* pruned */
    if (f->k == FC) {
        long cur = atomic_load(f->best);
        while (bound < cur && !atomic_compare_exchange_weak(f->best, &cur, bound)) {
        }
        return 0;
    }
    struct fp kids[FALT];
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int a = 0; a < FALT; a++) {
        long h = f->hmax > g_fp[f->k][a].h ? f->hmax : g_fp[f->k][a].h;
        kids[a] = (struct fp){f->k + 1, f->wsum + g_fp[f->k][a].w, h, f->best, f->nodes};
        weft_task_group_spawn(&g, fp_task, &kids[a]);
    }
    return weft_task_group_wait(&g);
}

TEST(bots_floorplan_branch_and_bound_with_a_shared_bound_finds_the_exhaustive_minimum) {
    for (int set = 0; set < 3; set++) {
        for (int k = 0; k < FC; k++)
            for (int a = 0; a < FALT; a++) {
                uint64_t h = mix64((uint64_t)(set * 100 + k * FALT + a));
                g_fp[k][a] = (struct fp_shape){1 + (int)(h % 9), 1 + (int)((h >> 16) % 9)};
            }
        long want = fp_serial(0, 0, 0);
        for (size_t w = 0; w < NW; w++) {
            weft_executor *ex = make_executor(kW[w]);
            atomic_long best, nodes;
            atomic_init(&best, LONG_MAX);
            atomic_init(&nodes, 0);
            struct fp f = {0, 0, 1, &best, &nodes};
            /* hmax starts at 1 (shapes are at least 1 high): the bound is 0 before any width */
            root(ex, fp_task, &f);
            ASSERT_EQ(atomic_load(&best), want);
            ASSERT_GT(atomic_load(&nodes), FC);
            weft_executor_destroy(ex);
        }
    }
}

/* ==== BOTS alignment: every pair of sequences, rows by a dynamic loop ==== */

enum { NSEQ = 20, SEQMAX = 70 };
struct align {
    char seq[NSEQ][SEQMAX + 1];
    int len[NSEQ];
    int score[NSEQ][NSEQ];
    atomic_int runs[NSEQ][NSEQ];
    atomic_int no_ctx;
};
static int nw_score(const char *a, int la, const char *b, int lb) {
    int prev[SEQMAX + 1], cur[SEQMAX + 1];
    for (int j = 0; j <= lb; j++) prev[j] = -2 * j;
    for (int i = 1; i <= la; i++) {
        cur[0] = -2 * i;
        for (int j = 1; j <= lb; j++) {
            int m = prev[j - 1] + (a[i - 1] == b[j - 1] ? 2 : -1);
            int d = prev[j] - 2, l = cur[j - 1] - 2;
            cur[j] = m > d ? (m > l ? m : l) : (d > l ? d : l);
        }
        memcpy(prev, cur, sizeof(int) * (size_t)(lb + 1));
    }
    return prev[lb];
}
struct pair {
    struct align *al;
    int i, j;
};
static int pair_task(weft_ctx *cx, void *arg) {
    struct pair *p = arg;
    struct align *al = p->al;
    al->score[p->i][p->j] = nw_score(al->seq[p->i], al->len[p->i], al->seq[p->j], al->len[p->j]);
    atomic_fetch_add(&al->runs[p->i][p->j], 1);
    return 0;
}
/* A loop body spawning a task per pair through the chunk's context
 * (algo.h: from a task, a callback may spawn and sync through weft_current_ctx()). */
static void align_row(size_t i, void *arg) {
    struct align *al = arg;
    weft_ctx *cx = weft_current_ctx();
    if (!cx) {
        atomic_fetch_add(&al->no_ctx, 1);
        return;
    }
    struct pair ps[NSEQ];
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int j = (int)i + 1; j < NSEQ; j++) {
        ps[j] = (struct pair){al, (int)i, j};
        weft_task_group_spawn(&g, pair_task, &ps[j]);
    }
    if (weft_task_group_wait(&g) != 0) atomic_fetch_add(&al->no_ctx, 1000);
}
struct align_root_arg {
    struct align *al;
    weft_executor *ex;
};
static int align_root(weft_ctx *cx, void *arg) {
    struct align_root_arg *a = arg;
    weft_algo_config c = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1};
    return weft_parallel_for(a->ex, 0, NSEQ, 1, align_row, a->al, &c) == WEFT_OK ? 0 : 1;
}

TEST(bots_alignment_of_every_pair_by_a_dynamic_loop_spawning_per_pair_equals_the_serial_scores) {
    struct align *al = calloc(1, sizeof *al);
    ASSERT_NOT_NULL(al);
    int ref[NSEQ][NSEQ];
    for (int s = 0; s < NSEQ; s++) {
        al->len[s] = 30 + (int)(mix64((uint64_t)s) % (SEQMAX - 29));
        for (int k = 0; k < al->len[s]; k++) al->seq[s][k] = "ACGT"[mix64((uint64_t)(s * 1000 + k)) % 4];
    }
    for (int i = 0; i < NSEQ; i++)
        for (int j = i + 1; j < NSEQ; j++) ref[i][j] = nw_score(al->seq[i], al->len[i], al->seq[j], al->len[j]);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        memset(al->score, 0, sizeof al->score);
        for (int i = 0; i < NSEQ; i++)
            for (int j = 0; j < NSEQ; j++) atomic_init(&al->runs[i][j], 0);
        atomic_init(&al->no_ctx, 0);
        struct align_root_arg a = {al, ex};
        root(ex, align_root, &a);
        ASSERT_EQ(atomic_load(&al->no_ctx), 0);
        for (int i = 0; i < NSEQ; i++)
            for (int j = i + 1; j < NSEQ; j++) {
                ASSERT_EQ(al->score[i][j], ref[i][j]);
                ASSERT_EQ(atomic_load(&al->runs[i][j]), 1);
            }
        weft_executor_destroy(ex);
    }
    free(al);
}

/* ==== typed tasks (BOTS fib's shape, Lace style) around a parallel loop and a wait ==== */

/* forkjoin.h: a typed task with a spawn unsynced writes its hidden top back
 * ((void)WEFT_FJ_CTX) before a call that takes no context but runs other
 * tasks on this worker until it returns; the tasks that call runs here then
 * spawn above the child, not over it.  (Without the write-back this shape
 * hung on 2 workers: the loop's chunks spawned over the pending child.) */
static long fib_plain(int n) { return n < 2 ? n : fib_plain(n - 1) + fib_plain(n - 2); }
WEFT_FJ_TASK(long, tfib, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(tfib) x;
    WEFT_FJ_SPAWN(tfib, &x, n - 1);
    long k = WEFT_FJ_CALL(tfib, n - 2);
    return WEFT_FJ_SYNC(tfib, &x) + k;
}
static atomic_long g_typed_bad;
static weft_executor *g_typed_ex;
static void typed_body(size_t i, void *arg) {
    weft_ctx *cx = weft_current_ctx();
    if (!cx) {
        atomic_fetch_add(&g_typed_bad, 1);
        return;
    }
    if (WEFT_FJ_RUN(cx, tfib, (int)(i % 12)) != fib_plain((int)(i % 12))) atomic_fetch_add(&g_typed_bad, 1);
}
static int typed_async(weft_ctx *cx, void *arg) {
    typed_body(9, NULL);
    typed_body(11, NULL);
    return 0;
}
WEFT_FJ_TASK(long, tloop, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(tloop) x;
    WEFT_FJ_SPAWN(tloop, &x, n - 1);
    weft_algo_config c = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1};
    (void)WEFT_FJ_CTX; /* the write-back: the loop runs chunks (and other work) here */
    if (weft_parallel_for(g_typed_ex, 0, 16, 1, typed_body, NULL, &c) != WEFT_OK) atomic_fetch_add(&g_typed_bad, 1000);
    if (n % 3 == 0) {
        weft_future *f = NULL;
        (void)WEFT_FJ_CTX; /* and before a wait from a task, which runs other work too */
        if (weft_async(g_typed_ex, typed_async, NULL, &f) != WEFT_OK || weft_future_wait(f) != WEFT_OK)
            atomic_fetch_add(&g_typed_bad, 1000);
        weft_future_destroy(f);
    }
    long k = WEFT_FJ_CALL(tloop, n - 2);
    return WEFT_FJ_SYNC(tloop, &x) + k;
}
struct tloop_arg {
    int n;
    long r;
};
static int tloop_root(weft_ctx *cx, void *arg) {
    struct tloop_arg *a = arg;
    a->r = WEFT_FJ_RUN(cx, tloop, a->n);
    return 0;
}

TEST(bots_typed_fib_with_a_spawn_pending_runs_a_parallel_loop_and_a_wait_after_writing_back_its_top) {
    for (size_t w = 0; w < NW; w++) {
        g_typed_ex = make_executor(kW[w]);
        atomic_store(&g_typed_bad, 0);
        for (int rep = 0; rep < 20; rep++) {
            struct tloop_arg a = {9, -1};
            root(g_typed_ex, tloop_root, &a);
            ASSERT_EQ(a.r, fib_plain(9));
        }
        ASSERT_EQ(atomic_load(&g_typed_bad), 0);
        weft_executor_destroy(g_typed_ex);
    }
}

/* ==== oneTBB parallel_pipeline whose filters nest fork-join and loops ==== */

/* pipeline.h: a stage may spawn and sync through weft_current_ctx(); a stage
 * may call a parallel algorithm (it runs other work meanwhile).  Token k's
 * value is the sum over i < 64 of fib(k % 13 + i % 5): the parallel stage
 * computes the fibs by a task group, the serial stage sums them by a
 * reduction, and the last serial stage checks the order. */
struct npipe {
    weft_executor *ex;
    uint64_t ntok;
    long vals[8][64]; /* per line */
    long sums[8];
    uint64_t next_out;
    atomic_int bad;
};
static int np_make(weft_pipeflow *pf, void *arg) {
    struct npipe *p = arg;
    if (weft_pipeflow_token(pf) == p->ntok) weft_pipeflow_stop(pf);
    return 0;
}
static int np_fibs(weft_pipeflow *pf, void *arg) {
    struct npipe *p = arg;
    size_t l = weft_pipeflow_line(pf);
    int base = (int)(weft_pipeflow_token(pf) % 13);
    weft_ctx *cx = weft_current_ctx();
    if (!cx) {
        atomic_fetch_add(&p->bad, 1);
        return 1;
    }
    struct tgfib f[64];
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int i = 0; i < 64; i++) {
        f[i] = (struct tgfib){base + i % 5, 0};
        weft_task_group_spawn(&g, tg_fib, &f[i]);
    }
    int st = weft_task_group_wait(&g);
    for (int i = 0; i < 64; i++) p->vals[l][i] = f[i].r;
    return st;
}
static void add_long(void *acc, const void *x, void *arg) { *(long *)acc += *(const long *)x; }
static int np_sum(weft_pipeflow *pf, void *arg) {
    struct npipe *p = arg;
    size_t l = weft_pipeflow_line(pf);
    long s = 0;
    weft_algo_config c = {.chunk = 16};
    if (weft_parallel_reduce(p->ex, p->vals[l], 64, sizeof(long), &s, add_long, NULL, &c) != WEFT_OK) return 2;
    p->sums[l] = s;
    return 0;
}
static int np_check(weft_pipeflow *pf, void *arg) {
    struct npipe *p = arg;
    uint64_t t = weft_pipeflow_token(pf);
    int base = (int)(t % 13);
    long want = 0;
    for (int i = 0; i < 64; i++) want += fib_plain(base + i % 5);
    if (t != p->next_out++ || p->sums[weft_pipeflow_line(pf)] != want) atomic_fetch_add(&p->bad, 1);
    return 0;
}

TEST(tbb_pipeline_filters_that_spawn_task_groups_and_run_reductions_give_each_token_its_value_in_order) {
    static const weft_pipeline_scheduling sch[] = {WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE};
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        for (size_t si = 0; si < 3; si++)
            for (size_t lines = 1; lines <= 7; lines += 6) {
                struct npipe *p = calloc(1, sizeof *p);
                ASSERT_NOT_NULL(p);
                p->ex = ex;
                p->ntok = 20;
                weft_stage st[] = {{WEFT_STAGE_SERIAL, np_make, p, "make"},
                                   {WEFT_STAGE_PARALLEL, np_fibs, p, "fibs"},
                                   {WEFT_STAGE_SERIAL, np_sum, p, "sum"},
                                   {WEFT_STAGE_SERIAL, np_check, p, "check"}};
                weft_status err;
                weft_pipeline *pl = weft_pipeline_create(lines, st, 4, &err);
                ASSERT_NOT_NULL(pl);
                ASSERT_OK(weft_pipeline_set_scheduling(pl, sch[si]));
                weft_taskflow *tf = make_taskflow("nested pipeline");
                ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, pl)));
                ASSERT_OK(weft_run_and_wait(ex, tf));
                ASSERT_EQ(p->next_out, 20);
                ASSERT_EQ(atomic_load(&p->bad), 0);
                weft_taskflow_destroy(tf);
                ASSERT_OK(weft_pipeline_destroy(pl));
                free(p);
            }
        weft_executor_destroy(ex);
    }
}

/* ==== oneTBB dining_philosophers: each meal holds both neighbouring forks ==== */

enum { NPHIL = 5, MEALS = 12 };
struct table {
    atomic_int fork_users[NPHIL];
    atomic_int meals[NPHIL];
    atomic_int clash;
};
struct seat {
    struct table *t;
    int i;
};
static int eat(weft_ctx *cx, void *arg) {
    struct seat *s = arg;
    struct table *t = s->t;
    int l = s->i, r = (s->i + 1) % NPHIL;
    if (atomic_fetch_add(&t->fork_users[l], 1) != 0) atomic_fetch_add(&t->clash, 1);
    if (atomic_fetch_add(&t->fork_users[r], 1) != 0) atomic_fetch_add(&t->clash, 1);
    volatile int x = 0;
    for (int k = 0; k < 2000; k++) x += k;
    atomic_fetch_sub(&t->fork_users[l], 1);
    atomic_fetch_sub(&t->fork_users[r], 1);
    atomic_fetch_add(&t->meals[s->i], 1);
    return 0;
}

TEST(tbb_dining_philosophers_by_semaphores_never_share_a_fork_and_all_eat_as_async_and_graph_tasks) {
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        weft_semaphore *fork[NPHIL];
        for (int i = 0; i < NPHIL; i++) {
            weft_status err;
            fork[i] = weft_semaphore_create(1, &err);
            ASSERT_NOT_NULL(fork[i]);
        }
        struct table t;
        memset(&t, 0, sizeof t);
        struct seat seats[NPHIL];
        for (int i = 0; i < NPHIL; i++) seats[i] = (struct seat){&t, i};
        /* async: every meal of every philosopher queued at once */
        weft_future *f[NPHIL * MEALS];
        for (int m = 0; m < MEALS; m++)
            for (int i = 0; i < NPHIL; i++) {
                weft_semaphore *mine[2] = {fork[i], fork[(i + 1) % NPHIL]};
                ASSERT_OK(weft_async_acquire(ex, eat, &seats[i], mine, 2, &f[m * NPHIL + i]));
            }
        for (int k = 0; k < NPHIL * MEALS; k++) {
            ASSERT_OK(weft_future_wait(f[k]));
            weft_future_destroy(f[k]);
        }
        /* graph: a chain of meals per philosopher, every task acquiring both forks */
        weft_taskflow *tf = make_taskflow("philosophers");
        for (int i = 0; i < NPHIL; i++) {
            weft_task prev = {0};
            for (int m = 0; m < 4; m++) {
                weft_task e = must_emplace(tf, eat, &seats[i]);
                /* the right fork first for one of them, as the example does to break the cycle: either order must work */
                weft_semaphore *a = fork[i], *b = fork[(i + 1) % NPHIL];
                if (i % 2) {
                    weft_semaphore *tmp = a;
                    a = b;
                    b = tmp;
                }
                ASSERT_OK(weft_task_acquire(e, a));
                ASSERT_OK(weft_task_acquire(e, b));
                ASSERT_OK(weft_task_release(e, a));
                ASSERT_OK(weft_task_release(e, b));
                if (!weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, e));
                prev = e;
            }
        }
        weft_future *run = NULL;
        ASSERT_OK(weft_run_n(ex, tf, 3, &run));
        ASSERT_OK(weft_future_wait(run));
        weft_future_destroy(run);
        for (int i = 0; i < NPHIL; i++) ASSERT_EQ(atomic_load(&t.meals[i]), MEALS + 12);
        ASSERT_EQ(atomic_load(&t.clash), 0);
        weft_taskflow_destroy(tf);
        for (int i = 0; i < NPHIL; i++) {
            ASSERT_EQ(weft_semaphore_value(fork[i]), 1);
            ASSERT_OK(weft_semaphore_destroy(fork[i]));
        }
        weft_executor_destroy(ex);
    }
}

/* The same text_filter as a data pipeline: each filter takes the previous
 * one's value (a slice of text) and gives one to the next, as oneTBB's
 * parallel_pipeline filters do. */
struct dslice {
    size_t len;
    bool word_start;
    char text[SLICE];
};
struct dtext {
    const char *in;
    size_t n, pos;
    char *out;
    size_t outn;
};
static int d_read(weft_pipeflow *pf, void *in, void *out, void *arg) {
    struct dtext *t = arg;
    if (t->pos >= t->n) return (int)weft_pipeflow_stop(pf);
    struct dslice *s = out;
    size_t end = slice_end(t->in, t->pos, t->n);
    s->len = end - t->pos;
    s->word_start = t->pos == 0 || t->in[t->pos - 1] == ' ' || t->in[t->pos - 1] == '\n';
    memcpy(s->text, t->in + t->pos, s->len);
    t->pos = end;
    return 0;
}
static int d_cap(weft_pipeflow *pf, void *in, void *out, void *arg) {
    struct dslice *s = out;
    *s = *(struct dslice *)in;
    capitalize(s->text, s->len, s->word_start);
    return 0;
}
static int d_write(weft_pipeflow *pf, void *in, void *out, void *arg) {
    struct dtext *t = arg;
    const struct dslice *s = in;
    memcpy(t->out + t->outn, s->text, s->len);
    t->outn += s->len;
    return 0;
}

TEST(tbb_text_filter_as_a_data_pipeline_passes_each_slice_between_filters_in_order) {
    char *in = malloc(TXT), *want = malloc(TXT), *out = malloc(TXT);
    ASSERT_TRUE(in && want && out);
    size_t n = 0;
    for (uint64_t k = 0; n < TXT - 40; k++) {
        uint64_t h = mix64(k + 17);
        size_t wl = 1 + h % 9;
        for (size_t i = 0; i < wl; i++) in[n++] = (char)('a' + (h >> (i % 8 * 5)) % 26);
        in[n++] = (h >> 61) % 5 == 0 ? '\n' : ' ';
    }
    memcpy(want, in, n);
    capitalize(want, n, true);
    static const weft_pipeline_scheduling sch[] = {WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE};
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kW[w]);
        for (size_t lines = 1; lines <= 9; lines += 4)
            for (size_t si = 0; si < 3; si++) {
                struct dtext t = {in, n, 0, out, 0};
                weft_data_stage st[] = {
                    {.kind = WEFT_STAGE_SERIAL, .fn = d_read, .arg = &t, .name = "read", .WEFT_DATA_OUT(struct dslice)},
                    {.kind = WEFT_STAGE_PARALLEL, .fn = d_cap, .arg = &t, .name = "cap", .WEFT_DATA_IN(struct dslice),
                     .WEFT_DATA_OUT(struct dslice)},
                    {.kind = WEFT_STAGE_SERIAL, .fn = d_write, .arg = &t, .name = "write", .WEFT_DATA_IN(struct dslice)}};
                weft_status err = WEFT_OK;
                weft_pipeline *p = weft_data_pipeline_create(lines, st, 3, &err);
                ASSERT_NOT_NULL(p);
                ASSERT_OK(weft_pipeline_set_scheduling(p, sch[si]));
                weft_taskflow *tf = make_taskflow("data text_filter");
                ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
                ASSERT_OK(weft_run_and_wait(ex, tf));
                ASSERT_EQ(t.outn, n);
                if (memcmp(out, want, n)) TEST_FAIL_("%zu lines, scheduling %d, %u workers", lines, (int)sch[si], kW[w]);
                weft_taskflow_destroy(tf);
                ASSERT_OK(weft_pipeline_destroy(p));
            }
        weft_executor_destroy(ex);
    }
    free(in);
    free(want);
    free(out);
}

/* ==== a histogram by parallel_reduce with a one-element grain (simple_partitioner) ==== */

/* algo.h: reductions and scans keep an accumulator per chunk.  The chunk
 * count was capped at 65536 whatever the accumulator's size, so a 16 KiB
 * histogram with chunk 1 over 10^5 elements asked for 800 MB (and 4 GB with
 * a 64 KiB one).  The state is now bounded in bytes too: the largest block
 * the call asks the allocator for stays small. */
enum { HBINS = 4096 };
static atomic_size_t g_biggest;
static void *big_alloc(void *ctx, size_t size) {
    size_t b = atomic_load(&g_biggest);
    while (size > b && !atomic_compare_exchange_weak(&g_biggest, &b, size)) {
    }
    return size > ((size_t)64 << 20) ? NULL : malloc(size); /* no block above 64 MiB */
}
static void big_free(void *ctx, void *p, size_t size) { free(p); }
static void hist_body(size_t lo, size_t hi, void *acc, void *arg) {
    uint32_t *h = acc;
    memset(h, 0, HBINS * sizeof *h);
    for (size_t i = lo; i < hi; i++) h[(i * 2654435761u) % HBINS]++;
}
static void hist_add(void *acc, const void *x, void *arg) {
    uint32_t *a = acc;
    const uint32_t *b = x;
    for (int k = 0; k < HBINS; k++) a[k] += b[k];
}
static void hist_scan(size_t lo, size_t hi, void *acc, bool has_acc, void *arg) {
    uint32_t *h = acc, *out = arg; /* out[i] = bin (i % HBINS) of the running histogram */
    if (!has_acc) memset(h, 0, HBINS * sizeof *h);
    for (size_t i = lo; i < hi; i++) {
        h[(i * 2654435761u) % HBINS]++;
        out[i] = h[i % HBINS];
    }
}

TEST(tbb_histogram_reduce_and_scan_with_16_kib_accumulators_and_chunk_1_keep_their_chunk_state_small) {
    const size_t n = 70001;
    uint32_t *want = calloc(HBINS, sizeof *want), *got = malloc(HBINS * sizeof *got);
    uint32_t *out = malloc(n * sizeof *out), *wout = malloc(n * sizeof *wout), *run = calloc(HBINS, sizeof *run);
    ASSERT_TRUE(want && got && out && wout && run);
    for (size_t i = 0; i < n; i++) {
        want[(i * 2654435761u) % HBINS]++;
        run[(i * 2654435761u) % HBINS]++;
        wout[i] = run[i % HBINS];
    }
    weft_allocator a = {.alloc = big_alloc, .free = big_free};
    weft_set_allocator(&a);
    static const unsigned ws[] = {1, 2, 4};
    for (size_t w = 0; w < 3; w++) {
        weft_executor *ex = make_executor(ws[w]);
        for (int p = 1; p <= 3; p++) { /* STATIC, DYNAMIC, GUIDED */
            weft_algo_config c = {.partitioner = (weft_partitioner)p, .chunk = 1};
            atomic_store(&g_biggest, 0);
            memset(got, 0, HBINS * sizeof *got);
            ASSERT_OK(weft_parallel_reduce_range(ex, n, HBINS * sizeof(uint32_t), got, hist_body, hist_add, NULL, &c));
            ASSERT_TRUE(memcmp(got, want, HBINS * sizeof *got) == 0);
            ASSERT_LE(atomic_load(&g_biggest), (size_t)32 << 20);
            atomic_store(&g_biggest, 0);
            memset(out, 0, n * sizeof *out);
            ASSERT_OK(weft_parallel_scan_range(ex, n, HBINS * sizeof(uint32_t), NULL, hist_body, hist_scan, hist_add,
                                               out, &c));
            ASSERT_TRUE(memcmp(out, wout, n * sizeof *out) == 0);
            ASSERT_LE(atomic_load(&g_biggest), (size_t)32 << 20);
        }
        weft_executor_destroy(ex);
    }
    weft_set_allocator(NULL);
    free(want);
    free(got);
    free(out);
    free(wout);
    free(run);
}

/* ==== oneTBB parallel_deterministic_reduce: the same bits on every worker count ==== */

static void add_double(void *acc, const void *x, void *arg) { *(double *)acc += *(const double *)x; }
struct dacc {
    double v[40]; /* 320 bytes: a wider accumulator than one value */
};
static void dacc_body(size_t lo, size_t hi, void *acc, void *arg) {
    const double *in = arg;
    struct dacc *a = acc;
    for (int k = 0; k < 40; k++) a->v[k] = 0;
    for (size_t i = lo; i < hi; i++) a->v[i % 40] += in[i] * (double)(i % 7 + 1);
}
static void dacc_add(void *acc, const void *x, void *arg) {
    struct dacc *a = acc;
    const struct dacc *b = x;
    for (int k = 0; k < 40; k++) a->v[k] += b->v[k];
}

TEST(tbb_deterministic_reduce_and_scan_of_doubles_give_the_same_bits_on_1_2_3_4_and_8_workers) {
    const size_t n = 20011;
    double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out), *first = malloc(n * sizeof *first);
    ASSERT_TRUE(in && out && first);
    for (size_t i = 0; i < n; i++) in[i] = (double)(mix64(i) % 1000000) / 7919.0 - 60.0;
    static const size_t chunks[] = {0, 1, 777};
    for (int p = 0; p < 3; p++) /* AUTO, STATIC, DYNAMIC: boundaries from n (and acc_size) only */
        for (size_t ci = 0; ci < 3; ci++) {
            weft_algo_config c = {.partitioner = kParts[p], .chunk = chunks[ci]};
            double sum0 = 0;
            struct dacc wide0;
            memset(&wide0, 0, sizeof wide0);
            for (size_t w = 0; w < NW; w++) {
                weft_executor *ex = make_executor(kW[w]);
                double sum = 0.5;
                ASSERT_OK(weft_parallel_reduce(ex, in, n, sizeof(double), &sum, add_double, NULL, &c));
                struct dacc wide;
                memset(&wide, 0, sizeof wide);
                ASSERT_OK(weft_parallel_reduce_range(ex, n, sizeof wide, &wide, dacc_body, dacc_add, in, &c));
                double zero = 0;
                ASSERT_OK(weft_parallel_inclusive_scan(ex, in, out, n, sizeof(double), &zero, add_double, NULL, &c));
                if (w == 0) {
                    sum0 = sum;
                    wide0 = wide;
                    memcpy(first, out, n * sizeof *out);
                } else {
                    if (memcmp(&sum, &sum0, sizeof sum) || memcmp(&wide, &wide0, sizeof wide) ||
                        memcmp(out, first, n * sizeof *out))
                        TEST_FAIL_("partitioner %d chunk %zu: %u workers differ from 1", p, chunks[ci], kW[w]);
                }
                weft_executor_destroy(ex);
            }
        }
    free(in);
    free(out);
    free(first);
}

/* ==== oneTBB nested parallel_pipeline: a filter that runs a whole pipeline ==== */

/* pipeline.h: a stage may wait for a run of another taskflow (only its own
 * run, its taskflow's and the graphs it is nested in are refused).  Each
 * line of the outer pipeline runs an inner pipeline summing 50 tokens. */
enum { NPL = 3, NPT = 30, NPI = 50 };
struct np_inner { long sum; uint64_t base; weft_pipeline *p; weft_taskflow *tf; };
static struct np_inner npin_[NPL];
static weft_executor *g_np_ex;
static atomic_long g_np_bad;
static int npi_make(weft_pipeflow *pf, void *a) { if (weft_pipeflow_token(pf) == NPI) weft_pipeflow_stop(pf); return 0; }
static int npi_add(weft_pipeflow *pf, void *a) { struct np_inner *x = a; x->sum += (long)(x->base + weft_pipeflow_token(pf)); return 0; }
static long np_outv[NPT]; static uint64_t np_next;
static int npo_make(weft_pipeflow *pf, void *a) { if (weft_pipeflow_token(pf) == NPT) weft_pipeflow_stop(pf); return 0; }
static int npo_run(weft_pipeflow *pf, void *a) {
    struct np_inner *x = &npin_[weft_pipeflow_line(pf)];
    x->sum = 0; x->base = weft_pipeflow_token(pf) * 1000;
    if (weft_pipeline_reset(x->p)) atomic_fetch_add(&g_np_bad, 1);
    weft_status s = weft_run_and_wait(g_np_ex, x->tf);
    if (s) { atomic_fetch_add(&g_np_bad, 1); }
    return 0;
}
static int npo_out(weft_pipeflow *pf, void *a) {
    uint64_t t = weft_pipeflow_token(pf);
    if (t != np_next++) atomic_fetch_add(&g_np_bad, 1);
    np_outv[t] = npin_[weft_pipeflow_line(pf)].sum;
    return 0;
}

TEST(tbb_pipeline_filter_running_an_inner_pipeline_per_line_gives_each_token_its_inner_sum_in_order) {
    for (size_t w = 0; w < NW; w++) {
        g_np_ex = make_executor(kW[w]);
        atomic_store(&g_np_bad, 0);
        weft_status e;
        for (int l = 0; l < NPL; l++) {
            weft_stage st[] = {{WEFT_STAGE_SERIAL, npi_make, &npin_[l], "im"}, {WEFT_STAGE_SERIAL, npi_add, &npin_[l], "ia"}};
            npin_[l].p = weft_pipeline_create(2, st, 2, &e);
            ASSERT_NOT_NULL(npin_[l].p);
            npin_[l].tf = make_taskflow("inner");
            ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(npin_[l].tf, npin_[l].p)));
        }
        for (int sch = 0; sch < 3; sch++) {
            np_next = 0;
            weft_stage st[] = {{WEFT_STAGE_SERIAL, npo_make, NULL, "make"},
                               {WEFT_STAGE_PARALLEL, npo_run, NULL, "inner"},
                               {WEFT_STAGE_SERIAL, npo_out, NULL, "out"}};
            weft_pipeline *p = weft_pipeline_create(NPL, st, 3, &e);
            ASSERT_NOT_NULL(p);
            ASSERT_OK(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)sch));
            weft_taskflow *tf = make_taskflow("outer");
            ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
            ASSERT_OK(weft_run_and_wait(g_np_ex, tf));
            ASSERT_EQ(np_next, NPT);
            for (int t = 0; t < NPT; t++) {
                long want = 0;
                for (int k = 0; k < NPI; k++) want += t * 1000 + k;
                ASSERT_EQ(np_outv[t], want);
            }
            weft_taskflow_destroy(tf);
            ASSERT_OK(weft_pipeline_destroy(p));
        }
        ASSERT_EQ(atomic_load(&g_np_bad), 0);
        for (int l = 0; l < NPL; l++) {
            weft_taskflow_destroy(npin_[l].tf);
            ASSERT_OK(weft_pipeline_destroy(npin_[l].p));
        }
        weft_executor_destroy(g_np_ex);
    }
}
