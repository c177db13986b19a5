/* errors: what weft reports when things go wrong.  SPDX-License-Identifier: MIT
 *
 *   1. a task fails: the run's status, the task's code, its name, what was skipped
 *   2. a cycle: weft_run refuses the graph and says which task is on the cycle
 *   3. cancel: stop a run that is going; changing a running graph gives WEFT_EBUSY
 *   4. bad arguments: WEFT_EINVAL, never a crash
 *
 * Every weft call that can fail returns a weft_status: WEFT_OK (0) or a negative
 * WEFT_E* code; weft_strerror gives a sentence for it and weft_errname its name.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <weft.h>

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void check(weft_status st, const char *what) {
    if (st != WEFT_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, weft_strerror(st), weft_errname(st));
        exit(1);
    }
}

/* Exits unless `got` is the status the example expects. */
static void expect(weft_status got, weft_status want, const char *what) {
    if (got != want) {
        fprintf(stderr, "%s: expected %s, got %s (%s)\n", what, weft_errname(want), weft_errname(got),
                weft_strerror(got));
        exit(1);
    }
}

static void sleep_ms(long ms) {
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

static weft_taskflow *new_taskflow(const char *name) {
    weft_status st;
    weft_taskflow *tf = weft_taskflow_create(name, &st);
    check(tf ? WEFT_OK : st, "weft_taskflow_create");
    return tf;
}

static weft_task add_task(weft_taskflow *tf, weft_task_fn fn, void *arg, const char *name) {
    weft_task t = weft_emplace(tf, fn, arg);
    check(weft_task_is_null(t) ? weft_taskflow_last_error(tf) : WEFT_OK, "weft_emplace");
    check(weft_task_set_name(t, name), "weft_task_set_name");
    return t;
}

/* ---- tasks ------------------------------------------------------------------ */

static int ok(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}

/* A task reports failure by returning non-zero; the value is passed on as is. */
static int parse(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    printf("   (parse: the input is malformed, returning 42)\n");
    return 42;
}

/* Runs until its run is cancelled, like a long computation that checks
 * weft_ctx_cancelled now and then to stop early. */
static int long_job(weft_ctx *ctx, void *arg) {
    atomic_bool *started = arg;
    atomic_store(started, true);
    while (!weft_ctx_cancelled(ctx)) sleep_ms(1);
    return 0;
}

static void print_info(weft_future *f) {
    weft_run_info info;
    check(weft_future_info(f, &info), "weft_future_info");
    printf("   run info: status %s (\"%s\"), task code %d, failed task '%s', %" PRIu64
           " tasks skipped\n",
           weft_errname(info.status), weft_strerror(info.status), info.task_code, info.failed_task,
           info.skipped);
}

/* ---- the cases -------------------------------------------------------------- */

/* load -> parse -> { index, count } -> report, where parse fails. */
static void failing_task(weft_executor *ex) {
    printf("1. a task fails\n");
    weft_taskflow *tf = new_taskflow("pipeline");
    weft_task load = add_task(tf, ok, NULL, "load");
    weft_task prs = add_task(tf, parse, NULL, "parse");
    weft_task index = add_task(tf, ok, NULL, "index");
    weft_task count = add_task(tf, ok, NULL, "count");
    weft_task report = add_task(tf, ok, NULL, "report");
    check(weft_precede(load, prs), "weft_precede");
    check(weft_precede_many(prs, (weft_task[]){ index, count }, 2), "weft_precede_many");
    check(weft_succeed_many(report, (weft_task[]){ index, count }, 2), "weft_succeed_many");

    weft_future *f;
    check(weft_run(ex, tf, &f), "weft_run");
    weft_status st = weft_future_wait(f);
    printf("   weft_future_wait -> %s\n", weft_errname(st));
    print_info(f);
    weft_run_info info;
    check(weft_future_info(f, &info), "weft_future_info");
    expect(st, WEFT_ETASK, "the failing run");
    if (info.task_code != 42 || info.skipped != 3) {
        fprintf(stderr, "expected task code 42 and 3 skipped tasks\n");
        exit(1);
    }
    weft_future_destroy(f);

    /* weft_run_and_wait reports the same status directly. */
    expect(weft_run_and_wait(ex, tf), WEFT_ETASK, "weft_run_and_wait");
    printf("   weft_run_and_wait -> %s as well\n", weft_errname(WEFT_ETASK));
    check(weft_taskflow_destroy(tf), "weft_taskflow_destroy");
}

/* a -> b -> c -> a can never start. */
static void cycle(weft_executor *ex) {
    printf("2. a cycle\n");
    weft_taskflow *tf = new_taskflow("loop");
    weft_task a = add_task(tf, ok, NULL, "a");
    weft_task b = add_task(tf, ok, NULL, "b");
    weft_task c = add_task(tf, ok, NULL, "c");
    check(weft_precede(a, b), "weft_precede");
    check(weft_precede(b, c), "weft_precede");
    check(weft_precede(c, a), "weft_precede"); /* allowed: edges are checked at run time */

    weft_future *f = NULL;
    weft_status st = weft_run(ex, tf, &f); /* nothing is submitted, no future made */
    printf("   weft_run -> %s: %s\n", weft_errname(st), weft_taskflow_error_message(tf));
    expect(st, WEFT_ECYCLE, "running a cycle");

    weft_task on_cycle;
    st = weft_taskflow_validate(tf, &on_cycle); /* the same check, without running */
    printf("   weft_taskflow_validate -> %s, task on the cycle: '%s'\n", weft_errname(st),
           weft_task_name(on_cycle));
    expect(st, WEFT_ECYCLE, "validating a cycle");
    check(weft_taskflow_destroy(tf), "weft_taskflow_destroy");
}

/* long_job -> { after1, after2 }: cancel while long_job runs. */
static void cancel(weft_executor *ex) {
    printf("3. cancel\n");
    atomic_bool started = false;
    weft_taskflow *tf = new_taskflow("long");
    weft_task job = add_task(tf, long_job, &started, "long job");
    check(weft_precede_many(job, (weft_task[]){ add_task(tf, ok, NULL, "after1"),
                                                add_task(tf, ok, NULL, "after2") },
                            2),
          "weft_precede_many");

    weft_future *f;
    check(weft_run(ex, tf, &f), "weft_run");
    while (!atomic_load(&started)) sleep_ms(1);

    /* While the run is going the graph cannot change. */
    weft_task extra = weft_emplace(tf, ok, NULL);
    printf("   weft_emplace during the run -> %s task, last error %s\n",
           weft_task_is_null(extra) ? "null" : "a", weft_errname(weft_taskflow_last_error(tf)));
    expect(weft_taskflow_last_error(tf), WEFT_EBUSY, "weft_emplace on a running graph");
    weft_status st = weft_taskflow_destroy(tf);
    printf("   weft_taskflow_destroy during the run -> %s\n", weft_errname(st));
    expect(st, WEFT_EBUSY, "weft_taskflow_destroy on a running graph");

    st = weft_future_cancel(f);
    printf("   weft_future_cancel -> %s\n", weft_errname(st));
    check(st, "weft_future_cancel");
    st = weft_future_wait(f);
    printf("   weft_future_wait -> %s\n", weft_errname(st));
    print_info(f);
    expect(st, WEFT_ECANCELED, "the cancelled run");
    st = weft_future_cancel(f);
    printf("   weft_future_cancel again -> %s (the run had ended)\n", weft_errname(st));
    expect(st, WEFT_ENOENT, "cancelling a finished run");
    weft_future_destroy(f);
    check(weft_taskflow_destroy(tf), "weft_taskflow_destroy"); /* now it works */
}

static void bad_arguments(weft_executor *ex) {
    printf("4. bad arguments\n");
    weft_status st = weft_precede(WEFT_TASK_NULL, WEFT_TASK_NULL);
    printf("   weft_precede(null task, null task) -> %s: %s\n", weft_errname(st), weft_strerror(st));
    expect(st, WEFT_EINVAL, "weft_precede with null tasks");
    st = weft_run(ex, NULL, NULL);
    printf("   weft_run(ex, NULL, NULL)           -> %s\n", weft_errname(st));
    expect(st, WEFT_EINVAL, "weft_run without a taskflow");
    weft_executor *big = weft_executor_create(&(weft_executor_config){ .workers = 100000 }, &st);
    printf("   weft_executor_create(.workers = 100000) -> %s, %s\n", big ? "an executor" : "NULL",
           weft_errname(st));
    weft_executor_destroy(big);
    expect(st, WEFT_EINVAL, "too many workers");
}

int main(void) {
    weft_status st;
    weft_executor *ex = weft_executor_create(NULL, &st);
    check(ex ? WEFT_OK : st, "weft_executor_create");

    failing_task(ex);
    cycle(ex);
    cancel(ex);
    bad_arguments(ex);

    weft_executor_destroy(ex);
    printf("errors: every error was reported as expected\n");
    return 0;
}
