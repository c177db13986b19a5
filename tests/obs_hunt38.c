/* Metrics, profiler and exports probed for kinds of work and paths the other
 * observability tests do not reach (session 38's adversarial round). */
#define _GNU_SOURCE
#include "obs_util.h"

static weft_metrics metrics_of(weft_executor *ex) {
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    return m;
}

/* Holds its worker until *arg is non-zero; arg[1] says it has started. */
static int hold_gate(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_int *g = arg;
    atomic_store_explicit(&g[1], 1, memory_order_release);
    while (!atomic_load_explicit(&g[0], memory_order_acquire)) sleep_us(100);
    return 0;
}

/* Submits hold_gate and returns once it runs: the one worker is then held
 * (before this wait, a worker woken late took the next, higher-priority task
 * first: seen on a 16-core machine). */
static void hold_worker(weft_executor *ex, atomic_int gate[2], weft_future **hold) {
    ASSERT_OK(weft_async(ex, hold_gate, gate, hold));
    while (!atomic_load_explicit(&gate[1], memory_order_acquire)) sleep_us(100);
}

static int count_call(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

/* observe.h: skipped counts "cancelled async tasks, not run", and a task
 * taken out by weft_sched_remove is reported cancelled (sched.h).  Removed
 * from a thread that is not a worker, its report ran there and the metrics
 * had no worker to count it in: the future said skipped 1, the metrics 0. */
TEST(an_async_task_removed_from_the_main_thread_counts_as_skipped) {
    weft_status err;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .metrics = true }, &err);
    ASSERT_NOT_NULL(ex);
    for (int round = 0; round < 3; round++) {
        atomic_int gate[2] = {0, 0}, calls = 0;
        weft_metrics before = metrics_of(ex);
        weft_future *hold = NULL, *f = NULL;
        weft_sched_handle h;
        hold_worker(ex, gate, &hold); /* keeps the one worker */
        weft_priority p = round == 0 ? WEFT_PRIORITY_LOW : round == 1 ? WEFT_PRIORITY_HIGH : WEFT_PRIORITY_NORMAL;
        ASSERT_OK(weft_async_with(ex, count_call, &calls, &(weft_async_options){ .priority = p, .handle = &h }, &f));
        ASSERT_OK(weft_sched_remove(ex, h));
        atomic_store_explicit(&gate[0], 1, memory_order_release);
        ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
        ASSERT_OK(weft_future_wait(hold));
        ASSERT_OK(weft_executor_wait_all(ex));
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.skipped, 1);
        ASSERT_EQ(atomic_load(&calls), 0);
        weft_metrics after = metrics_of(ex);
        ASSERT_EQ(after.total.tasks - before.total.tasks, 1);   /* the holder */
        ASSERT_EQ(after.total.skipped - before.total.skipped, 1); /* the removed task */
        weft_future_destroy(f);
        weft_future_destroy(hold);
    }
    weft_executor_destroy(ex);
}
