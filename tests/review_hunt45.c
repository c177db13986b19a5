/* Session 45 review (h45-6): second look at the session's changes
 * (dab43b0..d02fa3f).
 *  - 34471a3 (a subflow's nested-run record made when its graph first runs):
 *    the new failure path (no memory for the record) fails the task with
 *    WEFT_ENOMEM; its graph's tasks, which never run, must count as skipped
 *    as on every other path where a started subflow's graph cannot run
 *    (04f9468, core.h weft_run_info.skipped).
 *  - 323fbe5 (the slab's first chunk 8 nodes): weft__chunk_locate and
 *    weft__chunk_capacity_of against a reference, for every index through
 *    the last small chunk and well into the big ones.
 *  - 6d2be60 (per-element loops in blocks): weft_parallel_for visits every
 *    index of first..last by step exactly once, for steps and ranges that do
 *    not divide, and near SIZE_MAX.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "counting_alloc.h"

#include "graph/graph.h"

#include <weft.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static weft_executor *make_ex(unsigned workers) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = workers, .metrics = true}, &st);
    if (!ex) {
        fprintf(stderr, "executor: %s\n", weft_strerror(st));
        exit(1);
    }
    return ex;
}

static int noop(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}

static int count_call(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

/* ---- 34471a3: no memory for a subflow's nested-run record ---- */

typedef struct {
    int join; /* 1: the function joins the graph (weft_subflow_join's record) */
    weft_status join_st;
} sub_arg;

/* Builds three tasks, then makes the next allocation fail: the nested-run
 * record's, made after the function returns (or in its join). */
static int build_three_then_starve(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    sub_arg *a = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 3; i++)
        if (weft_task_is_null(weft_emplace(g, noop, NULL))) return 91;
    fail_allocation(1);
    if (a->join) {
        a->join_st = weft_subflow_join(sf);
        fail_allocation(0);
        return a->join_st == WEFT_OK ? 0 : (int)a->join_st;
    }
    return 0;
}

TEST(a_subflow_whose_nested_run_record_cannot_be_allocated_counts_its_graphs_tasks_as_skipped) {
    weft_set_allocator(&counting);
    weft_executor *ex = make_ex(1);
    for (int join = 0; join < 2; join++) {
        weft_taskflow *tf = weft_taskflow_create(NULL, NULL);
        ASSERT_TRUE(tf != NULL);
        sub_arg a = {join, WEFT_OK};
        weft_task s = weft_emplace_subflow(tf, build_three_then_starve, &a);
        ASSERT_FALSE(weft_task_is_null(s));
        atomic_int calls = 0;
        weft_task after = weft_emplace(tf, count_call, &calls);
        ASSERT_FALSE(weft_task_is_null(after));
        ASSERT_OK(weft_precede(s, after));
        weft_metrics m0, m1;
        ASSERT_OK(weft_executor_metrics(ex, &m0, NULL, 0));
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        weft_status st = weft_future_wait(f);
        fail_allocation(0);
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_OK(weft_executor_metrics(ex, &m1, NULL, 0));
        /* The failure hit the record (576 bytes and its alignment), not
         * something else on the way. */
        if (A.fail_size < sizeof(struct weft__run))
            TEST_FAIL_("join %d: the failed allocation asked %zu bytes, not the nested-run record", join,
                       A.fail_size);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_STATUS(st, WEFT_ETASK);
        ASSERT_EQ(info.task_code, WEFT_ENOMEM);
        if (join) ASSERT_STATUS(a.join_st, WEFT_ENOMEM);
        /* The three tasks of its graph and the successor. */
        if (info.skipped != 4 || m1.total.skipped - m0.total.skipped != 4)
            TEST_FAIL_("join %d: skipped %llu, metrics %llu, want 4", join, (unsigned long long)info.skipped,
                       (unsigned long long)(m1.total.skipped - m0.total.skipped));
        ASSERT_EQ(atomic_load(&calls), 0);
        weft_future_destroy(f);
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
}
