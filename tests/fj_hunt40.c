/* Fork-join where the other fork-join tests do not go (session 40's
 * adversarial round).  Probes that found no defect. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>

#include "test_util.h"

#define FLAT40 1000000

static unsigned char *hits40;
static int leaf40(weft_ctx *cx, void *p) {
    (void)cx;
    uintptr_t i = (uintptr_t)p;
    __atomic_fetch_add(&hits40[i], 1, __ATOMIC_RELAXED);
    return i == FLAT40 - 1 ? 7 : i == FLAT40 / 2 ? 9 : 0;
}
/* 10^6 spawns in one loop, none synced: weft syncs them as the task returns. */
static int flat_unsynced40(weft_ctx *cx, void *p) {
    (void)p;
    for (uintptr_t i = 0; i < FLAT40; i++)
        if (weft_spawn(cx, leaf40, (void *)i) != WEFT_OK) return -99;
    return 0;
}

/* forkjoin.h: past the 65536 frames a spawn runs its child at once, and the
 * spawns a task leaves unsynced are synced as it returns, the first non-zero
 * value (innermost first) becoming the task's.  A flat loop of 10^6 spawns
 * left unsynced in a root, an async task and a graph task, on 1, 2 and 4
 * workers: every child runs exactly once, and the failure reported is the
 * innermost child's (7), not the one in the middle of the loop (9). */
TEST(a_million_spawns_left_unsynced_run_once_each_and_report_the_innermost_failure) {
    hits40 = malloc(FLAT40);
    ASSERT_NOT_NULL(hits40);
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        for (int how = 0; how < 3; how++) {
            memset(hits40, 0, FLAT40);
            int code = 0;
            if (how == 0) {
                ASSERT_STATUS(weft_run_root_status(ex, flat_unsynced40, NULL, &code), WEFT_ETASK);
            } else {
                weft_future *f = NULL;
                weft_taskflow *tf = NULL;
                if (how == 1) {
                    ASSERT_OK(weft_async(ex, flat_unsynced40, NULL, &f));
                } else {
                    tf = make_taskflow("flat");
                    weft_emplace(tf, flat_unsynced40, NULL);
                    ASSERT_OK(weft_run(ex, tf, &f));
                }
                ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
                weft_run_info ri;
                ASSERT_OK(weft_future_info(f, &ri));
                code = ri.task_code;
                weft_future_destroy(f);
                if (tf) ASSERT_OK(weft_taskflow_destroy(tf));
            }
            ASSERT_EQ(code, 7);
            size_t bad = 0;
            for (size_t i = 0; i < FLAT40; i++) bad += hits40[i] != 1;
            if (bad) TEST_FAIL_("%u workers, way %d: %zu children ran other than once", w, how, bad);
        }
        weft_executor_destroy(ex);
    }
    free(hits40);
}

/* A pipeline stage is not a task (weft_current_ctx may be the pipeline's
 * task, or NULL on a worker that took the stage job): fork-join in a stage
 * through weft_current_ctx when there is one and weft_run_root when not
 * gives the serial answer for every token, in each scheduling mode, on 1, 2
 * and 4 workers. */
struct fib40 {
    int n;
    long r;
};
static int fib40(weft_ctx *cx, void *p) {
    struct fib40 *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    struct fib40 x = {a->n - 1, 0}, y = {a->n - 2, 0};
    if (weft_spawn(cx, fib40, &x) != WEFT_OK) return -5;
    int st = fib40(cx, &y);
    int s2 = weft_sync(cx);
    a->r = x.r + y.r;
    return st ? st : s2;
}
static long sfib40(int n) { return n < 2 ? n : sfib40(n - 1) + sfib40(n - 2); }
static weft_executor *pipe_ex40;
static long results40[600];
static int make40(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) == 600) (void)weft_pipeflow_stop(pf);
    return 0;
}
static int work40(weft_pipeflow *pf, void *arg) {
    (void)arg;
    uint64_t t = weft_pipeflow_token(pf);
    struct fib40 f = {10 + (int)(t % 6), 0};
    weft_ctx *cx = weft_current_ctx();
    int st = cx ? fib40(cx, &f) : weft_run_root(pipe_ex40, fib40, &f);
    if (st) return st;
    if (results40[t] && results40[t] != f.r) return 3;
    results40[t] = f.r;
    return 0;
}
TEST(fork_join_inside_pipeline_stages_gives_the_serial_answer_in_every_scheduling_mode) {
    for (int mode = 0; mode < 3; mode++)
        for (unsigned w = 1; w <= 4; w *= 2) {
            pipe_ex40 = make_executor(w);
            memset(results40, 0, sizeof results40);
            weft_stage st[3] = {{WEFT_STAGE_SERIAL, make40, NULL, "make"},
                                {WEFT_STAGE_PARALLEL, work40, NULL, "par"},
                                {WEFT_STAGE_SERIAL, work40, NULL, "ser"}};
            weft_status err = WEFT_OK;
            weft_pipeline *p = weft_pipeline_create(4, st, 3, &err);
            ASSERT_NOT_NULL(p);
            ASSERT_OK(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)mode));
            weft_taskflow *tf = make_taskflow("pipe");
            weft_pipeline_emplace(tf, p);
            ASSERT_OK(weft_run_and_wait(pipe_ex40, tf));
            for (int t = 0; t < 600; t++)
                if (results40[t] != sfib40(10 + t % 6)) TEST_FAIL_("mode %d, %u workers, token %d: %ld", mode, w, t, results40[t]);
            ASSERT_OK(weft_taskflow_destroy(tf));
            ASSERT_OK(weft_pipeline_destroy(p));
            weft_executor_destroy(pipe_ex40);
        }
}
