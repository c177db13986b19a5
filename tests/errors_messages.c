/* docs/errors.md, R3: every public call that fails sets the thread's message,
 * naming itself.  Each row below makes one failing call after a sentinel
 * failure of a different call has set the message, and checks that the
 * message is not empty, names the row's function, and is not the sentinel
 * (a stale message of an earlier, unrelated failure). */
#include "harness.h"

#include <weft.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int work(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}

static weft_taskflow *tf; /* a real taskflow, for the builder rows */

/* ---- the failing calls, one per row ---- */

static int executor_create(void) {
    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 5000}, &st);
    weft_executor_destroy(ex);
    return st;
}
static int executor_wait_all(void) { return weft_executor_wait_all(NULL); }
static int future_wait(void) { return weft_future_wait(NULL); }
static int future_wait_for(void) { return weft_future_wait_for(NULL, 1000); }
static int future_info(void) { return weft_future_info(NULL, NULL); }
static int future_cancel(void) { return weft_future_cancel(NULL); }
static int run(void) { return weft_run(NULL, NULL, NULL); }
static int run_n(void) { return weft_run_n(NULL, NULL, 3, NULL); }
static int run_until(void) { return weft_run_until(NULL, NULL, NULL, NULL, NULL); }
static int run_many(void) { return weft_run_many(NULL, NULL, 3, NULL); }
static int precede(void) { return weft_precede(WEFT_TASK_NULL, WEFT_TASK_NULL); }
static int linearize(void) { return weft_linearize(NULL, 3); }
static int task_set_priority(void) { return weft_task_set_priority(WEFT_TASK_NULL, WEFT_PRIORITY_HIGH); }
static int task_set_name(void) { return weft_task_set_name(WEFT_TASK_NULL, "x"); }
static int task_erase(void) { return weft_task_erase(WEFT_TASK_NULL); }
static int emplace(void) {
    (void)weft_emplace(tf, NULL, NULL);
    return weft_taskflow_last_error(tf);
}
static int placeholder(void) {
    (void)weft_placeholder(NULL);
    return WEFT_EINVAL; /* the null task; no taskflow to ask */
}
static int taskflow_validate(void) { return weft_taskflow_validate(NULL, NULL); }
static int taskflow_dump_dot(void) { return weft_taskflow_dump_dot(NULL, stdout); }
static int work_create(void) {
    weft_status st = WEFT_OK;
    weft_work_release(weft_work_create(NULL, NULL, NULL, &st)); /* NULL: a no-op */
    return st;
}
static int params_set_int(void) { return weft_params_set_int(NULL, "n", 1); }
static int async(void) { return weft_async(NULL, NULL, NULL, NULL); }
static int silent_async(void) { return weft_silent_async(NULL, NULL, NULL); }
static int semaphore_create(void) {
    weft_status st = WEFT_OK;
    (void)weft_semaphore_destroy(weft_semaphore_create(0, &st)); /* NULL: a no-op */
    return st;
}
static int future_then(void) { return weft_future_then(NULL, NULL, NULL); }
static int token_cancel(void) { return weft_cancel_token_cancel(NULL); }
static int cancel_after(void) { return weft_cancel_after(NULL, 1000); }
static int token_on_cancel(void) { return weft_cancel_token_on_cancel(NULL, NULL, NULL, NULL); }
static int deadline_begin(void) { return weft_deadline_begin(NULL, NULL, 1000); }
static int run_root(void) { return weft_run_root_status(NULL, NULL, NULL, NULL); }
static int parallel_for(void) { return weft_parallel_for(NULL, 0, 10, 1, NULL, NULL, NULL); }
static int parallel_reduce(void) {
    int result = 0;
    return weft_parallel_reduce(NULL, NULL, 10, sizeof(int), &result, NULL, NULL, NULL);
}
static int parallel_sort_ops(void) { return weft_parallel_sort_ops(NULL, NULL, 10, 4, NULL, NULL, NULL); }
static int algo_set_priority(void) { return weft_algo_set_priority((weft_priority)99, NULL); }
static int sched_remove(void) { return weft_sched_remove(NULL, (weft_sched_handle){0}); }
static int sched_get_stats(void) { return weft_sched_get_stats(NULL, NULL); }
static int topology_detect(void) { return weft_topology_detect(NULL, NULL); }
static int numa_alloc(void) {
    void *p = NULL;
    return weft_numa_alloc(NULL, 0, 0, &p, NULL);
}
static int metrics_enable(void) { return weft_metrics_enable(NULL, true); }
static int executor_metrics(void) { return weft_executor_metrics(NULL, NULL, NULL, 0); }
static int profiler_write_json(void) { return weft_profiler_write_json(NULL, stdout); }
static int pipeline_reset(void) { return weft_pipeline_reset(NULL); }
static int pipeline_set_priority(void) { return weft_pipeline_set_priority(NULL, WEFT_PRIORITY_HIGH); }
static int gpu_stream_create(void) {
    weft_status st = WEFT_OK;
    weft_gpu_stream_destroy(weft_gpu_stream_create(NULL, &st)); /* NULL: a no-op */
    return st;
}

/* Failures other than EINVAL (a helper's sweep found these three silent). */
static int executor_dump_fd_esys(void) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    int st = weft_executor_dump_fd(ex, 987654); /* not an open descriptor */
    weft_executor_destroy(ex);
    return st;
}
static int numa_alloc_enomem(void) {
    void *p = NULL;
    int st = weft_numa_alloc(NULL, SIZE_MAX - 100, 0, &p, NULL);
    return st == WEFT_ENOENT ? WEFT_ENOMEM : st; /* no topology here: nothing to check */
}
static int numa_alloc_interleaved_enomem(void) {
    void *p = NULL;
    int st = weft_numa_alloc_interleaved(NULL, SIZE_MAX, NULL, 0, &p, NULL);
    return st == WEFT_ENOENT ? WEFT_ENOMEM : st;
}

struct row {
    const char *fn; /* the name the message must contain */
    int (*call)(void);
    weft_status want;
};

static const struct row rows[] = {
    {"weft_executor_create", executor_create, WEFT_EINVAL},
    {"weft_executor_wait_all", executor_wait_all, WEFT_EINVAL},
    {"weft_future_wait", future_wait, WEFT_EINVAL},
    {"weft_future_wait_for", future_wait_for, WEFT_EINVAL},
    {"weft_future_info", future_info, WEFT_EINVAL},
    {"weft_future_cancel", future_cancel, WEFT_EINVAL},
    {"weft_run", run, WEFT_EINVAL},
    {"weft_run", run_n, WEFT_EINVAL},
    {"weft_run_until", run_until, WEFT_EINVAL},
    {"weft_run_many", run_many, WEFT_EINVAL},
    {"weft_precede", precede, WEFT_EINVAL},
    {"weft_linearize", linearize, WEFT_EINVAL},
    {"weft_task_set_priority", task_set_priority, WEFT_EINVAL},
    {"weft_task_set_name", task_set_name, WEFT_EINVAL},
    {"weft_task_erase", task_erase, WEFT_EINVAL},
    {"weft_emplace", emplace, WEFT_EINVAL},
    {"weft_placeholder", placeholder, WEFT_EINVAL},
    {"weft_taskflow_validate", taskflow_validate, WEFT_EINVAL},
    {"weft_taskflow_dump_dot", taskflow_dump_dot, WEFT_EINVAL},
    {"weft_work_create", work_create, WEFT_EINVAL},
    {"weft_params_set_int", params_set_int, WEFT_EINVAL},
    {"weft_async", async, WEFT_EINVAL},
    {"weft_silent_async", silent_async, WEFT_EINVAL},
    {"weft_semaphore_create", semaphore_create, WEFT_EINVAL},
    {"weft_future_then", future_then, WEFT_EINVAL},
    {"weft_cancel_token_cancel", token_cancel, WEFT_EINVAL},
    {"weft_cancel_after", cancel_after, WEFT_EINVAL},
    {"weft_cancel_token_on_cancel", token_on_cancel, WEFT_EINVAL},
    {"weft_deadline_begin", deadline_begin, WEFT_EINVAL},
    {"weft_run_root", run_root, WEFT_EINVAL},
    {"weft_parallel_for", parallel_for, WEFT_EINVAL},
    {"weft_parallel_reduce", parallel_reduce, WEFT_EINVAL},
    {"weft_parallel_sort_ops", parallel_sort_ops, WEFT_EINVAL},
    {"weft_algo_set_priority", algo_set_priority, WEFT_EINVAL},
    {"weft_sched_remove", sched_remove, WEFT_EINVAL},
    {"weft_sched_get_stats", sched_get_stats, WEFT_EINVAL},
    {"weft_topology_detect", topology_detect, WEFT_EINVAL},
    {"weft_numa_alloc", numa_alloc, WEFT_EINVAL},
    {"weft_metrics_enable", metrics_enable, WEFT_EINVAL},
    {"weft_executor_metrics", executor_metrics, WEFT_EINVAL},
    {"weft_profiler_write_json", profiler_write_json, WEFT_EINVAL},
    {"weft_pipeline_reset", pipeline_reset, WEFT_EINVAL},
    {"weft_pipeline_set_priority", pipeline_set_priority, WEFT_EINVAL},
    {"weft_gpu_stream_create", gpu_stream_create, WEFT_EINVAL},
    {"weft_executor_dump_fd", executor_dump_fd_esys, WEFT_ESYS},
    {"weft_numa_alloc", numa_alloc_enomem, WEFT_ENOMEM},
    {"weft_numa_alloc_interleaved", numa_alloc_interleaved_enomem, WEFT_ENOMEM},
};

/* Sets the message by a failure of a call other than `fn`; returns a copy. */
static void set_sentinel(const char *fn, char *out, size_t len) {
    if (strcmp(fn, "weft_emplace") != 0) {
        (void)weft_emplace(tf, NULL, NULL); /* "weft_emplace: task function is NULL ..." */
        ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EINVAL);
    } else {
        weft_status st = WEFT_OK;
        ASSERT_NULL(weft_semaphore_create(0, &st));
        ASSERT_STATUS(st, WEFT_EINVAL);
    }
    snprintf(out, len, "%s", weft_last_error_message());
    ASSERT_TRUE(out[0] != 0);
}

TEST(every_failing_call_names_itself_not_an_earlier_failure) {
    weft_status st;
    tf = weft_taskflow_create("t", &st);
    ASSERT_NOT_NULL(tf);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(tf, work, NULL)));
    int bad = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char sentinel[256];
        set_sentinel(rows[i].fn, sentinel, sizeof sentinel);
        int got = rows[i].call();
        const char *msg = weft_last_error_message();
        bool ok = got == rows[i].want && msg[0] && strstr(msg, rows[i].fn) && strcmp(msg, sentinel) != 0;
        if (!ok) {
            fprintf(stderr, "row %zu (%s): got %s, want %s; message \"%s\"%s\n", i, rows[i].fn, weft_errname(got),
                    weft_errname(rows[i].want), msg, strcmp(msg, sentinel) == 0 ? " (the sentinel: stale)" : "");
            bad++;
        }
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_EQ(bad, 0);
}

/* The message format: "<function>: <what is wrong>". */
TEST(a_plain_failure_says_function_then_what_is_wrong) {
    ASSERT_STATUS(weft_future_wait(NULL), WEFT_EINVAL);
    ASSERT_STREQ(weft_last_error_message(), "weft_future_wait: f is NULL");
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_semaphore_create(0, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_STREQ(weft_last_error_message(), "weft_semaphore_create: max is 0 (1 to INTPTR_MAX)");
}

/* A deeper call's detail is kept: weft_run_and_wait passes weft_run's on. */
TEST(a_wrapper_keeps_the_detail_of_the_call_that_failed) {
    ASSERT_STATUS(weft_run_and_wait(NULL, NULL), WEFT_EINVAL);
    ASSERT_STREQ(weft_last_error_message(), "weft_run: tf is NULL");
}

/* Normal outcomes are not failures: they leave the message alone. */
TEST(normal_outcomes_leave_the_message_alone) {
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_semaphore_create(0, &st));
    char before[256];
    snprintf(before, sizeof before, "%s", weft_last_error_message());
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    ASSERT_NOT_NULL(ex);
    weft_cancel_token *t = weft_cancel_token_create(NULL, &st);
    ASSERT_NOT_NULL(t);
    ASSERT_OK(weft_cancel_token_cancel(t));
    ASSERT_STATUS(weft_cancel_token_cancel(t), WEFT_ECANCELED); /* already cancelled */
    weft_cancel_token_destroy(t);
    weft_future *f = NULL;
    ASSERT_OK(weft_async(ex, work, NULL, &f));
    ASSERT_OK(weft_future_wait(f));
    ASSERT_STATUS(weft_future_cancel(f), WEFT_ENOENT); /* it had finished */
    weft_future_destroy(f);
    weft_executor_destroy(ex);
    ASSERT_STREQ(weft_last_error_message(), before);
}

/* A member weft_run_many could not submit is the set's to report
 * (weft_run_many_status), and the call succeeds: the thread's message stays as
 * it was (R3, a failure weft handles itself).  weft_run_many_and_wait returns
 * that member's status, so there the member's message is the one to read. */
TEST(a_set_with_a_member_it_could_not_submit_keeps_the_message_and_and_wait_names_the_member) {
    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *ok = weft_taskflow_create("ok", &st);
    ASSERT_NOT_NULL(ok);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(ok, work, NULL)));
    weft_taskflow *tfs[2] = {ok, NULL};
    ASSERT_STATUS(weft_future_wait(NULL), WEFT_EINVAL);
    weft_future *all = NULL;
    ASSERT_OK(weft_run_many(ex, tfs, 2, &all));
    ASSERT_STREQ(weft_last_error_message(), "weft_future_wait: f is NULL");
    ASSERT_STATUS(weft_run_many_status(all, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_future_wait(all), WEFT_ETASK);
    weft_future_destroy(all);
    ASSERT_STATUS(weft_future_wait(NULL), WEFT_EINVAL);
    weft_status each[2];
    ASSERT_STATUS(weft_run_many_and_wait(ex, tfs, 2, each), WEFT_EINVAL);
    ASSERT_STREQ(weft_last_error_message(), "weft_run: tf is NULL");
    ASSERT_OK(each[0]);
    ASSERT_STATUS(each[1], WEFT_EINVAL);
    ASSERT_OK(weft_taskflow_destroy(ok));
    weft_executor_destroy(ex);
}
