/* async_libuv: a libuv loop that waits for weft work through uv_poll.
 * SPDX-License-Identifier: MIT
 *
 * A dependent async task runs after two others; the loop polls the eventfd of
 * its future (weft_future_fd) and stops when it becomes readable.  Built only
 * where pkg-config finds libuv (scripts/install-deps.sh installs libuv1-dev).
 */
#define _GNU_SOURCE /* libuv's headers need the POSIX thread types */
#include <weft.h>

#include <stdio.h>
#include <uv.h>

static long a, b, c;

static int make_a(weft_ctx *cx, void *p) { (void)cx; (void)p; a = 20; return 0; }
static int make_b(weft_ctx *cx, void *p) { (void)cx; (void)p; b = 22; return 0; }
static int add(weft_ctx *cx, void *p) { (void)cx; (void)p; c = a + b; return 0; }

static void on_readable(uv_poll_t *h, int status, int events) {
    (void)events;
    weft_future *f = h->data;
    weft_status fs = weft_future_status(f); /* first: orders the task's writes before ours */
    printf("uv_poll: future ready (uv status %d), weft status %s, a + b = %ld\n", status, weft_errname(fs), c);
    uv_poll_stop(h);
    uv_close((uv_handle_t *)h, NULL);
}

int main(void) {
    weft_status st;
    weft_executor *ex = weft_executor_create(NULL, &st);
    if (!ex) return 1;
    weft_future *fa, *fb, *fc;
    if (weft_async(ex, make_a, NULL, &fa) || weft_async(ex, make_b, NULL, &fb)) return 1;
    weft_future *deps[2] = {fa, fb};
    if (weft_dependent_async(ex, add, NULL, deps, 2, &fc)) return 1;
    weft_future_destroy(fa); /* the dependency link is made; handles may go */
    weft_future_destroy(fb);

    int fd;
    if (weft_future_fd(fc, &fd) != WEFT_OK) return 1;
    uv_loop_t *loop = uv_default_loop();
    uv_poll_t poll;
    uv_poll_init(loop, &poll, fd);
    poll.data = fc;
    uv_poll_start(&poll, UV_READABLE, on_readable);
    uv_run(loop, UV_RUN_DEFAULT); /* returns once the poll handle is closed */
    uv_loop_close(loop);

    int ok = weft_future_wait(fc) == WEFT_OK && c == 42;
    weft_future_destroy(fc);
    weft_executor_destroy(ex);
    return ok ? 0 : 1;
}
