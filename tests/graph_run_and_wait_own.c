/* weft_run_and_wait (and weft_run_many_and_wait) called by a task for its own
 * taskflow, or for a taskflow whose run the task's graph is nested in, could
 * never end: the new run queues behind the one the task belongs to.  The call
 * is refused with WEFT_EDEADLK before anything is submitted (a run submitted
 * anyway executed later, and a task doing this in every run chained runs
 * forever).  Watchdogs: a build that submits and then waits may hang. */
#define _GNU_SOURCE
#include "test_util.h"

#include <string.h>

enum { ONE, MANY, OTHER_EXECUTOR };

struct self_call {
    weft_taskflow *target;
    weft_executor *other; /* OTHER_EXECUTOR: where to submit */
    int how;
    atomic_int calls;
    weft_status status;
    bool said_nothing_submitted;
};

static int call_on_target(weft_ctx *ctx, void *arg) {
    struct self_call *sc = arg;
    if (atomic_fetch_add(&sc->calls, 1) != 0) return 0; /* a run submitted anyway */
    weft_executor *ex = weft_ctx_executor(ctx);
    if (sc->how == ONE) sc->status = weft_run_and_wait(ex, sc->target);
    else if (sc->how == OTHER_EXECUTOR) sc->status = weft_run_and_wait(sc->other, sc->target);
    else {
        weft_taskflow *both[2] = {sc->target, sc->target};
        weft_status each[2] = {WEFT_OK, WEFT_OK};
        sc->status = weft_run_many_and_wait(ex, both, 2, each);
    }
    sc->said_nothing_submitted = strstr(weft_last_error_message(), "nothing was submitted") != NULL;
    return 0;
}

/* tf runs once; its task (or a task of a module body of tf, with `nested`)
 * calls as `how` says on tf: refused, and no second run happens. */
static void expect_refused_without_a_run(int how, bool nested) {
    weft_executor *ex = make_executor(2), *other = how == OTHER_EXECUTOR ? make_executor(1) : NULL;
    weft_taskflow *tf = make_taskflow("self"), *body = nested ? make_taskflow("body") : NULL;
    struct self_call sc = {.target = tf, .other = other, .how = how};
    if (nested) {
        must_emplace(body, call_on_target, &sc);
        ASSERT_FALSE(weft_task_is_null(weft_emplace_module(tf, body)));
    } else {
        must_emplace(tf, call_on_target, &sc);
    }
    watchdog_start(30);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    if (other) ASSERT_OK(weft_executor_wait_all(other));
    watchdog_stop();
    ASSERT_STATUS(sc.status, WEFT_EDEADLK);
    /* The refusal's message, read on the refusing thread.  (Not
     * weft_taskflow_last_error(tf): main's own weft_run of tf may set it
     * after the task's refusal did; the two calls race for it.) */
    ASSERT_TRUE(sc.said_nothing_submitted);
    ASSERT_EQ(atomic_load(&sc.calls), 1); /* nothing was submitted */
    weft_executor_destroy(ex);
    weft_executor_destroy(other);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
}

TEST(run_and_wait_on_own_taskflow_from_its_task_submits_nothing) { expect_refused_without_a_run(ONE, false); }
TEST(run_and_wait_on_outer_taskflow_from_a_module_body_submits_nothing) { expect_refused_without_a_run(ONE, true); }
TEST(run_many_and_wait_with_own_taskflow_from_its_task_submits_nothing) { expect_refused_without_a_run(MANY, false); }
/* Runs of a taskflow queue behind one another on any executor. */
TEST(run_and_wait_on_own_taskflow_on_another_executor_submits_nothing) {
    expect_refused_without_a_run(OTHER_EXECUTOR, false);
}

/* A task waiting on a run of another taskflow is not refused. */
TEST(run_and_wait_on_another_taskflow_from_a_task_runs_it) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("caller"), *callee = make_taskflow("callee");
    atomic_int ran = 0;
    must_emplace(callee, bump, &ran);
    struct self_call sc = {.target = callee, .how = ONE};
    must_emplace(tf, call_on_target, &sc);
    watchdog_start(30);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    watchdog_stop();
    ASSERT_OK(sc.status);
    ASSERT_EQ(atomic_load(&ran), 1);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(callee));
}

/* A set of weft_run_many waited on by a task of one of its members: that
 * member's run cannot end before the task does, so neither can the set.  It
 * hung (the set's future had nothing to check); WEFT_EDEADLK now. */
static weft_future *_Atomic the_set;
static atomic_int set_wait_status = 1;

static int waits_on_its_set(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    weft_future *all;
    while (!(all = atomic_load(&the_set))) sleep_us(100);
    atomic_store(&set_wait_status, weft_future_wait(all));
    return 0;
}

TEST(a_task_waiting_on_the_run_many_set_of_its_own_run_gets_edeadlk) {
    watchdog_start(60);
    weft_executor *ex = make_executor(2);
    weft_taskflow *a = make_taskflow("a"), *b = make_taskflow("b");
    ASSERT_FALSE(weft_task_is_null(weft_emplace(a, waits_on_its_set, NULL)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace(b, noop, NULL)));
    weft_taskflow *tfs[] = {b, a};
    weft_future *all;
    ASSERT_OK(weft_run_many(ex, tfs, 2, &all));
    atomic_store(&the_set, all);
    ASSERT_OK(weft_future_wait(all));
    ASSERT_STATUS(atomic_load(&set_wait_status), WEFT_EDEADLK);
    weft_future_destroy(all);
    weft_taskflow_destroy(a), weft_taskflow_destroy(b);
    weft_executor_destroy(ex);
    watchdog_stop();
}

/* weft_run_until's predicate runs on a worker between iterations, and the run
 * waits for it: a weft_run_and_wait of the run's own taskflow there queued
 * behind the run, and a wait for the run's own future, never ended (the
 * predicate ran with no context, so neither wait saw what it waited behind).
 * Both are refused with WEFT_EDEADLK, as from a task of the run. */
struct pred_waits {
    weft_executor *ex;
    weft_taskflow *tf;
    weft_future *_Atomic run;
    int calls;
    weft_status own_taskflow, own_run;
};

static bool pred_waits_on_its_run(void *arg) {
    struct pred_waits *p = arg;
    int call = p->calls++; /* one thread at a time (graph.h) */
    if (call == 0) p->own_taskflow = weft_run_and_wait(p->ex, p->tf);
    if (call == 1) {
        weft_future *run;
        while (!(run = atomic_load(&p->run))) sleep_us(100);
        p->own_run = weft_future_wait_for(run, 5 * SEC);
    }
    return call == 2;
}

TEST(run_until_predicate_waiting_on_its_own_run_gets_edeadlk) {
    watchdog_start(30);
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("until");
    atomic_int ran = 0;
    must_emplace(tf, bump, &ran);
    struct pred_waits p = {.ex = ex, .tf = tf, .own_taskflow = 1, .own_run = 1};
    weft_future *f;
    ASSERT_OK(weft_run_until(ex, tf, pred_waits_on_its_run, &p, &f));
    atomic_store(&p.run, f);
    ASSERT_OK(weft_future_wait(f));
    ASSERT_STATUS(p.own_taskflow, WEFT_EDEADLK);
    ASSERT_STATUS(p.own_run, WEFT_EDEADLK);
    ASSERT_EQ(atomic_load(&ran), 2); /* the refused call submitted nothing */
    weft_future_destroy(f);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
    watchdog_stop();
}
