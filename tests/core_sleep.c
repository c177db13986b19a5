/* The sleep/wake protocol on its own: worker threads that follow exactly the
 * executor's idle path (search, prepare, final look, wait, leave idle) consume
 * items that a producer publishes with random gaps.  A lost wake-up leaves an item
 * unconsumed while every worker sleeps, which the deadline below catches. */
#define _GNU_SOURCE
#include "harness.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "core/sleep.h"
#include "weft.h"

#define WORKERS 3
static weft__sleep sl;
static _Atomic int64_t available; /* the "queue": a count of published items */
static _Atomic uint64_t consumed;
static _Atomic int quit;
static _Atomic int max_searching;

static bool try_take(void) {
    int64_t v = atomic_load(&available);
    while (v > 0)
        if (atomic_compare_exchange_weak(&available, &v, v - 1)) return true;
    return false;
}

static void *worker(void *arg) {
    (void)arg;
    for (;;) {
        bool got = false;
        for (int r = 0; r < 50 && !got; r++) got = try_take();
        if (!got) {
            uint32_t key = weft__sleep_prepare(&sl);
            got = try_take(); /* the final look */
            if (!got) {
                if (atomic_load(&quit)) break;
                weft__sleep_wait(&sl, key);
            }
            weft__sleep_leave_idle(&sl);
            if (!got) continue;
        }
        weft__sleep_end_search(&sl);
        atomic_fetch_add(&consumed, 1);
        weft__sleep_start_search(&sl);
    }
    return NULL;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

TEST(sleep_no_lost_wakeup_with_random_gaps) {
    weft__sleep_init(&sl, WORKERS);
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++) pthread_create(&th[i], NULL, worker, NULL);
    uint64_t n = test_scale(20000), seed = test_seed();
    for (uint64_t i = 0; i < n; i++) {
        atomic_fetch_add(&available, 1);
        weft__sleep_notify(&sl);
        uint64_t r = test_rand(&seed) % 100;
        if (r < 5) usleep(200); /* long enough for every worker to park */
        else if (r < 30) usleep(1);
        /* Each item must be consumed promptly, even if all workers slept. */
        uint64_t deadline = now_ns() + 5000000000ull;
        while (atomic_load(&consumed) < i + 1) {
            if (now_ns() > deadline) TEST_FAIL_("item %llu never consumed: lost wake-up", (unsigned long long)i);
            sched_yield();
        }
    }
    atomic_store(&quit, 1);
    weft__sleep_wake_all(&sl);
    for (int i = 0; i < WORKERS; i++) pthread_join(th[i], NULL);
    ASSERT_EQ(atomic_load(&consumed), n);
    (void)max_searching;
}

TEST(sleep_burst_wakes_one_searcher_not_a_herd) {
    weft__sleep s;
    weft__sleep_init(&s, 4);
    /* All four workers announce idle. */
    for (int i = 0; i < 4; i++) (void)weft__sleep_prepare(&s);
    uint64_t v = atomic_load(&s.state);
    ASSERT_EQ(WEFT__SLEEP_SEARCHING(v), 0);
    ASSERT_EQ(WEFT__SLEEP_IDLE(v), 4);
    /* A burst of notifications wakes exactly one (counted as searching). */
    uint32_t e0 = atomic_load(&s.epoch);
    for (int i = 0; i < 100; i++) weft__sleep_notify(&s);
    v = atomic_load(&s.state);
    ASSERT_EQ(WEFT__SLEEP_SEARCHING(v), 1);
    ASSERT_EQ(WEFT__SLEEP_TOKENS(v), 1);
    ASSERT_EQ(atomic_load(&s.epoch), e0 + 1);
    /* The woken worker claims the token; then it finds work and stops searching:
     * as the last searcher it wakes one more. */
    weft__sleep_leave_idle(&s);
    v = atomic_load(&s.state);
    ASSERT_EQ(WEFT__SLEEP_SEARCHING(v), 1);
    ASSERT_EQ(WEFT__SLEEP_TOKENS(v), 0);
    ASSERT_EQ(WEFT__SLEEP_IDLE(v), 3);
    weft__sleep_end_search(&s);
    v = atomic_load(&s.state);
    ASSERT_EQ(WEFT__SLEEP_SEARCHING(v), 1); /* the next wakee */
    ASSERT_EQ(WEFT__SLEEP_TOKENS(v), 1);
    ASSERT_EQ(atomic_load(&s.epoch), e0 + 2);
}
