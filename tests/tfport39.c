/* Taskflow's unit tests (unittests/test_priorities.cpp,
 * test_graph_priorities.cpp, ...) ported to weft's C API where the C++ port
 * (cpp_tfport39.cc) found a defect: each test here fails without its fix. */
#include "harness.h"

#include <weft.h>

#include <stdatomic.h>

static int count_task(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

/* Waits at most 10 s; a run that has not ended by then has lost a task. */
static weft_status wait_10s(weft_future *f) { return weft_future_wait_for(f, 10ull * 1000 * 1000 * 1000); }

/* Taskflow's SimplePriority.Sequential runs a taskflow with prioritised
 * successors run_n(100) on one worker.  The second iteration of such a run
 * hung: the iteration's end is applied from the worker's held-back count,
 * in the worker loop's last look before searching, and a run with
 * priorities starts its next iteration by pushing its plain sources on the
 * worker's deque and returning no job (priority.c, weft__prio_sources_start);
 * the loop did not look at the deque again, and the worker went to sleep
 * with the sources on it. */
TEST(run_n_of_a_taskflow_with_a_prioritised_successor_completes_on_one_worker) {
    for (int level = WEFT_PRIORITY_LOW; level <= WEFT_PRIORITY_CRITICAL; level++) {
        if (level == WEFT_PRIORITY_NORMAL) continue;
        for (unsigned workers = 1; workers <= 2; workers++) {
            weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = workers}, NULL);
            ASSERT_NOT_NULL(ex);
            weft_taskflow *tf = weft_taskflow_create("prio_run_n", NULL);
            atomic_int a = 0, b = 0;
            weft_task ta = weft_emplace(tf, count_task, &a);
            weft_task tb = weft_emplace(tf, count_task, &b);
            ASSERT_OK(weft_precede(ta, tb));
            ASSERT_OK(weft_task_set_priority(tb, (weft_priority)level));
            weft_future *f = NULL;
            ASSERT_OK(weft_run_n(ex, tf, 100, &f));
            ASSERT_OK(wait_10s(f));
            weft_future_destroy(f);
            ASSERT_EQ(atomic_load(&a), 100);
            ASSERT_EQ(atomic_load(&b), 100);
            ASSERT_OK(weft_taskflow_destroy(tf));
            weft_executor_destroy(ex);
        }
    }
}

static bool below_ten(void *arg) { return atomic_load((atomic_int *)arg) >= 10; }

/* The same through run_until, and through a run with a priority of its own
 * (weft_run_with_priority: every task queued, the sources too) run after it. */
TEST(run_until_of_a_taskflow_with_a_prioritised_successor_completes_on_one_worker) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = weft_taskflow_create("prio_run_until", NULL);
    atomic_int a = 0, b = 0;
    weft_task ta = weft_emplace(tf, count_task, &a);
    weft_task tb = weft_emplace(tf, count_task, &b);
    ASSERT_OK(weft_precede(ta, tb));
    ASSERT_OK(weft_task_set_priority(tb, WEFT_PRIORITY_HIGH));
    weft_future *f = NULL;
    ASSERT_OK(weft_run_until(ex, tf, below_ten, &b, &f));
    ASSERT_OK(wait_10s(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&b), 10);
    for (int i = 0; i < 5; i++) {
        ASSERT_OK(weft_run_with_priority(ex, tf, WEFT_PRIORITY_LOW, &f));
        ASSERT_OK(wait_10s(f));
        weft_future_destroy(f);
    }
    ASSERT_EQ(atomic_load(&a), 15);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
