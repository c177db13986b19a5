/* A counting allocator that fails its Nth call (tests/cancel_hunt40.c,
 * tests/exec_hunt40.c, tests/oom_hunt42.c): A.calls counts alloc and realloc
 * calls since the last fail_allocation(n), the nth returns NULL (0: none), and
 * with A.burst > 1 the burst - 1 calls after it too; A.failures counts the
 * NULLs given, A.outstanding the bytes handed out and not yet freed (a header
 * before each block keeps its size) and A.blocks those blocks; A.bt (A.nbt
 * frames) and A.fail_size say where the first failure since was and what it
 * asked for.  Install `counting` with weft_set_allocator while no executor is
 * alive.  One per test program. */
#ifndef WEFT_TESTS_COUNTING_ALLOC_H
#define WEFT_TESTS_COUNTING_ALLOC_H

#include <execinfo.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <weft.h>

static struct {
    atomic_long calls, fail_at, failures;
    atomic_long burst; /* 0 or 1: fail_at alone; else fail_at .. fail_at + burst - 1 */
    atomic_llong outstanding; /* bytes handed out and not yet freed */
    atomic_long blocks;       /* blocks handed out and not yet freed */
    void *bt[24];             /* where the first failure happened */
    int nbt;
    size_t fail_size; /* the size asked for there */
} A;
#define HDR ((size_t)_Alignof(max_align_t))

static bool should_fail(size_t size) {
    long n = atomic_fetch_add(&A.calls, 1) + 1, at = atomic_load(&A.fail_at), burst = atomic_load(&A.burst);
    if (!at || n < at || n >= at + (burst > 1 ? burst : 1)) return false;
    if (atomic_fetch_add(&A.failures, 1) == 0) { /* the first one (a burst may fail on two threads) */
        A.nbt = backtrace(A.bt, 24);
        A.fail_size = size;
    }
    return true;
}
static void *c_alloc(void *ctx, size_t size) {
    (void)ctx;
    if (should_fail(size)) return NULL;
    unsigned char *p = malloc(size + HDR);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    atomic_fetch_add(&A.outstanding, (long long)size);
    atomic_fetch_add(&A.blocks, 1);
    return p + HDR;
}
static void c_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size;
    if (!ptr) return;
    unsigned char *p = (unsigned char *)ptr - HDR;
    size_t real;
    memcpy(&real, p, sizeof real);
    atomic_fetch_sub(&A.outstanding, (long long)real);
    atomic_fetch_sub(&A.blocks, 1);
    free(p);
}
static void *c_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    (void)old_size;
    if (!ptr) return c_alloc(ctx, new_size);
    if (should_fail(new_size)) return NULL;
    unsigned char *p = (unsigned char *)ptr - HDR;
    size_t real;
    memcpy(&real, p, sizeof real);
    unsigned char *q = realloc(p, new_size + HDR);
    if (!q) return NULL;
    memcpy(q, &new_size, sizeof new_size);
    atomic_fetch_add(&A.outstanding, (long long)new_size - (long long)real);
    return q + HDR;
}
static const weft_allocator counting = { .alloc = c_alloc, .realloc = c_realloc, .free = c_free };

static inline void fail_allocation(long n) {
    atomic_store(&A.calls, 0);
    atomic_store(&A.failures, 0);
    atomic_store(&A.fail_at, n);
}

#endif
