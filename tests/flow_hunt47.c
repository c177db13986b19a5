/* Control flow, round 47: weft_taskflow_validate warns about tasks no run can
 * ever reach in a graph with condition tasks.  A loop written with a strong
 * edge back into the condition (body -> cond from a plain body, cond -> body
 * weak) leaves the condition waiting for a predecessor that runs only after
 * it: every run ends WEFT_OK having run nothing of the loop.  Validation now
 * logs a warning naming that task; the loops written the Taskflow way (the
 * edge closing the loop comes from a condition task) get none. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#include <string.h>

static char warn47[1024];
static atomic_int nwarn47;

static void keep_warning47(void *user, weft_log_level level, const char *message) {
    (void)user;
    if (level != WEFT_LOG_WARN || !strstr(message, "weft_taskflow_validate")) return;
    if (atomic_fetch_add(&nwarn47, 1) == 0) snprintf(warn47, sizeof warn47, "%s", message);
}

/* Validates tf with warnings captured: returns how many validation warnings
 * it logged (the first is in warn47). */
static int validate_warnings47(weft_taskflow *tf) {
    warn47[0] = 0;
    atomic_store(&nwarn47, 0);
    weft_log_set_level(WEFT_LOG_WARN);
    weft_log_set_callback(keep_warning47, NULL);
    weft_task on_cycle = {0};
    weft_status st = weft_taskflow_validate(tf, &on_cycle);
    weft_log_set_callback(NULL, NULL);
    ASSERT_OK(st);
    ASSERT_TRUE(weft_task_is_null(on_cycle));
    ASSERT_OK(weft_taskflow_last_error(tf));
    return atomic_load(&nwarn47);
}

static weft_task named(weft_task t, const char *name) {
    ASSERT_FALSE(weft_task_is_null(t));
    ASSERT_OK(weft_task_set_name(t, name));
    return t;
}

typedef struct {
    atomic_int init, body, done, trips;
} loop47;

static int init47(weft_ctx *cx, void *p) { return (void)cx, atomic_fetch_add(&((loop47 *)p)->init, 1), 0; }
static int body47(weft_ctx *cx, void *p) { return (void)cx, atomic_fetch_add(&((loop47 *)p)->body, 1), 0; }
static int done47(weft_ctx *cx, void *p) { return (void)cx, atomic_fetch_add(&((loop47 *)p)->done, 1), 0; }
/* 0 (loop again) twice, then 1 (leave). */
static int again47(weft_ctx *cx, void *p) {
    (void)cx;
    return atomic_fetch_add(&((loop47 *)p)->trips, 1) < 2 ? 0 : 1;
}
/* A body that is itself a condition: always back to its successor 0. */
static int body_cond47(weft_ctx *cx, void *p) { return (void)cx, atomic_fetch_add(&((loop47 *)p)->body, 1), 0; }

/* init -> cond (strong), body -> cond (STRONG: body is a plain task),
 * cond -> body (weak, 0), cond -> done (weak, 1).  cond waits for body, which
 * only cond can start: the run ends WEFT_OK after init alone.  Validation said
 * nothing; it now names cond. */
TEST(a_condition_with_a_strong_predecessor_inside_its_own_loop_is_named_by_validate) {
    loop47 s = {0};
    weft_taskflow *tf = make_taskflow("strong_back");
    weft_task init = named(weft_emplace(tf, init47, &s), "init");
    weft_task cond = named(weft_emplace_condition(tf, again47, &s), "cond");
    weft_task body = named(weft_emplace(tf, body47, &s), "body");
    weft_task done = named(weft_emplace(tf, done47, &s), "done");
    ASSERT_OK(weft_precede(init, cond));
    ASSERT_OK(weft_precede(cond, body));
    ASSERT_OK(weft_precede(cond, done));
    ASSERT_OK(weft_precede(body, cond));
    ASSERT_EQ(validate_warnings47(tf), 1);
    if (!strstr(warn47, "taskflow 'strong_back'") || !strstr(warn47, "task 'cond' can never run") ||
        !strstr(warn47, "1 of its 2 strong predecessors") || !strstr(warn47, "3 task(s) in all"))
        TEST_FAIL_("unexpected warning: \"%s\"", warn47);
    /* What the warning is about: the run succeeds having run init only. */
    weft_executor *ex = make_executor(2);
    watchdog_start(30);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    watchdog_stop();
    ASSERT_EQ(atomic_load(&s.init), 1);
    ASSERT_EQ(atomic_load(&s.trips) + atomic_load(&s.body) + atomic_load(&s.done), 0);
    /* Validating again warns again (the check is not cached with the cycle check). */
    ASSERT_EQ(validate_warnings47(tf), 1);
    weft_executor_destroy(ex);
    weft_taskflow_destroy(tf);
}

/* The same stuck join one step removed: the loop's plain body feeds a plain
 * task that feeds the condition; the named task is still the one whose
 * strong predecessors are half done (the condition). */
TEST(a_stuck_join_behind_a_longer_strong_path_back_is_named) {
    loop47 s = {0};
    weft_taskflow *tf = make_taskflow("longer");
    weft_task init = named(weft_emplace(tf, init47, &s), "init");
    weft_task cond = named(weft_emplace_condition(tf, again47, &s), "check");
    weft_task b1 = named(weft_emplace(tf, body47, &s), "b1");
    weft_task b2 = named(weft_emplace(tf, body47, &s), "b2");
    ASSERT_OK(weft_precede(init, cond));
    ASSERT_OK(weft_precede(cond, b1));
    ASSERT_OK(weft_precede(b1, b2));
    ASSERT_OK(weft_precede(b2, cond));
    ASSERT_EQ(validate_warnings47(tf), 1);
    if (!strstr(warn47, "task 'check' can never run")) TEST_FAIL_("unexpected warning: \"%s\"", warn47);
    weft_taskflow_destroy(tf);
}

/* A loop with no way in next to a graph that has a source: never reached,
 * and said so. */
TEST(a_loop_with_no_way_in_beside_a_source_is_named) {
    loop47 s = {0};
    weft_taskflow *tf = make_taskflow("island");
    (void)named(weft_emplace(tf, init47, &s), "start");
    weft_task c = named(weft_emplace_condition(tf, again47, &s), "lonely");
    weft_task a = named(weft_emplace(tf, body47, &s), "inside");
    ASSERT_OK(weft_precede(c, a));
    ASSERT_OK(weft_precede(a, c));
    ASSERT_EQ(validate_warnings47(tf), 1);
    if (!strstr(warn47, "task 'lonely' can never run: no source leads to it") ||
        !strstr(warn47, "2 task(s) in all"))
        TEST_FAIL_("unexpected warning: \"%s\"", warn47);
    weft_taskflow_destroy(tf);
}

/* Valid graphs get no warning, and run their loops: the guide's loop
 * (init -> step -> cond, cond -> step weak), the Taskflow loop whose body is
 * a condition (init -> cond, cond -> body weak, body -> cond weak), a
 * self-loop of a condition, a graph with no condition, and a graph with no
 * source at all (documented: a run of it does nothing). */
TEST(loops_written_the_taskflow_way_and_graphs_without_conditions_get_no_warning) {
    weft_executor *ex = make_executor(2);
    watchdog_start(60);
    {
        loop47 s = {0};
        weft_taskflow *tf = make_taskflow("guide");
        weft_task init = named(weft_emplace(tf, init47, &s), "init");
        weft_task step = named(weft_emplace(tf, body47, &s), "step");
        weft_task cond = named(weft_emplace_condition(tf, again47, &s), "cond");
        weft_task done = named(weft_emplace(tf, done47, &s), "done");
        ASSERT_OK(weft_precede(init, step));
        ASSERT_OK(weft_precede(step, cond));
        ASSERT_OK(weft_precede(cond, step));
        ASSERT_OK(weft_precede(cond, done));
        ASSERT_EQ(validate_warnings47(tf), 0);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&s.body), 3);
        ASSERT_EQ(atomic_load(&s.done), 1);
        weft_taskflow_destroy(tf);
    }
    {
        loop47 s = {0};
        weft_taskflow *tf = make_taskflow("cond_body");
        weft_task init = named(weft_emplace(tf, init47, &s), "init");
        weft_task cond = named(weft_emplace_condition(tf, again47, &s), "cond");
        weft_task body = named(weft_emplace_condition(tf, body_cond47, &s), "body");
        weft_task done = named(weft_emplace(tf, done47, &s), "done");
        ASSERT_OK(weft_precede(init, cond));
        ASSERT_OK(weft_precede(cond, body));
        ASSERT_OK(weft_precede(cond, done));
        ASSERT_OK(weft_precede(body, cond));
        ASSERT_EQ(validate_warnings47(tf), 0);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&s.body), 2);
        ASSERT_EQ(atomic_load(&s.done), 1);
        weft_taskflow_destroy(tf);
    }
    {
        loop47 s = {0};
        weft_taskflow *tf = make_taskflow("self");
        weft_task init = named(weft_emplace(tf, init47, &s), "init");
        weft_task cond = named(weft_emplace_condition(tf, again47, &s), "cond");
        weft_task done = named(weft_emplace(tf, done47, &s), "done");
        ASSERT_OK(weft_precede(init, cond));
        ASSERT_OK(weft_precede(cond, cond));
        ASSERT_OK(weft_precede(cond, done));
        ASSERT_EQ(validate_warnings47(tf), 0);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&s.trips), 3);
        ASSERT_EQ(atomic_load(&s.done), 1);
        weft_taskflow_destroy(tf);
    }
    {
        loop47 s = {0};
        weft_taskflow *tf = make_taskflow("plain");
        weft_task a = named(weft_emplace(tf, init47, &s), "a");
        weft_task b = named(weft_emplace(tf, body47, &s), "b");
        ASSERT_OK(weft_precede(b, a)); /* backward: the cycle check runs */
        ASSERT_EQ(validate_warnings47(tf), 0);
        weft_taskflow_destroy(tf);
    }
    {
        loop47 s = {0};
        weft_taskflow *tf = make_taskflow("nosource");
        weft_task c = named(weft_emplace_condition(tf, again47, &s), "c");
        weft_task a = named(weft_emplace(tf, body47, &s), "a");
        ASSERT_OK(weft_precede(c, a));
        ASSERT_OK(weft_precede(a, c));
        ASSERT_EQ(validate_warnings47(tf), 0);
        weft_taskflow_destroy(tf);
    }
    watchdog_stop();
    weft_executor_destroy(ex);
}
