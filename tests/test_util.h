/* Helpers shared by the executor and graph tests. */
#ifndef WEFT_TEST_UTIL_H
#define WEFT_TEST_UTIL_H

/* Defined in a ThreadSanitizer build (gcc's and clang's -fsanitize=thread):
 * for the tests it cannot run (threads after a multi-threaded fork, stacks
 * deeper than its shadow stack holds). */
#if defined(__SANITIZE_THREAD__)
#  define UNDER_TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define UNDER_TSAN 1
#  endif
#endif

/* Defined in an AddressSanitizer build: gcc 12's ASan allocator is not
 * fork-safe (a lock another thread holds inside malloc at fork() stays held in
 * the child, whose threads then hang in malloc: gdb showed every thread of
 * such a grandchild in SizeClassAllocator64::GetFromAllocator), for the tests
 * that fork while a thread of theirs allocates. */
#if defined(__SANITIZE_ADDRESS__)
#  define UNDER_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define UNDER_ASAN 1
#  endif
#endif

#include <stdatomic.h>
#include <time.h>

#include <weft.h>

#include "harness.h"

#define SEC 1000000000ull
#define MS 1000000ull

static inline void sleep_us(unsigned us) {
    struct timespec ts = { .tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000L };
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static inline bool wait_flag(atomic_int *flag, int want, double secs) {
    double deadline = now_s() + secs;
    while (atomic_load_explicit(flag, memory_order_acquire) != want) {
        if (now_s() > deadline) return false;
        sleep_us(50);
    }
    return true;
}

/* Waits up to `secs` for child process pid and returns its waitpid status; a
 * child still running then is killed and the test fails with `what`.  (For
 * tests that fork; the includes are POSIX.) */
#include <signal.h>
#include <sys/wait.h>
static inline int wait_child(pid_t pid, double secs, const char *what) {
    int status = 0;
    double deadline = now_s() + secs;
    pid_t r;
    while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_s() < deadline) sleep_us(1000);
    if (r == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        TEST_FAIL_("%s", what);
    }
    return status;
}

/* Fails the test if it is still running `secs` from now: for a test whose
 * failure on a broken build is a hang (a wait that never ends), so that it
 * fails on its own instead of holding the suite until ctest's timeout.  One
 * at a time per process (alarm); watchdog_stop at the test's end. */
#include <unistd.h>
static inline void watchdog_fired_(int sig) {
    (void)sig;
    static const char msg[] = "watchdog: the test hung (a wait that should have ended did not)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}
static inline void watchdog_start(unsigned secs) {
    signal(SIGALRM, watchdog_fired_);
    alarm(secs);
}
static inline void watchdog_stop(void) { alarm(0); }

static inline weft_executor *make_executor(unsigned workers) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers }, &err);
    if (!ex) TEST_FAIL_("weft_executor_create(%u workers) failed: %s", workers, weft_errname(err));
    return ex;
}

static inline weft_taskflow *make_taskflow(const char *name) {
    weft_status err = WEFT_OK;
    weft_taskflow *tf = weft_taskflow_create(name, &err);
    if (!tf) TEST_FAIL_("weft_taskflow_create failed: %s", weft_errname(err));
    return tf;
}

static inline weft_task must_emplace(weft_taskflow *tf, weft_task_fn fn, void *arg) {
    weft_task t = weft_emplace(tf, fn, arg);
    if (weft_task_is_null(t))
        TEST_FAIL_("weft_emplace failed: %s", weft_errname(weft_taskflow_last_error(tf)));
    return t;
}

static inline bool same_task(weft_task a, weft_task b) { return a.node_ == b.node_; }

static inline int noop(weft_ctx *ctx, void *arg) { return 0; }

/* A task that adds one to the atomic_int its argument points to. */
static inline int bump(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add_explicit((atomic_int *)arg, 1, memory_order_relaxed);
    return 0;
}

#endif
