/* weft test harness: tiny, in-tree, one executable per area.
 *
 *     TEST(deque_pop_is_lifo) { ... ASSERT_EQ(a, b); ... }
 *
 * ctest runs every TEST of an executable as its own process (`exe NAME`), with a
 * timeout scaled by WEFT_TEST_TIMEOUT_MULT for sanitizer builds.  Running the
 * executable with no argument runs all its tests in one process, printing a line
 * per test and the closing line "N passed, N failed, N skipped".
 *
 * A test that needs something missing calls SKIP("why"): it exits with code 77,
 * which ctest reports as skipped under the test's name.
 * Stress tests size themselves with test_scale(): WEFT_TEST_SCALE (a float,
 * default 1; sanitizer builds default to 0.1) multiplies their iteration counts,
 * and test_seed() gives WEFT_TEST_SEED (default: fixed) for reproducible runs.
 */
#ifndef WEFT_TEST_HARNESS_H
#define WEFT_TEST_HARNESS_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*test_fn)(void);
struct test_case { const char *name; test_fn fn; };

#define TEST_MAX 256
extern struct test_case test_cases_[TEST_MAX];
extern int test_count_;

#define TEST(name)                                                                   \
    static void test_##name(void);                                                   \
    __attribute__((constructor)) static void test_register_##name(void) {            \
        if (test_count_ < TEST_MAX) test_cases_[test_count_++] = (struct test_case){#name, test_##name}; \
    }                                                                                \
    static void test_##name(void)

#define TEST_SKIP_CODE 77
#define SKIP(why) do { printf("SKIP: %s\n", (why)); fflush(stdout); exit(TEST_SKIP_CODE); } while (0)

#define TEST_FAIL_(...) do {                                                         \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                              \
        fprintf(stderr, __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                         \
        exit(1);                                                                     \
    } while (0)

#define ASSERT_TRUE(c) do { if (!(c)) TEST_FAIL_("ASSERT_TRUE(%s) failed", #c); } while (0)
#define ASSERT_FALSE(c) do { if (c) TEST_FAIL_("ASSERT_FALSE(%s) failed", #c); } while (0)

#define ASSERT_CMP_(a, op, b) do {                                                   \
        long long a_ = (long long)(a), b_ = (long long)(b);                          \
        if (!(a_ op b_))                                                             \
            TEST_FAIL_("ASSERT(%s %s %s) failed: %lld vs %lld", #a, #op, #b, a_, b_); \
    } while (0)
#define ASSERT_EQ(a, b) ASSERT_CMP_(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_CMP_(a, !=, b)
#define ASSERT_LT(a, b) ASSERT_CMP_(a, <, b)
#define ASSERT_LE(a, b) ASSERT_CMP_(a, <=, b)
#define ASSERT_GT(a, b) ASSERT_CMP_(a, >, b)
#define ASSERT_GE(a, b) ASSERT_CMP_(a, >=, b)

/* Status checks print the code's name, e.g. "WEFT_ECYCLE vs WEFT_OK". */
#define ASSERT_STATUS(got, want) do {                                                \
        int g_ = (int)(got), w_ = (int)(want);                                       \
        if (g_ != w_)                                                                \
            TEST_FAIL_("%s: got %s (%d), want %s (%d)", #got, weft_errname(g_), g_, weft_errname(w_), w_); \
    } while (0)
#define ASSERT_OK(expr) ASSERT_STATUS(expr, WEFT_OK)

#define ASSERT_STREQ(a, b) do {                                                      \
        const char *a_ = (a), *b_ = (b);                                             \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                       \
            TEST_FAIL_("ASSERT_STREQ(%s, %s) failed: \"%s\" vs \"%s\"", #a, #b,      \
                       a_ ? a_ : "(null)", b_ ? b_ : "(null)");                      \
    } while (0)
#define ASSERT_NOT_NULL(p) do { if ((p) == NULL) TEST_FAIL_("%s is NULL", #p); } while (0)
#define ASSERT_NULL(p) do { if ((p) != NULL) TEST_FAIL_("%s is not NULL", #p); } while (0)

/* Scales an iteration count for the current build (never below 1). */
static inline uint64_t test_scale(uint64_t n) {
    const char *s = getenv("WEFT_TEST_SCALE");
    double f =
#ifdef WEFT_SANITIZER
        0.1;
#else
        1.0;
#endif
    if (s && *s) f = atof(s);
    double r = (double)n * f;
    return r < 1.0 ? 1 : (uint64_t)r;
}

static inline uint64_t test_seed(void) {
    const char *s = getenv("WEFT_TEST_SEED");
    return (s && *s) ? strtoull(s, NULL, 0) : 0x5eedf00dULL;
}

/* xorshift64*: small, fast, deterministic for a seed. */
static inline uint64_t test_rand(uint64_t *state) {
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ULL;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dULL;
}

#endif
