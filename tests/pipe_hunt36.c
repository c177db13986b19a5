/* Pipelines under awkward use (adversarial round 36): observation switched off
 * while an inline run goes on. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

/* ---- metrics switched off during an inline run -------------------------------------- */

struct off_mid {
    uint64_t at;              /* stage 0 of this token asks for the switch and waits */
    atomic_int asked, switched;
};

static int off_mid_stage(weft_pipeflow *pf, void *arg) {
    struct off_mid *m = arg;
    if (weft_pipeflow_stage(pf) == 0 && weft_pipeflow_token(pf) == m->at) {
        atomic_store(&m->asked, 1);
        if (!wait_flag(&m->switched, 1, 10.0)) return -1;
    }
    if (weft_pipeflow_stage(pf) == 0 && weft_pipeflow_token(pf) == 999) weft_pipeflow_stop(pf);
    return 0;
}

/* Runs a two-stage pipeline inline on one worker with metrics on (by
 * weft_metrics_enable, or by the profiler), switches them off from this thread
 * while stage 0 of token `at` waits, and returns how many tasks the metrics
 * counted between the switch and the end of the run. */
static uint64_t counted_after_off(bool by_profiler, uint64_t at) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &err);
    ASSERT_NOT_NULL(ex);
    struct off_mid m = { .at = at };
    weft_stage st[2] = { { WEFT_STAGE_SERIAL, off_mid_stage, &m, "make" },
                         { WEFT_STAGE_SERIAL, off_mid_stage, &m, "use" } };
    weft_pipeline *p = weft_pipeline_create(2, st, 2, &err);
    ASSERT_NOT_NULL(p);
    ASSERT_OK(weft_pipeline_set_scheduling(p, WEFT_PIPELINE_INLINE));
    weft_taskflow *tf = make_taskflow("pipe");
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
    ASSERT_OK(by_profiler ? weft_profiler_start(ex) : weft_metrics_enable(ex, true));
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&m.asked, 1, 10.0));
    if (by_profiler) ASSERT_OK(weft_profiler_stop(ex));
    else ASSERT_OK(weft_metrics_enable(ex, false));
    weft_metrics off, end;
    ASSERT_OK(weft_executor_metrics(ex, &off, NULL, 0));
    atomic_store(&m.switched, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_OK(weft_executor_metrics(ex, &end, NULL, 0));
    ASSERT_FALSE(end.enabled);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(ex);
    return end.total.tasks - off.total.tasks;
}

/* An inline phase looks for an observer once per few dozen tokens; a stage
 * call after metrics went off must still not be counted.  Only the two calls
 * that began while they were on end afterwards: the waiting stage call and
 * the task that drives the pipeline.  Token 256 is the first of a look, so
 * the rest of the run's tokens (up to 63 of them, two calls each) would
 * otherwise be counted. */
TEST(pipe_metrics_switched_off_during_an_inline_run_count_no_later_stage_call) {
    const uint64_t at[] = { 256, 300 };
    for (int by_profiler = 0; by_profiler < 2; by_profiler++)
        for (size_t i = 0; i < 2; i++) {
            uint64_t n = counted_after_off(by_profiler, at[i]);
            if (n > 2)
                TEST_FAIL_("%s at token %llu: %llu tasks counted after metrics went off, want at most 2",
                           by_profiler ? "profiler stopped" : "metrics disabled", (unsigned long long)at[i],
                           (unsigned long long)n);
        }
}
