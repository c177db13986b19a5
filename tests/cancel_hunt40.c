/* Session 40's hunt in cancellation: every call of weft/cancel.h under an
 * allocator that fails each allocation in turn (a failed call changes
 * nothing, nothing leaks, the token stays usable), a cancel racing the end of
 * every kind of run (weft_future_cancel's WEFT_OK must mean a cancelled run),
 * and tokens and deadlines at their edges. */
#include "cancel_test.h"

#include <stdlib.h>
#include <string.h>

#include "counting_alloc.h"

/* ---- every cancel call under every allocation failure ------------------------ */

static long cur; /* the allocation failing, for messages */

/* Retries a status call once after WEFT_ENOMEM (the one failure is spent). */
#define RETRY(expr)                                                                             \
    do {                                                                                        \
        weft_status s_ = (expr);                                                                \
        if (s_ == WEFT_ENOMEM) {                                                                \
            if (atomic_load(&A.failures) == 0) TEST_FAIL_("%s: WEFT_ENOMEM with no failure (fail_at %ld)", #expr, cur); \
            s_ = (expr);                                                                        \
        }                                                                                       \
        if (s_ != WEFT_OK) TEST_FAIL_("%s: %s (fail_at %ld)", #expr, weft_errname(s_), cur);    \
    } while (0)

static weft_cancel_token *token_retrying(weft_cancel_token *parent) {
    weft_status st;
    weft_cancel_token *t = weft_cancel_token_create(parent, &st);
    if (!t) {
        if (st != WEFT_ENOMEM) TEST_FAIL_("token create: %s (fail_at %ld)", weft_errname(st), cur);
        t = weft_cancel_token_create(parent, &st);
        if (!t) TEST_FAIL_("token create again: %s (fail_at %ld)", weft_errname(st), cur);
    }
    return t;
}

static void count_reason(void *arg, const char *reason) {
    (void)reason;
    atomic_fetch_add((atomic_int *)arg, 1);
}

static int poll_token(weft_cancel_token *t, void *arg) {
    (void)t;
    return *(int *)arg;
}

static int root_checks(weft_ctx *ctx, void *arg) {
    atomic_fetch_add((atomic_int *)arg, 1);
    return weft_ctx_check(ctx) == WEFT_OK ? 0 : 1;
}

static int task_counts(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

static void cancel_scenario(weft_executor *ex) {
    atomic_int fired = 0, ran = 0;
    weft_cancel_token *parent = token_retrying(NULL);
    weft_cancel_token *child = token_retrying(parent);
    weft_cancel_callback *h = NULL;
    RETRY(weft_cancel_token_on_cancel(child, count_reason, &fired, &h));
    RETRY(weft_cancel_token_on_cancel(parent, count_reason, &fired, NULL));
    RETRY(weft_cancel_after(child, 3600 * SEC)); /* armed, never due here */
    weft_deadline d;
    RETRY(weft_deadline_begin(&d, parent, 3600 * SEC));
    ASSERT_OK(weft_deadline_end(&d));
    int r = -1, seven = 7;
    RETRY(weft_with_deadline(3600 * SEC, poll_token, &seven, &r));
    ASSERT_EQ(r, 7);
    weft_future *f = NULL;
    RETRY(weft_async(ex, task_counts, &ran, &f));
    RETRY(weft_cancel_attach(parent, f));
    RETRY(weft_run_root_with_token(ex, child, root_checks, &ran, &r));
    ASSERT_EQ(r, 0);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&ran), 2);
    ASSERT_EQ(atomic_load(&fired), 0);
    ASSERT_OK(weft_cancel_token_cancel_with(parent, "stop"));
    ASSERT_TRUE(weft_cancel_token_is_cancelled(child));
    ASSERT_STREQ(weft_cancel_token_reason(child), "stop");
    ASSERT_EQ(atomic_load(&fired), 2); /* each registration once, none lost */
    ASSERT_FALSE(weft_cancel_callback_remove(h));
    ASSERT_TRUE(weft_cancel_disarm(child)); /* the parent's cancel left the child's own deadline armed */
    weft_cancel_token_destroy(child);
    weft_cancel_token_destroy(parent);
}

TEST(every_cancel_call_fails_whole_or_succeeds_whole_when_any_allocation_fails) {
    weft_set_allocator(&counting);
    fail_allocation(0);
    weft_executor *ex = make_executor(2);
    /* Once without failures: process-wide state (the timer thread and its
     * heap, the registry's locks) is made here and kept, so the baseline
     * counts it. */
    cancel_scenario(ex);
    long total = atomic_load(&A.calls);
    long long baseline = atomic_load(&A.outstanding);
    for (long n = 1;; n++) {
        cur = n;
        fail_allocation(n);
        cancel_scenario(ex);
        bool failed = atomic_load(&A.failures) > 0;
        fail_allocation(0);
        if (atomic_load(&A.outstanding) != baseline)
            TEST_FAIL_("allocation %ld failing: %lld bytes more remain allocated", n,
                       atomic_load(&A.outstanding) - baseline);
        if (!failed && n > total) break;
        if (n > 4 * total + 1000) TEST_FAIL_("the allocation count keeps growing (n = %ld)", n);
    }
    printf("the scenario makes %ld allocations; each failed once\n", total);
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
}

/* ---- a cancel racing the end of a run ----------------------------------------- */

enum { KIND_ASYNC, KIND_DEPENDENT, KIND_PRIORITY_ASYNC, KIND_RUN, KIND_RUN_N, KIND_RUN_PARALLEL, KIND_PRIORITY_RUN,
       KINDS };
static const char *const kind_name[KINDS] = { "weft_async", "weft_dependent_async", "weft_async_with(HIGH)",
                                              "weft_run", "weft_run_n", "weft_run_n_parallel",
                                              "weft_run_with_priority" };

static weft_future *submit_kind(weft_executor *ex, weft_taskflow *tf, int kind, atomic_int *ran) {
    weft_future *f = NULL;
    switch (kind) {
    case KIND_ASYNC: ASSERT_OK(weft_async(ex, task_counts, ran, &f)); break;
    case KIND_DEPENDENT: ASSERT_OK(weft_dependent_async(ex, task_counts, ran, NULL, 0, &f)); break;
    case KIND_PRIORITY_ASYNC:
        ASSERT_OK(weft_async_with(ex, task_counts, ran, &(weft_async_options){ .priority = WEFT_PRIORITY_HIGH }, &f));
        break;
    case KIND_RUN: ASSERT_OK(weft_run(ex, tf, &f)); break;
    case KIND_RUN_N: ASSERT_OK(weft_run_n(ex, tf, 2, &f)); break;
    case KIND_RUN_PARALLEL: ASSERT_OK(weft_run_n_parallel(ex, tf, 2, &f)); break;
    case KIND_PRIORITY_RUN: ASSERT_OK(weft_run_with_priority(ex, tf, WEFT_PRIORITY_HIGH, &f)); break;
    }
    return f;
}

/* weft_future_cancel says WEFT_OK only while the run is going, and then the
 * run ends WEFT_ECANCELED (core.h); WEFT_ENOENT only once it has finished,
 * with the status it had.  Cancels are timed at random around the run's end. */
TEST(a_cancel_racing_the_end_of_every_kind_of_run_reports_what_the_run_became) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("race-end");
    atomic_int ran = 0;
    must_emplace(tf, task_counts, &ran);
    must_emplace(tf, task_counts, &ran);
    unsigned seed = (unsigned)test_seed();
    int rounds = (int)test_scale(300);
    for (int kind = 0; kind < KINDS; kind++) {
        int hits[2] = { 0, 0 };
        for (int i = 0; i < rounds; i++) {
            weft_future *f = submit_kind(ex, tf, kind, &ran);
            /* A spin of up to ~20 us, or a sleep of up to 100 us: a worker must
             * wake up first, which takes longer on a busy machine. */
            unsigned r = (unsigned)rand_r(&seed);
            if ((r & 3) == 0) sleep_us(r % 100);
            else for (unsigned spin = r % 40000; spin; spin--) __asm__ volatile("" ::: "memory");
            weft_status c = weft_future_cancel(f);
            weft_status st = weft_future_wait(f);
            if (c == WEFT_OK && st != WEFT_ECANCELED)
                TEST_FAIL_("%s, round %d: the cancel said the run was going, but it ended %s", kind_name[kind], i,
                           weft_errname(st));
            if (c == WEFT_ENOENT && st != WEFT_OK)
                TEST_FAIL_("%s, round %d: the cancel found the run finished, but it ended %s", kind_name[kind], i,
                           weft_errname(st));
            if (c != WEFT_OK && c != WEFT_ENOENT) TEST_FAIL_("%s: cancel gave %s", kind_name[kind], weft_errname(c));
            hits[c == WEFT_OK]++;
            weft_future_destroy(f);
        }
        printf("%-24s cancelled in flight %d, after the end %d\n", kind_name[kind], hits[1], hits[0]);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- a deadline scope copied between begin and end ---------------------------- */

/* A C helper that opens a budget returns the scope by value: the caller ends
 * a copy.  The timer heap linked the scope by the address begin was given,
 * in the helper's dead frame: the timer read and wrote that stack memory (a
 * budget that never fired, or a crash, once another call reused it). */
static __attribute__((noinline)) weft_deadline open_budget(weft_cancel_token *t, uint64_t budget_ns) {
    weft_deadline d;
    memset(&d, 0, sizeof d);
    if (weft_deadline_begin(&d, t, budget_ns) != WEFT_OK) TEST_FAIL_("weft_deadline_begin failed");
    return d;
}

/* Reuses the stack the helper's frame had, with bytes that make a deadline
 * that never comes, and waits there for the budget to run out. */
static __attribute__((noinline)) bool scribble_and_wait(weft_cancel_token *t, double secs) {
    volatile unsigned char junk[16384];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = 0xff;
    double end = now_s() + secs;
    while (!weft_cancel_token_is_cancelled(t) && now_s() < end) {
        junk[0] = 0xff;
        sleep_us(1000);
    }
    return weft_cancel_token_is_cancelled(t);
}

TEST(a_deadline_scope_returned_by_value_from_a_helper_fires_and_ends_on_the_copy) {
    weft_cancel_token *t = new_token();
    weft_deadline d = open_budget(t, 2 * MS);
    ASSERT_TRUE(scribble_and_wait(t, 5.0));
    ASSERT_STREQ(weft_cancel_token_reason(t), "deadline exceeded");
    ASSERT_STATUS(weft_deadline_end(&d), WEFT_ETIMEDOUT);
    /* One ended within its budget, on a copy of a copy. */
    ASSERT_OK(weft_cancel_token_reset(t));
    weft_deadline d1 = open_budget(t, 3600 * SEC);
    (void)scribble_and_wait(t, 0.002);
    weft_deadline d2 = d1;
    memset(&d1, 0xff, sizeof d1);
    ASSERT_OK(weft_deadline_end(&d2));
    ASSERT_FALSE(weft_cancel_token_is_cancelled(t));
    weft_cancel_token_destroy(t);
}

/* ---- a token attached to a set of runs ---------------------------------------- */

struct gate {
    atomic_int ran, open;
};

static int wait_for_gate(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct gate *g = arg;
    atomic_fetch_add(&g->ran, 1);
    while (!atomic_load(&g->open)) sleep_us(200);
    return 0;
}

/* weft_cancel_attach: when t is cancelled, f's tasks not yet started are
 * skipped.  For the future of a weft_run_many set, the cancel reached only
 * the set's own future, which cancels nothing submitted (weft/graph.h): every
 * member ran to the end and the set said WEFT_OK, the token's cancel lost. */
TEST(a_token_attached_to_a_run_many_set_stops_its_members) {
    weft_executor *ex = make_executor(2);
    enum { CHAIN = 10 };
    struct gate g = { 0 };
    weft_taskflow *tf[2];
    for (int k = 0; k < 2; k++) {
        tf[k] = make_taskflow("member");
        weft_task prev = must_emplace(tf[k], wait_for_gate, &g);
        for (int i = 1; i < CHAIN; i++) {
            weft_task t = must_emplace(tf[k], wait_for_gate, &g);
            ASSERT_OK(weft_precede(prev, t));
            prev = t;
        }
    }
    weft_future *all = NULL;
    ASSERT_OK(weft_run_many(ex, tf, 2, &all));
    weft_cancel_token *t = new_token();
    ASSERT_OK(weft_cancel_attach(t, all));
    ASSERT_TRUE(wait_flag(&g.ran, 2, 5.0)); /* each member's first task is running */
    ASSERT_OK(weft_cancel_token_cancel_with(t, "stop the set"));
    atomic_store(&g.open, 1);
    ASSERT_STATUS(weft_future_wait(all), WEFT_ECANCELED);
    ASSERT_STATUS(weft_run_many_status(all, 0), WEFT_ECANCELED);
    ASSERT_STATUS(weft_run_many_status(all, 1), WEFT_ECANCELED);
    weft_run_info info;
    ASSERT_OK(weft_future_info(all, &info));
    ASSERT_EQ(atomic_load(&g.ran), 2);
    ASSERT_EQ(info.skipped, 2 * (CHAIN - 1));
    weft_future_destroy(all);
    weft_cancel_token_destroy(t);
    for (int k = 0; k < 2; k++) ASSERT_OK(weft_taskflow_destroy(tf[k]));
    weft_executor_destroy(ex);
}
