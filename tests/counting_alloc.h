/* A counting allocator that fails its Nth call (tests/cancel_hunt40.c,
 * tests/exec_hunt40.c): A.calls counts alloc and realloc calls since the last
 * fail_allocation(n), the nth returns NULL (0: none), A.failures counts the
 * NULLs given, and A.outstanding the bytes handed out and not yet freed (a
 * header before each block keeps its size).  Install `counting` with
 * weft_set_allocator while no executor is alive.  One per test program. */
#ifndef WEFT_TESTS_COUNTING_ALLOC_H
#define WEFT_TESTS_COUNTING_ALLOC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <weft.h>

static struct {
    atomic_long calls, fail_at, failures;
    atomic_llong outstanding; /* bytes handed out and not yet freed */
} A;
#define HDR ((size_t)_Alignof(max_align_t))

static bool should_fail(void) {
    long n = atomic_fetch_add(&A.calls, 1) + 1;
    if (n != atomic_load(&A.fail_at)) return false;
    atomic_fetch_add(&A.failures, 1);
    return true;
}
static void *c_alloc(void *ctx, size_t size) {
    (void)ctx;
    if (should_fail()) return NULL;
    unsigned char *p = malloc(size + HDR);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    atomic_fetch_add(&A.outstanding, (long long)size);
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
    free(p);
}
static void *c_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    (void)old_size;
    if (!ptr) return c_alloc(ctx, new_size);
    if (should_fail()) return NULL;
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

static void fail_allocation(long n) {
    atomic_store(&A.calls, 0);
    atomic_store(&A.failures, 0);
    atomic_store(&A.fail_at, n);
}

#endif
