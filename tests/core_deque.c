/* Chase-Lev deque: semantics, and every item taken exactly once under a steal
 * storm with resizes. */
#define _GNU_SOURCE
#include "harness.h"

#include <pthread.h>
#include <time.h>
#include <stdatomic.h>

#include "core/alloc.h"
#include "core/deque.h"
#include "weft.h"

/* Items are jobs whose address encodes their number. */
static weft__job *items;

TEST(deque_pop_is_lifo_and_steal_is_fifo) {
    weft__deque q;
    ASSERT_OK(weft__deque_init(&q, 4));
    weft__job j[10];
    for (int i = 0; i < 10; i++) ASSERT_OK(weft__deque_push(&q, &j[i])); /* grows past 16? no: 10 */
    ASSERT_EQ(weft__deque_size(&q), 10);
    ASSERT_TRUE(weft__deque_pop(&q) == &j[9]);
    weft__job *s = NULL;
    ASSERT_EQ(weft__deque_steal(&q, &s), WEFT__STEAL_OK);
    ASSERT_TRUE(s == &j[0]);
    ASSERT_TRUE(weft__deque_pop(&q) == &j[8]);
    ASSERT_EQ(weft__deque_steal(&q, &s), WEFT__STEAL_OK);
    ASSERT_TRUE(s == &j[1]);
    for (int i = 7; i >= 2; i--) ASSERT_TRUE(weft__deque_pop(&q) == &j[i]);
    ASSERT_NULL(weft__deque_pop(&q));
    ASSERT_EQ(weft__deque_steal(&q, &s), WEFT__STEAL_EMPTY);
    ASSERT_EQ(weft__deque_size(&q), 0);
    weft__deque_destroy(&q);
}

TEST(deque_grows_and_pops_in_lifo_order) {
    weft__deque q;
    ASSERT_OK(weft__deque_init(&q, 1)); /* rounds up to 16 */
    enum { N = 5000 };
    static weft__job j[N];
    for (int i = 0; i < N; i++) ASSERT_OK(weft__deque_push(&q, &j[i]));
    ASSERT_EQ(weft__deque_size(&q), N);
    for (int i = N - 1; i >= 0; i--) ASSERT_TRUE(weft__deque_pop(&q) == &j[i]);
    ASSERT_NULL(weft__deque_pop(&q));
    weft__deque_destroy(&q);
}

/* Steals must come in push order: count what came out, in order. */
TEST(deque_steals_in_push_order_across_resizes) {
    weft__deque q;
    ASSERT_OK(weft__deque_init(&q, 16));
    enum { N = 10000 };
    static weft__job j[N];
    int next_steal = 0;
    for (int i = 0; i < N; i++) {
        ASSERT_OK(weft__deque_push(&q, &j[i]));
        if (i % 4 == 3) {
            weft__job *s = NULL;
            ASSERT_EQ(weft__deque_steal(&q, &s), WEFT__STEAL_OK);
            ASSERT_TRUE(s == &j[next_steal]);
            next_steal++;
        }
    }
    int popped = 0;
    while (weft__deque_pop(&q)) popped++;
    ASSERT_EQ(popped + next_steal, N);
    weft__deque_destroy(&q);
}

/* ---- steal storm ---------------------------------------------------------- */

#define THIEVES 3
static weft__deque storm_q;
static _Atomic unsigned char *taken;
static _Atomic int storm_done;
static _Atomic uint64_t stolen_count;
static _Atomic uint64_t live_stolen; /* steals so far, counted as they happen */

static void take(weft__job *j) {
    size_t i = (size_t)(j - items);
    unsigned char before = atomic_fetch_add_explicit(&taken[i], 1, memory_order_relaxed);
    if (before != 0) {
        fprintf(stderr, "item %zu taken twice\n", i);
        exit(1);
    }
}

static void *thief(void *arg) {
    (void)arg;
    uint64_t n = 0;
    while (!atomic_load_explicit(&storm_done, memory_order_acquire) || weft__deque_size(&storm_q) > 0) {
        weft__job *j;
        if (weft__deque_steal(&storm_q, &j) == WEFT__STEAL_OK) {
            take(j);
            n++;
            atomic_fetch_add_explicit(&live_stolen, 1, memory_order_relaxed);
        }
    }
    atomic_fetch_add(&stolen_count, n);
    return NULL;
}

/* The owner's side of a storm: pushes n_items in bursts (growing the ring
 * from 2 slots) and pops some after each, while THIEVES threads run
 * thief_fn; then checks every item was taken exactly once. */
static bool storm_nopop; /* the owner pushes with weft__deque_push_nopop and never pops (a submitter slot) */

static void run_storm(void *(*thief_fn)(void *)) {
    uint64_t n_items = test_scale(2000000);
    uint64_t seed = test_seed();
    items = calloc(n_items, sizeof *items);
    taken = calloc(n_items, 1);
    ASSERT_NOT_NULL(items);
    ASSERT_NOT_NULL(taken);
    /* Start tiny so the ring resizes many times while thieves are stealing. */
    ASSERT_OK(weft__deque_init(&storm_q, 2));
    atomic_store(&storm_done, 0);
    atomic_store(&stolen_count, 0);
    atomic_store(&live_stolen, 0);
    pthread_t th[THIEVES];
    for (int i = 0; i < THIEVES; i++) pthread_create(&th[i], NULL, thief_fn, (void *)(uintptr_t)(i + 1));
    uint64_t popped = 0, pushed = 0;
    while (pushed < n_items) {
        /* Bursts of pushes (growing the ring) and pops (racing the thieves for
         * the last items). */
        uint64_t burst = 1 + test_rand(&seed) % 300;
        for (uint64_t k = 0; k < burst && pushed < n_items; k++)
            ASSERT_OK(storm_nopop ? weft__deque_push_nopop(&storm_q, &items[pushed++])
                                  : weft__deque_push(&storm_q, &items[pushed++]));
        uint64_t pops = storm_nopop ? 0 : test_rand(&seed) % (burst + 2);
        for (uint64_t k = 0; k < pops; k++) {
            weft__job *j = weft__deque_pop(&storm_q);
            if (!j) break;
            take(j);
            popped++;
        }
    }
    /* On a loaded machine the thieves may not have run yet (ASan on 2 busy
     * cores: 0 stolen once): before the last pops, give them up to 2 s to
     * take some of what is left, so that the storm does exercise stealing. */
    bool left = weft__deque_size(&storm_q) > 0;
    for (int k = 0; k < 2000 && left && atomic_load(&live_stolen) == 0; k++) nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    weft__job *j;
    while (!storm_nopop && (j = weft__deque_pop(&storm_q))) {
        take(j);
        popped++;
    }
    atomic_store_explicit(&storm_done, 1, memory_order_release);
    for (int i = 0; i < THIEVES; i++) pthread_join(th[i], NULL);
    ASSERT_EQ(popped + atomic_load(&stolen_count), n_items);
    for (uint64_t i = 0; i < n_items; i++)
        if (taken[i] != 1) TEST_FAIL_("item %llu taken %d times", (unsigned long long)i, (int)taken[i]);
    if (left) ASSERT_GT(atomic_load(&stolen_count), 0);
    weft__deque_destroy(&storm_q);
    free(items);
    free((void *)taken);
}

TEST(deque_every_item_taken_exactly_once_under_steal_storm_with_resizes) { run_storm(thief); }

/* ---- batch steal (weft__deque_steal_batch) --------------------------------- */

TEST(deque_batch_steal_takes_half_the_jobs_oldest_first) {
    weft__deque q;
    ASSERT_OK(weft__deque_init(&q, 16));
    weft__job j[10], *out[16];
    unsigned n = 99;
    ASSERT_EQ(weft__deque_steal_batch(&q, out, 16, &n), WEFT__STEAL_EMPTY);
    ASSERT_EQ(n, 0);
    for (int i = 0; i < 10; i++) ASSERT_OK(weft__deque_push(&q, &j[i]));
    ASSERT_EQ(weft__deque_steal_batch(&q, out, 16, &n), WEFT__STEAL_OK);
    ASSERT_EQ(n, 5); /* half of 10 */
    for (unsigned i = 0; i < n; i++) ASSERT_TRUE(out[i] == &j[i]);
    ASSERT_EQ(weft__deque_steal_batch(&q, out, 2, &n), WEFT__STEAL_OK);
    ASSERT_EQ(n, 2); /* capped by max (half of 5 is 3) */
    ASSERT_TRUE(out[0] == &j[5] && out[1] == &j[6]);
    ASSERT_EQ(weft__deque_steal_batch(&q, out, 16, &n), WEFT__STEAL_OK);
    ASSERT_EQ(n, 2); /* half of 3, rounded up */
    ASSERT_TRUE(out[0] == &j[7] && out[1] == &j[8]);
    ASSERT_EQ(weft__deque_steal_batch(&q, out, 0, &n), WEFT__STEAL_EMPTY);
    ASSERT_EQ(n, 0);
    ASSERT_EQ(weft__deque_steal_batch(&q, out, 16, &n), WEFT__STEAL_OK);
    ASSERT_EQ(n, 1); /* a lone job is taken */
    ASSERT_TRUE(out[0] == &j[9]);
    ASSERT_NULL(weft__deque_pop(&q));
    ASSERT_EQ(weft__deque_size(&q), 0);
    weft__deque_destroy(&q);
}

/* The storm again with batch thieves: each takes up to half of the deque per
 * call (a random cap of 1..32) while the owner pushes (growing the ring from
 * 16 slots) and pops; every item must be taken exactly once.  A batch claimed
 * with one CAS of top (top += k) fails here: the owner pops jobs the thief's
 * CAS then claims too ("taken twice"). */
static _Atomic uint64_t batch_calls;
/* How the batch thieves steal: weft__deque_steal_batch (an owner that pops)
 * or weft__deque_steal_many (a push-only owner). */
static weft__steal_result (*batch_steal)(weft__deque *, weft__job **, unsigned, unsigned *) = weft__deque_steal_batch;

static void *batch_thief(void *arg) {
    uint64_t seed = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1;
    uint64_t n = 0, calls = 0;
    weft__job *out[32];
    while (!atomic_load_explicit(&storm_done, memory_order_acquire) || weft__deque_size(&storm_q) > 0) {
        unsigned got, max = 1 + (unsigned)(test_rand(&seed) % 32);
        if (batch_steal(&storm_q, out, max, &got) == WEFT__STEAL_OK) {
            if (got == 0 || got > max) {
                fprintf(stderr, "batch of %u with max %u\n", got, max);
                exit(1);
            }
            for (unsigned i = 0; i < got; i++) take(out[i]);
            n += got;
            calls++;
            atomic_fetch_add_explicit(&live_stolen, got, memory_order_relaxed);
        }
    }
    atomic_fetch_add(&stolen_count, n);
    atomic_fetch_add(&batch_calls, calls);
    return NULL;
}

TEST(deque_batch_steal_takes_every_item_exactly_once_under_storm_with_resizes) {
    atomic_store(&batch_calls, 0);
    run_storm(batch_thief);
    printf("  %llu stolen in %llu batch calls\n", (unsigned long long)atomic_load(&stolen_count),
           (unsigned long long)atomic_load(&batch_calls));
}

/* A submitter slot's deque: the owner only pushes (weft__deque_push_nopop,
 * which reads top only when the top it read last says the ring is full) and
 * thieves claim up to half with one CAS (weft__deque_steal_many, a random cap
 * of 1..32).  Starting from 2 slots, the ring wraps and grows under the
 * thieves; every item must be taken exactly once.  A push that trusted its
 * stale top past a wrap would overwrite a slot no thief had read yet: an item
 * lost (taken 0 times) and another taken twice. */
TEST(deque_push_only_owner_and_steal_many_thieves_take_every_item_exactly_once_across_wraps_and_resizes) {
    atomic_store(&batch_calls, 0);
    storm_nopop = true;
    batch_steal = weft__deque_steal_many;
    run_storm(batch_thief);
    batch_steal = weft__deque_steal_batch;
    storm_nopop = false;
    printf("  %llu stolen in %llu steal_many calls\n", (unsigned long long)atomic_load(&stolen_count),
           (unsigned long long)atomic_load(&batch_calls));
}

/* Micro-benchmark, reported not asserted: the cost per job of emptying a
 * deque of N jobs by single steals against batch steals (up to 32 per call),
 * uncontended, in one thread (the operation alone: no victim search, no
 * cache-line transfer).  WEFT_TEST_SCALE scales the rounds. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

TEST(deque_batch_steal_cost_per_job) {
    enum { N = 4096 };
    static weft__job j[N];
    weft__job *out[32];
    weft__deque q;
    ASSERT_OK(weft__deque_init(&q, N));
    uint64_t rounds = test_scale(200) + 1;
    double single = 0, batch = 0;
    uint64_t calls = 0;
    for (uint64_t r = 0; r < rounds; r++) {
        for (int i = 0; i < N; i++) ASSERT_OK(weft__deque_push(&q, &j[i]));
        double t0 = now_s();
        weft__job *x;
        unsigned got = 0;
        while (weft__deque_steal(&q, &x) == WEFT__STEAL_OK) got++;
        single += now_s() - t0;
        ASSERT_EQ(got, N);
        for (int i = 0; i < N; i++) ASSERT_OK(weft__deque_push(&q, &j[i]));
        t0 = now_s();
        unsigned k;
        got = 0;
        while (weft__deque_steal_batch(&q, out, 32, &k) == WEFT__STEAL_OK) got += k, calls++;
        batch += now_s() - t0;
        ASSERT_EQ(got, N);
    }
    double jobs = (double)rounds * N;
    printf("  single steal %.2f ns/job, batch steal (max 32) %.2f ns/job, %.1f jobs/call\n", 1e9 * single / jobs,
           1e9 * batch / jobs, jobs / (double)calls);
    weft__deque_destroy(&q);
}
