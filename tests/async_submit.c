/* Submitting from threads that are not workers (core/submitter.c): every task
 * runs exactly once whatever the number of submitting threads (more than there
 * are slots, threads that exit and others that come), no wake-up is lost when
 * a lone task arrives at parked workers, an executor freed and another created
 * by the same thread, a worker of one executor submitting to another, and a
 * ready-queue policy still seeing every task. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <time.h>

#include "test_util.h"

static int mark(weft_ctx *cx, void *p) {
    (void)cx;
    atomic_fetch_add_explicit((atomic_uchar *)p, 1, memory_order_relaxed);
    return 0;
}

struct submitter {
    weft_executor *ex;
    atomic_uchar *seen; /* one per task of this thread */
    int n;
    int failed;
};

static void *submit_all(void *p) {
    struct submitter *s = p;
    for (int i = 0; i < s->n; i++)
        if (weft_silent_async(s->ex, mark, &s->seen[i]) != WEFT_OK) s->failed++;
    return NULL;
}

/* Threads [0, n) submit at once; returns after joining them. */
static void run_threads(struct submitter *s, int n) {
    pthread_t t[32];
    for (int i = 0; i < n; i++) ASSERT_EQ(pthread_create(&t[i], NULL, submit_all, &s[i]), 0);
    for (int i = 0; i < n; i++) ASSERT_EQ(pthread_join(t[i], NULL), 0);
}

/* More threads than submitter slots (8), twice: the second group's threads are
 * new ones, which may take over the slots of exited threads. */
TEST(async_outside_threads_more_than_slots_each_task_runs_once) {
    enum { THREADS = 12 };
    int per = (int)test_scale(20000);
    for (unsigned workers = 1; workers <= 3; workers++) {
        weft_executor *ex = make_executor(workers);
        struct submitter s[THREADS];
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < THREADS; i++) {
                s[i] = (struct submitter){ex, calloc((size_t)per, 1), per, 0};
                ASSERT_NOT_NULL(s[i].seen);
            }
            run_threads(s, THREADS);
            ASSERT_OK(weft_executor_wait_all(ex));
            for (int i = 0; i < THREADS; i++) {
                ASSERT_EQ(s[i].failed, 0);
                for (int k = 0; k < per; k++)
                    if (atomic_load(&s[i].seen[k]) != 1)
                        TEST_FAIL_("%u workers, round %d: thread %d's task %d ran %d times", workers, round, i, k,
                                   (int)atomic_load(&s[i].seen[k]));
                free(s[i].seen);
            }
        }
        weft_executor_destroy(ex);
    }
}

static int count_up(weft_ctx *cx, void *p) {
    (void)cx;
    atomic_fetch_add_explicit((atomic_int *)p, 1, memory_order_release);
    return 0;
}

/* One task at a time, each waited for by spinning on its effect (not through
 * weft, which would wake a worker itself), with pauses long enough for the
 * workers to park: a lost wake-up leaves a task queued and the spin times out. */
TEST(async_outside_trickle_never_loses_a_wakeup) {
    int n = (int)test_scale(3000);
    uint64_t rng = test_seed();
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        atomic_int done = 0;
        for (int i = 0; i < n; i++) {
            ASSERT_OK(weft_silent_async(ex, count_up, &done));
            uint64_t deadline = now_ns() + 10000000000ull;
            while (atomic_load_explicit(&done, memory_order_acquire) != i + 1)
                if (now_ns() > deadline)
                    TEST_FAIL_("%u workers: task %d did not run within 10 s (a lost wake-up)", workers, i);
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            if (rng % 4 == 0) { /* often enough that workers park in between */
                struct timespec ts = {0, (long)(rng % 200000)};
                nanosleep(&ts, NULL);
            }
        }
        ASSERT_OK(weft_executor_wait_all(ex));
        weft_executor_destroy(ex);
    }
}

/* The thread keeps its slot in a cache; an executor created after another was
 * freed (often at the same address) must not find the old slot there. */
TEST(async_outside_thread_submits_to_executors_created_one_after_another) {
    for (int rep = 0; rep < 40; rep++) {
        weft_executor *ex = make_executor(1 + rep % 2);
        atomic_int count = 0;
        for (int i = 0; i < 200; i++) ASSERT_OK(weft_silent_async(ex, count_up, &count));
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(atomic_load(&count), 200);
        weft_executor_destroy(ex);
    }
}

/* A thread alternating between two live executors keeps a slot on each. */
TEST(async_outside_thread_alternates_between_two_executors) {
    weft_executor *a = make_executor(1), *b = make_executor(2);
    atomic_int ca = 0, cb = 0;
    int n = (int)test_scale(20000);
    for (int i = 0; i < n; i++) {
        ASSERT_OK(weft_silent_async(a, count_up, &ca));
        ASSERT_OK(weft_silent_async(b, count_up, &cb));
    }
    ASSERT_OK(weft_executor_wait_all(a));
    ASSERT_OK(weft_executor_wait_all(b));
    ASSERT_EQ(atomic_load(&ca), n);
    ASSERT_EQ(atomic_load(&cb), n);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
}

struct cross {
    weft_executor *other;
    atomic_int *count;
    int n;
};

static int submit_to_other(weft_ctx *cx, void *p) {
    (void)cx;
    struct cross *c = p;
    for (int i = 0; i < c->n; i++)
        if (weft_silent_async(c->other, count_up, c->count) != WEFT_OK) return 1;
    return 0;
}

/* A worker of A is an outside thread to B: its tasks go to a slot on B. */
TEST(async_worker_of_one_executor_submits_to_another) {
    weft_executor *a = make_executor(2), *b = make_executor(2);
    atomic_int count = 0;
    struct cross c = {b, &count, (int)test_scale(50000)};
    weft_future *f[2];
    for (int i = 0; i < 2; i++) ASSERT_OK(weft_async(a, submit_to_other, &c, &f[i]));
    for (int i = 0; i < 2; i++) {
        ASSERT_OK(weft_future_wait(f[i]));
        weft_future_destroy(f[i]);
    }
    ASSERT_OK(weft_executor_wait_all(b));
    ASSERT_EQ(atomic_load(&count), 2 * c.n);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
}

/* A FIFO list under a mutex, counting what it was given. */
struct fifo {
    pthread_mutex_t lock;
    weft_sched_item *items[4096];
    size_t head, tail;
    atomic_int pushed;
};

static int fifo_push(void *st, weft_sched_item *item, weft_priority p, int worker) {
    (void)p, (void)worker;
    struct fifo *q = st;
    pthread_mutex_lock(&q->lock);
    int full = q->tail - q->head == 4096;
    if (!full) q->items[q->tail++ % 4096] = item;
    pthread_mutex_unlock(&q->lock);
    if (!full) atomic_fetch_add(&q->pushed, 1);
    return full;
}

static weft_sched_item *fifo_pop(void *st, int worker) {
    (void)worker;
    struct fifo *q = st;
    pthread_mutex_lock(&q->lock);
    weft_sched_item *it = q->head == q->tail ? NULL : q->items[q->head++ % 4096];
    pthread_mutex_unlock(&q->lock);
    return it;
}

/* With a ready-queue policy every task must reach the policy, those from
 * outside threads too: no slot may bypass it. */
TEST(async_outside_tasks_reach_a_custom_policy) {
    static struct fifo q;
    pthread_mutex_init(&q.lock, NULL);
    atomic_store(&q.pushed, 0);
    weft_sched_policy pol = {.state = &q, .push = fifo_push, .pop = fifo_pop};
    weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &pol};
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2, .sched = &sc}, &st);
    ASSERT_NOT_NULL(ex);
    atomic_int count = 0;
    for (int i = 0; i < 1000; i++) ASSERT_OK(weft_silent_async(ex, count_up, &count));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&count), 1000);
    ASSERT_TRUE(atomic_load(&q.pushed) >= 1000);
    weft_executor_destroy(ex);
    pthread_mutex_destroy(&q.lock);
}
