/* Lace's benchmarks (benchmarks/: fib, queens, pi, dfs, knapsack, cilksort,
 * matmul, uts) written again for weft's fork-join API: the typed macros
 * (WEFT_FJ_TASK, Lace's TASK_n), plain weft_spawn / weft_sync and task groups.
 * Each program's result is checked exactly against a serial run, on 1, 2 and
 * 4 workers, with awkward sizes (0, 1) and with the spawn shapes Lace uses: one
 * spawn and a call, a loop of k spawns then k syncs, four spawns then four
 * syncs.  The sizes are small (each test well under a second). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fj_util.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

static const unsigned kWorkers[] = {1, 2, 4};
#define NW (sizeof kWorkers / sizeof kWorkers[0])

/* ---- fib: SPAWN(n-1), CALL(n-2), SYNC --------------------------------------- */

static long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

WEFT_FJ_TASK(long, pfib, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(pfib) x;
    WEFT_FJ_SPAWN(pfib, &x, n - 1);
    long k = WEFT_FJ_CALL(pfib, n - 2);
    long m = WEFT_FJ_SYNC(pfib, &x);
    return m + k;
}

struct ufib {
    int n;
    long r;
};
static int ufib(weft_ctx *cx, void *p) {
    struct ufib *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    struct ufib x = {a->n - 1, 0}, y = {a->n - 2, 0};
    if (weft_spawn(cx, ufib, &x) != WEFT_OK) return 1;
    int st = ufib(cx, &y);
    int sx = weft_sync(cx);
    a->r = x.r + y.r;
    return st ? st : sx;
}
/* Both children in a group (Lace's benchmarks with two spawns). */
static int gfib(weft_ctx *cx, void *p) {
    struct ufib *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    struct ufib x = {a->n - 1, 0}, y = {a->n - 2, 0};
    weft_task_group g;
    weft_task_group_init(&g, cx);
    if (weft_task_group_spawn(&g, gfib, &x) != WEFT_OK) return 1;
    if (weft_task_group_spawn(&g, gfib, &y) != WEFT_OK) return 1;
    int st = weft_task_group_wait(&g);
    a->r = x.r + y.r;
    return st;
}

struct fib_root_arg {
    int n;
    long typed;
};
static int fib_root(weft_ctx *cx, void *p) {
    struct fib_root_arg *a = p;
    a->typed = WEFT_FJ_RUN(cx, pfib, a->n);
    return 0;
}

TEST(lace_fib_typed_plain_and_grouped_match_the_serial_fib_from_0_to_22) {
    static const int ns[] = {0, 1, 2, 3, 4, 13, 22};
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kWorkers[w]);
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
            long want = fib_serial(ns[i]);
            struct fib_root_arg t = {ns[i], -1};
            ASSERT_EQ(weft_run_root(ex, fib_root, &t), 0);
            ASSERT_EQ(t.typed, want);
            struct ufib u = {ns[i], -1};
            ASSERT_EQ(weft_run_root(ex, ufib, &u), 0);
            ASSERT_EQ(u.r, want);
            struct ufib g = {ns[i], -1};
            ASSERT_EQ(weft_run_root(ex, gfib, &g), 0);
            ASSERT_EQ(g.r, want);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- queens: a loop of k spawns, then k syncs --------------------------------- */

#define MAXQ 12
struct qarg {
    int n, j;
    char a[MAXQ];
};

static bool queens_ok(int n, const char *a) {
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (a[j] == a[i] || a[j] == a[i] - (j - i) || a[j] == a[i] + (j - i)) return false;
    return true;
}

static long queens_serial(struct qarg q) {
    if (q.n == q.j) return 1;
    long r = 0;
    for (int i = 0; i < q.n; i++) {
        struct qarg b = q;
        b.a[q.j] = (char)i;
        b.j = q.j + 1;
        if (queens_ok(b.j, b.a)) r += queens_serial(b);
    }
    return r;
}

WEFT_FJ_TASK(long, tqueens, struct qarg, q) {
    if (q.n == q.j) return 1;
    WEFT_FJ_SLOT(tqueens) kids[MAXQ];
    int k = 0;
    for (int i = 0; i < q.n; i++) {
        struct qarg b = q;
        b.a[q.j] = (char)i;
        b.j = q.j + 1;
        if (queens_ok(b.j, b.a)) WEFT_FJ_SPAWN(tqueens, &kids[k++], b);
    }
    long r = 0;
    while (k > 0) {
        k--;
        r += WEFT_FJ_SYNC(tqueens, &kids[k]);
    }
    return r;
}

/* The same with plain spawns: a child's result goes back through its struct. */
struct uq {
    struct qarg q;
    long r;
};
static int uqueens(weft_ctx *cx, void *p) {
    struct uq *u = p;
    if (u->q.n == u->q.j) {
        u->r = 1;
        return 0;
    }
    struct uq kids[MAXQ];
    int k = 0;
    for (int i = 0; i < u->q.n; i++) {
        struct uq *b = &kids[k];
        b->q = u->q;
        b->q.a[u->q.j] = (char)i;
        b->q.j = u->q.j + 1;
        b->r = -1;
        if (!queens_ok(b->q.j, b->q.a)) continue;
        if (weft_spawn(cx, uqueens, b) != WEFT_OK) return 1;
        k++;
    }
    int st = 0;
    for (int i = 0; i < k; i++) {
        int s = weft_sync(cx);
        if (s && !st) st = s;
    }
    u->r = 0;
    for (int i = 0; i < k; i++) u->r += kids[i].r;
    return st;
}

struct queens_root_arg {
    struct qarg q;
    long typed;
};
static int queens_root(weft_ctx *cx, void *p) {
    struct queens_root_arg *a = p;
    a->typed = WEFT_FJ_RUN(cx, tqueens, a->q);
    return 0;
}

TEST(lace_queens_counts_every_board_from_0_to_9_queens_exactly) {
    /* Q(0) is one (the empty board), Q(2) = Q(3) = 0: a task with no child. */
    static const long known[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352};
    for (int n = 0; n <= 9; n++) {
        struct qarg q = {n, 0, {0}};
        ASSERT_EQ(queens_serial(q), known[n]);
    }
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kWorkers[w]);
        for (int n = 0; n <= 9; n++) {
            struct queens_root_arg t = {{n, 0, {0}}, -1};
            ASSERT_EQ(weft_run_root(ex, queens_root, &t), 0);
            ASSERT_EQ(t.typed, known[n]);
            struct uq u = {{n, 0, {0}}, -1};
            ASSERT_EQ(weft_run_root(ex, uqueens, &u), 0);
            ASSERT_EQ(u.r, known[n]);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- pi: a range halved down to single samples ------------------------------- */

/* Lace's pi draws from a per-worker generator; here each sample's point comes
 * from its index, so that the count is exact and the same on any worker count. */
static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static uint64_t pi_sample(long i) {
    uint64_t h = mix64((uint64_t)i);
    uint64_t x = h & 0xffffffffu, y = h >> 32; /* a point in [0, 2^32)^2 */
    return x * x / 2 + y * y / 2 < (1ull << 63) ? 1 : 0;
}
struct pi_range {
    long start, cnt;
};
WEFT_FJ_TASK(uint64_t, pi_mc, struct pi_range, r) {
    if (r.cnt <= 1) return r.cnt == 1 ? pi_sample(r.start) : 0;
    WEFT_FJ_SLOT(pi_mc) lo;
    WEFT_FJ_SPAWN(pi_mc, &lo, ((struct pi_range){r.start, r.cnt / 2}));
    uint64_t hi = WEFT_FJ_CALL(pi_mc, ((struct pi_range){r.start + r.cnt / 2, (r.cnt + 1) / 2}));
    return hi + WEFT_FJ_SYNC(pi_mc, &lo);
}
struct pi_root_arg {
    struct pi_range r;
    uint64_t inside;
};
static int pi_root(weft_ctx *cx, void *p) {
    struct pi_root_arg *a = p;
    a->inside = WEFT_FJ_RUN(cx, pi_mc, a->r);
    return 0;
}

TEST(lace_pi_counts_the_same_samples_inside_as_a_serial_loop_for_0_1_and_odd_counts) {
    static const long counts[] = {0, 1, 2, 3, 7, 1000, 65537};
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kWorkers[w]);
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            uint64_t want = 0;
            for (long s = 0; s < counts[i]; s++) want += pi_sample(5 + s);
            struct pi_root_arg a = {{5, counts[i]}, UINT64_MAX};
            ASSERT_EQ(weft_run_root(ex, pi_root, &a), 0);
            ASSERT_EQ(a.inside, want);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- dfs: a balanced tree, w spawns then w syncs at every node ----------------- */

#define MAXW 8
struct dfs_arg {
    int depth, width;
};
static long dfs_leaf(int d) { return 1 + (long)(d & 1); } /* a leaf's weight, cheap */
static long dfs_serial(struct dfs_arg a) {
    if (a.depth == 0) return dfs_leaf(a.depth);
    long r = 0;
    for (int i = 0; i < a.width; i++) r += dfs_serial((struct dfs_arg){a.depth - 1, a.width});
    return r;
}
WEFT_FJ_TASK(long, dfs_tree, struct dfs_arg, a) {
    if (a.depth == 0) return dfs_leaf(a.depth);
    WEFT_FJ_SLOT(dfs_tree) kids[MAXW];
    for (int i = 0; i < a.width; i++) WEFT_FJ_SPAWN(dfs_tree, &kids[i], ((struct dfs_arg){a.depth - 1, a.width}));
    long r = 0;
    for (int i = a.width - 1; i >= 0; i--) r += WEFT_FJ_SYNC(dfs_tree, &kids[i]);
    return r;
}
struct dfs_root_arg {
    struct dfs_arg a;
    int reps;
    long sum;
};
/* Lace's dfs runs the tree `reps` times, one RUN each. */
static int dfs_root(weft_ctx *cx, void *p) {
    struct dfs_root_arg *d = p;
    d->sum = 0;
    for (int i = 0; i < d->reps; i++) d->sum += WEFT_FJ_RUN(cx, dfs_tree, d->a);
    return 0;
}

TEST(lace_dfs_trees_of_width_0_to_8_reach_every_leaf_once_per_repetition) {
    static const struct dfs_arg shapes[] = {{0, 0}, {0, 3}, {3, 0}, {1, 1}, {12, 1}, {10, 2}, {5, 5}, {4, 8}};
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kWorkers[w]);
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            struct dfs_root_arg d = {shapes[i], 3, -1};
            ASSERT_EQ(weft_run_root(ex, dfs_root, &d), 0);
            ASSERT_EQ(d.sum, 3 * dfs_serial(shapes[i]));
        }
        weft_executor_destroy(ex);
    }
}

/* ---- knapsack: a four-argument task as a struct -------------------------------- */

struct item {
    int value, weight;
};
struct ks_arg {
    const struct item *e;
    int c, n, v;
};
static int ks_serial(struct ks_arg a) {
    if (a.c < 0) return INT_MIN;
    if (a.n == 0 || a.c == 0) return a.v;
    int without = ks_serial((struct ks_arg){a.e + 1, a.c, a.n - 1, a.v});
    int with = ks_serial((struct ks_arg){a.e + 1, a.c - a.e->weight, a.n - 1, a.v + a.e->value});
    return with > without ? with : without;
}
WEFT_FJ_TASK(int, knapsack, struct ks_arg, a) {
    if (a.c < 0) return INT_MIN;
    if (a.n == 0 || a.c == 0) return a.v;
    WEFT_FJ_SLOT(knapsack) wo;
    WEFT_FJ_SPAWN(knapsack, &wo, ((struct ks_arg){a.e + 1, a.c, a.n - 1, a.v}));
    int with = WEFT_FJ_CALL(knapsack, ((struct ks_arg){a.e + 1, a.c - a.e->weight, a.n - 1, a.v + a.e->value}));
    int without = WEFT_FJ_SYNC(knapsack, &wo);
    return with > without ? with : without;
}
struct ks_root_arg {
    struct ks_arg a;
    int best;
};
static int ks_root(weft_ctx *cx, void *p) {
    struct ks_root_arg *k = p;
    k->best = WEFT_FJ_RUN(cx, knapsack, k->a);
    return 0;
}

TEST(lace_knapsack_finds_the_serial_optimum_for_0_to_16_items_and_capacity_0) {
    struct item items[16];
    for (int i = 0; i < 16; i++) items[i] = (struct item){(int)(mix64((uint64_t)i) % 50) + 1,
                                                          (int)(mix64((uint64_t)i + 100) % 20) + 1};
    static const int sizes[][2] = {{0, 10}, {1, 0}, {1, 100}, {5, 0}, {7, 30}, {16, 60}, {16, 1000}};
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kWorkers[w]);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            struct ks_arg a = {items, sizes[i][1], sizes[i][0], 0};
            struct ks_root_arg k = {a, -1};
            ASSERT_EQ(weft_run_root(ex, ks_root, &k), 0);
            ASSERT_EQ(k.best, ks_serial(a));
        }
        weft_executor_destroy(ex);
    }
}

/* ---- cilksort: four plain spawns then four syncs, parallel merges -------------- */

#define CS_CUT 16 /* small, so that even a few thousand elements make many tasks */

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Merges sorted [a, a + na) and [b, b + nb) into dest. */
struct cs_merge {
    const long *a, *b;
    size_t na, nb;
    long *dest;
};
static size_t lower_bound_long(const long *v, size_t n, long x) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
static int cs_merge_task(weft_ctx *cx, void *p) {
    struct cs_merge m = *(struct cs_merge *)p;
    if (m.na < m.nb) { /* split the longer one */
        const long *t = m.a;
        m.a = m.b;
        m.b = t;
        size_t tn = m.na;
        m.na = m.nb;
        m.nb = tn;
    }
    if (m.na + m.nb <= CS_CUT || m.nb == 0) {
        size_t i = 0, j = 0, k = 0;
        while (i < m.na && j < m.nb) m.dest[k++] = m.b[j] < m.a[i] ? m.b[j++] : m.a[i++];
        while (i < m.na) m.dest[k++] = m.a[i++];
        while (j < m.nb) m.dest[k++] = m.b[j++];
        return 0;
    }
    size_t ha = m.na / 2;
    size_t hb = lower_bound_long(m.b, m.nb, m.a[ha]);
    struct cs_merge lo = {m.a, m.b, ha, hb, m.dest};
    struct cs_merge hi = {m.a + ha, m.b + hb, m.na - ha, m.nb - hb, m.dest + ha + hb};
    if (weft_spawn(cx, cs_merge_task, &lo) != WEFT_OK) return 1;
    if (weft_spawn(cx, cs_merge_task, &hi) != WEFT_OK) return 1;
    int s1 = weft_sync(cx);
    int s2 = weft_sync(cx);
    return s1 ? s1 : s2;
}

struct cs_sort {
    long *low, *tmp;
    size_t size;
};
static int cs_sort_task(weft_ctx *cx, void *p) {
    struct cs_sort *s = p;
    if (s->size < CS_CUT) {
        qsort(s->low, s->size, sizeof(long), cmp_long);
        return 0;
    }
    size_t q = s->size / 4;
    struct cs_sort part[4] = {
        {s->low, s->tmp, q},
        {s->low + q, s->tmp + q, q},
        {s->low + 2 * q, s->tmp + 2 * q, q},
        {s->low + 3 * q, s->tmp + 3 * q, s->size - 3 * q},
    };
    for (int i = 0; i < 4; i++)
        if (weft_spawn(cx, cs_sort_task, &part[i]) != WEFT_OK) return 1;
    int st = 0;
    for (int i = 0; i < 4; i++) {
        int r = weft_sync(cx);
        if (r && !st) st = r;
    }
    if (st) return st;
    struct cs_merge ab = {s->low, s->low + q, q, q, s->tmp};
    struct cs_merge cd = {s->low + 2 * q, s->low + 3 * q, q, s->size - 3 * q, s->tmp + 2 * q};
    if (weft_spawn(cx, cs_merge_task, &ab) != WEFT_OK) return 1;
    if (weft_spawn(cx, cs_merge_task, &cd) != WEFT_OK) return 1;
    int s1 = weft_sync(cx), s2 = weft_sync(cx);
    if (s1 || s2) return s1 ? s1 : s2;
    struct cs_merge all = {s->tmp, s->tmp + 2 * q, 2 * q, s->size - 2 * q, s->low};
    if (weft_spawn(cx, cs_merge_task, &all) != WEFT_OK) return 1;
    return weft_sync(cx);
}

TEST(lace_cilksort_sorts_a_scrambled_permutation_of_0_1_and_awkward_sizes) {
    static const size_t sizes[] = {0, 1, 2, 3, 15, 16, 17, 63, 64, 65, 1001, 40000};
    long *a = malloc(40000 * sizeof(long)), *tmp = malloc(40000 * sizeof(long));
    ASSERT_NOT_NULL(a);
    ASSERT_NOT_NULL(tmp);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kWorkers[w]);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            size_t n = sizes[i];
            /* 0..n-1 with every value doubled when odd-indexed: duplicates too */
            for (size_t k = 0; k < n; k++) a[k] = (long)(k / 2);
            for (size_t k = 0; k < n; k++) {
                size_t j = (size_t)(mix64(k + 7 * w) % n);
                long t = a[k];
                a[k] = a[j];
                a[j] = t;
            }
            struct cs_sort s = {a, tmp, n};
            ASSERT_EQ(weft_run_root(ex, cs_sort_task, &s), 0);
            for (size_t k = 0; k < n; k++)
                if (a[k] != (long)(k / 2)) TEST_FAIL_("n=%zu w=%u: a[%zu] = %ld", n, kWorkers[w], k, a[k]);
        }
        weft_executor_destroy(ex);
    }
    free(a);
    free(tmp);
}

/* ---- matmul: eight arguments, splitting the largest dimension ------------------ */

struct mm {
    const long *A, *B;
    long *C;
    int m, n, p, ld, add;
};
WEFT_FJ_TASK(int, rec_matmul, struct mm, x) {
    if (x.m + x.n + x.p <= 16) {
        for (int i = 0; i < x.m; i++)
            for (int k = 0; k < x.p; k++) {
                long c = 0;
                for (int j = 0; j < x.n; j++) c += x.A[i * x.ld + j] * x.B[j * x.ld + k];
                if (x.add) x.C[i * x.ld + k] += c;
                else x.C[i * x.ld + k] = c;
            }
    } else if (x.m >= x.n && x.n >= x.p) {
        int m1 = x.m / 2;
        WEFT_FJ_SLOT(rec_matmul) top;
        struct mm a = x, b = x;
        a.m = m1;
        b.A += m1 * x.ld;
        b.C += m1 * x.ld;
        b.m = x.m - m1;
        WEFT_FJ_SPAWN(rec_matmul, &top, a);
        (void)WEFT_FJ_CALL(rec_matmul, b);
        (void)WEFT_FJ_SYNC(rec_matmul, &top);
    } else if (x.n >= x.m && x.n >= x.p) {
        /* the two halves of n add into the same C: one after the other */
        int n1 = x.n / 2;
        struct mm a = x, b = x;
        a.n = n1;
        b.A += n1;
        b.B += n1 * x.ld;
        b.n = x.n - n1;
        b.add = 1;
        (void)WEFT_FJ_CALL(rec_matmul, a);
        (void)WEFT_FJ_CALL(rec_matmul, b);
    } else {
        int p1 = x.p / 2;
        WEFT_FJ_SLOT(rec_matmul) left;
        struct mm a = x, b = x;
        a.p = p1;
        b.B += p1;
        b.C += p1;
        b.p = x.p - p1;
        WEFT_FJ_SPAWN(rec_matmul, &left, a);
        (void)WEFT_FJ_CALL(rec_matmul, b);
        (void)WEFT_FJ_SYNC(rec_matmul, &left);
    }
    return 0;
}
static int mm_root(weft_ctx *cx, void *p) { return WEFT_FJ_RUN(cx, rec_matmul, *(struct mm *)p); }

TEST(lace_matmul_of_integer_matrices_equals_the_triple_loop_for_sizes_0_to_70) {
    static const int sizes[] = {0, 1, 2, 3, 6, 17, 40, 70};
    enum { NMAX = 70 };
    long *A = malloc(NMAX * NMAX * sizeof(long)), *B = malloc(NMAX * NMAX * sizeof(long));
    long *C = malloc(NMAX * NMAX * sizeof(long)), *D = malloc(NMAX * NMAX * sizeof(long));
    ASSERT_TRUE(A && B && C && D);
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kWorkers[w]);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int n = sizes[s];
            for (int i = 0; i < n * n; i++) {
                A[i] = (long)(mix64((uint64_t)i) % 19) - 9;
                B[i] = (long)(mix64((uint64_t)i + 5000) % 23) - 11;
                C[i] = 12345; /* overwritten: add = 0 */
            }
            for (int i = 0; i < n; i++)
                for (int k = 0; k < n; k++) {
                    long c = 0;
                    for (int j = 0; j < n; j++) c += A[i * n + j] * B[j * n + k];
                    D[i * n + k] = c;
                }
            struct mm x = {A, B, C, n, n, n, n, 0};
            ASSERT_EQ(weft_run_root(ex, mm_root, &x), 0);
            for (int i = 0; i < n * n; i++)
                if (C[i] != D[i]) TEST_FAIL_("n=%d w=%u: C[%d] = %ld, want %ld", n, kWorkers[w], i, C[i], D[i]);
        }
        weft_executor_destroy(ex);
    }
    free(A);
    free(B);
    free(C);
    free(D);
}

/* ---- uts: an unbalanced tree, 0 to 6 children decided by a node's hash --------- */

#define UTS_MAXKIDS 6
struct uts_node {
    uint64_t h;
    int depth;
};
static int uts_kids(struct uts_node nd, int maxdepth) {
    if (nd.depth >= maxdepth) return 0;
    uint64_t r = mix64(nd.h) % 16; /* mean a little under 2: a tree that dies out slowly */
    return r < 5 ? 0 : r < 8 ? 1 : r < 12 ? 2 : r < 14 ? 3 : (int)(r - 10); /* 0..5 */
}
static struct uts_node uts_child(struct uts_node nd, int i) {
    return (struct uts_node){mix64(nd.h * 31 + (uint64_t)i + 1), nd.depth + 1};
}
static int uts_maxdepth; /* set before each run; read only by the tasks */
static long uts_serial(struct uts_node nd) {
    long r = 1;
    int k = uts_kids(nd, uts_maxdepth);
    for (int i = 0; i < k; i++) r += uts_serial(uts_child(nd, i));
    return r;
}
WEFT_FJ_TASK(long, uts_typed, struct uts_node, nd) {
    int k = uts_kids(nd, uts_maxdepth);
    WEFT_FJ_SLOT(uts_typed) kids[UTS_MAXKIDS];
    for (int i = 0; i < k; i++) WEFT_FJ_SPAWN(uts_typed, &kids[i], uts_child(nd, i));
    long r = 1;
    while (k > 0) {
        k--;
        r += WEFT_FJ_SYNC(uts_typed, &kids[k]);
    }
    return r;
}
struct uts_g {
    struct uts_node nd;
    long count;
};
static int uts_group(weft_ctx *cx, void *p) {
    struct uts_g *u = p;
    int k = uts_kids(u->nd, uts_maxdepth);
    struct uts_g kids[UTS_MAXKIDS];
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int i = 0; i < k; i++) {
        kids[i] = (struct uts_g){uts_child(u->nd, i), -1};
        if (weft_task_group_spawn(&g, uts_group, &kids[i]) != WEFT_OK) return 1;
    }
    int st = weft_task_group_wait(&g);
    u->count = 1;
    for (int i = 0; i < k; i++) u->count += kids[i].count;
    return st;
}
struct uts_root_arg {
    struct uts_node nd;
    long typed;
};
static int uts_root(weft_ctx *cx, void *p) {
    struct uts_root_arg *a = p;
    a->typed = WEFT_FJ_RUN(cx, uts_typed, a->nd);
    return 0;
}

TEST(lace_uts_unbalanced_trees_count_every_node_once_typed_and_grouped) {
    static const int depths[] = {0, 1, 6, 14, 20};
    static const uint64_t seeds[] = {1, 42, 7}; /* 1 dies at the root; 42 and 7 grow to 34k and 44k nodes at depth 20 */
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kWorkers[w]);
        for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++)
            for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
                uts_maxdepth = depths[d];
                struct uts_node root = {seeds[s], 0};
                long want = uts_serial(root);
                struct uts_root_arg t = {root, -1};
                ASSERT_EQ(weft_run_root(ex, uts_root, &t), 0);
                ASSERT_EQ(t.typed, want);
                struct uts_g g = {root, -1};
                ASSERT_EQ(weft_run_root(ex, uts_group, &g), 0);
                ASSERT_EQ(g.count, want);
            }
        weft_executor_destroy(ex);
    }
}

/* ---- RUN from every kind of task, and LACE_WORKER_ID through WEFT_FJ_CTX ------- */

/* Lace's pi seeds a generator per worker from LACE_WORKER_ID: here the worker
 * index through WEFT_FJ_CTX, which must be one of the executor's. */
static atomic_int pi_bad_worker;
static unsigned pi_workers;
WEFT_FJ_TASK(long, pi_ids, struct pi_range, r) {
    int id = weft_ctx_worker_id(WEFT_FJ_CTX);
    if (id < 0 || (unsigned)id >= pi_workers) atomic_fetch_add(&pi_bad_worker, 1);
    if (r.cnt <= 1) return r.cnt;
    WEFT_FJ_SLOT(pi_ids) lo;
    WEFT_FJ_SPAWN(pi_ids, &lo, ((struct pi_range){r.start, r.cnt / 2}));
    long hi = WEFT_FJ_CALL(pi_ids, ((struct pi_range){r.start + r.cnt / 2, (r.cnt + 1) / 2}));
    /* a second look after the call: the hidden top was written back, then moved on */
    id = weft_ctx_worker_id(WEFT_FJ_CTX);
    if (id < 0 || (unsigned)id >= pi_workers) atomic_fetch_add(&pi_bad_worker, 1);
    return hi + WEFT_FJ_SYNC(pi_ids, &lo);
}

struct fib_in_task {
    int n;
    long r;
};
static int fib_in_task_fn(weft_ctx *cx, void *p) {
    struct fib_in_task *a = p;
    a->r = WEFT_FJ_RUN(cx, pfib, a->n);
    struct pi_range pr = {0, 999};
    if (WEFT_FJ_RUN(cx, pi_ids, pr) != 999) a->r = -2;
    return 0;
}

TEST(lace_typed_runs_from_graph_async_and_root_tasks_at_once_give_exact_results) {
    enum { NT = 24 };
    for (size_t w = 0; w < NW; w++) {
        weft_executor *ex = make_executor(kWorkers[w]);
        pi_workers = kWorkers[w];
        atomic_store(&pi_bad_worker, 0);
        struct fib_in_task g[NT], a[NT];
        weft_taskflow *tf = make_taskflow("typed");
        for (int i = 0; i < NT; i++) {
            g[i] = (struct fib_in_task){i % 18, -1};
            must_emplace(tf, fib_in_task_fn, &g[i]);
        }
        weft_future *run = NULL, *fut[NT];
        ASSERT_OK(weft_run(ex, tf, &run));
        for (int i = 0; i < NT; i++) {
            a[i] = (struct fib_in_task){(i * 7) % 18, -1};
            ASSERT_OK(weft_async(ex, fib_in_task_fn, &a[i], &fut[i]));
        }
        struct fib_in_task r = {17, -1};
        ASSERT_EQ(weft_run_root(ex, fib_in_task_fn, &r), 0);
        ASSERT_OK(weft_future_wait(run));
        weft_future_destroy(run);
        for (int i = 0; i < NT; i++) {
            ASSERT_OK(weft_future_wait(fut[i]));
            weft_future_destroy(fut[i]);
            ASSERT_EQ(a[i].r, fib_serial(a[i].n));
            ASSERT_EQ(g[i].r, fib_serial(g[i].n));
        }
        ASSERT_EQ(r.r, fib_serial(17));
        ASSERT_EQ(atomic_load(&pi_bad_worker), 0);
        weft_taskflow_destroy(tf);
        weft_executor_destroy(ex);
    }
}
