/* Hunt 42 (h42-11): the order a policy gets a graph's sources in when some
 * have priorities; fork-join statuses past the frame stack when their array
 * cannot grow; error messages that must name the public call made. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <weft.h>
#include <weft/forkjoin.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- (a) sources N H N H N H under a policy ------------------------------ */

static atomic_int order_n;
static int order[64];

static int mark_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    int k = atomic_fetch_add(&order_n, 1);
    if (k < 64) order[k] = (int)(intptr_t)arg;
    return 0;
}

/* sched.h: WEFT_SCHED_FIFO is "one shared queue, submission order", priorities
 * ignored (docs/guide-scheduling.md); ROUND_ROBIN on one worker deals every
 * job to that worker's queue in turn.  A taskflow's sources are submitted in
 * index order, whether or not some of them have priorities. */
TEST(a_fifo_or_round_robin_executor_runs_sources_with_and_without_priorities_in_index_order) {
    static const weft_sched_kind kinds[2] = { WEFT_SCHED_FIFO, WEFT_SCHED_ROUND_ROBIN };
    static const char *const names[2] = { "FIFO", "ROUND_ROBIN" };
    for (int kk = 0; kk < 2; kk++) {
        weft_sched_config sc = { .kind = kinds[kk] };
        weft_status st;
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .sched = &sc }, &st);
        ASSERT_NOT_NULL(ex);
        weft_taskflow *tf = weft_taskflow_create("nh", &st);
        ASSERT_NOT_NULL(tf);
        const int n = 6;
        for (int i = 0; i < n; i++) {
            weft_task t = weft_emplace(tf, mark_task, (void *)(intptr_t)i);
            ASSERT_FALSE(weft_task_is_null(t));
            if (i % 2) ASSERT_OK(weft_task_set_priority(t, i == 3 ? WEFT_PRIORITY_CRITICAL : WEFT_PRIORITY_HIGH));
        }
        for (int run = 0; run < 3; run++) {
            atomic_store(&order_n, 0);
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_EQ(atomic_load(&order_n), n);
            for (int i = 0; i < n; i++)
                if (order[i] != i) {
                    char got[128] = "";
                    for (int k = 0; k < n; k++) snprintf(got + strlen(got), sizeof got - strlen(got), " %d", order[k]);
                    TEST_FAIL_("%s, run %d: sources N H N C N H ran%s", names[kk], run, got);
                }
        }
        weft_taskflow_destroy(tf);
        weft_executor_destroy(ex);
    }
}
