/* Executor stress: every task runs exactly once at any worker count, no submission
 * is lost to a sleeping executor, and an idle executor burns no CPU.
 *
 * Sizes scale with test_scale() (WEFT_TEST_SCALE; 0.1 in sanitizer builds) and the
 * random gaps follow test_seed() (WEFT_TEST_SEED), so a failure can be replayed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <stdatomic.h>
#include <time.h>

static void spin_us(unsigned us) {
    uint64_t end = now_ns() + (uint64_t)us * 1000u;
    while (now_ns() < end) {
    }
}

static uint64_t cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static int bump_u(weft_ctx *ctx, void *arg) {
    atomic_fetch_add_explicit((atomic_uint *)arg, 1, memory_order_relaxed);
    return 0;
}

/* ---- exactly once ------------------------------------------------------------ */

TEST(tiny_tasks_run_exactly_once_with_1_2_4_8_workers) {
    const size_t n = (size_t)test_scale(1000000);
    atomic_uint *count = calloc(n, sizeof *count);
    ASSERT_NOT_NULL(count);
    weft_taskflow *tf = make_taskflow("tiny");
    for (size_t i = 0; i < n; i++) must_emplace(tf, bump_u, &count[i]);
    ASSERT_EQ(weft_taskflow_num_tasks(tf), n);

    const unsigned workers[] = { 1, 2, 4, 8 };
    for (size_t w = 0; w < sizeof workers / sizeof workers[0]; w++) {
        weft_executor *ex = make_executor(workers[w]);
        for (size_t i = 0; i < n; i++) atomic_store_explicit(&count[i], 0, memory_order_relaxed);
        weft_future *f = NULL;
        ASSERT_OK(weft_run(ex, tf, &f));
        weft_status st = weft_future_wait_for(f, 60 * SEC);
        if (st != WEFT_OK) TEST_FAIL_("%u workers: run ended with %s", workers[w], weft_errname(st));
        weft_future_destroy(f);
        for (size_t i = 0; i < n; i++) {
            unsigned c = atomic_load_explicit(&count[i], memory_order_relaxed);
            if (c != 1) TEST_FAIL_("%u workers: task %zu ran %u times", workers[w], i, c);
        }
        weft_executor_destroy(ex);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    free(count);
}

/* ---- lost wake-ups ----------------------------------------------------------- */

enum { WINDOW = 4 };

/* a -> {b, c} -> d: small enough that a run is mostly wake-up and hand-off. */
static void build_diamond(weft_taskflow *tf, atomic_uint *counter) {
    weft_task a = must_emplace(tf, bump_u, counter);
    weft_task b = must_emplace(tf, bump_u, counter);
    weft_task c = must_emplace(tf, bump_u, counter);
    weft_task d = must_emplace(tf, bump_u, counter);
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_precede(a, c));
    ASSERT_OK(weft_precede(b, d));
    ASSERT_OK(weft_precede(c, d));
}

static void wait_slot(weft_future **f, atomic_uint *counter, unsigned *runs, uint64_t i) {
    if (!*f) return;
    weft_status st = weft_future_wait_for(*f, 5 * SEC);
    if (st != WEFT_OK)
        TEST_FAIL_("submission %" PRIu64 ": run not finished after 5 s (%s): lost wake-up?", i,
                   weft_errname(st));
    weft_future_destroy(*f);
    *f = NULL;
    ASSERT_EQ(atomic_load(counter), 4u * *runs);
}

TEST(no_lost_wakeup_with_random_gaps) {
    const uint64_t n = test_scale(100000);
    uint64_t rng = test_seed();
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf[WINDOW];
    weft_future *fut[WINDOW] = { 0 };
    atomic_uint counter[WINDOW];
    unsigned runs[WINDOW] = { 0 };
    for (int k = 0; k < WINDOW; k++) {
        atomic_init(&counter[k], 0);
        tf[k] = make_taskflow(NULL);
        build_diamond(tf[k], &counter[k]);
    }
    for (uint64_t i = 0; i < n; i++) {
        int k = (int)(i % WINDOW);
        wait_slot(&fut[k], &counter[k], &runs[k], i);

        /* Gaps: none, a short spin (workers are between searching and parking), or
         * now and then a sleep long enough that every worker parks. */
        uint64_t r = test_rand(&rng) % 1000;
        if (r < 400) {
        } else if (r < 997) {
            spin_us((unsigned)(test_rand(&rng) % 51));
        } else {
            sleep_us(1000 + (unsigned)(test_rand(&rng) % 1000));
        }
        ASSERT_OK(weft_run(ex, tf[k], &fut[k]));
        runs[k]++;
        /* Half the time wait at once, so the next submission meets idle workers. */
        if (test_rand(&rng) & 1) wait_slot(&fut[k], &counter[k], &runs[k], i);
    }
    for (int k = 0; k < WINDOW; k++) wait_slot(&fut[k], &counter[k], &runs[k], n);
    for (int k = 0; k < WINDOW; k++) ASSERT_OK(weft_taskflow_destroy(tf[k]));
    weft_executor_destroy(ex);
}

/* ---- wait_all: never early, never stuck ---------------------------------------- */

/* Runs end on their workers in per-worker counters; wait_all sums them and is
 * woken by a worker that finds no work.  Each round submits a few silent tasks,
 * some of which submit a child from inside (a run begun by a run), with random
 * gaps, then waits: wait_all must not return before every task, children
 * included, has run, and must not sleep through the last end (the test would
 * time out). */
struct quiet_round {
    weft_executor *ex;
    atomic_uint done;
    unsigned spin_us;
};

static int quiet_leaf(weft_ctx *ctx, void *arg) {
    struct quiet_round *q = arg;
    if (q->spin_us) spin_us(q->spin_us);
    atomic_fetch_add_explicit(&q->done, 1, memory_order_relaxed);
    return 0;
}

static int quiet_parent(weft_ctx *ctx, void *arg) {
    struct quiet_round *q = arg;
    int st = weft_silent_async(weft_ctx_executor(ctx), quiet_leaf, q);
    atomic_fetch_add_explicit(&q->done, 1, memory_order_relaxed);
    return st;
}

TEST(wait_all_returns_after_every_run_and_never_sleeps_through_the_last) {
    const uint64_t rounds = test_scale(20000);
    uint64_t rng = test_seed();
    const unsigned workers[] = { 1, 2, 4 };
    for (size_t wi = 0; wi < sizeof workers / sizeof workers[0]; wi++) {
        weft_executor *ex = make_executor(workers[wi]);
        struct quiet_round q = { .ex = ex };
        for (uint64_t i = 0; i < rounds; i++) {
            atomic_store(&q.done, 0);
            q.spin_us = test_rand(&rng) % 4 == 0 ? (unsigned)(test_rand(&rng) % 20) : 0;
            unsigned leaves = (unsigned)(test_rand(&rng) % 4), parents = (unsigned)(test_rand(&rng) % 3);
            for (unsigned k = 0; k < leaves; k++) ASSERT_OK(weft_silent_async(ex, quiet_leaf, &q));
            for (unsigned k = 0; k < parents; k++) ASSERT_OK(weft_silent_async(ex, quiet_parent, &q));
            if (test_rand(&rng) % 8 == 0) spin_us((unsigned)(test_rand(&rng) % 30));
            ASSERT_OK(weft_executor_wait_all(ex));
            unsigned got = atomic_load(&q.done), want = leaves + 2 * parents;
            if (got != want)
                TEST_FAIL_("%u workers, round %llu: wait_all returned after %u of %u tasks", workers[wi],
                           (unsigned long long)i, got, want);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- idle CPU ---------------------------------------------------------------- */

/* CPU time the whole process uses over one second of doing nothing. */
static uint64_t idle_cpu_ns_over_one_second(void) {
    sleep_us(200000); /* let workers finish searching and park */
    uint64_t c0 = cpu_ns();
    sleep_us(1000000);
    return cpu_ns() - c0;
}

TEST(idle_executor_uses_no_cpu) {
#ifdef WEFT_SANITIZER
    SKIP("sanitizer runtimes use CPU in background threads");
#endif
    weft_executor *ex = make_executor(4);
    uint64_t fresh = idle_cpu_ns_over_one_second();

    atomic_uint count = 0;
    weft_taskflow *tf = make_taskflow("work");
    for (int i = 0; i < 1000; i++) must_emplace(tf, bump_u, &count);
    for (int r = 0; r < 20; r++) ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&count), 20000u);
    uint64_t after = idle_cpu_ns_over_one_second();

    printf("idle CPU over 1 s: %.2f ms after create, %.2f ms after work\n", fresh / 1e6,
           after / 1e6);
    if (fresh >= 20 * 1000000ull)
        TEST_FAIL_("fresh idle executor used %.1f ms of CPU in 1 s (limit 20)", fresh / 1e6);
    if (after >= 20 * 1000000ull)
        TEST_FAIL_("idle executor used %.1f ms of CPU in 1 s after work (limit 20)", after / 1e6);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
