/* Pipelines under awkward use (adversarial round 35): values of odd sizes in a
 * data pipeline's line buffers, and stages that return weft's own status codes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>

#include "test_util.h"

/* ---- odd sizes ------------------------------------------------------------------- */

struct odd {
    size_t a, b;    /* bytes stage 0 gives, bytes stage 1 gives */
    uint64_t stop_at;
    atomic_int bad, seen;
};

/* Every byte of a value is the token's low byte (+ the stage), so a buffer
 * shared between lines or cut short shows. */
static int odd_make(weft_pipeflow *pf, void *in, void *out, void *arg) {
    struct odd *o = arg;
    uint64_t t = weft_pipeflow_token(pf);
    if (t == o->stop_at) return weft_pipeflow_stop(pf), 0;
    if (in || (uintptr_t)out % 16) atomic_fetch_add(&o->bad, 1);
    memset(out, (int)(t & 0xff), o->a);
    return 0;
}

static int odd_pass(weft_pipeflow *pf, void *in, void *out, void *arg) {
    struct odd *o = arg;
    unsigned char want = (unsigned char)weft_pipeflow_token(pf);
    if ((uintptr_t)in % 16 || (uintptr_t)out % 16) atomic_fetch_add(&o->bad, 1);
    for (size_t k = 0; k < o->a; k++)
        if (((unsigned char *)in)[k] != want) {
            atomic_fetch_add(&o->bad, 1);
            break;
        }
    memset(out, (int)((want + 1) & 0xff), o->b);
    return 0;
}

static int odd_take(weft_pipeflow *pf, void *in, void *out, void *arg) {
    struct odd *o = arg;
    unsigned char want = (unsigned char)(weft_pipeflow_token(pf) + 1);
    if (out || (uintptr_t)in % 16) atomic_fetch_add(&o->bad, 1);
    for (size_t k = 0; k < o->b; k++)
        if (((unsigned char *)in)[k] != want) {
            atomic_fetch_add(&o->bad, 1);
            break;
        }
    atomic_fetch_add(&o->seen, 1);
    return 0;
}

/* Sizes that are not multiples of anything (1, 3, 65, 4097 bytes), on one
 * line and on several, with each scheduling: every buffer is aligned for any
 * type and every byte arrives. */
TEST(pipe_data_values_of_odd_sizes_arrive_whole_and_aligned) {
    static const size_t sizes[] = { 1, 3, 65, 4097 };
    static const weft_pipeline_scheduling how[] = { WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE };
    weft_executor *ex = make_executor(3);
    for (size_t i = 0; i < 4; i++)
        for (size_t lines = 1; lines <= 5; lines += 4)
            for (size_t k = 0; k < 3; k++) {
                struct odd o = { .a = sizes[i], .b = sizes[3 - i], .stop_at = 300 };
                weft_data_stage st[] = {
                    { WEFT_STAGE_SERIAL, odd_make, &o, "make", 0, o.a, NULL, NULL },
                    { WEFT_STAGE_PARALLEL, odd_pass, &o, "pass", o.a, o.b, NULL, NULL },
                    { WEFT_STAGE_SERIAL, odd_take, &o, "take", o.b, 0, NULL, NULL },
                };
                weft_status err;
                weft_pipeline *p = weft_data_pipeline_create(lines, st, 3, &err);
                ASSERT_NOT_NULL(p);
                ASSERT_OK(weft_pipeline_set_scheduling(p, how[k]));
                weft_taskflow *tf = make_taskflow("odd");
                ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
                ASSERT_OK(weft_run_and_wait(ex, tf));
                ASSERT_EQ(atomic_load(&o.bad), 0);
                ASSERT_EQ(atomic_load(&o.seen), 300);
                ASSERT_OK(weft_taskflow_destroy(tf));
                ASSERT_OK(weft_pipeline_destroy(p));
            }
    weft_executor_destroy(ex);
}

/* ---- stages returning status codes ------------------------------------------------ */

struct coded {
    uint64_t fail_at;
    int code;
};

static int coded_source(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) == 2000) (void)weft_pipeflow_stop(pf);
    return 0;
}

static int coded_stage(weft_pipeflow *pf, void *arg) {
    const struct coded *c = arg;
    return weft_pipeflow_token(pf) == c->fail_at ? c->code : 0;
}

/* A stage's non-zero result is a task code, whatever it looks like: one equal
 * to WEFT_ECANCELED or WEFT_EBUSY (what a second concurrent run reports) or
 * INT_MIN fails the run with WEFT_ETASK and that code, and the pipeline runs
 * again afterwards. */
TEST(pipe_a_stage_returning_a_status_code_fails_the_run_with_it_as_task_code) {
    static const int codes[] = { WEFT_ECANCELED, WEFT_EBUSY, INT_MIN };
    weft_executor *ex = make_executor(2);
    for (size_t i = 0; i < 3; i++)
        for (int how = WEFT_PIPELINE_AUTO; how <= WEFT_PIPELINE_INLINE; how++) {
            struct coded c = { .fail_at = 700, .code = codes[i] };
            weft_stage st[] = { { WEFT_STAGE_SERIAL, coded_source, &c, "source" },
                                { WEFT_STAGE_PARALLEL, coded_stage, &c, "work" } };
            weft_status err;
            weft_pipeline *p = weft_pipeline_create(4, st, 2, &err);
            ASSERT_NOT_NULL(p);
            ASSERT_OK(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)how));
            weft_taskflow *tf = make_taskflow("coded");
            weft_task t = weft_pipeline_emplace(tf, p);
            ASSERT_OK(weft_task_set_name(t, "pipe"));
            weft_future *f;
            ASSERT_OK(weft_run(ex, tf, &f));
            ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            ASSERT_EQ(info.task_code, codes[i]);
            weft_future_destroy(f);
            c.fail_at = UINT64_MAX;
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_EQ(weft_pipeline_num_tokens(p), 2000);
            ASSERT_OK(weft_taskflow_destroy(tf));
            ASSERT_OK(weft_pipeline_destroy(p));
        }
    weft_executor_destroy(ex);
}
