/* Session 46 hunt, observability: the profiler's batched timing when many
 * batches overrun in one run (what a loaded machine does to a profile). */
#define _GNU_SOURCE
#include "harness.h"
#include "obs_util.h"
#include "observe/obs.h"
#include "test_util.h"

#include <weft.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

static void spin_for_ns(uint64_t ns) {
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < ns) {
    }
}

enum { CHAIN = 1000 };
static int SLOW = 500; /* the index of the 2 ms task */
static atomic_int noisy; /* run 1 only: some tasks stand for the OS stopping the worker */

static int chain_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    int i = (int)(intptr_t)arg;
    if (i == SLOW) spin_for_ns(2 * MS);
    /* Every other batch (40 tasks) before task 300 overruns by 100 us: over
     * the 50 us that flags it, its 40 tasks suspects; the quiet batch after
     * each brings the expected time back down. */
    else if (atomic_load(&noisy) && i < 300 && i % 80 == 20) spin_for_ns(100 * 1000);
    return 0;
}

static bool find_slow(const weft__span *s, unsigned w, void *arg) {
    (void)w;
    if (s->kind == WEFT__SPAN_TASK && s->index == (uint32_t)SLOW && s->run >= 1 && s->run <= 2) ((weft__span *)arg)[s->run - 1] = *s;
    return true;
}

/* observe.h: a batch that held a long task has its tasks "timed one by one
 * from their next run on ... so a long task is measured from its second
 * run".  The suspects' table took keys up to half its 256 slots per
 * recording and then none: four batches that overran earlier in the same run
 * (160 suspects: on a loaded machine, the OS stopping the worker) filled it,
 * the 2 ms task's batch was flagged but its tasks were not made suspects, and
 * every later run batched it again: never measured (obs_work's long-task test
 * failed 3 times in 40 TSan runs at load 13: slots 128, live suspects 0, all
 * three runs flagged). */
TEST(a_long_task_is_measured_from_its_second_run_even_after_many_batches_overran_in_its_first) {
    SLOW = 500;
    weft_executor *ex = make_profiled(1, 0);
    ex->obs_state->batch_max = UINT64_MAX; /* batched whatever the tasks' length (sanitizers) */
    weft_taskflow *tf = make_taskflow("noisy");
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < CHAIN; i++) {
        weft_task t = must_emplace(tf, chain_task, (void *)(intptr_t)i);
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        ASSERT_OK(weft_task_set_name(t, name)); /* named, as a profiled program's tasks often are */
        if (!weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    atomic_store(&noisy, 1);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    atomic_store(&noisy, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    weft__span slow[2] = { { .kind = WEFT__SPAN_NONE }, { .kind = WEFT__SPAN_NONE } };
    weft__spans_for_each(ex->obs_state, find_slow, slow);
    ASSERT_EQ(slow[0].kind, WEFT__SPAN_TASK);
    ASSERT_EQ(slow[1].kind, WEFT__SPAN_TASK);
    /* Run 1 batched it (its suspects from run 1 are not looked for in run 1)
     * and its batch overran by 2 ms: flagged. */
    ASSERT_EQ(slow[0].estimated, WEFT__EST_LONG);
    double ns = weft__ticks_ns(ex->obs_state, slow[1].end - slow[1].begin);
    if (slow[1].estimated || ns < 1.98e6)
        TEST_FAIL_("run 2: the 2 ms task's span is %s (%d) and says %.0f ns; %u suspect slots filled",
                   slow[1].estimated ? "estimated" : "measured", slow[1].estimated, ns,
                   (unsigned)atomic_load(&ex->obs_state->nsuspect_slots));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* observe.h: "Every other estimated span [than a flagged batch's] stands for
 * a task shorter than 50 us", and a long task is measured from its second
 * run.  A batch closed at a gap that was not straight after its last task (a
 * job that is not a task ran between: batch_gap) took its end as estimated
 * at the last stretch's pace, and judged "held long" against that estimate,
 * which is never over: a 2 ms task at index 100, 640, 700 or 760 of the
 * chain (at 20, 300, 500 it was flagged) got a plain estimate of about 100 ns
 * in every run, never flagged, never measured.  Now the batch is judged at
 * the clock read that closes it. */
TEST(a_long_task_anywhere_in_a_chain_is_never_a_plain_estimate_and_is_measured_from_its_second_run) {
    static const int at[] = {20, 100, 300, 500, 640, 700, 760, 900};
    atomic_store(&noisy, 0);
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        SLOW = at[k];
        weft_executor *ex = make_profiled(1, 0);
        ex->obs_state->batch_max = UINT64_MAX; /* batched whatever the tasks' length (sanitizers) */
        weft_taskflow *tf = make_taskflow("chain");
        weft_task prev = WEFT_TASK_NULL;
        for (int i = 0; i < CHAIN; i++) {
            weft_task t = must_emplace(tf, chain_task, (void *)(intptr_t)i);
            if (!weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, t));
            prev = t;
        }
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        weft__span slow[2] = { { .kind = WEFT__SPAN_NONE }, { .kind = WEFT__SPAN_NONE } };
        weft__spans_for_each(ex->obs_state, find_slow, slow);
        for (int r = 0; r < 2; r++) {
            ASSERT_EQ(slow[r].kind, WEFT__SPAN_TASK);
            double ns = weft__ticks_ns(ex->obs_state, slow[r].end - slow[r].begin);
            /* Run 1: flagged, or measured; run 2: measured (after a flag) or
             * flagged again only if run 1 measured it. */
            bool ok = slow[r].estimated == WEFT__EST_LONG || (!slow[r].estimated && ns >= 1.98e6);
            if (r == 1 && slow[0].estimated == WEFT__EST_LONG) ok = !slow[r].estimated && ns >= 1.98e6;
            if (!ok)
                TEST_FAIL_("2 ms task at %d, run %d: estimated %d, %.0f ns (run 1: estimated %d)", SLOW, r + 1,
                           slow[r].estimated, ns, slow[0].estimated);
        }
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}
