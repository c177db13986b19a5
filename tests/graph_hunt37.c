/* Session 37's sources (src/graph/sources.c, task.c): a taskflow with no edge
 * keeps no list of its sources (every slot is one), the first edge writes the
 * list out or leaves it to the recount, and 16 or more sources run as a range
 * that walks the slots a chunk at a time.  Every way of running such a graph,
 * and every way of re-building it between runs, must run each task once per
 * iteration; a failure or a cancel mid-range must count each task as run or
 * skipped. */
#include "harness.h"

#include <weft.h>

#include <stdatomic.h>

enum { MAXN = 1100 };
static atomic_int runs[MAXN];
static atomic_long total;
static long fail_at = -1, cancel_at = -1;

static int count(weft_ctx *ctx, void *arg) {
    long i = (long)(size_t)arg;
    atomic_fetch_add(&runs[i], 1);
    atomic_fetch_add(&total, 1);
    if (i == fail_at) return 5;
    if (i == cancel_at) (void)weft_future_cancel((weft_future *)weft_ctx_run(ctx));
    return 0;
}

static void zero(void) {
    for (int i = 0; i < MAXN; i++) atomic_store(&runs[i], 0);
    atomic_store(&total, 0);
}

static void expect_runs(size_t n, int want, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (atomic_load(&runs[i]) != want)
            TEST_FAIL_("%s, %zu tasks: task %zu ran %d times, want %d", what, n, i, atomic_load(&runs[i]), want);
}

static void wait_ok(weft_future *f) {
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
}

/* Around the range threshold (16) and chunk ends (64, 192, 448, 960). */
static const size_t sizes[] = {1, 15, 16, 17, 64, 65, 192, 193, 448, 449, 960, 961};
#define NSIZES (sizeof sizes / sizeof *sizes)

TEST(an_edge_free_graph_runs_each_task_once_per_iteration_whichever_way_it_is_run) {
    static const unsigned workers[] = {1, 2, 4};
    for (int wi = 0; wi < 3; wi++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = workers[wi]}, NULL);
        ASSERT_NOT_NULL(ex);
        for (size_t si = 0; si < NSIZES; si++) {
            size_t n = sizes[si];
            weft_taskflow *tf = weft_taskflow_create("fan", NULL);
            weft_task mid = WEFT_TASK_NULL;
            for (size_t i = 0; i < n; i++) {
                weft_task t = weft_emplace(tf, count, (void *)i);
                ASSERT_FALSE(weft_task_is_null(t));
                if (i == n / 2) mid = t;
            }
            weft_future *f;
            zero();
            ASSERT_OK(weft_run_n(ex, tf, 3, &f));
            wait_ok(f);
            expect_runs(n, 3, "weft_run_n");
            zero();
            ASSERT_OK(weft_run_n_parallel(ex, tf, 2, &f));
            wait_ok(f);
            expect_runs(n, 2, "weft_run_n_parallel");
            zero();
            ASSERT_OK(weft_run_with_priority(ex, tf, WEFT_PRIORITY_HIGH, &f));
            wait_ok(f);
            expect_runs(n, 1, "weft_run_with_priority");
            ASSERT_OK(weft_task_set_priority(mid, WEFT_PRIORITY_CRITICAL));
            zero();
            ASSERT_OK(weft_run_n(ex, tf, 2, &f));
            wait_ok(f);
            expect_runs(n, 2, "a task with a priority");
            ASSERT_OK(weft_taskflow_validate(tf, NULL));
            ASSERT_EQ(weft_taskflow_num_tasks(tf), n);
            ASSERT_OK(weft_taskflow_destroy(tf));
        }
        weft_executor_destroy(ex);
    }
}

TEST(tasks_and_edges_added_after_a_run_of_an_edge_free_graph_all_run) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    for (size_t si = 0; si < NSIZES; si++) {
        size_t n = sizes[si];
        if (n + 8 > MAXN) continue;
        weft_taskflow *tf = weft_taskflow_create("rebuilt", NULL);
        weft_task t[MAXN];
        for (size_t i = 0; i < n; i++) t[i] = weft_emplace(tf, count, (void *)i);
        zero();
        ASSERT_OK(weft_run_and_wait(ex, tf));
        /* more tasks, then the first edge into the newest (the list written out) */
        for (size_t i = n; i < n + 3; i++) t[i] = weft_emplace(tf, count, (void *)i);
        ASSERT_OK(weft_succeed_many(t[n + 2], (weft_task[]){t[0], t[n + 1]}, 2));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        /* emplace's fast path after the list was written, an edge into an old task */
        for (size_t i = n + 3; i < n + 6; i++) t[i] = weft_emplace(tf, count, (void *)i);
        ASSERT_OK(weft_precede(t[n + 5], t[n / 2]));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        expect_runs(n, 3, "old tasks");
        for (size_t i = n; i < n + 3; i++) ASSERT_EQ(atomic_load(&runs[i]), 2);
        for (size_t i = n + 3; i < n + 6; i++) ASSERT_EQ(atomic_load(&runs[i]), 1);
        /* an erase, a task in its slot, then a clear back to no edge */
        ASSERT_OK(weft_task_erase(t[0]));
        t[0] = weft_emplace(tf, count, (void *)(size_t)0);
        zero();
        ASSERT_OK(weft_run_and_wait(ex, tf));
        expect_runs(n + 6, 1, "after an erase");
        ASSERT_OK(weft_taskflow_clear(tf));
        for (size_t i = 0; i < n + 7; i++) t[i] = weft_emplace(tf, count, (void *)i);
        zero();
        ASSERT_OK(weft_run_and_wait(ex, tf));
        expect_runs(n + 7, 1, "after a clear");
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
    weft_executor_destroy(ex);
}

TEST(a_source_failing_or_cancelling_mid_range_counts_each_task_run_or_skipped) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    for (size_t si = 0; si < NSIZES; si++) {
        size_t n = sizes[si];
        weft_taskflow *tf = weft_taskflow_create("stops", NULL);
        for (size_t i = 0; i < n; i++) (void)weft_emplace(tf, count, (void *)i);
        for (int how = 0; how < 2; how++) {
            fail_at = how == 0 ? (long)(n / 2) : -1;
            cancel_at = how == 1 ? (long)(n / 3) : -1;
            zero();
            weft_future *f;
            ASSERT_OK(weft_run_n(ex, tf, 2, &f));
            weft_status st = weft_future_wait(f);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            weft_future_destroy(f);
            ASSERT_STATUS(st, how == 0 ? WEFT_ETASK : WEFT_ECANCELED);
            ASSERT_EQ((uint64_t)atomic_load(&total) + info.skipped, (uint64_t)n);
        }
        fail_at = cancel_at = -1;
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
    weft_executor_destroy(ex);
}

TEST(an_edge_free_graph_run_by_two_executors_in_turn_runs_each_task_once_per_run) {
    weft_executor *one = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    weft_executor *three = weft_executor_create(&(weft_executor_config){.workers = 3}, NULL);
    ASSERT_NOT_NULL(one);
    ASSERT_NOT_NULL(three);
    weft_taskflow *tf = weft_taskflow_create("shared", NULL);
    for (size_t i = 0; i < 961; i++) (void)weft_emplace(tf, count, (void *)i);
    zero();
    weft_future *a, *b;
    for (int k = 0; k < 3; k++) {
        ASSERT_OK(weft_run_n(one, tf, 2, &a));
        ASSERT_OK(weft_run_n(three, tf, 2, &b));
        wait_ok(a);
        wait_ok(b);
    }
    expect_runs(961, 12, "two executors");
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(one);
    weft_executor_destroy(three);
}
