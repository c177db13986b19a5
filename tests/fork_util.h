/* fork() test scaffolding shared by the hunts that check what a child may do
 * (config_hunt42.c, config_hunt42b.c, fork_hunt42.c): a child with a bound on
 * its life, and a taskflow run in flight at the fork. */
#ifndef WEFT_TESTS_FORK_UTIL_H
#define WEFT_TESTS_FORK_UTIL_H

#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <stdatomic.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs fn in a child process (a fresh once-per-process warning state) and
 * returns its exit code, or fails the test if it hung (20 s) or crashed. */
static inline int in_child(int (*fn)(void)) {
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) _exit(fn());
    int status = wait_child(pid, 20, "the child hung");
    ASSERT_TRUE(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static atomic_uint fork_workers_in;
static unsigned fork_workers_want;

static inline int hold_until_every_worker_is_in(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    atomic_fetch_add(&fork_workers_in, 1);
    for (int i = 0; i < 200000 && atomic_load(&fork_workers_in) < fork_workers_want; i++) sleep_us(50);
    return 0;
}

/* Returns once every worker of ex has run a task, so none is still starting.
 * A test that forks right after making an executor calls it first: under
 * gcc 12's ASan a thread that is starting holds the sanitizer allocator's
 * lock (AsanThread::Init frees through the quarantine), libasan takes no lock
 * around fork(), and a child forked at that moment blocks for ever on its
 * first allocation of that size (topo_hunt41's bound-worker fork: 3 hangs in
 * 50 runs).  glibc's own malloc is fork-safe, so a build without ASan has no
 * such window; this is the test side of a sanitizer's limit. */
static inline void every_worker_started(weft_executor *ex) {
    unsigned n = weft_executor_workers(ex);
    atomic_store(&fork_workers_in, 0);
    fork_workers_want = n;
    for (unsigned i = 0; i < n; i++) ASSERT_OK(weft_silent_async(ex, hold_until_every_worker_is_in, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&fork_workers_in), n);
}

/* Returns once all of ex's workers but `busy` are asleep (or announced idle
 * with no wake-up on its way: weft_executor_waiters), so that none of them is
 * inside the allocator when the caller forks: the same window of gcc 12's
 * ASan as every_worker_started's, at a worker's end of a job rather than at
 * its start (freeing the job's record).  A worker counts as a waiter only
 * once it has started and searched, and it allocates nothing between its
 * idle announcement and its sleep.  The `busy` workers must be inside a task
 * that sleeps (nanosleep) until after the fork.  Fails the test after 20 s. */
static inline void every_other_worker_asleep(weft_executor *ex, unsigned busy) {
    unsigned want = weft_executor_workers(ex) - busy;
    for (int i = 0; i < 40000 && weft_executor_waiters(ex) != want; i++) sleep_us(500);
    if (weft_executor_waiters(ex) != want)
        TEST_FAIL_("%u of %u workers asleep after 20 s, %u wanted", weft_executor_waiters(ex),
                   weft_executor_workers(ex), want);
}

static atomic_int fork_slow_started, fork_slow_release;
static pid_t fork_slow_pid;

/* A task that holds its run until child_while_run_in_flight lets it go, in
 * the test's process; anywhere else (a run of it in a child, where nobody
 * sets the flag) it returns at once. */
static inline int slow_until_released(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    if (getpid() != fork_slow_pid) return 0;
    atomic_store(&fork_slow_started, 1);
    while (!atomic_load(&fork_slow_release)) sleep_us(1000);
    return 0;
}

/* Runs tf (a task of it is slow_until_released) on ex, forks once that task
 * holds the run, runs child in the child, then lets the run end and waits for
 * it: the child's exit code. */
static inline int child_while_run_in_flight(weft_executor *ex, weft_taskflow *tf, int (*child)(void)) {
    fork_slow_pid = getpid();
    atomic_store(&fork_slow_started, 0);
    atomic_store(&fork_slow_release, 0);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    while (!atomic_load(&fork_slow_started)) sleep_us(100);
    int code = in_child(child);
    atomic_store(&fork_slow_release, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    return code;
}

#endif
