/* Waits from inside a nested graph (a module's body, a subflow) on a new run of
 * a taskflow whose run the graph is nested in: that run queues behind the run
 * the waiting task belongs to, so the wait can never end.  weft_future_wait
 * and weft_future_wait_for return WEFT_EDEADLK at once, as they do for a task
 * of the taskflow itself (core.h), at any depth of nesting.  Each test has a
 * watchdog: on a build that misses the case the wait hangs. */
#define _GNU_SOURCE
#include "test_util.h"

enum { WAIT, WAIT_FOR };

/* What the waiting task does: once (the run it submits is cancelled, so its
 * tasks are skipped), submit a run of `target` and wait for it. */
struct nested_wait {
    weft_taskflow *target;
    int how;
    atomic_int calls;
    weft_status run_status, wait_status;
    uint64_t waited_ns;
};

static int wait_for_target(weft_ctx *ctx, void *arg) {
    struct nested_wait *nw = arg;
    if (atomic_fetch_add(&nw->calls, 1) != 0) return 0;
    weft_future *f = NULL;
    nw->run_status = weft_run(weft_ctx_executor(ctx), nw->target, &f);
    if (nw->run_status != WEFT_OK) return 0;
    uint64_t t0 = now_ns();
    nw->wait_status = nw->how == WAIT ? weft_future_wait(f) : weft_future_wait_for(f, 2 * SEC);
    nw->waited_ns = now_ns() - t0;
    (void)weft_future_cancel(f); /* its tasks are skipped: nothing waits again */
    weft_future_destroy(f);
    return 0;
}

static int subflow_with_waiter(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    return weft_task_is_null(weft_emplace(weft_subflow_graph(sf), wait_for_target, arg)) ? 1 : 0;
}

/* Runs `outer` once on 2 workers and checks the waiter's wait was refused at
 * once (not after the 2 s of WAIT_FOR). */
static void expect_refused(weft_taskflow *outer, struct nested_wait *nw) {
    weft_executor *ex = make_executor(2);
    watchdog_start(30);
    ASSERT_OK(weft_run_and_wait(ex, outer));
    ASSERT_OK(weft_executor_wait_all(ex));
    watchdog_stop();
    ASSERT_EQ(atomic_load(&nw->calls), 1);
    ASSERT_OK(nw->run_status);
    ASSERT_STATUS(nw->wait_status, WEFT_EDEADLK);
    ASSERT_LT(nw->waited_ns, SEC);
    weft_executor_destroy(ex);
}

static void module_case(int how) {
    weft_taskflow *outer = make_taskflow("outer"), *body = make_taskflow("body");
    struct nested_wait nw = {.target = outer, .how = how};
    must_emplace(body, wait_for_target, &nw);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_module(outer, body)));
    expect_refused(outer, &nw);
    ASSERT_OK(weft_taskflow_destroy(outer));
    ASSERT_OK(weft_taskflow_destroy(body));
}

static void subflow_case(int how) {
    weft_taskflow *outer = make_taskflow("outer");
    struct nested_wait nw = {.target = outer, .how = how};
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(outer, subflow_with_waiter, &nw)));
    expect_refused(outer, &nw);
    ASSERT_OK(weft_taskflow_destroy(outer));
}

TEST(module_task_waiting_on_a_run_of_the_outer_taskflow_is_edeadlk) { module_case(WAIT); }
TEST(module_task_waiting_for_a_run_of_the_outer_taskflow_is_edeadlk_at_once) { module_case(WAIT_FOR); }
TEST(subflow_task_waiting_on_a_run_of_the_outer_taskflow_is_edeadlk) { subflow_case(WAIT); }
TEST(subflow_task_waiting_for_a_run_of_the_outer_taskflow_is_edeadlk_at_once) { subflow_case(WAIT_FOR); }

/* Two levels: outer -> module(mid) -> module(body); a task of body waits on a
 * new run of mid (neither its own taskflow nor the outermost one). */
TEST(task_two_modules_deep_waiting_on_a_run_of_the_middle_taskflow_is_edeadlk) {
    weft_taskflow *outer = make_taskflow("outer"), *mid = make_taskflow("mid"), *body = make_taskflow("body");
    struct nested_wait nw = {.target = mid, .how = WAIT};
    must_emplace(body, wait_for_target, &nw);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_module(mid, body)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_module(outer, mid)));
    expect_refused(outer, &nw);
    ASSERT_OK(weft_taskflow_destroy(outer));
    ASSERT_OK(weft_taskflow_destroy(mid));
    ASSERT_OK(weft_taskflow_destroy(body));
}

/* The refusal is only for runs the task is inside of: a body task waiting on
 * a run of an unrelated taskflow gets that run's status. */
TEST(module_task_waiting_on_an_unrelated_taskflow_still_waits) {
    weft_taskflow *outer = make_taskflow("outer"), *body = make_taskflow("body"), *other = make_taskflow("other");
    struct nested_wait nw = {.target = other, .how = WAIT};
    atomic_int ran = 0;
    must_emplace(other, bump, &ran);
    must_emplace(body, wait_for_target, &nw);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_module(outer, body)));
    weft_executor *ex = make_executor(2);
    watchdog_start(30);
    ASSERT_OK(weft_run_and_wait(ex, outer));
    watchdog_stop();
    ASSERT_OK(nw.wait_status);
    ASSERT_EQ(atomic_load(&ran), 1);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(outer));
    ASSERT_OK(weft_taskflow_destroy(body));
    ASSERT_OK(weft_taskflow_destroy(other));
}
