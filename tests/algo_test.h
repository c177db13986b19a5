/* Helpers shared by the algorithm tests: sizes, partitioner configs, executors. */
#ifndef WEFT_ALGO_TEST_H
#define WEFT_ALGO_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <weft.h>
#include <weft/algo_typed.h>

#include "test_util.h"

/* 0, 1, 2, primes around chunk and block edges. */
static const size_t SMALL_SIZES[] = { 0, 1, 2, 3, 7, 31, 101, 257, 1031, 4099, 8191, 8209, 65537 };
#define NSMALL (sizeof SMALL_SIZES / sizeof SMALL_SIZES[0])

/* The big case: 10^7, scaled down under sanitizers (WEFT_TEST_SCALE). */
static inline size_t big_size(void) { return (size_t)test_scale(10000000); }

/* Every partitioner with its default chunk and two odd explicit ones. */
static const weft_algo_config CONFIGS[] = {
    { .partitioner = WEFT_PARTITION_AUTO, .chunk = 0, .max_tasks = 0 },
    { .partitioner = WEFT_PARTITION_STATIC, .chunk = 0, .max_tasks = 0 },  { .partitioner = WEFT_PARTITION_STATIC, .chunk = 1, .max_tasks = 0 },  { .partitioner = WEFT_PARTITION_STATIC, .chunk = 7, .max_tasks = 0 },
    { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 0, .max_tasks = 0 }, { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1, .max_tasks = 0 }, { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 13, .max_tasks = 0 },
    { .partitioner = WEFT_PARTITION_GUIDED, .chunk = 0, .max_tasks = 0 },  { .partitioner = WEFT_PARTITION_GUIDED, .chunk = 5, .max_tasks = 0 },  { .partitioner = WEFT_PARTITION_STATIC, .chunk = 3, .max_tasks = 2 },
};
#define NCONFIGS (sizeof CONFIGS / sizeof CONFIGS[0])

/* Worker counts the tests run with (more than the CPUs is fine). */
static const unsigned WORKERS[] = { 1, 2, 4 };
#define NWORKERS (sizeof WORKERS / sizeof WORKERS[0])

static inline void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) TEST_FAIL_("out of memory (%zu bytes)", bytes);
    return p;
}

static inline uint64_t *random_u64(size_t n, uint64_t seed) {
    uint64_t *v = xmalloc(n * sizeof *v), s = seed;
    for (size_t i = 0; i < n; i++) v[i] = test_rand(&s);
    return v;
}

/* 2x2 matrices of uint64 mod 2^64: associative, not commutative. */
typedef struct mat2 { uint64_t a, b, c, d; } mat2;

static inline mat2 mat2_mul(mat2 x, mat2 y) {
    mat2 r = { x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d };
    return r;
}
static inline void mat2_op(void *acc, const void *x, void *arg) {
    (void)arg;
    *(mat2 *)acc = mat2_mul(*(mat2 *)acc, *(const mat2 *)x);
}
static inline bool mat2_eq(mat2 x, mat2 y) { return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d; }
static inline mat2 *random_mats(size_t n, uint64_t seed) {
    mat2 *m = xmalloc(n * sizeof *m);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) m[i] = (mat2){ test_rand(&s) | 1, test_rand(&s), test_rand(&s), test_rand(&s) | 1 };
    return m;
}

static inline void add_u64(void *acc, const void *x, void *arg) {
    (void)arg;
    *(uint64_t *)acc += *(const uint64_t *)x;
}
static inline void add_double(void *acc, const void *x, void *arg) {
    (void)arg;
    *(double *)acc += *(const double *)x;
}
static inline int cmp_u64(const void *a, const void *b, void *arg) {
    (void)arg;
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

#endif
