/* Signal preemption: install rules, a cancel reaching a loop that polls only
 * the thread's flag (the latency is printed), a task interrupted by context. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>

#include "test_util.h"

static void foreign(int signo) { (void)signo; }
static atomic_int chained;
static void foreign_count(int signo) { atomic_fetch_add(&chained, 1); }

TEST(preempt_install_refuses_a_foreign_handler_unless_chained) {
    struct sigaction sa = {0};
    sa.sa_handler = foreign;
    sigaction(SIGUSR1, &sa, NULL);
    ASSERT_STATUS(weft_preempt_install(&(weft_preempt_config){.signo = SIGUSR1}), WEFT_EBUSY);
    ASSERT_STATUS(weft_preempt_install(&(weft_preempt_config){.signo = -3}), WEFT_EINVAL);
    sa.sa_handler = foreign_count;
    sigaction(SIGUSR1, &sa, NULL);
    ASSERT_OK(weft_preempt_install(&(weft_preempt_config){.signo = SIGUSR1, .chain = true}));
    ASSERT_OK(weft_preempt_install(&(weft_preempt_config){.signo = SIGUSR1})); /* again: fine */
    ASSERT_STATUS(weft_preempt_install(NULL), WEFT_EBUSY); /* another signal: refused */
    ASSERT_FALSE(weft_preempt_requested());
    raise(SIGUSR1);
    ASSERT_TRUE(weft_preempt_requested());
    ASSERT_EQ(atomic_load(&chained), 1);
    weft_preempt_clear();
    ASSERT_FALSE(weft_preempt_requested());
}

struct busy {
    weft_cancel_token *tok;
    atomic_int started;
    _Atomic uint64_t seen_at;
    weft_status check;
    _Atomic(const weft_ctx *) ctx;
    bool watch;
};
static int busy_loop(weft_ctx *cx, void *p) {
    struct busy *b = p;
    weft_preempt_watch w;
    if (b->watch) ASSERT_OK(weft_preempt_watch_begin(&w, b->tok));
    atomic_store(&b->ctx, cx);
    atomic_store(&b->started, 1);
    uint64_t t0 = now_ns();
    while (!weft_preempt_requested() && now_ns() - t0 < 10 * SEC) { /* polls the flag only */
    }
    atomic_store(&b->seen_at, now_ns());
    b->check = weft_ctx_check(cx);
    atomic_store(&b->ctx, NULL);
    if (b->watch) weft_preempt_watch_end(&w);
    else weft_preempt_clear();
    ASSERT_FALSE(weft_preempt_requested());
    return 0;
}

TEST(preempt_cancel_reaches_a_loop_that_polls_only_the_flag) {
    ASSERT_OK(weft_preempt_install(NULL));
    weft_executor *ex = make_executor(2);
    weft_status st;
    struct busy b = {.tok = weft_cancel_token_create(NULL, &st), .watch = true};
    weft_future *f;
    ASSERT_OK(weft_async(ex, busy_loop, &b, &f));
    ASSERT_TRUE(wait_flag(&b.started, 1, 5));
    uint64_t t0 = now_ns();
    ASSERT_OK(weft_cancel_token_cancel_with(b.tok, "stuck"));
    ASSERT_OK(weft_future_wait(f));
    uint64_t lat = atomic_load(&b.seen_at) - t0;
    printf("cancel-to-flag latency: %.1f us\n", (double)lat / 1e3);
    ASSERT_LT(lat, 1 * SEC);
    ASSERT_STATUS(b.check, WEFT_ECANCELED); /* the run itself was not cancelled */
    weft_future_destroy(f);
    weft_cancel_token_destroy(b.tok);
    weft_executor_destroy(ex);
}

TEST(preempt_thread_interrupts_a_task_by_its_context) {
    ASSERT_OK(weft_preempt_install(NULL));
    weft_executor *ex = make_executor(2);
    struct busy b = {0};
    weft_future *f;
    ASSERT_OK(weft_async(ex, busy_loop, &b, &f));
    ASSERT_TRUE(wait_flag(&b.started, 1, 5));
    ASSERT_OK(weft_preempt_thread(atomic_load(&b.ctx)));
    ASSERT_OK(weft_future_wait(f));
    ASSERT_STATUS(b.check, WEFT_ECANCELED);
    ASSERT_STATUS(weft_preempt_thread(NULL), WEFT_EINVAL);
    weft_future_destroy(f);
    weft_executor_destroy(ex);
}
