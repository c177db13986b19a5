/* A task's own return value and weft's statuses kept apart: weft_sync_status,
 * weft_task_group_wait_status and weft_run_root_status. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

/* Returns the int it points at: a child may return anything, weft's codes too. */
static int returns(weft_ctx *ctx, void *arg) { return *(int *)arg; }

static int sync_checks(weft_ctx *ctx, void *arg) {
    int *bad = arg, v = 99;
    /* Nothing spawned: weft's own EINVAL, and the value says nothing. */
    if (weft_sync_status(ctx, &v) != WEFT_EINVAL || v != 0) *bad |= 1;
    if (weft_sync_status(NULL, &v) != WEFT_EINVAL) *bad |= 2;
    /* A child returning WEFT_EINVAL's own value (-1) is a task failure. */
    int minus_one = -1, zero = 0, cycle = WEFT_ECYCLE;
    if (weft_spawn(ctx, returns, &minus_one) != WEFT_OK) *bad |= 4;
    if (weft_sync_status(ctx, &v) != WEFT_ETASK || v != -1) *bad |= 8;
    if (weft_spawn(ctx, returns, &zero) != WEFT_OK) *bad |= 4;
    if (weft_sync_status(ctx, NULL) != WEFT_OK) *bad |= 16;
    /* Groups: the first non-zero value, apart from the group's own status. */
    weft_task_group g;
    weft_task_group_init(&g, ctx);
    (void)weft_task_group_spawn(&g, returns, &zero);
    (void)weft_task_group_spawn(&g, returns, &cycle);
    if (weft_task_group_wait_status(&g, &v) != WEFT_ETASK || v != WEFT_ECYCLE) *bad |= 32;
    if (weft_task_group_wait_status(&g, &v) != WEFT_OK || v != 0) *bad |= 64; /* empty now */
    if (weft_task_group_wait_status(NULL, &v) != WEFT_EINVAL) *bad |= 128;
    return 0;
}

TEST(sync_status_tells_a_child_returning_minus_one_from_weft_einval) {
    weft_executor *ex = make_executor(2);
    int bad = 0, v = 5;
    ASSERT_OK(weft_run_root_status(ex, sync_checks, &bad, &v));
    ASSERT_EQ(v, 0);
    if (bad) TEST_FAIL_("checks failed: mask 0x%x", bad);
    weft_executor_destroy(ex);
}

TEST(run_root_status_tells_the_task_value_from_weft_errors) {
    weft_executor *ex = make_executor(1);
    int v = 7, minus_four = -4;
    /* A task returning -4 (WEFT_ECYCLE's value) is WEFT_ETASK with -4. */
    ASSERT_STATUS(weft_run_root_status(ex, returns, &minus_four, &v), WEFT_ETASK);
    ASSERT_EQ(v, -4);
    /* weft's own errors leave the value 0. */
    v = 7;
    ASSERT_STATUS(weft_run_root_status(ex, NULL, NULL, &v), WEFT_EINVAL);
    ASSERT_EQ(v, 0);
    ASSERT_STATUS(weft_run_root_status(NULL, NULL, NULL, &v), WEFT_EINVAL); /* NULL ex: the default */
    /* The plain form still returns the task's value. */
    ASSERT_EQ(weft_run_root(ex, returns, &minus_four), -4);
    weft_executor_destroy(ex);
}
