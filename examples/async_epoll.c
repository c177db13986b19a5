/* async_epoll: an epoll loop that waits for weft work without a blocked thread.
 * SPDX-License-Identifier: MIT
 *
 * Three async tasks run on the executor; the main thread is an event loop that
 * also watches stdin-like sources.  Each task's future gives an eventfd
 * (weft_future_fd) that becomes readable when the task is done; the loop handles
 * completions as they come.  A then-callback (weft_future_then) also reports each
 * completion from the worker that finished it.
 */
#define _GNU_SOURCE
#include <weft.h>

#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

static int work(weft_ctx *cx, void *arg) {
    (void)cx;
    long *n = arg;
    long s = 0;
    for (long i = 0; i < *n; i++) s += i % 7;
    *n = s;
    return 0;
}

static void on_done(weft_future *f, weft_status st, void *arg) {
    (void)f;
    printf("then: task %ld finished (%s)\n", (long)(intptr_t)arg, weft_errname(st));
}

int main(void) {
    weft_status st;
    weft_executor *ex = weft_executor_create(NULL, &st);
    if (!ex) return 1;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return 1;

    enum { N = 3 };
    long arg[N] = {1000000, 5000000, 20000000};
    weft_future *fut[N];
    for (int i = 0; i < N; i++) {
        int fd;
        if (weft_async(ex, work, &arg[i], &fut[i]) != WEFT_OK) return 1;
        if (weft_future_then(fut[i], on_done, (void *)(intptr_t)i) != WEFT_OK) return 1;
        if (weft_future_fd(fut[i], &fd) != WEFT_OK) return 1;
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) return 1;
    }

    int left = N, rc = 0;
    while (left > 0) { /* the event loop: other sources would be watched here too */
        struct epoll_event ev[N];
        int n = epoll_wait(ep, ev, N, 10000);
        if (n <= 0) {
            fprintf(stderr, "epoll_wait timed out or failed\n");
            return 1;
        }
        for (int k = 0; k < n; k++) {
            int i = (int)ev[k].data.u32, fd;
            if (weft_future_fd(fut[i], &fd) == WEFT_OK) /* the same fd as before */
                epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);  /* before the future closes it */
            /* Read the status first: it is what orders the task's writes before
             * ours (the fd alone is a kernel signal, invisible to the C memory
             * model). */
            weft_status fs = weft_future_status(fut[i]);
            printf("epoll: task %d ready, status %s, result %ld\n", i, weft_errname(fs), arg[i]);
            rc |= fs != WEFT_OK;
            weft_future_destroy(fut[i]);
            left--;
        }
    }
    close(ep);
    weft_executor_destroy(ex);
    return rc;
}
