/* Async tasks, dependencies and semaphores on paths the other async tests do
 * not take (session 40's adversarial round).  Probes that found no defect. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

static atomic_int gate40;
static int hold40(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    while (!atomic_load_explicit(&gate40, memory_order_acquire)) sleep_us(100);
    return 0;
}
static atomic_int seq40;
static int order40[64];
static int log40(weft_ctx *cx, void *p) {
    (void)cx;
    int k = atomic_fetch_add(&seq40, 1);
    if (k < 64) order40[k] = (int)(intptr_t)p;
    return 0;
}

/* async.h: a parked task "is queued again when a release hands it a unit
 * (first parked, first served)", and weft_future_cancel before it starts
 * means fn is not called.  One cancelled while parked is skipped when its
 * turn comes and the unit goes on to the next; the rest run once each, in
 * submission order on one worker (with more, workers pick the submissions
 * up, and so park them, in any order), and the semaphore ends with every
 * unit free, on 1, 2 and 4 workers. */
TEST(tasks_parked_on_a_semaphore_run_once_each_and_a_cancelled_one_passes_its_unit_on) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        atomic_store(&gate40, 0);
        atomic_store(&seq40, 0);
        weft_semaphore *s = weft_semaphore_create(1, NULL);
        ASSERT_NOT_NULL(s);
        weft_future *h = NULL, *f[12];
        ASSERT_OK(weft_async_acquire(ex, hold40, NULL, &s, 1, &h));
        sleep_us(10000); /* the holder has its unit */
        for (intptr_t i = 0; i < 12; i++) ASSERT_OK(weft_async_acquire(ex, log40, (void *)i, &s, 1, &f[i]));
        ASSERT_OK(weft_future_cancel(f[5]));
        atomic_store(&gate40, 1);
        for (int i = 0; i < 12; i++) ASSERT_STATUS(weft_future_wait(f[i]), i == 5 ? WEFT_ECANCELED : WEFT_OK);
        ASSERT_OK(weft_future_wait(h));
        ASSERT_EQ(atomic_load(&seq40), 11);
        int seen[12] = {0};
        for (int k = 0; k < 11; k++) seen[order40[k]]++;
        for (int i = 0; i < 12; i++) ASSERT_EQ(seen[i], i == 5 ? 0 : 1);
        for (int i = 0, k = 0; w == 1 && i < 12; i++)
            if (i != 5) ASSERT_EQ(order40[k++], i);
        ASSERT_EQ(weft_semaphore_value(s), 1);
        for (int i = 0; i < 12; i++) weft_future_destroy(f[i]);
        weft_future_destroy(h);
        ASSERT_OK(weft_semaphore_destroy(s));
        weft_executor_destroy(ex);
    }
}

/* weft_dependent_async with one future given three times (and destroyed by
 * the caller right after) waits for it, runs once, and a dependent of a
 * cancelled dependent still runs (a dependency's status does not matter). */
TEST(a_dependency_given_three_times_is_waited_for_once_and_a_cancelled_one_still_releases) {
    weft_executor *ex = make_executor(2);
    atomic_store(&gate40, 0);
    atomic_store(&seq40, 0);
    weft_future *a = NULL, *d = NULL, *e = NULL;
    ASSERT_OK(weft_async(ex, hold40, NULL, &a));
    weft_future *deps[3] = {a, a, a};
    ASSERT_OK(weft_dependent_async(ex, log40, (void *)1, deps, 3, &d));
    ASSERT_OK(weft_dependent_async(ex, log40, (void *)2, &d, 1, &e));
    weft_future_destroy(a);
    ASSERT_OK(weft_future_cancel(d));
    sleep_us(5000);
    ASSERT_EQ(atomic_load(&seq40), 0);
    atomic_store(&gate40, 1);
    ASSERT_STATUS(weft_future_wait(d), WEFT_ECANCELED);
    ASSERT_OK(weft_future_wait(e));
    ASSERT_EQ(atomic_load(&seq40), 1);
    ASSERT_EQ(order40[0], 2);
    weft_future_destroy(d);
    weft_future_destroy(e);
    weft_executor_destroy(ex);
}
