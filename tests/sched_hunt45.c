/* Hunt 45 (h45-2): scheduling policies and handles, pass 2. */
#include "sched_util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- a user policy: a locked FIFO ring ---- */

typedef struct ring_policy {
    pthread_mutex_t m;
    weft_sched_item **items;
    size_t head, n, cap;
    atomic_int destroyed;
} ring_policy;

static int ring_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    (void)p, (void)worker;
    ring_policy *r = st;
    pthread_mutex_lock(&r->m);
    int full = r->n == r->cap;
    if (!full) r->items[(r->head + r->n++) % r->cap] = it;
    pthread_mutex_unlock(&r->m);
    return full;
}

static weft_sched_item *ring_pop(void *st, int worker) {
    (void)worker;
    ring_policy *r = st;
    weft_sched_item *it = NULL;
    pthread_mutex_lock(&r->m);
    if (r->n) it = r->items[r->head], r->head = (r->head + 1) % r->cap, r->n--;
    pthread_mutex_unlock(&r->m);
    return it;
}

static size_t ring_size(void *st) {
    ring_policy *r = st;
    pthread_mutex_lock(&r->m);
    size_t n = r->n;
    pthread_mutex_unlock(&r->m);
    return n;
}

static void ring_destroy(void *st) { atomic_fetch_add(&((ring_policy *)st)->destroyed, 1); }

static ring_policy *ring_new(size_t cap) {
    ring_policy *r = calloc(1, sizeof *r);
    ASSERT_NOT_NULL(r);
    r->items = calloc(cap, sizeof *r->items);
    ASSERT_NOT_NULL(r->items);
    r->cap = cap;
    pthread_mutex_init(&r->m, NULL);
    return r;
}

static void ring_free(ring_policy *r) {
    pthread_mutex_destroy(&r->m);
    free(r->items);
    free(r);
}

/* ---- (a) one policy state shared by two executors ---- */

static long fib_ref(long n) { return n < 2 ? n : fib_ref(n - 1) + fib_ref(n - 2); }

static int fib_value(weft_ctx *cx, void *arg) {
    long *n = arg;
    if (*n < 2) return 0;
    long a = *n - 1, b = *n - 2;
    ASSERT_OK(weft_spawn(cx, fib_value, &a));
    ASSERT_OK(fib_value(cx, &b));
    ASSERT_OK(weft_sync(cx));
    *n = a + b;
    return 0;
}

static void add_index(size_t i, void *arg) { atomic_fetch_add_explicit((atomic_long *)arg, (long)i, memory_order_relaxed); }

/* Graph runs, async tasks from this thread and from tasks, fork-join and a
 * parallel loop on ex, each counted exactly. */
static void *mixed_work(void *arg) {
    weft_executor *ex = arg;
    weft_taskflow *tf = make_taskflow("diamond");
    atomic_int count = 0;
    weft_task a = must_emplace(tf, bump, &count), b = must_emplace(tf, bump, &count),
              c = must_emplace(tf, bump, &count), d = must_emplace(tf, bump, &count);
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_precede(a, c));
    ASSERT_OK(weft_precede(b, d));
    ASSERT_OK(weft_precede(c, d));
    for (int i = 0; i < 20; i++) ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&count), 80);
    weft_taskflow_destroy(tf);
    atomic_int n = 0;
    for (int i = 0; i < 1000; i++)
        ASSERT_OK(weft_async_with(ex, bump, &n, &(weft_async_options){.priority = (weft_priority)(i % 4 - 1)}, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&n), 1000);
    long v = 16;
    ASSERT_OK(weft_run_root(ex, fib_value, &v));
    ASSERT_EQ(v, fib_ref(16));
    atomic_long sum = 0;
    ASSERT_OK(weft_parallel_for(ex, 0, 20000, 1, add_index, &sum, NULL));
    ASSERT_EQ(atomic_load(&sum), 20000L * 19999 / 2);
    return NULL;
}

/* weft/sched.h: a user may give one policy (its state) to several
 * executors: one queue that all their workers push to and take from.  A
 * worker of one executor then takes the other's items: not in its own
 * executor's set of held items, each was counted as a policy error and
 * dropped, and the other executor's wait hung (1 run in 5 of 2000 async
 * tasks on each).  Each item must run once, on the executor it came from,
 * with no policy error counted, and destroy is called once per executor. */
TEST(one_policy_state_given_to_two_executors_runs_every_job_of_each_once_and_counts_no_error) {
    ring_policy *r = ring_new(1 << 16);
    weft_sched_policy pol = {.state = r, .push = ring_push, .pop = ring_pop, .size = ring_size, .destroy = ring_destroy};
    weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &pol};
    weft_executor *a = make_sched_executor(2, &sc), *b = make_sched_executor(2, &sc);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, mixed_work, a), 0);
    mixed_work(b);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    weft_sched_stats sa, sb;
    ASSERT_OK(weft_sched_get_stats(a, &sa));
    ASSERT_OK(weft_sched_get_stats(b, &sb));
    ASSERT_EQ(sa.policy_errors, 0);
    ASSERT_EQ(sb.policy_errors, 0);
    weft_executor_destroy(a);
    ASSERT_EQ(atomic_load(&r->destroyed), 1);
    weft_executor_destroy(b);
    ASSERT_EQ(atomic_load(&r->destroyed), 2);
    ASSERT_EQ(ring_size(r), 0);
    ring_free(r);
}

typedef struct spawner {
    weft_executor *ex;
    atomic_int n, spawned, release;
} spawner;

static int spawn_then_hold(weft_ctx *cx, void *arg) {
    (void)cx;
    spawner *sp = arg;
    /* From a worker: each job goes into the policy at once. */
    for (int i = 0; i < 50; i++) ASSERT_OK(weft_silent_async(sp->ex, bump, &sp->n));
    atomic_store(&sp->spawned, 1);
    (void)wait_flag(&sp->release, 1, 10);
    return 0;
}

/* The same, deterministically: executor a's only worker queues 50 jobs in
 * the shared FIFO and stays busy; b's worker, woken by one job of b's, finds
 * a's 50 first.  They must reach a and run there. */
TEST(jobs_another_executor_takes_from_a_shared_policy_state_run_on_their_own) {
    ring_policy *r = ring_new(1 << 12);
    weft_sched_policy pol = {.state = r, .push = ring_push, .pop = ring_pop, .size = ring_size, .destroy = ring_destroy};
    weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &pol};
    weft_executor *a = make_sched_executor(1, &sc), *b = make_sched_executor(1, &sc);
    spawner sp = {.ex = a};
    ASSERT_OK(weft_silent_async(a, spawn_then_hold, &sp));
    ASSERT_TRUE(wait_flag(&sp.spawned, 1, 10));
    atomic_int nb = 0;
    ASSERT_OK(weft_silent_async(b, bump, &nb));
    ASSERT_TRUE(wait_flag(&nb, 1, 10));
    atomic_store(&sp.release, 1);
    if (!wait_flag(&sp.n, 50, 5)) TEST_FAIL_("%d of a's 50 jobs ran", atomic_load(&sp.n));
    ASSERT_OK(weft_executor_wait_all(a));
    ASSERT_OK(weft_executor_wait_all(b));
    weft_sched_stats sa, sb;
    ASSERT_OK(weft_sched_get_stats(a, &sa));
    ASSERT_OK(weft_sched_get_stats(b, &sb));
    ASSERT_EQ(sa.policy_errors + sb.policy_errors, 0);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
    ASSERT_EQ(atomic_load(&r->destroyed), 2);
    ring_free(r);
}

/* ---- probe: a policy that hands items out only 2 ms after their push ---- */

typedef struct late_policy {
    pthread_mutex_t m;
    weft_sched_item *items[1024];
    double at[1024];
    size_t n;
} late_policy;

static int late_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    (void)p, (void)worker;
    late_policy *l = st;
    pthread_mutex_lock(&l->m);
    int full = l->n == 1024;
    if (!full) l->items[l->n] = it, l->at[l->n++] = now_s();
    pthread_mutex_unlock(&l->m);
    return full;
}

static weft_sched_item *late_pop(void *st, int worker) {
    (void)worker;
    late_policy *l = st;
    weft_sched_item *it = NULL;
    pthread_mutex_lock(&l->m);
    if (l->n && now_s() - l->at[0] > 0.002) {
        it = l->items[0];
        memmove(l->items, l->items + 1, --l->n * sizeof *l->items);
        memmove(l->at, l->at + 1, l->n * sizeof *l->at);
    }
    pthread_mutex_unlock(&l->m);
    return it;
}

/* weft/sched.h: a policy that returns NULL while it holds items breaks the
 * contract, is counted, and "those items run only once the policy hands
 * them out on a later call".  A policy that holds each item a while (2 ms:
 * batching, rate limiting) made no later call: the workers looked, found
 * nothing, slept, and nothing woke them; weft_executor_wait_all waited for
 * ever (10 async tasks: 1 ran).  They must look again (a nap), so every
 * job runs, and the lapse is counted, not once per look. */
TEST(a_policy_that_hands_items_out_late_still_gets_every_job_run) {
    late_policy *l = calloc(1, sizeof *l);
    ASSERT_NOT_NULL(l);
    pthread_mutex_init(&l->m, NULL);
    weft_sched_policy pol = {.state = l, .push = late_push, .pop = late_pop};
    weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &pol};
    weft_executor *ex = make_sched_executor(2, &sc);
    atomic_int n = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 10; i++) ASSERT_OK(weft_silent_async(ex, bump, &n));
        if (!wait_flag(&n, 10 * (round + 1), 5)) TEST_FAIL_("round %d: %d of 10 jobs ran in 5 s", round, atomic_load(&n) - 10 * round);
        sleep_us(3000); /* every worker asleep again */
    }
    weft_taskflow *tf = make_taskflow("chain");
    atomic_int c = 0;
    weft_task prev = must_emplace(tf, bump, &c);
    for (int i = 0; i < 4; i++) {
        weft_task t = must_emplace(tf, bump, &c);
        ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&c), 5);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_sched_stats st;
    ASSERT_OK(weft_sched_get_stats(ex, &st));
    /* Each sleep beside held items is one lapse at most per worker, not one
     * per nap (a nap is 50 us to 1 ms). */
    ASSERT_LE(st.policy_errors, 200);
    weft_executor_destroy(ex);
    pthread_mutex_destroy(&l->m);
    free(l);
}
