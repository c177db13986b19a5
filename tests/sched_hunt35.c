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
