/* Executors are sized from the process's CPUs, not the creating thread's mask
 * (src/platform/affinity.c): the default executor is made by whichever thread
 * first passes NULL, and a thread pinned to one CPU used to get a one-worker
 * pool whose workers all inherited its one CPU. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <weft.h>

#include "platform/platform.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

/* CPUs in the calling thread's mask. */
static int thread_cpus(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

/* Pins the calling thread to the first CPU of its mask. */
static void pin_to_one_cpu(void) {
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    int first = 0;
    while (!CPU_ISSET(first, &set)) first++;
    CPU_ZERO(&set);
    CPU_SET(first, &set);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof set, &set), 0);
    ASSERT_EQ(thread_cpus(), 1);
}

static int record_worker_cpus(weft_ctx *ctx, void *arg) {
    (void)ctx;
    *(int *)arg = thread_cpus();
    return 0;
}

typedef struct seen { weft_executor *ex; unsigned workers; int worker_cpus; } seen;

/* From a thread pinned to one CPU: the default executor's size, and the mask
 * one of its workers runs with. */
static void *use_default_pinned(void *arg) {
    seen *s = arg;
    pin_to_one_cpu();
    s->ex = weft_default_executor();
    if (!s->ex) return NULL;
    s->workers = weft_executor_workers(s->ex);
    weft_future *f = NULL;
    if (weft_async(s->ex, record_worker_cpus, &s->worker_cpus, &f) == WEFT_OK) {
        (void)weft_future_wait(f);
        weft_future_destroy(f);
    }
    return NULL;
}

/* The process's CPUs as the library counts them (a cgroup quota may cap them),
 * read while no thread is pinned; skips where there is one CPU. */
static unsigned process_cpus_or_skip(void) {
    unsetenv("WEFT_WORKERS");
    unsetenv("WEFT_AFFINITY");
    unsetenv("WEFT_PLACEMENT");
    if (thread_cpus() < 2) SKIP("one CPU: a pinned thread's mask is the process's");
    unsigned n = weft__cpu_count();
    if (n < 2) SKIP("a CPU quota of one CPU");
    return n;
}

TEST(default_executor_made_by_a_pinned_thread_has_a_worker_per_process_cpu) {
    unsigned n = process_cpus_or_skip();
    int all = thread_cpus();
    seen s = { 0 };
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, use_default_pinned, &s), 0);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    ASSERT_TRUE(s.ex != NULL);
    ASSERT_EQ(s.workers, n);
    ASSERT_EQ(s.worker_cpus, all); /* its workers run on every CPU, not the pinned one */
}

TEST(executor_made_by_a_pinned_main_thread_has_a_worker_per_process_cpu) {
    unsigned n = process_cpus_or_skip();
    int all = thread_cpus();
    pin_to_one_cpu(); /* the main thread: the mask at load still says the process's */
    weft_status st = WEFT_EINVAL;
    weft_executor *ex = weft_executor_create(NULL, &st);
    ASSERT_TRUE(ex != NULL);
    ASSERT_EQ(weft_executor_workers(ex), n);
    int worker_cpus = 0;
    weft_future *f = NULL;
    ASSERT_EQ(weft_async(ex, record_worker_cpus, &worker_cpus, &f), WEFT_OK);
    ASSERT_EQ(weft_future_wait(f), WEFT_OK);
    weft_future_destroy(f);
    ASSERT_EQ(worker_cpus, all);
    weft_executor_destroy(ex);
}
