/* A module's body is in use from the moment a run of its parent is submitted
 * until that run ends (flow.h): the module may start the body at any point in
 * between, so an edit of the body (or of a body nested deeper) then is refused
 * with WEFT_EBUSY, and never races with the start (which lost the run). */
#define _GNU_SOURCE
#include "test_util.h"

/* Holds the parent's first task until the test opens it. */
static int gate(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return wait_flag(arg, 1, 20.0) ? 0 : 1;
}

/* Every edit the body offers is refused while `busy`, allowed after. */
static void expect_edits(weft_taskflow *body, atomic_int *count, bool busy) {
    weft_status want = busy ? WEFT_EBUSY : WEFT_OK;
    ASSERT_STATUS(weft_taskflow_set_name(body, "renamed"), want);
    weft_task t = weft_emplace(body, bump, count);
    ASSERT_EQ(weft_task_is_null(t), busy);
    if (busy) ASSERT_STATUS(weft_taskflow_last_error(body), WEFT_EBUSY);
    else ASSERT_OK(weft_task_erase(t));
}

TEST(module_body_cannot_change_while_a_parent_run_is_in_flight) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *parent = make_taskflow("parent"), *body = make_taskflow("body");
    atomic_int open = 0, count = 0;
    weft_task g = must_emplace(parent, gate, &open), m = weft_emplace_module(parent, body);
    ASSERT_FALSE(weft_task_is_null(m));
    ASSERT_OK(weft_precede(g, m));
    for (int i = 0; i < 8; i++) must_emplace(body, bump, &count);
    watchdog_start(30);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, parent, &f));
    /* The module has not started (the gate holds it): the body is not running
     * yet, but the run will start it. */
    ASSERT_STATUS(weft_taskflow_clear(body), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_destroy(body), WEFT_EBUSY);
    expect_edits(body, &count, true);
    atomic_store(&open, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&count), 8);
    /* The run is over: the body is the builder's again. */
    expect_edits(body, &count, false);
    ASSERT_OK(weft_taskflow_clear(body));
    watchdog_stop();
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(parent));
    ASSERT_OK(weft_taskflow_destroy(body));
}

/* outer -> module(mid) -> module(body): a run of outer holds body too, also
 * while queued behind another run of outer. */
TEST(module_body_two_levels_deep_is_busy_while_a_queued_outer_run_waits) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *outer = make_taskflow("outer"), *mid = make_taskflow("mid"), *body = make_taskflow("body");
    atomic_int open = 0, count = 0;
    weft_task g = must_emplace(outer, gate, &open), m = weft_emplace_module(outer, mid);
    ASSERT_FALSE(weft_task_is_null(m));
    ASSERT_OK(weft_precede(g, m));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_module(mid, body)));
    must_emplace(body, bump, &count);
    watchdog_start(30);
    weft_future *first = NULL, *second = NULL;
    ASSERT_OK(weft_run(ex, outer, &first));
    ASSERT_OK(weft_run(ex, outer, &second)); /* queued behind the first */
    ASSERT_STATUS(weft_taskflow_clear(mid), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_clear(body), WEFT_EBUSY);
    atomic_store(&open, 1);
    ASSERT_OK(weft_future_wait(first));
    ASSERT_OK(weft_future_wait(second));
    weft_future_destroy(first);
    weft_future_destroy(second);
    ASSERT_EQ(atomic_load(&count), 2);
    ASSERT_OK(weft_taskflow_clear(body));
    ASSERT_OK(weft_taskflow_clear(mid));
    watchdog_stop();
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(outer));
    ASSERT_OK(weft_taskflow_destroy(mid));
    ASSERT_OK(weft_taskflow_destroy(body));
}

/* Edits racing with parent runs (the edit is tried right after each submit,
 * while the module may be starting): each is refused or lands whole between
 * runs, and every run ends with every body task it started counted. */
TEST(module_body_edits_racing_with_parent_runs_lose_no_run) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *parent = make_taskflow("parent"), *body = make_taskflow("body");
    atomic_int count = 0;
    weft_task p = must_emplace(parent, noop, NULL), m = weft_emplace_module(parent, body);
    ASSERT_FALSE(weft_task_is_null(m));
    ASSERT_OK(weft_precede(p, m));
    for (int i = 0; i < 8; i++) must_emplace(body, bump, &count);
    watchdog_start(60);
    uint64_t rounds = test_scale(500);
    for (uint64_t r = 0; r < rounds; r++) {
        weft_future *f = NULL;
        ASSERT_OK(weft_run(ex, parent, &f));
        /* Refused while the run is in flight.  The run may end (and give the
         * body back) between two tries on a busy machine: a clear that lands
         * then empties a body the run has finished with, and the count below
         * still sees all 8.  One that landed before the module ran would
         * leave it fewer, or lose the run. */
        bool cleared = false;
        for (int k = 0; k < 10 && !cleared; k++) {
            weft_status st = weft_taskflow_clear(body);
            ASSERT_TRUE(st == WEFT_EBUSY || st == WEFT_OK);
            cleared = st == WEFT_OK;
        }
        ASSERT_OK(weft_future_wait_for(f, 10 * SEC));
        weft_future_destroy(f);
        ASSERT_EQ(atomic_load(&count), 8);
        atomic_store(&count, 0);
        /* Between runs an edit lands whole. */
        ASSERT_OK(weft_taskflow_clear(body));
        for (int i = 0; i < 8; i++) must_emplace(body, bump, &count);
    }
    watchdog_stop();
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(parent));
    ASSERT_OK(weft_taskflow_destroy(body));
}
