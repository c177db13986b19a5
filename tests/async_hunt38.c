/* Async tasks and the executor's lifecycle as a user who submits from threads
 * that are not workers uses them (session-38 hunt). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* ---- helpers ---- */

static atomic_int gate; /* tasks that wait_gate block until it is 1 */
static int wait_gate(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    while (atomic_load_explicit(&gate, memory_order_acquire) == 0) sleep_us(50);
    return 0;
}
static int ret_arg(weft_ctx *cx, void *p) {
    (void)cx;
    return (int)(intptr_t)p;
}
static int mark(weft_ctx *cx, void *p) {
    (void)cx;
    atomic_fetch_add_explicit((atomic_int *)p, 1, memory_order_relaxed);
    return 0;
}

/* A failing allocator: fails every allocation after the first `budget`. */
static atomic_long budget;
static void *fail_alloc(void *ctx, size_t n) { (void)ctx; return atomic_fetch_sub(&budget, 1) > 0 ? malloc(n) : NULL; }
static void *fail_realloc(void *ctx, void *p, size_t o, size_t n) {
    (void)ctx, (void)o;
    return atomic_fetch_sub(&budget, 1) > 0 ? realloc(p, n) : NULL;
}
static void plain_free(void *ctx, void *p, size_t n) { (void)ctx, (void)n; free(p); }

/* ---- out of memory in the shared queue ---- */

/* weft_async from a thread that is not a worker queues through the injector,
 * whose blocks of 63 slots are allocated as it fills.  With the workers held
 * in a task, the 62nd push needs the next block: refused, it must leave
 * nothing queued, no run counted, a message naming the call, and work on. */
TEST(an_outside_weft_async_refused_by_a_full_injector_says_why_and_leaves_no_run_behind) {
    weft_executor *ex = make_executor(1);
    atomic_store(&gate, 0);
    weft_future *hold = NULL;
    ASSERT_OK(weft_async(ex, wait_gate, NULL, &hold));
    sleep_us(20000); /* the worker takes `hold`: the injector then holds only ours */
    atomic_int ran = 0;
    int queued = 0;
    weft_status st = WEFT_OK;
    for (int i = 0; i < 200; i++) {
        atomic_store(&budget, 1); /* the record, not a block */
        weft_set_allocator(&(weft_allocator){fail_alloc, fail_realloc, plain_free, NULL});
        weft_future *f = (weft_future *)1;
        st = weft_async(ex, mark, &ran, &f);
        weft_set_allocator(NULL);
        if (st == WEFT_OK) {
            queued++;
            weft_future_destroy(f);
            continue;
        }
        ASSERT_STATUS(st, WEFT_ENOMEM);
        ASSERT_NULL(f);
        break;
    }
    ASSERT_STATUS(st, WEFT_ENOMEM);
    const char *msg = weft_last_error_message();
    if (!strstr(msg, "weft_async")) TEST_FAIL_("the message after ENOMEM is \"%s\"", msg);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(hold));
    weft_future_destroy(hold);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran), queued);
    weft_future *f = NULL;
    ASSERT_OK(weft_async(ex, mark, &ran, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&ran), queued + 1);
    weft_executor_destroy(ex);
}

static void *claim_a_slot(void *p) {
    (void)!weft_silent_async(p, ret_arg, NULL);
    return NULL;
}

/* With every submitter slot taken (8 other threads), weft_silent_async from
 * a further thread mallocs a record and queues it through the injector: the
 * same refusal there must say why too, and count no run. */
TEST(a_weft_silent_async_refused_by_a_full_injector_says_why_and_leaves_no_run_behind) {
    weft_executor *ex = make_executor(1);
    pthread_t t[8];
    for (int i = 0; i < 8; i++) ASSERT_EQ(pthread_create(&t[i], NULL, claim_a_slot, ex), 0);
    for (int i = 0; i < 8; i++) ASSERT_EQ(pthread_join(t[i], NULL), 0);
    ASSERT_OK(weft_executor_wait_all(ex));
    atomic_store(&gate, 0);
    weft_future *hold = NULL;
    ASSERT_OK(weft_async(ex, wait_gate, NULL, &hold));
    sleep_us(20000);
    atomic_int ran = 0;
    int queued = 0;
    weft_status st = WEFT_OK;
    for (int i = 0; i < 200; i++) {
        atomic_store(&budget, 1); /* the record, not a block */
        weft_set_allocator(&(weft_allocator){fail_alloc, fail_realloc, plain_free, NULL});
        st = weft_silent_async(ex, mark, &ran);
        weft_set_allocator(NULL);
        if (st != WEFT_OK) break;
        queued++;
    }
    ASSERT_STATUS(st, WEFT_ENOMEM);
    const char *msg = weft_last_error_message();
    if (!strstr(msg, "weft_silent_async")) TEST_FAIL_("the message after ENOMEM is \"%s\"", msg);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(hold));
    weft_future_destroy(hold);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran), queued);
    weft_executor_destroy(ex);
}

/* A priority or a handle reserves the task's place in the executor's priority
 * queue, whose slot array grows on demand: refused for want of memory, the
 * call must say so in the thread's message (it kept an earlier failure's),
 * and queue nothing. */
TEST(weft_async_with_a_priority_refused_for_want_of_memory_says_why) {
    weft_executor *ex = make_executor(2);
    atomic_int ran = 0;
    for (int handle = 0; handle < 2; handle++) {
        (void)weft_future_wait(NULL); /* an unrelated message, which must be replaced */
        weft_sched_handle h = {0, 0};
        weft_async_options o = {.priority = WEFT_PRIORITY_HIGH, .handle = handle ? &h : NULL};
        weft_future *f = (weft_future *)1;
        atomic_store(&budget, 1); /* the record, not the queue's slots */
        weft_set_allocator(&(weft_allocator){fail_alloc, fail_realloc, plain_free, NULL});
        weft_status st = weft_async_with(ex, mark, &ran, &o, &f);
        weft_set_allocator(NULL);
        ASSERT_STATUS(st, WEFT_ENOMEM);
        ASSERT_NULL(f);
        const char *msg = weft_last_error_message();
        if (!strstr(msg, "weft_async_with")) TEST_FAIL_("handle %d: the message after ENOMEM is \"%s\"", handle, msg);
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran), 0);
    weft_future *f = NULL;
    ASSERT_OK(weft_async_with(ex, mark, &ran, &(weft_async_options){.priority = WEFT_PRIORITY_HIGH}, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&ran), 1);
    weft_executor_destroy(ex);
}

/* ---- fairness between threads that submit ---- */

static atomic_long flood_ran, urgent_at;
static int flood_task(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    atomic_fetch_add_explicit(&flood_ran, 1, memory_order_relaxed);
    return 0;
}
static int urgent_task(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    atomic_store(&urgent_at, atomic_load(&flood_ran));
    return 0;
}

struct flood {
    weft_executor *ex;
    long n;
    atomic_int phase; /* 1: first part queued; 2: go on; 3: all queued */
    int failed;
};
static void *flood_thread(void *p) {
    struct flood *fl = p;
    for (long i = 0; i < fl->n / 8; i++) fl->failed |= weft_silent_async(fl->ex, flood_task, NULL) != WEFT_OK;
    atomic_store(&fl->phase, 1);
    while (atomic_load(&fl->phase) != 2) sleep_us(100);
    for (long i = fl->n / 8; i < fl->n; i++) fl->failed |= weft_silent_async(fl->ex, flood_task, NULL) != WEFT_OK;
    atomic_store(&fl->phase, 3);
    return NULL;
}

/* weft/async.h: an outside thread's tasks go to its submitter slot, which the
 * workers take from in batches.  A worker that ran out of work looked at the
 * slots always from the same one (its random number did not move while slots
 * had work, and the fairness look began at slot 0), so while one thread kept
 * its slot full, a task in another thread's slot waited for all of it, the
 * tasks queued after it included: for ever, for a thread that never stops. */
TEST(a_task_in_one_threads_slot_does_not_wait_for_all_of_another_threads_flood) {
    long n = 64000; /* ~ 30 re-steal streaks of 2048 jobs after the urgent task */
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        /* This thread takes the first slot: the flooding thread the second. */
        ASSERT_OK(weft_silent_async(ex, flood_task, NULL));
        ASSERT_OK(weft_executor_wait_all(ex));
        atomic_store(&flood_ran, 0);
        atomic_store(&urgent_at, -1);
        atomic_store(&gate, 0);
        /* Hold every worker, so that the queues fill in a known order. */
        weft_future *hold[2] = {NULL, NULL};
        for (unsigned i = 0; i < workers; i++) ASSERT_OK(weft_async(ex, wait_gate, NULL, &hold[i]));
        struct flood fl = {ex, n, 0, 0};
        pthread_t t;
        ASSERT_EQ(pthread_create(&t, NULL, flood_thread, &fl), 0);
        while (atomic_load(&fl.phase) != 1) sleep_us(100);
        ASSERT_OK(weft_silent_async(ex, urgent_task, NULL));
        atomic_store(&fl.phase, 2);
        while (atomic_load(&fl.phase) != 3) sleep_us(100);
        atomic_store(&gate, 1);
        ASSERT_EQ(pthread_join(t, NULL), 0);
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(fl.failed, 0);
        ASSERT_EQ(atomic_load(&flood_ran), n);
        long at = atomic_load(&urgent_at);
        if (at < 0 || at > n * 3 / 4)
            TEST_FAIL_("%u workers: the task queued after %ld of the other thread's ran after %ld of its %ld", workers,
                       n / 8, at, n);
        for (unsigned i = 0; i < workers; i++) weft_future_destroy(hold[i]);
        weft_executor_destroy(ex);
    }
}

/* weft_async_with_sized refusing an options struct from a newer header (a
 * non-zero byte this library does not know) left *out as it was: a caller
 * that destroys *out on any failure freed garbage.  Every refusal sets NULL. */
TEST(weft_async_with_refusing_a_newer_options_struct_sets_out_to_null) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, NULL);
    ASSERT_TRUE(ex != NULL);
    struct {
        weft_async_options base;
        unsigned char tail[16];
    } o;
    memset(&o, 0, sizeof o);
    o.tail[3] = 1;
    weft_future *f = (weft_future *)(uintptr_t)0x1; /* not NULL: must be overwritten */
    ASSERT_EQ(weft_async_with_sized(ex, ret_arg, NULL, &o.base, sizeof o, &f), WEFT_EINVAL);
    ASSERT_TRUE(f == NULL);
    weft_executor_destroy(ex);
}
