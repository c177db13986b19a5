/* Sorts under comparators that are not strict weak orders: a random one, the
 * overflowing `a - b`, one that flips its answer from call to call, doubles
 * holding NaN.  The order is then unspecified, but the sort must stay inside
 * the array and its scratch (ASan checks that in the sanitizer build) and leave
 * a permutation of its input.  Elements carry their original index, so a
 * permutation is easy to check: every index once, with its own key. */
#include "algo_test.h"

#include <math.h>

typedef struct tagged {
    int32_t key;
    uint32_t idx;
} tagged;

static _Thread_local uint64_t rng = 0x9e3779b97f4a7c15ULL; /* per worker: no shared state */

static int cmp_random(const void *a, const void *b, void *arg) {
    (void)a, (void)b, (void)arg;
    return (int)(test_rand(&rng) % 3) - 1;
}

/* The classic bug: key a - key b wraps for keys far apart (computed unsigned,
 * so the wrap is defined; the sign is what the signed version would give). */
static int cmp_overflow(const void *a, const void *b, void *arg) {
    (void)arg;
    return (int32_t)((uint32_t)((const tagged *)a)->key - (uint32_t)((const tagged *)b)->key);
}

/* Right on some calls, reversed on others. */
static int cmp_flipping(const void *a, const void *b, void *arg) {
    (void)arg;
    int32_t x = ((const tagged *)a)->key, y = ((const tagged *)b)->key;
    int c = (x > y) - (x < y);
    return test_rand(&rng) & 1 ? c : -c;
}

#define RANDOM_LT(a, b) ((void)(a), (void)(b), (test_rand(&rng) & 1) != 0)
#define OVERFLOW_LT(a, b) ((int32_t)((uint32_t)(a).key - (uint32_t)(b).key) < 0)
WEFT_ALGO_SORT(tag_random, tagged, RANDOM_LT)
WEFT_ALGO_SORT(tag_overflow, tagged, OVERFLOW_LT)

static tagged *make_tagged(size_t n, uint64_t seed) {
    tagged *t = xmalloc(n * sizeof *t);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) t[i] = (tagged){ (int32_t)test_rand(&s), (uint32_t)i };
    return t;
}

/* Every original index exactly once, each with its own key. */
static void check_permutation(const tagged *got, const tagged *orig, size_t n, const char *what) {
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (!seen) TEST_FAIL_("out of memory");
    for (size_t i = 0; i < n; i++) {
        uint32_t k = got[i].idx;
        if (k >= n || seen[k] || got[i].key != orig[k].key)
            TEST_FAIL_("%s: n=%zu, element %zu (index %u) is not from a permutation", what, n, i, k);
        seen[k] = 1;
    }
    free(seen);
}

typedef weft_status (*tag_sort_fn)(weft_executor *ex, tagged *v, size_t n);
static weft_status generic_random(weft_executor *ex, tagged *v, size_t n) {
    return weft_parallel_sort(ex, v, n, sizeof *v, cmp_random, NULL, NULL);
}
static weft_status stable_random(weft_executor *ex, tagged *v, size_t n) {
    return weft_parallel_stable_sort(ex, v, n, sizeof *v, cmp_random, NULL, NULL);
}
static weft_status generic_overflow(weft_executor *ex, tagged *v, size_t n) {
    return weft_parallel_sort(ex, v, n, sizeof *v, cmp_overflow, NULL, NULL);
}
static weft_status generic_flipping(weft_executor *ex, tagged *v, size_t n) {
    return weft_parallel_sort(ex, v, n, sizeof *v, cmp_flipping, NULL, NULL);
}
static weft_status typed_random(weft_executor *ex, tagged *v, size_t n) { return tag_random_sort(ex, v, n, NULL); }
static weft_status typed_stable_random(weft_executor *ex, tagged *v, size_t n) {
    return tag_random_stable_sort(ex, v, n, NULL);
}
static weft_status typed_overflow(weft_executor *ex, tagged *v, size_t n) { return tag_overflow_sort(ex, v, n, NULL); }

static const struct {
    const char *name;
    tag_sort_fn sort;
} SORTS[] = {
    { "generic, random", generic_random },    { "stable, random", stable_random },
    { "generic, a - b", generic_overflow },   { "generic, flipping", generic_flipping },
    { "typed, random", typed_random },        { "typed stable, random", typed_stable_random },
    { "typed, a - b", typed_overflow },
};
#define NSORTS (sizeof SORTS / sizeof SORTS[0])

static void sort_and_check(weft_executor *ex, size_t k, size_t n, uint64_t seed) {
    tagged *orig = make_tagged(n, seed), *v = xmalloc(n * sizeof *v);
    memcpy(v, orig, n * sizeof *v);
    ASSERT_OK(SORTS[k].sort(ex, v, n));
    check_permutation(v, orig, n, SORTS[k].name);
    free(orig), free(v);
}

TEST(sorts_with_bad_comparators_return_a_permutation) {
    static const size_t sizes[] = { 1000, 4099, 10007, 100003 };
    for (unsigned w = 1; w <= 4; w++) {
        weft_executor *ex = make_executor(w);
        for (size_t k = 0; k < NSORTS; k++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) sort_and_check(ex, k, sizes[s], w * 100 + s);
        weft_executor_destroy(ex);
    }
}

TEST(sorts_of_a_million_with_a_random_comparator_return_a_permutation) {
    weft_executor *ex = make_executor(4);
    sort_and_check(ex, 0, 1000000, 7); /* generic */
    sort_and_check(ex, 4, 1000000, 8); /* typed */
    weft_executor_destroy(ex);
}

/* ---- NaN ------------------------------------------------------------------------ */

static int cmp_double_naive(const void *a, const void *b, void *arg) {
    (void)arg;
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y); /* 0 against any NaN: not transitive */
}

static int cmp_bits(const void *a, const void *b) {
    uint64_t x, y;
    memcpy(&x, a, 8), memcpy(&y, b, 8);
    return (x > y) - (x < y);
}

/* The same doubles, bit for bit, in any order. */
static bool same_multiset(const double *x, const double *y, size_t n) {
    double *p = xmalloc(n * 8), *q = xmalloc(n * 8);
    memcpy(p, x, n * 8), memcpy(q, y, n * 8);
    qsort(p, n, 8, cmp_bits), qsort(q, n, 8, cmp_bits);
    bool same = memcmp(p, q, n * 8) == 0;
    free(p), free(q);
    return same;
}

/* Every 7th a NaN (some negative: 0.0 / 0.0 is one on x86), the rest few values. */
static double *nan_input(size_t n, uint64_t seed) {
    double *v = xmalloc(n * sizeof *v);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) v[i] = i % 7 == 0 ? (i % 2 ? NAN : -NAN) : (double)(test_rand(&s) % 1000) - 500;
    return v;
}

/* Numbers ascending, then only NaNs; with `in`, the NaNs in their input order
 * (their signs differ). */
static void check_nans_last(const double *v, const double *in, size_t n, const char *what) {
    size_t m = 0;
    while (m < n && !isnan(v[m])) m++;
    for (size_t i = m; i < n; i++)
        if (!isnan(v[i])) TEST_FAIL_("%s: n=%zu, a number at %zu after a NaN at %zu", what, n, i, m);
    for (size_t i = 1; i < m; i++)
        if (v[i - 1] > v[i]) TEST_FAIL_("%s: n=%zu, numbers out of order at %zu", what, n, i);
    for (size_t i = 0, j = m; in && i < n; i++)
        if (isnan(in[i]) && signbit(in[i]) != signbit(v[j++]))
            TEST_FAIL_("%s: n=%zu, the NaN from %zu is out of its input order", what, n, i);
}

TEST(sort_with_nan_never_leaves_the_array) {
    weft_executor *ex = make_executor(2); /* the reported case: 5,000, every 7th NaN, 2 workers */
    size_t n = 5000;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        double *in = nan_input(n, seed), *v = xmalloc(n * sizeof *v);
        memcpy(v, in, n * 8);
        ASSERT_OK(weft_parallel_sort(ex, v, n, sizeof *v, cmp_double_naive, NULL, NULL));
        ASSERT_TRUE(same_multiset(v, in, n));
        memcpy(v, in, n * 8);
        ASSERT_OK(weft_double_sort(ex, v, n, NULL));
        ASSERT_TRUE(same_multiset(v, in, n));
        free(in), free(v);
    }
    weft_executor_destroy(ex);
}

/* A single NaN at the edges of the first partition (its pivot candidates, an
 * odd or even tail), in blocks sorted alone and in parallel. */
static void one_nan_anywhere_goes_last(weft_executor *ex) {
    static const size_t sizes[] = { 25, 26, 27, 101, 4100, 8193 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s], where[] = { 0, 1, 2, n / 2, n / 2 + 1, n - 2, n - 1 };
        for (size_t k = 0; k < sizeof where / sizeof where[0]; k++) {
            double *in = xmalloc(n * sizeof *in), *v = xmalloc(n * sizeof *v);
            uint64_t r = n + k;
            for (size_t i = 0; i < n; i++) in[i] = (double)(test_rand(&r) % 100);
            in[where[k]] = NAN;
            memcpy(v, in, n * 8);
            ASSERT_OK(weft_double_nans_last_sort(ex, v, n, NULL));
            check_nans_last(v, NULL, n, "one NaN");
            ASSERT_TRUE(isnan(v[n - 1]) && same_multiset(v, in, n));
            free(in), free(v);
        }
    }
}

/* +inf and -inf side by side add up to NaN: the NaN test's false alarm, which
 * must only cost time. */
static void infinities_sort_without_nans(weft_executor *ex) {
    size_t n = 5003;
    double *v = xmalloc(n * sizeof *v);
    uint64_t r = 5;
    for (size_t i = 0; i < n; i++) v[i] = (double)(test_rand(&r) % 100);
    for (size_t i = 1; i + 1 < n; i += 40) v[i] = INFINITY, v[i + 1] = -INFINITY;
    ASSERT_OK(weft_double_nans_last_sort(ex, v, n, NULL));
    for (size_t i = 1; i < n; i++) ASSERT_TRUE(v[i - 1] <= v[i]);
    ASSERT_TRUE(v[0] == -INFINITY && v[n - 1] == INFINITY);
    free(v);
}

TEST(nans_last_sorts_put_nans_last) {
    static const size_t sizes[] = { 0, 1, 2, 7, 31, 5000, 8209, 100003 };
    for (unsigned w = 1; w <= 4; w++) {
        weft_executor *ex = make_executor(w);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            double *in = nan_input(n, n + w), *v = xmalloc(n * sizeof *v + 8);
            float *f = xmalloc(n * sizeof *f + 4);
            memcpy(v, in, n * 8);
            ASSERT_OK(weft_double_nans_last_sort(ex, v, n, NULL));
            check_nans_last(v, NULL, n, "weft_double_nans_last_sort");
            ASSERT_TRUE(same_multiset(v, in, n));
            memcpy(v, in, n * 8);
            ASSERT_OK(weft_double_nans_last_stable_sort(ex, v, n, NULL));
            check_nans_last(v, in, n, "weft_double_nans_last_stable_sort");
            ASSERT_TRUE(same_multiset(v, in, n));
            for (size_t i = 0; i < n; i++) f[i] = (float)in[i];
            ASSERT_OK(weft_float_nans_last_sort(ex, f, n, NULL));
            for (size_t i = 0; i < n; i++) v[i] = f[i];
            check_nans_last(v, NULL, n, "weft_float_nans_last_sort");
            free(in), free(v), free(f);
        }
        one_nan_anywhere_goes_last(ex);
        infinities_sort_without_nans(ex);
        weft_executor_destroy(ex);
    }
}

/* ---- kernels that lie, and the other comparator-driven calls ---------------------- */

/* A split that answers at random, even outside the runs: the driver must not
 * follow it out of bounds.  The merges themselves are right, so the result
 * is still sorted. */
static size_t lying_split(const void *a, size_t na, const void *b, size_t nb, size_t k, void *arg) {
    (void)a, (void)b, (void)k, (void)arg;
    return (size_t)(test_rand(&rng) % (na + nb + 3));
}

TEST(sort_ops_with_a_lying_split_stays_in_bounds_and_sorts) {
    static const weft_sort_ops ops = { weft_u64__sort_block, weft_u64__merge, lying_split };
    for (unsigned w = 2; w <= 4; w++) {
        weft_executor *ex = make_executor(w);
        size_t n = 100003;
        uint64_t *v = random_u64(n, w);
        ASSERT_OK(weft_parallel_sort_ops(ex, v, n, sizeof *v, &ops, NULL, NULL));
        for (size_t i = 1; i < n; i++)
            if (v[i - 1] > v[i]) TEST_FAIL_("not sorted at %zu (%u workers)", i, w);
        free(v);
        weft_executor_destroy(ex);
    }
}

TEST(min_and_max_with_a_random_comparator_give_an_index_in_range) {
    weft_executor *ex = make_executor(4);
    size_t n = 100003, idx = n;
    tagged *v = make_tagged(n, 3);
    ASSERT_OK(weft_parallel_min_element(ex, v, n, sizeof *v, cmp_random, NULL, &idx, NULL));
    ASSERT_LT(idx, n);
    ASSERT_OK(weft_parallel_max_element(ex, v, n, sizeof *v, cmp_flipping, NULL, &idx, NULL));
    ASSERT_LT(idx, n);
    free(v);
    weft_executor_destroy(ex);
}
