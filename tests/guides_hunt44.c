/* Session 44 (h44-4): behaviour the guides (README.md and the docs/ pages) state, found
 * by turning every code block of them into a program and checking what the
 * prose around it says. */
#define _GNU_SOURCE
#include "harness.h"

#include <weft/core.h>
#include <weft/flow.h>
#include <weft/graph.h>
#include <weft/observe.h>

#include <stdio.h>
#include <string.h>

static int spin_task(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    volatile unsigned s = 0;
    for (unsigned i = 0; i < 20000; i++) s += i;
    return 0;
}

/* The folded stacks of ex's profile, in buf. */
static void folded(weft_executor *ex, const weft_folded_options *opt, char *buf, size_t cap) {
    memset(buf, 0, cap);
    FILE *f = fmemopen(buf, cap - 1, "w");
    ASSERT_TRUE(f != NULL);
    ASSERT_OK(weft_profiler_write_folded(ex, opt, f));
    fclose(f);
}

/* docs/guide-tooling.md, "Flame graphs" (and weft_profiler_write_folded in
 * observe.h): a taskflow task's stack is "executor N;taskflow <its run's
 * taskflow>;subflow/module <graph>;<task>".  The run's taskflow was taken to
 * be the graph of the run's earliest span, so a run whose module task comes
 * first (its body's tasks run before any task of the taskflow's own) was
 * labelled by the module's body: "taskflow body;subflow/module main;tail". */
TEST(flame_stacks_name_the_runs_taskflow_when_a_module_body_runs_first) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_status st;
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers }, &st);
        ASSERT_TRUE(ex != NULL);
        weft_taskflow *main_tf = weft_taskflow_create("main", &st), *body = weft_taskflow_create("body", &st);
        ASSERT_TRUE(main_tf && body);
        weft_task inner = weft_emplace(body, spin_task, NULL);
        ASSERT_OK(weft_task_set_name(inner, "inner"));
        weft_task m = weft_emplace_module(main_tf, body), tail = weft_emplace(main_tf, spin_task, NULL);
        ASSERT_OK(weft_task_set_name(tail, "tail"));
        ASSERT_OK(weft_precede(m, tail)); /* body's task runs before main's own */
        ASSERT_OK(weft_profiler_start(ex));
        ASSERT_OK(weft_run_and_wait(ex, main_tf));
        ASSERT_OK(weft_profiler_stop(ex));

        char buf[2048];
        const weft_taskflow *names[] = { main_tf, body };
        folded(ex, &(weft_folded_options){ .taskflows = names, .ntaskflows = 2 }, buf, sizeof buf);
        if (!strstr(buf, "executor ") || !strstr(buf, ";taskflow main;subflow/module body;inner ") ||
            !strstr(buf, ";taskflow main;tail ") || strstr(buf, "taskflow body;"))
            TEST_FAIL_("%u worker(s), named: stacks\n%s", workers, buf);
        /* Unnamed: numbered in order of appearance, the run's taskflow first. */
        folded(ex, NULL, buf, sizeof buf);
        if (!strstr(buf, ";taskflow 1;subflow/module 2;inner ") || !strstr(buf, ";taskflow 1;tail "))
            TEST_FAIL_("%u worker(s), unnamed: stacks\n%s", workers, buf);

        weft_taskflow_destroy(main_tf);
        weft_taskflow_destroy(body);
        weft_executor_destroy(ex);
    }
}
