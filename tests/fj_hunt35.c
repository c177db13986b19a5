/* Fork-join, adversarial round 35: the contracts of weft/forkjoin.h at their
 * awkward edges (failing calls, leftovers, nesting, odd callers). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#include <string.h>

/* ---- every failing fork-join call sets the thread's message (docs/errors.md R3) ---- */

/* Sets the message by a failure of an unrelated call (the sentinel). */
static void set_sentinel(void) {
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_semaphore_create(0, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
}

/* The message after a failing call: not the sentinel, and naming `call`. */
static int names_itself(const char *call) {
    const char *msg = weft_last_error_message();
    if (strstr(msg, call) && !strstr(msg, "weft_semaphore_create")) return 0;
    fprintf(stderr, "%s failed with the message \"%s\"\n", call, msg);
    return 1;
}

static int inline_failures(weft_ctx *ctx, void *arg) {
    int *bad = arg;
    weft_task_group g;
    weft_task_group_init(&g, ctx);
    set_sentinel();
    ASSERT_STATUS(weft_spawn(NULL, noop, NULL), WEFT_EINVAL);
    *bad += names_itself("weft_spawn");
    set_sentinel();
    ASSERT_STATUS(weft_spawn(ctx, NULL, NULL), WEFT_EINVAL);
    *bad += names_itself("weft_spawn");
    set_sentinel();
    ASSERT_STATUS(weft_sync(NULL), WEFT_EINVAL);
    *bad += names_itself("weft_sync");
    set_sentinel();
    ASSERT_STATUS(weft_sync_status(NULL, NULL), WEFT_EINVAL);
    *bad += names_itself("weft_sync_status");
    set_sentinel();
    ASSERT_STATUS(weft_sync_status(ctx, NULL), WEFT_EINVAL); /* nothing spawned */
    *bad += names_itself("weft_sync_status");
    set_sentinel();
    ASSERT_STATUS(weft_task_group_spawn(NULL, noop, NULL), WEFT_EINVAL);
    *bad += names_itself("weft_task_group_spawn");
    set_sentinel();
    ASSERT_STATUS(weft_task_group_spawn(&g, NULL, NULL), WEFT_EINVAL); /* passes weft_spawn's on */
    *bad += names_itself("weft_spawn");
    set_sentinel();
    ASSERT_STATUS(weft_task_group_wait(NULL), WEFT_EINVAL);
    *bad += names_itself("weft_task_group_wait");
    set_sentinel();
    ASSERT_STATUS(weft_task_group_wait_status(NULL, NULL), WEFT_EINVAL);
    *bad += names_itself("weft_task_group_wait_status");
    ASSERT_EQ(weft_task_group_wait(&g), 0); /* the failed spawn left nothing */
    return 0;
}

/* Before, the inline halves returned WEFT_EINVAL without a word, so
 * weft_last_error_message still held an earlier, unrelated failure's. */
TEST(fork_join_calls_failing_inline_set_the_thread_message) {
    weft_executor *ex = make_executor(1);
    int bad = 0;
    ASSERT_EQ(weft_run_root(ex, inline_failures, &bad), 0);
    ASSERT_EQ(bad, 0);
    weft_executor_destroy(ex);
}
