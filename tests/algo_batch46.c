/* AUTO's batched claims (src/algo/plan.c, claim_end): with several tasks a
 * claim takes a run of the plan's chunks, so that each worker streams through
 * a contiguous stretch.  What the header promises must still hold: every
 * chunk is a call of its own with boundaries that depend on n only (not on
 * the worker count), every element runs once, and a cancel stops the rest of
 * a claimed run and reports the call cancelled. */
#include "algo_test.h"

#include <stdlib.h>
#include <string.h>

typedef struct span_log {
    atomic_size_t count;
    size_t cap;
    size_t (*spans)[2];
    unsigned char *seen; /* per element: how many times it ran */
} span_log;

static void log_span(size_t lo, size_t hi, void *arg) {
    span_log *l = arg;
    size_t k = atomic_fetch_add(&l->count, 1);
    if (k < l->cap) {
        l->spans[k][0] = lo;
        l->spans[k][1] = hi;
    }
    for (size_t i = lo; i < hi; i++) l->seen[i]++; /* each element is in one span: no race */
    if (k % 16 == 0) sleep_us(50);                  /* let late workers take part */
}

static int cmp_span(const void *a, const void *b) {
    const size_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

TEST(auto_loop_calls_its_body_with_the_same_chunks_on_1_2_4_and_8_workers_and_runs_each_element_once) {
    const size_t n = 1000003;
    size_t ref_count = 0;
    size_t (*ref)[2] = NULL;
    const unsigned workers[] = { 1, 2, 4, 8 };
    for (size_t w = 0; w < 4; w++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers[w] }, NULL);
        ASSERT_TRUE(ex != NULL);
        span_log l = { .cap = 4096 };
        l.spans = xmalloc(l.cap * sizeof *l.spans);
        l.seen = calloc(n, 1);
        ASSERT_TRUE(l.seen != NULL);
        ASSERT_EQ(weft_parallel_for_range(ex, 0, n, 1, log_span, &l, NULL), WEFT_OK);
        size_t count = atomic_load(&l.count);
        ASSERT_TRUE(count > 1 && count <= l.cap);
        for (size_t i = 0; i < n; i++)
            if (l.seen[i] != 1) TEST_FAIL_("element %zu ran %u times on %u workers", i, (unsigned)l.seen[i], workers[w]);
        qsort(l.spans, count, sizeof *l.spans, cmp_span);
        ASSERT_EQ(l.spans[0][0], 0);
        ASSERT_EQ(l.spans[count - 1][1], n);
        for (size_t k = 1; k < count; k++) ASSERT_EQ(l.spans[k][0], l.spans[k - 1][1]);
        if (!ref) {
            ref = l.spans;
            ref_count = count;
        } else {
            if (count != ref_count) TEST_FAIL_("%u workers: %zu body calls, 1 worker: %zu", workers[w], count, ref_count);
            ASSERT_TRUE(memcmp(ref, l.spans, count * sizeof *l.spans) == 0);
            free(l.spans);
        }
        free(l.seen);
        weft_executor_destroy(ex);
    }
    free(ref);
}

typedef struct cancel_in_run {
    weft_cancel_token *tok;
    atomic_size_t calls, elements;
    atomic_int after; /* calls that started after the cancel returned */
    atomic_int cancelled;
} cancel_in_run;

static void cancel_first(size_t lo, size_t hi, void *arg) {
    cancel_in_run *c = arg;
    if (atomic_load(&c->cancelled)) atomic_fetch_add(&c->after, 1);
    if (atomic_fetch_add(&c->calls, 1) == 0) {
        (void)weft_cancel_token_cancel(c->tok);
        atomic_store(&c->cancelled, 1);
    }
    atomic_fetch_add(&c->elements, hi - lo);
}

TEST(a_cancel_in_the_first_chunk_of_a_claimed_run_stops_the_run_and_reports_the_call_cancelled) {
    for (unsigned w = 2; w <= 8; w *= 2) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = w }, NULL);
        ASSERT_TRUE(ex != NULL);
        for (int round = 0; round < 20; round++) {
            cancel_in_run c = { 0 };
            c.tok = weft_cancel_token_create(NULL, NULL);
            ASSERT_TRUE(c.tok != NULL);
            const size_t n = 1 << 20;
            weft_status st = weft_parallel_for_range(ex, 0, n, 1, cancel_first, &c,
                                                     &(weft_algo_config){ .cancel = c.tok });
            ASSERT_STATUS(st, WEFT_ECANCELED);
            ASSERT_TRUE(atomic_load(&c.elements) < n);
            /* A chunk may start after the cancel only if its worker had looked
             * at the token just before: at most one per worker. */
            ASSERT_TRUE(atomic_load(&c.after) <= (int)w);
            weft_cancel_token_destroy(c.tok);
        }
        weft_executor_destroy(ex);
    }
}
