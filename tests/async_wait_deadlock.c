/* Waits on an async task's future from a task on the same worker's stack as
 * that task (the task itself, or one that a wait of the task ran on top of
 * it) can never end: the awaited task resumes only after the waiter returns.
 * weft_future_wait, weft_future_wait_for and weft_future_wait_isolated return
 * WEFT_EDEADLK at once, as they do for taskflow runs (core.h, async.h).
 * Watchdogs: a build that misses the case hangs. */
#define _GNU_SOURCE
#include "test_util.h"

enum { WAIT, WAIT_FOR, WAIT_ISOLATED, HOW_COUNT };

static weft_status wait_how(weft_future *f, int how) {
    switch (how) {
    case WAIT: return weft_future_wait(f);
    case WAIT_FOR: return weft_future_wait_for(f, 2 * SEC);
    default: return weft_future_wait_isolated(f);
    }
}

/* ---- a task waiting on its own future ---- */

struct own {
    weft_future *_Atomic f; /* published before the task may look */
    int how;
    weft_status status;
    uint64_t waited_ns;
};

static int wait_own(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct own *o = arg;
    weft_future *f;
    while (!(f = atomic_load(&o->f))) sleep_us(10);
    uint64_t t0 = now_ns();
    o->status = wait_how(f, o->how);
    o->waited_ns = now_ns() - t0;
    return 0;
}

TEST(async_task_waiting_on_its_own_future_is_edeadlk) {
    weft_executor *ex = make_executor(2);
    watchdog_start(30);
    for (int how = 0; how < HOW_COUNT; how++) {
        struct own o = {.how = how};
        weft_future *f = NULL;
        ASSERT_OK(weft_async(ex, wait_own, &o, &f));
        atomic_store(&o.f, f);
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        ASSERT_STATUS(o.status, WEFT_EDEADLK);
        ASSERT_LT(o.waited_ns, SEC);
    }
    watchdog_stop();
    weft_executor_destroy(ex);
}

/* ---- A waits on B while B's wait ran A on top of B ----
 * No cycle in the dependencies: B waits for C, A for B.  On one worker B's
 * wait for C runs other queued work meanwhile, and its own deque is LIFO, so
 * A (queued after C) runs first, on top of B: A's wait for B would never end. */

struct chain {
    weft_executor *ex;
    weft_future *_Atomic fb;
    int how;
    atomic_int b_waited; /* B's wait for C has returned */
    atomic_int a_ran_above_b;
    weft_status a_status;
};

static int task_c(weft_ctx *ctx, void *arg) { return 0; }

static int task_a(weft_ctx *ctx, void *arg) {
    struct chain *ch = arg;
    atomic_store(&ch->a_ran_above_b, !atomic_load(&ch->b_waited));
    ch->a_status = wait_how(atomic_load(&ch->fb), ch->how);
    return 0;
}

static int task_b(weft_ctx *ctx, void *arg) {
    struct chain *ch = arg;
    while (!atomic_load(&ch->fb)) sleep_us(10);
    weft_future *fc = NULL, *fa = NULL;
    if (weft_async(ch->ex, task_c, ch, &fc) != WEFT_OK) return 1;
    if (weft_async(ch->ex, task_a, ch, &fa) != WEFT_OK) return 1;
    weft_status st = weft_future_wait(fc); /* runs A meanwhile, on top of B */
    atomic_store(&ch->b_waited, 1);
    weft_future_destroy(fc);
    weft_future_destroy(fa);
    return st == WEFT_OK ? 0 : 2;
}

TEST(async_wait_on_a_task_below_on_the_same_worker_is_edeadlk) {
    weft_executor *ex = make_executor(1);
    watchdog_start(30);
    for (int how = 0; how < HOW_COUNT; how++) {
        struct chain ch = {.ex = ex, .how = how};
        weft_future *fb = NULL;
        ASSERT_OK(weft_async(ex, task_b, &ch, &fb));
        atomic_store(&ch.fb, fb);
        ASSERT_OK(weft_future_wait(fb));
        ASSERT_OK(weft_executor_wait_all(ex));
        weft_future_destroy(fb);
        ASSERT_TRUE(atomic_load(&ch.a_ran_above_b)); /* the case under test happened */
        ASSERT_STATUS(ch.a_status, WEFT_EDEADLK);
    }
    watchdog_stop();
    weft_executor_destroy(ex);
}

/* The same waits on a task that is not on the waiter's stack still wait. */
static int wait_other(weft_ctx *ctx, void *arg) {
    struct own *o = arg;
    weft_future *f;
    while (!(f = atomic_load(&o->f))) sleep_us(10);
    o->status = wait_how(f, o->how);
    return 0;
}

TEST(async_wait_on_a_task_elsewhere_still_waits) {
    weft_executor *ex = make_executor(2);
    watchdog_start(30);
    for (int how = 0; how < HOW_COUNT; how++) {
        struct own o = {.how = how};
        weft_future *target = NULL, *waiter = NULL;
        ASSERT_OK(weft_async(ex, task_c, NULL, &target));
        ASSERT_OK(weft_async(ex, wait_other, &o, &waiter));
        atomic_store(&o.f, target);
        ASSERT_OK(weft_future_wait(waiter));
        ASSERT_OK(o.status);
        weft_future_destroy(target);
        weft_future_destroy(waiter);
    }
    watchdog_stop();
    weft_executor_destroy(ex);
}
