/* Helpers shared by the issue-25 graph tests (graph_many.c, graph_edit.c,
 * graph_sem.c): a counting task, a task that waits at a gate, and an
 * allocator that fails its Nth call. */
#ifndef WEFT_TEST_GRAPH2_UTIL_H
#define WEFT_TEST_GRAPH2_UTIL_H

#include "test_util.h"

static inline int count_task(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

/* Returns once *arg is 1 (at most 10 s). */
static inline int wait_gate(weft_ctx *cx, void *arg) {
    (void)cx;
    wait_flag(arg, 1, 10.0);
    return 0;
}

/* Install once, before any executor (weft_set_allocator's contract); fail_at
 * = N fails the Nth call counted from the last reset of `calls`, 0 none. */
static atomic_long calls, fail_at;
static inline void *f_alloc(void *ctx, size_t n) {
    (void)ctx;
    return atomic_fetch_add(&calls, 1) + 1 == atomic_load(&fail_at) ? NULL : malloc(n);
}
static inline void *f_realloc(void *ctx, void *p, size_t old, size_t n) {
    (void)ctx, (void)old;
    return atomic_fetch_add(&calls, 1) + 1 == atomic_load(&fail_at) ? NULL : realloc(p, n);
}
static inline void f_free(void *ctx, void *p, size_t n) {
    (void)ctx, (void)n;
    free(p);
}
static inline void install_failing_allocator(void) {
    atomic_store(&fail_at, 0);
    weft_set_allocator(&(weft_allocator){f_alloc, f_realloc, f_free, NULL});
}

#endif
