/* Session 44 review (h44-5): second look at the session's concurrent changes.
 *  - 6d07ebf (*out written before any task of the submission can start, for
 *    weft_run_many too): a task of the set's first member reads the set's
 *    future where the caller stored it and calls weft_run_many_cancel while
 *    the caller is still submitting the later members.  Every member must be
 *    cancelled ("cancels every member's run", weft/graph.h), and the set's
 *    member table must not be read while the caller writes it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <weft.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static weft_executor *make_ex(unsigned workers) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = workers}, &st);
    if (!ex) {
        fprintf(stderr, "executor: %s\n", weft_strerror(st));
        exit(1);
    }
    return ex;
}

/* ---- 6d07ebf: weft_run_many_cancel from a member's task while submitting --- */

enum { MANY_BIG = 16, MANY_TASKS = 20000 };

typedef struct {
    weft_future *all;             /* where the caller stores the set */
    atomic_int cancel_done;       /* weft_run_many_cancel has returned */
    atomic_long uncancelled;      /* tasks run after it in a run not cancelled */
    atomic_long ran;
} many_shared;

static int many_canceller(weft_ctx *ctx, void *arg) {
    (void)ctx;
    many_shared *s = arg;
    /* graph.h: *out is written before any task of the submission starts. */
    weft_status st = weft_run_many_cancel(s->all);
    if (st != WEFT_OK) fprintf(stderr, "weft_run_many_cancel: %s\n", weft_strerror(st));
    atomic_store(&s->cancel_done, 1);
    return 0;
}

static int many_member(weft_ctx *ctx, void *arg) {
    many_shared *s = arg;
    atomic_fetch_add_explicit(&s->ran, 1, memory_order_relaxed);
    if (atomic_load(&s->cancel_done) && !weft_ctx_cancelled(ctx))
        atomic_fetch_add_explicit(&s->uncancelled, 1, memory_order_relaxed);
    return 0;
}

TEST(a_run_many_cancel_from_a_members_task_while_the_set_is_submitted_cancels_every_member) {
    weft_executor *ex = make_ex(2);
    many_shared s = {0};
    weft_taskflow *tfs[MANY_BIG + 1];
    tfs[0] = weft_taskflow_create("canceller", NULL);
    ASSERT_NOT_NULL(tfs[0]);
    ASSERT_TRUE(!weft_task_is_null(weft_emplace(tfs[0], many_canceller, &s)));
    /* Large members: preparing each (validation) takes the caller a while,
     * so the canceller runs while later members are still to be submitted. */
    for (int i = 1; i <= MANY_BIG; i++) {
        tfs[i] = weft_taskflow_create("member", NULL);
        ASSERT_NOT_NULL(tfs[i]);
        for (int k = 0; k < MANY_TASKS; k++) ASSERT_TRUE(!weft_task_is_null(weft_emplace(tfs[i], many_member, &s)));
    }
    for (int round = 0; round < 3; round++) {
        atomic_store(&s.cancel_done, 0);
        ASSERT_EQ(weft_run_many(ex, tfs, MANY_BIG + 1, &s.all), WEFT_OK);
        ASSERT_EQ(weft_future_wait(s.all), WEFT_ECANCELED);
        ASSERT_EQ(atomic_load(&s.cancel_done), 1);
        for (size_t i = 1; i <= MANY_BIG; i++) {
            weft_status mi = weft_run_many_status(s.all, i);
            ASSERT_TRUE(mi == WEFT_ECANCELED || mi == WEFT_OK);
        }
        weft_future_destroy(s.all);
        ASSERT_EQ(atomic_load(&s.uncancelled), 0);
    }
    for (int i = 0; i <= MANY_BIG; i++) weft_taskflow_destroy(tfs[i]);
    weft_executor_destroy(ex);
}

