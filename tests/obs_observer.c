/* Observer callbacks and metrics. */
#define _GNU_SOURCE
#include "obs_util.h"

struct seen {
    atomic_int begins, ends, failed, bad;
    atomic_int depth[64];
    uint64_t run_id;
    _Atomic uint64_t last_run;
};

static void on_begin(void *user, const weft_task_event *ev) {
    struct seen *s = user;
    if (ev->outcome != WEFT_TASK_RUNNING || !ev->name || ev->worker >= 64) atomic_fetch_add(&s->bad, 1);
    if (s->run_id && ev->run_id != s->run_id) atomic_fetch_add(&s->bad, 1);
    if (weft_task_index(ev->task) != ev->index) atomic_fetch_add(&s->bad, 1);
    atomic_fetch_add(&s->depth[ev->worker % 64], 1);
    atomic_fetch_add(&s->begins, 1);
}

static void on_end(void *user, const weft_task_event *ev) {
    struct seen *s = user;
    if (ev->outcome == WEFT_TASK_FAILED) atomic_fetch_add(&s->failed, 1);
    else if (ev->outcome != WEFT_TASK_SUCCEEDED || ev->code != 0) atomic_fetch_add(&s->bad, 1);
    atomic_fetch_add(&s->depth[ev->worker % 64], -1);
    atomic_store(&s->last_run, ev->run_id);
    atomic_fetch_add(&s->ends, 1);
}

static weft_executor *make_observed(unsigned workers, struct seen *s) {
    weft_observer obs = { on_begin, on_end, s };
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers, .observer = &obs }, &err);
    if (!ex) TEST_FAIL_("weft_executor_create failed: %s", weft_errname(err));
    return ex; /* the observer struct was copied: leaving this scope is fine */
}

TEST(observer_sees_one_begin_and_end_per_task_with_its_run_id) {
    struct seen s = { 0 };
    weft_executor *ex = make_observed(4, &s);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(300, 8, &count, true);
    for (int k = 0; k < 3; k++) {
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
    }
    ASSERT_EQ(atomic_load(&s.begins), 900);
    ASSERT_EQ(atomic_load(&s.ends), 900);
    ASSERT_EQ(atomic_load(&s.bad), 0);
    ASSERT_EQ(atomic_load(&count), 900);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(observer_event_run_id_is_the_future_id) {
    struct seen s = { 0 };
    weft_executor *ex = make_observed(2, &s);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(10, 2, &count, false);
    weft_future *f1, *f2;
    ASSERT_OK(weft_run(ex, tf, &f1));
    ASSERT_OK(weft_future_wait(f1));
    ASSERT_OK(weft_run(ex, tf, &f2));
    uint64_t id1 = weft_future_id(f1), id2 = weft_future_id(f2);
    ASSERT_GT(id1, 0);
    ASSERT_GT(id2, id1);
    ASSERT_OK(weft_future_wait(f2));
    weft_future_destroy(f1);
    weft_future_destroy(f2);
    /* The events of a run carry its future's id. */
    weft_future *f3;
    ASSERT_OK(weft_run(ex, tf, &f3));
    ASSERT_OK(weft_future_wait(f3));
    ASSERT_EQ(atomic_load(&s.last_run), weft_future_id(f3));
    ASSERT_EQ(weft_future_id(NULL), 0);
    weft_future_destroy(f3);
    ASSERT_EQ(atomic_load(&s.bad), 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

static int fail_task(weft_ctx *ctx, void *arg) { return 7; }

TEST(failed_task_is_reported_and_later_tasks_counted_as_skipped) {
    struct seen s = { 0 };
    weft_executor *ex = make_observed(2, &s);
    weft_taskflow *tf = make_taskflow("fails");
    atomic_int count = 0;
    weft_task a = must_emplace(tf, fail_task, NULL);
    weft_task prev = a;
    for (int i = 0; i < 5; i++) {
        weft_task t = must_emplace(tf, bump, &count);
        ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ETASK);
    ASSERT_EQ(atomic_load(&s.failed), 1);
    ASSERT_EQ(atomic_load(&s.ends), 1);
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_EQ(m.total.tasks, 1);
    ASSERT_EQ(m.total.failed, 1);
    ASSERT_EQ(m.total.succeeded, 0);
    ASSERT_EQ(m.total.skipped, 5);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(metrics_totals_equal_the_tasks_run) {
    weft_status err;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 4, .metrics = true }, &err);
    ASSERT_NOT_NULL(ex);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(1000, 16, &count, false);
    weft_future *f;
    ASSERT_OK(weft_run_n(ex, tf, 5, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    weft_metrics m;
    weft_worker_metrics per[4];
    ASSERT_OK(weft_executor_metrics(ex, &m, per, 4));
    ASSERT_TRUE(m.enabled);
    ASSERT_EQ(m.workers, 4);
    ASSERT_EQ(m.total.tasks, 5000);
    ASSERT_EQ(m.total.succeeded, 5000);
    ASSERT_EQ(m.total.failed + m.total.skipped, 0);
    uint64_t sum = 0, hist = 0;
    for (int i = 0; i < 4; i++) {
        sum += per[i].tasks;
        ASSERT_TRUE(per[i].utilisation >= 0.0 && per[i].utilisation <= 1.0);
        ASSERT_EQ(per[i].busy_ns + per[i].idle_ns, m.wall_ns);
    }
    for (int b = 0; b < WEFT_METRICS_BUCKETS; b++) hist += m.total.histogram[b];
    ASSERT_EQ(sum, 5000);
    ASSERT_EQ(hist, 5000);
    ASSERT_GT(m.tasks_per_second, 0);
    ASSERT_GT(m.bytes, sizeof(weft_metrics));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(task_metrics_are_off_until_enabled_and_enabling_resets_them) {
    weft_executor *ex = make_executor(2);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(100, 4, &count, false);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_FALSE(m.enabled);
    ASSERT_EQ(m.total.tasks, 0);
    ASSERT_OK(weft_metrics_enable(ex, true));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_TRUE(m.enabled);
    ASSERT_EQ(m.total.tasks, 200);
    ASSERT_OK(weft_metrics_enable(ex, false));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_EQ(m.total.tasks, 200); /* kept, not counting */
    ASSERT_OK(weft_metrics_enable(ex, true));
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_EQ(m.total.tasks, 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

struct nest { weft_taskflow *inner; weft_status st; };

static int run_inner(weft_ctx *ctx, void *arg) {
    struct nest *n = arg;
    n->st = weft_run_and_wait(weft_ctx_executor(ctx), n->inner);
    return 0;
}

TEST(a_task_waiting_on_a_nested_run_is_timed_once_with_its_children) {
    struct seen s = { 0 };
    weft_executor *ex = make_observed(2, &s);
    atomic_int count = 0;
    struct nest n = { make_chains(50, 2, &count, false), WEFT_EAGAIN };
    weft_taskflow *outer = make_taskflow("outer");
    must_emplace(outer, run_inner, &n);
    ASSERT_OK(weft_run_and_wait(ex, outer));
    ASSERT_OK(n.st);
    ASSERT_EQ(atomic_load(&s.begins), 51);
    ASSERT_EQ(atomic_load(&s.ends), 51);
    for (int i = 0; i < 64; i++) ASSERT_EQ(atomic_load(&s.depth[i]), 0);
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_EQ(m.total.tasks, 51);
    ASSERT_LE(m.total.busy_ns, m.wall_ns * 2);
    ASSERT_OK(weft_taskflow_destroy(outer));
    ASSERT_OK(weft_taskflow_destroy(n.inner));
    weft_executor_destroy(ex);
}

TEST(steal_and_park_counters_move_without_task_metrics) {
    weft_executor *ex = make_executor(2);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(2000, 64, &count, false);
    for (int k = 0; k < 5; k++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        sleep_us(2000);
    }
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    /* Every run arrives through the injector: at least that one steal per run. */
    ASSERT_GE(m.total.steals, 5);
    ASSERT_GE(m.total.steal_fails, 1);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(metrics_reject_null_arguments) {
    weft_metrics m;
    ASSERT_STATUS(weft_executor_metrics(NULL, &m, NULL, 0), WEFT_EINVAL);
    weft_executor *ex = make_executor(1);
    ASSERT_STATUS(weft_executor_metrics(ex, NULL, NULL, 0), WEFT_EINVAL);
    ASSERT_STATUS(weft_executor_metrics(ex, &m, NULL, 3), WEFT_EINVAL);
    ASSERT_STATUS(weft_metrics_enable(NULL, true), WEFT_EINVAL);
    ASSERT_STATUS(weft_profiler_start(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_profiler_stop(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_profiler_write_json(ex, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_profiler_write_html(NULL, stdout), WEFT_EINVAL);
    ASSERT_STATUS(weft_profiler_save(ex, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_taskflow_dump_dot_profiled(NULL, ex, stdout), WEFT_EINVAL);
    ASSERT_STATUS(weft_executor_dump(NULL, stdout), WEFT_EINVAL);
    ASSERT_STATUS(weft_executor_dump_fd(ex, -1), WEFT_EINVAL);
    weft_executor_destroy(ex);
}

/* Spans of tasks run back to back start at the previous task's end (one clock
 * read per task); after the worker was idle, a task reads the clock again, so the
 * idle time is never counted as busy. */
static int spin_task(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t1);
    while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 20000);
    return 0;
}

/* Returns once ex's one worker has announced itself idle (weft_executor_waiters):
 * it has left its stretch of tasks, so its busy time is counted (worker.c
 * closes the stretch before the announcement). */
static void wait_parked(weft_executor *ex) {
    for (int k = 0; k < 20000 && weft_executor_waiters(ex) != 1; k++) sleep_us(500);
    ASSERT_EQ(weft_executor_waiters(ex), 1);
}

static uint64_t busy_now(weft_executor *ex) {
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    return m.total.busy_ns;
}

/* Busy time holds the tasks of a run and none of the idle time around it.
 * Each figure is bounded by what the clock saw around it, not by a fixed
 * slack: a run's busy time at most the wall time from its submission until
 * its worker was seen idle, and none at all while the worker sleeps.  (The
 * old bound, the tasks' 20 ms plus 150 ms, failed 2 runs in 20 under TSan on
 * a loaded 2-core machine: a task spins by the wall clock, so the time its
 * worker was preempted in it is busy time, 170 ms of it there.) */
TEST(busy_time_counts_back_to_back_tasks_and_not_the_idle_time_between_runs) {
    enum { N = 500 };
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .metrics = true }, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = make_taskflow("spins");
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < N; i++) {
        weft_task t = must_emplace(tf, spin_task, NULL);
        if (i) ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    uint64_t busy[2] = { 0 };
    for (int run = 0; run < 2; run++) {
        uint64_t before = busy_now(ex), t0 = now_ns();
        ASSERT_OK(weft_run_and_wait(ex, tf));
        wait_parked(ex);
        uint64_t wall = now_ns() - t0, b = busy_now(ex) - before;
        /* N tasks of at least 20 us each. */
        if (b < (uint64_t)N * 20000) TEST_FAIL_("run %d: busy %llu ns < the %d tasks' spinning", run, (unsigned long long)b, N);
        /* The worker's clock is not the test's: 1% and 1 ms for the difference. */
        if (b > wall + wall / 100 + MS)
            TEST_FAIL_("run %d: busy %llu ns > the %llu ns from its submission until its worker was idle", run,
                       (unsigned long long)b, (unsigned long long)wall);
        busy[run] = busy_now(ex);
        sleep_us(300000); /* the worker sleeps */
        if (busy_now(ex) != busy[run])
            TEST_FAIL_("busy time grew by %llu ns while the worker slept",
                       (unsigned long long)(busy_now(ex) - busy[run]));
    }
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_EQ(m.total.tasks, 2 * N);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
