/* Scheduling contracts probed where the other scheduling tests do not go
 * (session 40's adversarial round). */
#include "sched_util.h"

static int count_task(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add_explicit((atomic_int *)arg, 1, memory_order_relaxed);
    return 0;
}

/* sched.h: a handle "is used with the executor it came from".  Two executors
 * each queue one task with a handle behind a held worker: the first handle
 * each queue gives out was {0, 1} in both, so e1's handle passed to e2
 * re-prioritised and removed e2's task (WEFT_OK: it never ran, its future
 * WEFT_ECANCELED), a task the caller had never seen.  A handle now carries
 * its executor's mark: used with another executor it is refused with
 * WEFT_EINVAL and a message saying so, and touches nothing there. */
TEST(a_handle_used_with_another_executor_is_refused_and_leaves_that_executors_task_alone) {
    weft_executor *e1 = make_executor(1), *e2 = make_executor(1);
    gate g1, g2;
    gate_close(e1, &g1, 1);
    gate_close(e2, &g2, 1);
    atomic_int ran1 = 0, ran2 = 0;
    weft_sched_handle h1, h2;
    weft_future *f1 = NULL, *f2 = NULL;
    ASSERT_OK(weft_async_with(e1, count_task, &ran1,
                              &(weft_async_options){.priority = WEFT_PRIORITY_LOW, .handle = &h1}, &f1));
    ASSERT_OK(weft_async_with(e2, count_task, &ran2,
                              &(weft_async_options){.priority = WEFT_PRIORITY_LOW, .handle = &h2}, &f2));
    weft_priority p = WEFT_PRIORITY_NORMAL;
    ASSERT_STATUS(weft_sched_priority(e2, h1, &p), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "another executor") != NULL);
    ASSERT_STATUS(weft_sched_reprioritize(e2, h1, WEFT_PRIORITY_CRITICAL), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "another executor") != NULL);
    ASSERT_STATUS(weft_sched_remove(e2, h1), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "another executor") != NULL);
    ASSERT_STATUS(weft_sched_remove(e1, h2), WEFT_EINVAL);
    /* Both tasks are still queued as they were, each under its own handle. */
    ASSERT_OK(weft_sched_priority(e2, h2, &p));
    ASSERT_EQ(p, WEFT_PRIORITY_LOW);
    ASSERT_OK(weft_sched_priority(e1, h1, &p));
    ASSERT_EQ(p, WEFT_PRIORITY_LOW);
    gate_open(&g1);
    gate_open(&g2);
    ASSERT_OK(weft_future_wait(f1));
    ASSERT_OK(weft_future_wait(f2));
    ASSERT_EQ(atomic_load(&ran1), 1);
    ASSERT_EQ(atomic_load(&ran2), 1);
    /* Stale handles of the right executor are still an outcome: WEFT_ENOENT. */
    ASSERT_STATUS(weft_sched_remove(e1, h1), WEFT_ENOENT);
    ASSERT_STATUS(weft_sched_remove(e2, h2), WEFT_ENOENT);
    weft_future_destroy(f1);
    weft_future_destroy(f2);
    weft_executor_destroy(e1);
    weft_executor_destroy(e2);
}
