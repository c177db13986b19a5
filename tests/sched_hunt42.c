/* Hunt 42 (h42-11): the order a policy gets a graph's sources in when some
 * have priorities; fork-join statuses past the frame stack when their array
 * cannot grow; error messages that must name the public call made. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "counting_alloc.h"

#include <weft.h>
#include <weft/forkjoin.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ---- (b) fork-join statuses past the frame stack, out of memory ----------- */

enum { FRAMES = 16, EXTRA = 6 };
/* What the children spawned past the stack return, in spawn order. */
static const int extra_val[EXTRA] = { 0, 7, 0, 9, 0, 0 };

typedef struct ovf_case {
    int got[EXTRA];   /* what the sync of each overflow child returned */
    int stacked_bad;  /* syncs of children on the stack that did not return 0 */
    long failures;    /* allocations failed while spawning */
} ovf_case;

static int val_child(weft_ctx *cx, void *arg) {
    (void)cx;
    return *(const int *)arg;
}

static const int zero = 0;

static int ovf_root(weft_ctx *cx, void *arg) {
    ovf_case *c = arg;
    for (int i = 0; i < FRAMES; i++) (void)weft_spawn(cx, val_child, (void *)&zero);
    /* The status array of the spawns past the stack cannot be allocated. */
    fail_allocation(1);
    for (int i = 0; i < EXTRA; i++) (void)weft_spawn(cx, val_child, (void *)&extra_val[i]);
    c->failures = atomic_load(&A.failures);
    fail_allocation(0);
    for (int i = EXTRA; i-- > 0;) c->got[i] = weft_sync(cx);
    for (int i = 0; i < FRAMES; i++)
        if (weft_sync(cx) != 0) c->stacked_bad++;
    return 0;
}

/* Without memory for their statuses, the syncs of children run at once past
 * the frame stack never return a sibling's value: a child that failed is
 * reported (its own value, or WEFT_ENOMEM: its status could not be kept,
 * forkjoin.h), and the first such value is kept exactly. */
TEST(fj_a_lost_overflow_status_is_never_returned_by_a_siblings_sync) {
    weft_set_allocator(&counting);
    weft_status st;
    weft_executor *ex =
        weft_executor_create(&(weft_executor_config){ .workers = 1, .fork_join_frames = FRAMES }, &st);
    ASSERT_NOT_NULL(ex);
    ovf_case c = { { 0 }, 0, 0 };
    ASSERT_OK(weft_run_root(ex, ovf_root, &c));
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
    ASSERT_EQ(c.failures, 1);
    ASSERT_EQ(c.stacked_bad, 0);
    char got[128] = "";
    for (int i = 0; i < EXTRA; i++) snprintf(got + strlen(got), sizeof got - strlen(got), " %d", c.got[i]);
    for (int i = 0; i < EXTRA; i++) {
        if (extra_val[i] != 0 && c.got[i] != extra_val[i] && c.got[i] != WEFT_ENOMEM)
            TEST_FAIL_("child %d returned %d; its sync %d (all:%s)", i, extra_val[i], c.got[i], got);
        if (extra_val[i] == 0 && c.got[i] != 0 && c.got[i] != WEFT_ENOMEM)
            TEST_FAIL_("child %d returned 0; its sync returned a sibling's %d (all:%s)", i, c.got[i], got);
    }
    /* The first failing child's value is kept; the children after the last
     * failing one and before the first are known to have returned 0. */
    if (c.got[1] != 7 || c.got[0] != 0 || c.got[4] != 0 || c.got[5] != 0)
        TEST_FAIL_("syncs returned%s; want 0 7 . . 0 0", got);
}

/* ---- (c) error messages name the public call made --------------------------- */

static void expect_message(const char *call, const char *also) {
    const char *m = weft_last_error_message();
    if (!strstr(m, call)) TEST_FAIL_("message '%s' does not name %s", m, call);
    if (also && !strstr(m, also)) TEST_FAIL_("message '%s' does not say '%s'", m, also);
}

static int cmp_int(const void *a, const void *b, void *arg) {
    (void)arg;
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void add_int(void *acc, const void *x, void *arg) {
    (void)arg;
    *(int *)acc += *(const int *)x;
}

TEST(an_algorithm_error_names_the_algorithm_called) {
    int v[8] = { 3, 1, 2, 5, 4, 7, 6, 0 }, sum = 0, out[8];
    weft_algo_config bad = { .partitioner = (weft_partitioner)99 };
    ASSERT_STATUS(weft_parallel_reduce(NULL, v, 8, sizeof(int), &sum, add_int, NULL, &bad), WEFT_EINVAL);
    expect_message("weft_parallel_reduce", "partitioner");
    ASSERT_STATUS(weft_parallel_inclusive_scan(NULL, v, out, 8, sizeof(int), NULL, add_int, NULL, &bad), WEFT_EINVAL);
    expect_message("weft_parallel_inclusive_scan", "partitioner");
    ASSERT_STATUS(weft_parallel_stable_sort(NULL, v, 8, sizeof(int), NULL, NULL, NULL), WEFT_EINVAL);
    expect_message("weft_parallel_stable_sort", NULL);
    ASSERT_STATUS(weft_parallel_stable_sort(NULL, NULL, 8, sizeof(int), cmp_int, NULL, NULL), WEFT_EINVAL);
    expect_message("weft_parallel_stable_sort", NULL);
    ASSERT_STATUS(weft_parallel_sort(NULL, v, 8, sizeof(int), NULL, NULL, NULL), WEFT_EINVAL);
    expect_message("weft_parallel_sort", NULL);
}

static int nop(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    return 0;
}

/* Out of memory recounting the sources (a fan-in built after its tasks leaves
 * them to the recount) in weft_run_n_parallel: the message names
 * weft_run_n_parallel, not "weft_taskflow_validate/weft_run". */
TEST(out_of_memory_preparing_a_taskflow_names_weft_run_n_parallel) {
    weft_set_allocator(&counting);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2 }, &st);
    ASSERT_NOT_NULL(ex);
    int seen = 0;
    for (long k = 1; k < 400; k++) {
        weft_taskflow *tf = weft_taskflow_create("fan", &st);
        ASSERT_NOT_NULL(tf);
        weft_task t[40];
        for (int i = 0; i < 40; i++) t[i] = weft_emplace(tf, nop, NULL);
        for (int i = 1; i < 40; i++) ASSERT_OK(weft_precede(t[i], t[0]));
        fail_allocation(k);
        weft_future *f = NULL;
        st = weft_run_n_parallel(ex, tf, 2, &f);
        long failed = atomic_load(&A.failures);
        fail_allocation(0);
        if (st == WEFT_ENOMEM) {
            expect_message("weft_run_n_parallel", NULL);
            seen++;
        }
        if (f) {
            ASSERT_OK(weft_future_wait(f));
            weft_future_destroy(f);
        }
        weft_taskflow_destroy(tf);
        if (!failed) break;
    }
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
    ASSERT_GT(seen, 0);
}

static weft_status build_bad(weft_composition *c, const weft_params *p, void *arg) {
    (void)c;
    (void)p;
    (void)arg;
    weft_task none = { 0 };
    return weft_task_set_priority(none, WEFT_PRIORITY_HIGH); /* says why: the null task */
}

/* A build function's failure keeps its own message under the factory's name
 * (flow.h: weft_last_error_message "then says which"). */
TEST(weft_factory_make_keeps_the_build_steps_own_message) {
    weft_status st;
    weft_factory *f = weft_factory_create("fan", build_bad, NULL, &st);
    ASSERT_NOT_NULL(f);
    weft_composition *c = weft_factory_make(f, NULL, &st);
    ASSERT_NULL(c);
    ASSERT_STATUS(st, WEFT_EINVAL);
    expect_message("factory 'fan'", "the null task");
    if (!strstr(weft_factory_error_message(f), "the null task"))
        TEST_FAIL_("weft_factory_error_message: '%s'", weft_factory_error_message(f));
    weft_factory_destroy(f);
}

/* ---- a woken worker that never ran a job takes work in the usual order ---- */

/* A worker that has never run a job parks after one look instead of its
 * search rounds (worker.c: creating thousands of workers was quadratic).  That
 * look must keep the search's order: a NORMAL task queued from outside goes
 * before a LOW one queued after it (sched.h: LOW runs when nothing else is
 * queued).  When the fresh worker's only look was the last look before
 * parking, which takes the priority queue's LOW work first, the LOW task ran
 * first on almost every fresh executor (seeds_hunt39's removed-task test got
 * WEFT_ENOENT from weft_sched_remove: the LOW task was already gone). */
TEST(a_fresh_worker_woken_for_a_normal_task_runs_it_before_a_low_one_queued_after_it) {
    for (int round = 0; round < 20; round++) {
        weft_status st;
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &st);
        ASSERT_NOT_NULL(ex);
        for (int k = 0; k < 2000 && weft_executor_waiters(ex) != 1; k++) {
            struct timespec ts = { 0, 500000 };
            nanosleep(&ts, NULL);
        }
        atomic_store(&order_n, 0);
        weft_future *normal, *low;
        weft_async_options o = { .priority = WEFT_PRIORITY_LOW };
        ASSERT_OK(weft_async(ex, mark_task, (void *)(intptr_t)1, &normal));
        ASSERT_OK(weft_async_with(ex, mark_task, (void *)(intptr_t)2, &o, &low));
        ASSERT_OK(weft_future_wait(normal));
        ASSERT_OK(weft_future_wait(low));
        weft_future_destroy(normal);
        weft_future_destroy(low);
        if (order[0] != 1 || order[1] != 2)
            TEST_FAIL_("round %d: ran %d then %d, want the NORMAL task (1) before the LOW one (2)", round, order[0],
                       order[1]);
        weft_executor_destroy(ex);
    }
}
