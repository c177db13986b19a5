/* Scheduling contracts probed at odd moments (session 35's adversarial
 * round): status codes and what they leave behind. */
#include "sched_util.h"

static int nothing(weft_ctx *cx, void *arg) { return 0; }

/* docs/errors.md, R3: WEFT_ENOENT from a handle whose task is gone is an
 * outcome, not a failure, and leaves the thread's last error message alone,
 * for all three handle calls alike. */
TEST(a_stale_handle_leaves_the_last_error_message_alone_in_every_handle_call) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    ASSERT_NOT_NULL(ex);
    weft_sched_handle never = {5, 5}, h;
    weft_priority p = WEFT_PRIORITY_LOW;
    /* Before any prioritised task, then with a handle whose task has run. */
    for (int round = 0; round < 2; round++) {
        ASSERT_STATUS(weft_cancel_token_cancel(NULL), WEFT_EINVAL); /* sets a message */
        char before[256];
        snprintf(before, sizeof before, "%s", weft_last_error_message());
        ASSERT_TRUE(before[0] != 0);
        weft_sched_handle stale = round ? h : never;
        ASSERT_STATUS(weft_sched_priority(ex, stale, &p), WEFT_ENOENT);
        ASSERT_STREQ(weft_last_error_message(), before);
        ASSERT_STATUS(weft_sched_reprioritize(ex, stale, WEFT_PRIORITY_HIGH), WEFT_ENOENT);
        ASSERT_STREQ(weft_last_error_message(), before);
        ASSERT_STATUS(weft_sched_remove(ex, stale), WEFT_ENOENT);
        ASSERT_STREQ(weft_last_error_message(), before);
        weft_future *f;
        ASSERT_OK(weft_async_with(ex, nothing, NULL, &(weft_async_options){.priority = WEFT_PRIORITY_HIGH, .handle = &h},
                                  &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
    }
    ASSERT_EQ(p, WEFT_PRIORITY_LOW); /* *out untouched */
    weft_executor_destroy(ex);
}

/* A queued task that weft_future_wait_isolated runs on the waiter's worker has
 * started: its handle reads as gone (sched.h: WEFT_ENOENT once a task has
 * started or ran), weft_sched_remove cannot cancel it, and it runs once.
 * Before, its queue slot stayed until a worker popped it: the priority query
 * said OK and the remove said OK and counted a removal of a task that ran. */
static atomic_int iso_gate, iso_ran;
static weft_future *iso_f;
static weft_sched_handle iso_h;
static weft_status iso_wait, iso_prio, iso_remove;

static int iso_blocker(weft_ctx *cx, void *arg) {
    while (!atomic_load(&iso_gate)) sleep_us(1000);
    return 0;
}
static int iso_task(weft_ctx *cx, void *arg) {
    atomic_fetch_add(&iso_ran, 1);
    return 0;
}
static int iso_waiter(weft_ctx *cx, void *arg) {
    weft_executor *ex = arg;
    weft_priority p;
    iso_wait = weft_future_wait_isolated(iso_f);
    iso_prio = weft_sched_priority(ex, iso_h, &p);
    iso_remove = weft_sched_remove(ex, iso_h);
    return 0;
}

TEST(a_task_an_isolated_wait_ran_reads_as_gone_to_its_handle) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    ASSERT_NOT_NULL(ex);
    weft_future *b, *w;
    ASSERT_OK(weft_async(ex, iso_blocker, NULL, &b)); /* holds the one worker */
    /* Queued behind it: the waiter first (CRITICAL), then the task (LOW). */
    ASSERT_OK(weft_async_with(ex, iso_task, NULL, &(weft_async_options){.priority = WEFT_PRIORITY_LOW, .handle = &iso_h},
                              &iso_f));
    ASSERT_OK(weft_async_with(ex, iso_waiter, ex, &(weft_async_options){.priority = WEFT_PRIORITY_CRITICAL}, &w));
    atomic_store(&iso_gate, 1);
    ASSERT_OK(weft_future_wait(w));
    ASSERT_OK(iso_wait);
    ASSERT_STATUS(iso_prio, WEFT_ENOENT);
    ASSERT_STATUS(iso_remove, WEFT_ENOENT);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_OK(weft_future_wait(iso_f));
    ASSERT_EQ(atomic_load(&iso_ran), 1);
    weft_sched_stats stats;
    ASSERT_OK(weft_sched_get_stats(ex, &stats));
    ASSERT_EQ(stats.removed, 0u);
    weft_future_destroy(iso_f);
    weft_future_destroy(w);
    weft_future_destroy(b);
    weft_executor_destroy(ex);
}
