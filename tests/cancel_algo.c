/* Tokens on parallel-algorithm calls (weft_algo_config.cancel): chunks not
 * started are skipped, the call says WEFT_ECANCELED, reductions and searches
 * leave their result alone, scans stop after a prefix of chunks, and a sort
 * leaves a permutation of its elements. */
#include "cancel_test.h" /* first: it defines _GNU_SOURCE */

#include <stdlib.h>
#include <string.h>

enum { N = 100000 };

struct loop {
    weft_cancel_token *tok;
    size_t cancel_at; /* the element whose body cancels (SIZE_MAX: none) */
    atomic_uchar *seen;
    atomic_size_t ran;
    atomic_size_t after; /* elements that started with the token already cancelled */
};

static void loop_body(size_t i, void *p) {
    struct loop *l = p;
    if (atomic_fetch_add(&l->seen[i], 1) != 0) abort(); /* an element run twice */
    atomic_fetch_add(&l->ran, 1);
    if (weft_cancel_token_is_cancelled(l->tok)) atomic_fetch_add(&l->after, 1);
    if (i == l->cancel_at) (void)weft_cancel_token_cancel(l->tok);
}

static void add_long(void *acc, const void *x, void *arg) {
    (void)arg;
    *(long *)acc += *(const long *)x;
}

static bool is_negative(const void *e, void *arg) {
    (void)arg;
    return *(const long *)e < 0;
}

TEST(algo_call_with_a_cancelled_token_runs_nothing_and_says_cancelled) {
    weft_executor *ex = make_executor(2);
    weft_cancel_token *tok = new_token();
    ASSERT_OK(weft_cancel_token_cancel(tok));
    weft_algo_config cfg = {.cancel = tok};
    struct loop l = {.tok = tok, .cancel_at = SIZE_MAX, .seen = calloc(N, 1)};
    ASSERT_STATUS(weft_parallel_for(ex, 0, N, 1, loop_body, &l, &cfg), WEFT_ECANCELED);
    ASSERT_EQ(atomic_load(&l.ran), 0);
    long *v = malloc(N * sizeof *v);
    for (size_t i = 0; i < N; i++) v[i] = (long)(N - i);
    long sum = 42;
    ASSERT_STATUS(weft_parallel_reduce(ex, v, N, sizeof *v, &sum, add_long, NULL, &cfg), WEFT_ECANCELED);
    ASSERT_EQ(sum, 42); /* left alone */
    size_t at = 7;
    ASSERT_STATUS(weft_parallel_find_if(ex, v, N, sizeof *v, is_negative, NULL, &at, &cfg), WEFT_ECANCELED);
    ASSERT_EQ(at, 7);
    /* The same calls without a cancel: the token changes nothing. */
    ASSERT_OK(weft_cancel_token_reset(tok));
    ASSERT_OK(weft_parallel_for(ex, 0, N, 1, loop_body, &l, &cfg));
    ASSERT_EQ(atomic_load(&l.ran), N);
    ASSERT_OK(weft_parallel_reduce(ex, v, N, sizeof *v, &sum, add_long, NULL, &cfg));
    ASSERT_EQ(sum, 42 + (long)N * (N + 1) / 2);
    free(v);
    free(l.seen);
    weft_cancel_token_destroy(tok);
    weft_executor_destroy(ex);
}

TEST(algo_cancelled_mid_call_skips_the_chunks_not_started_under_every_partitioner) {
    /* Two workers, and one: there a call is one task that takes every chunk
     * itself (plan.c, chunk_task's n == 1 path, no shared counter). */
    for (unsigned workers = 2; workers >= 1; workers--) {
    weft_executor *ex = make_executor(workers);
    weft_partitioner kinds[] = {WEFT_PARTITION_AUTO, WEFT_PARTITION_STATIC, WEFT_PARTITION_DYNAMIC,
                                WEFT_PARTITION_GUIDED};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        weft_cancel_token *tok = new_token();
        weft_algo_config cfg = {.partitioner = kinds[k], .cancel = tok};
        struct loop l = {.tok = tok, .cancel_at = 10, .seen = calloc(N, 1)};
        ASSERT_STATUS(weft_parallel_for(ex, 0, N, 1, loop_body, &l, &cfg), WEFT_ECANCELED);
        size_t ran = atomic_load(&l.ran), after = atomic_load(&l.after);
        ASSERT_GT(ran, 10);
        ASSERT_LT(ran, N);
        /* One worker, one task taking the chunks in order: element 10 is in
         * the first chunk, so most are skipped (guided's first chunk is half
         * of N with one task).  Two: how many ran before the cancel depends on
         * when each task got a CPU (under load the caller ran its whole static
         * half before the worker reached element 10: ran > N / 2), but after
         * it each running chunk stops within 64 elements (algo.h). */
        if (workers == 1) ASSERT_LE(ran, N / 2);
        if (after > 64 * (size_t)(workers + 1))
            TEST_FAIL_("partitioner %d, %u workers: %zu elements started after the cancel", (int)kinds[k], workers,
                       after);
        free(l.seen);
        weft_cancel_token_destroy(tok);
    }
    weft_executor_destroy(ex);
    }
}

/* A scan cancelled from its first chunk: the call ends (chunks wait for their
 * predecessors, so a skipped middle chunk would hang it) and says so. */
struct scan_stop {
    weft_cancel_token *tok;
};
static void add_cancelling(void *acc, const void *x, void *arg) {
    struct scan_stop *s = arg;
    *(long *)acc += *(const long *)x;
    (void)weft_cancel_token_cancel(s->tok);
}

TEST(algo_scan_cancelled_mid_call_ends_and_says_cancelled) {
    weft_executor *ex = make_executor(2);
    enum { M = 1 << 20 };
    long *in = malloc(M * sizeof *in), *out = malloc(M * sizeof *out);
    for (size_t i = 0; i < M; i++) in[i] = 1;
    struct scan_stop s = {.tok = new_token()};
    weft_algo_config cfg = {.cancel = s.tok};
    long init = 0;
    ASSERT_STATUS(weft_parallel_inclusive_scan(ex, in, out, M, sizeof *in, &init, add_cancelling, &s, &cfg),
                  WEFT_ECANCELED);
    ASSERT_EQ(out[0], 1); /* the first chunk ran */
    free(in);
    free(out);
    weft_cancel_token_destroy(s.tok);
    weft_executor_destroy(ex);
}

struct sort_stop {
    weft_cancel_token *tok;
    atomic_long compares;
};
static int cmp_cancelling(const void *a, const void *b, void *arg) {
    struct sort_stop *s = arg;
    if (atomic_fetch_add(&s->compares, 1) == 1000) (void)weft_cancel_token_cancel(s->tok);
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

TEST(algo_sort_cancelled_mid_call_leaves_a_permutation) {
    weft_executor *ex = make_executor(2);
    enum { M = 1 << 18 };
    long *v = malloc(M * sizeof *v);
    for (size_t i = 0; i < M; i++) v[i] = (long)((i * 2654435761u) % M); /* a permutation of 0..M-1 */
    struct sort_stop s = {.tok = new_token()};
    weft_algo_config cfg = {.cancel = s.tok};
    ASSERT_STATUS(weft_parallel_sort(ex, v, M, sizeof *v, cmp_cancelling, &s, &cfg), WEFT_ECANCELED);
    unsigned char *hit = calloc(M, 1);
    for (size_t i = 0; i < M; i++) {
        ASSERT_TRUE(v[i] >= 0 && v[i] < M);
        ASSERT_EQ(hit[v[i]], 0);
        hit[v[i]] = 1;
    }
    bool sorted = true;
    for (size_t i = 1; i < M; i++) sorted = sorted && v[i - 1] <= v[i];
    ASSERT_FALSE(sorted); /* it stopped early */
    free(hit);
    free(v);
    weft_cancel_token_destroy(s.tok);
    weft_executor_destroy(ex);
}

static int long_less(const void *a, const void *b, void *arg) {
    (void)arg;
    return *(const long *)a < *(const long *)b;
}

/* A one-element call with a cancelled token says WEFT_ECANCELED whatever the
 * algorithm: a sort of one element said WEFT_OK where a loop, a reduction or a
 * search of one said cancelled.  No element is no call to cancel: WEFT_OK. */
TEST(algo_one_element_calls_with_a_cancelled_token_all_say_cancelled) {
    weft_executor *ex = make_executor(2);
    weft_cancel_token *tok = new_token();
    ASSERT_OK(weft_cancel_token_cancel(tok));
    weft_algo_config cfg = {.cancel = tok};
    long v[1] = {5}, sum = 0;
    size_t at = 0;
    struct loop l = {.tok = tok, .cancel_at = SIZE_MAX, .seen = calloc(1, 1)};
    ASSERT_STATUS(weft_parallel_for(ex, 0, 1, 1, loop_body, &l, &cfg), WEFT_ECANCELED);
    ASSERT_STATUS(weft_parallel_reduce(ex, v, 1, sizeof *v, &sum, add_long, NULL, &cfg), WEFT_ECANCELED);
    ASSERT_STATUS(weft_parallel_find_if(ex, v, 1, sizeof *v, is_negative, NULL, &at, &cfg), WEFT_ECANCELED);
    ASSERT_STATUS(weft_parallel_sort(ex, v, 1, sizeof *v, long_less, NULL, &cfg), WEFT_ECANCELED);
    ASSERT_OK(weft_parallel_sort(ex, v, 0, sizeof *v, long_less, NULL, &cfg));
    ASSERT_EQ(v[0], 5);
    free(l.seen);
    weft_cancel_token_destroy(tok);
    weft_executor_destroy(ex);
}

/* A per-element call (loops, transforms, reductions) stops within 64
 * elements of each running chunk once its token fires (algo.h, weft_algo_config.cancel): under AUTO a chunk is 1/32 of
 * the loop, and the running chunks ran to their ends (6152 elements of 10^5
 * after the cancel, found by tests/cross_hunt43's probe). */
enum { CUT_N = 1 << 16, CUT_AT = 100 };
struct cut_loop {
    weft_cancel_token *tok;
    atomic_size_t ran;
    atomic_size_t after; /* elements that started with the token already cancelled */
};
static void cut_count(struct cut_loop *c) {
    if (weft_cancel_token_is_cancelled(c->tok)) atomic_fetch_add(&c->after, 1);
    if (atomic_fetch_add(&c->ran, 1) + 1 == CUT_AT) (void)weft_cancel_token_cancel(c->tok);
}
static void cut_index(size_t i, void *arg) { (void)i; cut_count(arg); }
static void cut_elem(void *e, void *arg) { (void)e; cut_count(arg); }
static void cut_unary(const void *in, void *out, void *arg) { (void)in; (void)out; cut_count(arg); }
static void cut_binary(const void *a, const void *b, void *out, void *arg) {
    (void)a, (void)b, (void)out;
    cut_count(arg);
}
static void cut_op(void *acc, const void *x, void *arg) {
    *(char *)acc ^= *(const char *)x;
    cut_count(arg);
}
static void cut_map(const void *in, void *out, void *arg) {
    *(char *)out = *(const char *)in;
    cut_count(arg);
}
static void xor_op(void *acc, const void *x, void *arg) {
    (void)arg;
    *(char *)acc ^= *(const char *)x;
}

TEST(per_element_calls_stop_within_64_elements_of_each_running_chunk_once_cancelled) {
    char *buf = calloc(CUT_N, 1), *out = calloc(CUT_N, 1);
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        weft_partitioner kinds[] = {WEFT_PARTITION_AUTO, WEFT_PARTITION_STATIC, WEFT_PARTITION_GUIDED};
        for (size_t k = 0; k < 3; k++) {
            for (int call = 0; call < 6; call++) {
                char acc = 7;
                struct cut_loop c = {.tok = new_token()};
                weft_algo_config cfg = {.partitioner = kinds[k], .cancel = c.tok};
                weft_status st = WEFT_OK;
                switch (call) {
                case 0: st = weft_parallel_for(ex, 0, CUT_N, 1, cut_index, &c, &cfg); break;
                case 1: st = weft_parallel_for_each(ex, buf, CUT_N, 1, cut_elem, &c, &cfg); break;
                case 2: st = weft_parallel_transform(ex, buf, 1, out, 1, CUT_N, cut_unary, &c, &cfg); break;
                case 3: st = weft_parallel_transform2(ex, buf, 1, buf, 1, out, 1, CUT_N, cut_binary, &c, &cfg); break;
                case 4: st = weft_parallel_reduce(ex, buf, CUT_N, 1, &acc, cut_op, &c, &cfg); break;
                case 5: st = weft_parallel_transform_reduce(ex, buf, CUT_N, 1, 1, &acc, cut_map, xor_op, &c, &cfg); break;
                }
                ASSERT_EQ(acc, 7); /* a cancelled reduction leaves *result as it was */
                ASSERT_STATUS(st, WEFT_ECANCELED);
                size_t ran = atomic_load(&c.ran), after = atomic_load(&c.after);
                /* The canceller's chunk stops at its next 64th element; each
                 * other task (the caller and a worker) within 64 of its own.
                 * Counted from the cancel itself, not from the 100th element:
                 * the thread that ran the 100th may lose its CPU before it
                 * cancels while the others run on (TSan in CI: 384 ran). */
                if (ran < CUT_AT || ran >= CUT_N || after > 64 * (size_t)(workers + 1))
                    TEST_FAIL_("workers %u partitioner %d call %d: %zu elements ran, %zu after the cancel (at %d)",
                               workers, (int)kinds[k], call, ran, after, CUT_AT);
                weft_cancel_token_destroy(c.tok);
            }
        }
        weft_executor_destroy(ex);
    }
    free(buf);
    free(out);
}
