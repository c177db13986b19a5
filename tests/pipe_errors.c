/* Pipelines given bad arguments, used while running, failing stages, and out of
 * memory at every allocation of their creation. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#include <sched.h>
#include <stdalign.h>

static int empty(weft_pipeflow *pf, void *arg) { return 0; }
static int empty_item(void *item, size_t index, void *arg) { return 0; }

/* err is read through a pointer: the call in the first argument has run by then. */
static void expect_einval(weft_pipeline *p, const weft_status *err, const char *want) {
    ASSERT_NULL(p);
    ASSERT_STATUS(*err, WEFT_EINVAL);
    const char *msg = weft_pipeline_error_message();
    if (!strstr(msg, want)) TEST_FAIL_("message \"%s\" does not mention \"%s\"", msg, want);
}

TEST(pipe_bad_arguments_give_einval) {
    weft_stage ok[] = {{WEFT_STAGE_SERIAL, empty, NULL, "src"}, {WEFT_STAGE_PARALLEL, empty, NULL, "work"}};
    weft_status err;
    expect_einval(weft_pipeline_create(2, NULL, 2, &err), &err, "stages NULL");
    expect_einval(weft_pipeline_create(2, ok, 0, &err), &err, "1 to 65536 stages");
    expect_einval(weft_pipeline_create(0, ok, 2, &err), &err, "1 to 65536 lines (got 0)");
    expect_einval(weft_pipeline_create(70000, ok, 2, &err), &err, "lines");
    expect_einval(weft_pipeline_create(2, (weft_stage[]){{WEFT_STAGE_PARALLEL, empty, NULL, "src"}}, 1, &err), &err,
                  "stage 0 'src' must be serial");
    expect_einval(weft_pipeline_create(2, (weft_stage[]){{WEFT_STAGE_SERIAL, empty, NULL, NULL}, {7, empty, NULL, "x"}},
                                       2, &err),
                  &err, "stage 1 'x' has kind 7");
    expect_einval(weft_pipeline_create(2, (weft_stage[]){{WEFT_STAGE_SERIAL, NULL, NULL, NULL}}, 1, &err), &err,
                  "stage 0 has no function");
    /* err may be NULL. */
    ASSERT_NULL(weft_pipeline_create(0, ok, 2, NULL));
    int items[4];
    weft_item_stage ist[] = {{WEFT_STAGE_PARALLEL, empty_item, NULL, "p"}};
    expect_einval(weft_simple_pipeline_create(2, NULL, 4, sizeof(int), ist, 1, &err), &err, "items (got NULL)");
    expect_einval(weft_simple_pipeline_create(2, items, 4, 0, ist, 1, &err), &err, "non-zero size");
    expect_einval(weft_data_pipeline_create(2, NULL, 1, &err), &err, "stages NULL");

    /* The other calls on NULL. */
    ASSERT_TRUE(weft_task_is_null(weft_pipeline_emplace(NULL, NULL)));
    weft_taskflow *tf = make_taskflow("bad");
    ASSERT_TRUE(weft_task_is_null(weft_pipeline_emplace(tf, NULL)));
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EINVAL);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_STATUS(weft_pipeline_reset(NULL), WEFT_EINVAL);
    ASSERT_OK(weft_pipeline_destroy(NULL));
    ASSERT_EQ(weft_pipeline_num_tokens(NULL), 0);
    ASSERT_EQ(weft_pipeline_num_lines(NULL), 0);
    ASSERT_EQ(weft_pipeline_num_stages(NULL), 0);
    ASSERT_STATUS(weft_pipeflow_stop(NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_pipeflow_token(NULL), 0);
    ASSERT_EQ(weft_pipeflow_line(NULL), 0);
    ASSERT_EQ(weft_pipeflow_stage(NULL), 0);
    ASSERT_STATUS(weft_simple_pipeline_set_items(NULL, items, 4), WEFT_EINVAL);
    ASSERT_STATUS(weft_pipeline_set_scheduling(NULL, WEFT_PIPELINE_INLINE), WEFT_EINVAL);
    ASSERT_EQ(weft_pipeline_num_inline_tokens(NULL), 0);

    /* set_items only on simple pipelines. */
    weft_pipeline *p = weft_pipeline_create(3, ok, 2, &err);
    ASSERT_NOT_NULL(p);
    ASSERT_EQ(weft_pipeline_num_lines(p), 3);
    ASSERT_EQ(weft_pipeline_num_stages(p), 2);
    ASSERT_STATUS(weft_simple_pipeline_set_items(p, items, 4), WEFT_EINVAL);
    ASSERT_STATUS(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)3), WEFT_EINVAL);
    ASSERT_STATUS(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)-1), WEFT_EINVAL);
    ASSERT_OK(weft_pipeline_set_scheduling(p, WEFT_PIPELINE_SPREAD));
    ASSERT_OK(weft_pipeline_destroy(p));
}

/* A failed creation's detail is the thread's weft_last_error_message; the
 * deprecated weft_pipeline_error_message says "" after a successful creation,
 * which does not clear the thread's message (docs/errors.md). */
TEST(pipe_creation_failure_sets_the_threads_last_error_message) {
    weft_stage ok[] = {{WEFT_STAGE_SERIAL, empty, NULL, "src"}};
    weft_status err;
    ASSERT_NULL(weft_pipeline_create(0, ok, 1, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "lines (got 0)") != NULL);
    ASSERT_STREQ(weft_pipeline_error_message(), weft_last_error_message());
    weft_pipeline *p = weft_pipeline_create(1, ok, 1, &err);
    ASSERT_NOT_NULL(p);
    ASSERT_STREQ(weft_pipeline_error_message(), "");
    ASSERT_TRUE(strstr(weft_last_error_message(), "lines (got 0)") != NULL);
    ASSERT_OK(weft_pipeline_destroy(p));
}

/* ---- stop from a later stage, failing stages ------------------------------------ */

struct fails {
    uint64_t fail_at; /* token whose middle stage fails */
    atomic_int stop_status, last_seen, after_fail;
};

static int fsource(weft_pipeflow *pf, void *arg) { return 0; } /* never stops by itself */

static int fmiddle(weft_pipeflow *pf, void *arg) {
    struct fails *f = arg;
    atomic_store(&f->stop_status, weft_pipeflow_stop(pf)); /* not the first stage: refused */
    return weft_pipeflow_token(pf) == f->fail_at ? 42 : 0;
}

static int fsink(weft_pipeflow *pf, void *arg) {
    struct fails *f = arg;
    if (weft_pipeflow_token(pf) == f->fail_at) atomic_fetch_add(&f->after_fail, 1);
    atomic_store(&f->last_seen, (int)weft_pipeflow_token(pf));
    return 0;
}

/* Every scheduling: spread, at most L - 1 tokens follow the failed one; inline,
 * none. */
TEST(pipe_failing_stage_stops_tokens_and_fails_run_with_its_code) {
    const weft_pipeline_scheduling how[] = {WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE};
    for (size_t k = 0; k < 3; k++) {
        weft_executor *ex = make_executor(3);
        struct fails f = {.fail_at = 500};
        weft_stage st[] = {{WEFT_STAGE_SERIAL, fsource, &f, "source"},
                           {WEFT_STAGE_PARALLEL, fmiddle, &f, "middle"},
                           {WEFT_STAGE_SERIAL, fsink, &f, "sink"}};
        weft_status err;
        weft_pipeline *p = weft_pipeline_create(4, st, 3, &err);
        ASSERT_NOT_NULL(p);
        ASSERT_OK(weft_pipeline_set_scheduling(p, how[k]));
        weft_taskflow *tf = make_taskflow("fails");
        weft_task t = weft_pipeline_emplace(tf, p);
        ASSERT_OK(weft_task_set_name(t, "pipe"));
        weft_future *fu;
        ASSERT_OK(weft_run(ex, tf, &fu));
        ASSERT_STATUS(weft_future_wait(fu), WEFT_ETASK);
        weft_run_info info;
        ASSERT_OK(weft_future_info(fu, &info));
        ASSERT_EQ(info.task_code, 42);
        ASSERT_STREQ(info.failed_task, "pipe");
        weft_future_destroy(fu);
        ASSERT_STATUS(atomic_load(&f.stop_status), WEFT_EINVAL);
        ASSERT_EQ(atomic_load(&f.after_fail), 0); /* the failed token skipped the sink */
        /* At most L - 1 tokens were in flight behind the failed one. */
        uint64_t made = weft_pipeline_num_tokens(p);
        ASSERT_GT(made, f.fail_at);
        ASSERT_LE(made, f.fail_at + 4);
        if (how[k] == WEFT_PIPELINE_INLINE) ASSERT_EQ(made, f.fail_at + 1);
        /* The pipeline can run again: this time nothing fails until the new token. */
        f.fail_at = made + 100;
        ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ETASK);
        ASSERT_GT(weft_pipeline_num_tokens(p), made + 100);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_pipeline_destroy(p));
        weft_executor_destroy(ex);
    }
}

/* ---- busy while running ------------------------------------------------------------ */

struct hold {
    atomic_int entered, release;
};

/* Token 0 waits in the first stage until the test releases it; token 1 stops. */
static int hold_source(weft_pipeflow *pf, void *arg) {
    struct hold *h = arg;
    if (weft_pipeflow_token(pf) == 1) return weft_pipeflow_stop(pf), 0;
    atomic_store(&h->entered, 1);
    while (!atomic_load(&h->release)) sched_yield();
    return 0;
}

TEST(pipe_running_pipeline_is_busy_for_changes_and_second_runs) {
    weft_executor *ex = make_executor(2);
    struct hold h = {0};
    weft_stage st[] = {{WEFT_STAGE_SERIAL, hold_source, &h, "hold"}};
    weft_status err;
    weft_pipeline *p = weft_pipeline_create(2, st, 1, &err);
    ASSERT_NOT_NULL(p);
    weft_taskflow *tf1 = make_taskflow("one"), *tf2 = make_taskflow("two");
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf1, p)));
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf2, p)));
    weft_future *f1;
    ASSERT_OK(weft_run(ex, tf1, &f1));
    ASSERT_TRUE(wait_flag(&h.entered, 1, 60.0));
    ASSERT_STATUS(weft_pipeline_destroy(p), WEFT_EBUSY);
    ASSERT_STATUS(weft_pipeline_reset(p), WEFT_EBUSY);
    ASSERT_STATUS(weft_pipeline_set_scheduling(p, WEFT_PIPELINE_INLINE), WEFT_EBUSY);
    /* The same pipeline in another graph, at the same time: that task fails. */
    weft_future *f2;
    ASSERT_OK(weft_run(ex, tf2, &f2));
    ASSERT_STATUS(weft_future_wait(f2), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f2, &info));
    ASSERT_EQ(info.task_code, WEFT_EBUSY);
    weft_future_destroy(f2);
    atomic_store(&h.release, 1);
    ASSERT_OK(weft_future_wait(f1));
    weft_future_destroy(f1);
    ASSERT_EQ(weft_pipeline_num_tokens(p), 1);
    ASSERT_OK(weft_taskflow_destroy(tf1));
    ASSERT_OK(weft_taskflow_destroy(tf2));
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(ex);
}

/* ---- out of memory ------------------------------------------------------------------ */

/* Fails exactly the fail_at-th allocation and counts bytes still held. */
static atomic_long calls, fail_at;
static atomic_llong outstanding;
#define HDR ((size_t)alignof(max_align_t))

static void *f_alloc(void *ctx, size_t size) {
    long n = atomic_fetch_add(&calls, 1) + 1;
    if (n == atomic_load(&fail_at)) return NULL;
    unsigned char *m = malloc(size + HDR);
    if (!m) return NULL;
    memcpy(m, &size, sizeof size);
    atomic_fetch_add(&outstanding, (long long)size);
    return m + HDR;
}

static void f_free(void *ctx, void *ptr, size_t size) {
    if (!ptr) return;
    unsigned char *m = (unsigned char *)ptr - HDR;
    size_t real;
    memcpy(&real, m, sizeof real);
    if (real != size) TEST_FAIL_("freed %zu bytes as %zu", real, size);
    atomic_fetch_sub(&outstanding, (long long)real);
    free(m);
}

static void *f_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    void *q = f_alloc(ctx, new_size);
    if (q && ptr) {
        memcpy(q, ptr, old_size < new_size ? old_size : new_size);
        f_free(ctx, ptr, old_size);
    }
    return q;
}

static int count_to(weft_pipeflow *pf, void *in, void *out, void *arg) {
    if (weft_pipeflow_token(pf) == 100) return weft_pipeflow_stop(pf), 0;
    *(uint64_t *)out = weft_pipeflow_token(pf);
    return 0;
}

static int add_up(weft_pipeflow *pf, void *in, void *out, void *arg) {
    *(uint64_t *)arg += *(uint64_t *)in;
    return 0;
}

TEST(pipe_creation_survives_out_of_memory_at_every_allocation) {
    weft_set_allocator(&(weft_allocator){f_alloc, f_realloc, f_free, NULL});
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("oom");
    long long base = atomic_load(&outstanding);
    uint64_t sum = 0;
    weft_data_stage st[] = {{WEFT_STAGE_SERIAL, count_to, NULL, "count", .WEFT_DATA_OUT(uint64_t)},
                            {WEFT_STAGE_SERIAL, add_up, &sum, "sum", .WEFT_DATA_IN(uint64_t)}};
    weft_pipeline *p = NULL;
    long failures = 0;
    for (long n = 1; !p; n++) {
        atomic_store(&calls, 0);
        atomic_store(&fail_at, n);
        weft_status err = WEFT_OK;
        p = weft_data_pipeline_create(3, st, 2, &err);
        atomic_store(&fail_at, 0);
        if (!p) {
            ASSERT_STATUS(err, WEFT_ENOMEM);
            ASSERT_EQ(atomic_load(&outstanding), base); /* nothing leaked */
            failures++;
        }
        ASSERT_LT(n, 100);
    }
    ASSERT_GE(failures, 3); /* every part of the pipeline was allocated separately */
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(sum, 4950);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(ex);
    ASSERT_EQ(atomic_load(&outstanding), 0);
    weft_set_allocator(NULL);
}

/* ---- cancelling the graph run ---------------------------------------------------- */

static int endless(weft_pipeflow *pf, void *arg) {
    if (weft_pipeflow_token(pf) == 100) atomic_store((atomic_int *)arg, 1);
    return 0;
}

TEST(pipe_cancelled_run_stops_making_tokens) {
    const weft_pipeline_scheduling how[] = {WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE};
    for (size_t k = 0; k < 3; k++) {
        weft_executor *ex = make_executor(2);
        atomic_int reached = 0;
        weft_stage st[] = {{WEFT_STAGE_SERIAL, endless, &reached, "endless"},
                           {WEFT_STAGE_PARALLEL, empty, NULL, "work"},
                           {WEFT_STAGE_SERIAL, empty, NULL, "sink"}};
        weft_status err;
        weft_pipeline *p = weft_pipeline_create(3, st, 3, &err);
        ASSERT_NOT_NULL(p);
        ASSERT_OK(weft_pipeline_set_scheduling(p, how[k]));
        weft_taskflow *tf = make_taskflow("cancel");
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_TRUE(wait_flag(&reached, 1, 60.0));
        ASSERT_OK(weft_future_cancel(f));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
        weft_future_destroy(f);
        ASSERT_GT(weft_pipeline_num_tokens(p), 100);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_pipeline_destroy(p));
        weft_executor_destroy(ex);
    }
}
