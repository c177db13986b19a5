/* Futures and event loops: then-callbacks and the eventfd with epoll. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include "test_util.h"

static void count_cb(weft_future *f, weft_status st, void *arg) {
    ASSERT_TRUE(weft_future_ready(f));
    atomic_fetch_add((atomic_int *)arg, st == WEFT_OK ? 1 : 1000);
}

static int wait_flag_task(weft_ctx *cx, void *p) {
    while (!atomic_load((atomic_int *)p)) sleep_us(100);
    return 0;
}

TEST(async_then_runs_once_whether_registered_before_or_after) {
    weft_executor *ex = make_executor(2);
    atomic_int go = 0, calls = 0;
    weft_future *f = NULL;
    ASSERT_OK(weft_async(ex, wait_flag_task, &go, &f));
    ASSERT_OK(weft_future_then(f, count_cb, &calls));
    ASSERT_STATUS(weft_future_then(f, count_cb, &calls), WEFT_EBUSY);
    atomic_store(&go, 1);
    ASSERT_OK(weft_future_wait(f));
    ASSERT_TRUE(wait_flag(&calls, 1, 30));
    weft_future_destroy(f);
    /* Already ready: the callback runs before weft_future_then returns. */
    ASSERT_OK(weft_async(ex, wait_flag_task, &go, &f));
    ASSERT_OK(weft_future_wait(f));
    ASSERT_OK(weft_future_then(f, count_cb, &calls));
    ASSERT_EQ(atomic_load(&calls), 2);
    weft_future_destroy(f);
    weft_executor_destroy(ex);
}

TEST(async_then_races_completion_and_fires_exactly_once) {
    weft_executor *ex = make_executor(2);
    int n = (int)test_scale(20000);
    atomic_int calls = 0;
    for (int i = 0; i < n; i++) {
        weft_future *f = NULL;
        ASSERT_OK(weft_async(ex, noop, NULL, &f));
        ASSERT_OK(weft_future_then(f, count_cb, &calls));
        weft_future_destroy(f);
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&calls), n);
    weft_executor_destroy(ex);
}

/* One callback per future, also once it is ready: a second registration on a
 * ready future is WEFT_EBUSY and runs nothing (it used to run every callback
 * given to a ready future).  Also across completion: registered before, then
 * again after. */
TEST(async_then_takes_one_callback_per_future_even_when_ready) {
    weft_executor *ex = make_executor(2);
    atomic_int calls = 0, go = 1;
    weft_future *f = NULL;
    ASSERT_OK(weft_async(ex, wait_flag_task, &go, &f));
    ASSERT_OK(weft_future_wait(f));
    ASSERT_OK(weft_future_then(f, count_cb, &calls));
    ASSERT_STATUS(weft_future_then(f, count_cb, &calls), WEFT_EBUSY);
    ASSERT_STATUS(weft_future_then(f, count_cb, &calls), WEFT_EBUSY);
    ASSERT_EQ(atomic_load(&calls), 1);
    weft_future_destroy(f);

    atomic_store(&go, 0);
    ASSERT_OK(weft_async(ex, wait_flag_task, &go, &f));
    ASSERT_OK(weft_future_then(f, count_cb, &calls));
    atomic_store(&go, 1);
    ASSERT_OK(weft_future_wait(f));
    ASSERT_TRUE(wait_flag(&calls, 2, 30));
    ASSERT_STATUS(weft_future_then(f, count_cb, &calls), WEFT_EBUSY);
    ASSERT_EQ(atomic_load(&calls), 2);
    weft_future_destroy(f);

    /* Racing completion: exactly one of two registrations wins. */
    int n = (int)test_scale(5000);
    atomic_store(&calls, 0);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        ASSERT_OK(weft_async(ex, noop, NULL, &f));
        ok += weft_future_then(f, count_cb, &calls) == WEFT_OK;
        ok += weft_future_then(f, count_cb, &calls) == WEFT_OK;
        weft_future_destroy(f);
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(ok, n);
    ASSERT_EQ(atomic_load(&calls), n);
    weft_executor_destroy(ex);
}

TEST(async_completion_fd_wakes_epoll) {
    weft_executor *ex = make_executor(2);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    ASSERT_GE(ep, 0);
    for (int rep = 0; rep < 20; rep++) {
        atomic_int go = 0;
        weft_future *f = NULL;
        ASSERT_OK(weft_async(ex, wait_flag_task, &go, &f));
        int fd = -1, fd2 = -2;
        ASSERT_OK(weft_future_fd(f, &fd));
        ASSERT_OK(weft_future_fd(f, &fd2));
        ASSERT_EQ(fd, fd2);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = f};
        ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
        struct epoll_event out;
        ASSERT_EQ(epoll_wait(ep, &out, 1, 0), 0); /* not ready yet */
        atomic_store(&go, 1);
        ASSERT_EQ(epoll_wait(ep, &out, 1, 60000), 1);
        ASSERT_TRUE(out.data.ptr == f);
        ASSERT_TRUE(weft_future_ready(f));
        ASSERT_OK(weft_future_status(f));
        ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL), 0);
        weft_future_destroy(f);
    }
    /* A future that is ready before the fd is asked for is readable at once. */
    weft_future *f = NULL;
    ASSERT_OK(weft_async(ex, noop, NULL, &f));
    ASSERT_OK(weft_future_wait(f));
    int fd = -1;
    ASSERT_OK(weft_future_fd(f, &fd));
    struct epoll_event ev = {.events = EPOLLIN}, out;
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
    ASSERT_EQ(epoll_wait(ep, &out, 1, 60000), 1);
    weft_future_destroy(f);
    close(ep);
    weft_executor_destroy(ex);
}

/* At the process's limit of open files weft_future_fd is WEFT_ESYS, and its
 * message says that limit is why and points to weft_future_then (it said only
 * "eventfd could not be opened", which left the user guessing). */
TEST(async_fd_at_the_open_files_limit_says_why) {
    weft_executor *ex = make_executor(2);
    struct rlimit old;
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
    struct rlimit low = old;
    low.rlim_cur = 64;
    if (old.rlim_cur < 64 || setrlimit(RLIMIT_NOFILE, &low) != 0) SKIP("cannot lower RLIMIT_NOFILE");
    enum { N = 80 }; /* more than the limit: some must fail */
    weft_future *fs[N];
    int failed = -1;
    for (int i = 0; i < N; i++) {
        ASSERT_OK(weft_async(ex, noop, NULL, &fs[i]));
        int fd;
        weft_status st = weft_future_fd(fs[i], &fd);
        if (st != WEFT_OK && failed < 0) {
            ASSERT_STATUS(st, WEFT_ESYS);
            failed = i;
            const char *msg = weft_last_error_message();
            ASSERT_TRUE(strstr(msg, "too many open files") != NULL);
            ASSERT_TRUE(strstr(msg, "weft_future_then") != NULL);
        }
    }
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
    ASSERT_GE(failed, 0);
    for (int i = 0; i < N; i++) weft_future_destroy(fs[i]);
    weft_executor_destroy(ex);
}

TEST(async_fd_and_then_work_on_taskflow_runs) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("tf");
    atomic_int count = 0, calls = 0;
    must_emplace(tf, bump, &count);
    weft_future *run = NULL;
    ASSERT_OK(weft_run(ex, tf, &run));
    ASSERT_OK(weft_future_then(run, count_cb, &calls));
    int fd = -1;
    ASSERT_OK(weft_future_fd(run, &fd));
    ASSERT_OK(weft_future_wait(run));
    ASSERT_TRUE(wait_flag(&calls, 1, 30));
    weft_future_destroy(run);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
