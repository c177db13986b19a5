/* Runs that fail or are cancelled: which tasks run, what the future reports, and
 * that the taskflow runs normally afterwards. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <stdatomic.h>
#include <time.h>

/* A task of the scenarios below: counts its runs, and returns `code` (when
 * armed), or blocks until released. */
struct probe {
    atomic_int runs;
    atomic_int code;       /* returned when non-zero */
    atomic_int block;      /* wait for *release before returning */
    atomic_int *release;
    atomic_int *started;   /* set to 1 on entry when not NULL */
    atomic_int saw_cancel; /* weft_ctx_cancelled was true before returning */
};

static int probe_task(weft_ctx *ctx, void *arg) {
    struct probe *p = arg;
    atomic_fetch_add(&p->runs, 1);
    if (p->started) atomic_store(p->started, 1);
    if (atomic_load(&p->block)) {
        wait_flag(p->release, 1, 10.0);
        if (weft_ctx_cancelled(ctx)) atomic_store(&p->saw_cancel, 1);
    }
    return atomic_load(&p->code);
}

static bool wait_at_least(atomic_int *v, int n, double secs) {
    double deadline = now_s() + secs;
    while (atomic_load(v) < n) {
        if (now_s() > deadline) return false;
        sleep_us(50);
    }
    return true;
}

static int count_ran(struct probe *p, int n) {
    int ran = 0;
    for (int i = 0; i < n; i++) ran += atomic_load(&p[i].runs) > 0;
    return ran;
}

static void reset(struct probe *p, int n) {
    for (int i = 0; i < n; i++) atomic_store(&p[i].runs, 0);
}

/* ---- failing tasks ----------------------------------------------------------- */

TEST(failing_task_fails_the_run) {
    enum { N = 8, BAD = 3 };
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("chain");
    static struct probe p[N];
    weft_task t[N];
    for (int i = 0; i < N; i++) {
        t[i] = must_emplace(tf, probe_task, &p[i]);
        if (i) ASSERT_OK(weft_precede(t[i - 1], t[i]));
    }
    ASSERT_OK(weft_task_set_name(t[BAD], "boom"));
    atomic_store(&p[BAD].code, 42);

    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ETASK);
    ASSERT_STATUS(weft_future_status(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STATUS(info.status, WEFT_ETASK);
    ASSERT_EQ(info.task_code, 42);
    ASSERT_STREQ(info.failed_task, "boom");
    for (int i = 0; i < N; i++) ASSERT_EQ(atomic_load(&p[i].runs), i <= BAD ? 1 : 0);
    ASSERT_EQ(info.skipped, N - 1 - BAD);
    weft_future_destroy(f);

    /* run_and_wait reports it too. */
    reset(p, N);
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ETASK);
    ASSERT_EQ(count_ran(p, N), BAD + 1);

    /* Disarmed, the same taskflow runs every task again. */
    atomic_store(&p[BAD].code, 0);
    reset(p, N);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(count_ran(p, N), N);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(failing_task_in_a_wide_graph_skips_exactly_the_tasks_not_started) {
    enum { MID = 50, N = MID + 2, BAD = 17 };
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("wide");
    static struct probe p[N];
    weft_task root = must_emplace(tf, probe_task, &p[0]);
    weft_task sink = WEFT_TASK_NULL;
    weft_task mid[MID];
    for (int i = 0; i < MID; i++) {
        mid[i] = must_emplace(tf, probe_task, &p[1 + i]);
        ASSERT_OK(weft_precede(root, mid[i]));
        if (i % 2) ASSERT_OK(weft_task_set_name(mid[i], "named-mid"));
    }
    sink = must_emplace(tf, probe_task, &p[N - 1]);
    ASSERT_OK(weft_succeed_many(sink, mid, MID));
    /* mid[BAD - 1] (odd mids are named, so it is not) has task index BAD and
     * probe p[BAD]; it fails. */
    ASSERT_STREQ(weft_task_name(mid[BAD - 1]), "");
    ASSERT_EQ(weft_task_index(mid[BAD - 1]), BAD);
    atomic_store(&p[BAD].code, 7);

    for (int round = 0; round < 20; round++) {
        reset(p, N);
        weft_future *f = NULL;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ETASK);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.task_code, 7);
        char want[16];
        snprintf(want, sizeof want, "#%d", BAD);
        ASSERT_STREQ(info.failed_task, want);
        int ran = count_ran(p, N);
        ASSERT_EQ(atomic_load(&p[N - 1].runs), 0); /* the sink never runs */
        if (info.skipped != (uint64_t)(N - ran))
            TEST_FAIL_("round %d: %d of %d tasks ran but skipped = %" PRIu64, round, ran, N,
                       info.skipped);
        weft_future_destroy(f);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(first_error_wins_when_two_tasks_fail) {
    /* a and b start together; a fails first, then b (which sees the run marked
     * failed through weft_ctx_cancelled) fails too.  The run reports a. */
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow(NULL);
    atomic_int b_started = 0, a_returning = 0;
    struct probe pa = { .code = 1, .block = 1, .release = &b_started };
    struct probe pb = { .code = 2, .block = 1, .release = &a_returning, .started = &b_started };
    /* pa waits until b has started; then the test body flips a_returning. */
    weft_task a = must_emplace(tf, probe_task, &pa);
    weft_task b = must_emplace(tf, probe_task, &pb);
    ASSERT_OK(weft_task_set_name(a, "first-failure"));
    ASSERT_OK(weft_task_set_name(b, "second-failure"));

    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    /* a returns 1 as soon as b has started; wait until the run knows it failed
     * (b is still blocked, so the run is not over), then let b fail. */
    if (!wait_flag(&b_started, 1, 5.0))
        TEST_FAIL_("the two root tasks never ran at the same time on 2 workers");
    ASSERT_TRUE(wait_flag(&pa.runs, 1, 5.0));
    sleep_us(50000);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STATUS(info.status, WEFT_EAGAIN);
    atomic_store(&a_returning, 1);
    ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ETASK);
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, 1);
    ASSERT_STREQ(info.failed_task, "first-failure");
    ASSERT_EQ(info.skipped, 0);
    ASSERT_EQ(atomic_load(&pb.saw_cancel), 1); /* b could tell the run had failed */
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(failing_task_in_run_n_stops_the_iterations) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow(NULL);
    static struct probe p[3];
    weft_task t0 = must_emplace(tf, probe_task, &p[0]);
    weft_task t1 = must_emplace(tf, probe_task, &p[1]);
    weft_task t2 = must_emplace(tf, probe_task, &p[2]);
    ASSERT_OK(weft_precede(t0, t1));
    ASSERT_OK(weft_precede(t1, t2));
    ASSERT_OK(weft_task_set_name(t1, "middle"));
    /* Three good iterations, then t1 armed: the next run_n fails in its first
     * iteration and runs no more. */
    struct probe *mid = &p[1];
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, tf, 3, &f));
    ASSERT_OK(weft_future_wait_for(f, 10 * SEC));
    weft_future_destroy(f);
    atomic_store(&mid->code, 9);
    ASSERT_OK(weft_run_n(ex, tf, 10, &f));
    ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 0);
    ASSERT_EQ(info.task_code, 9);
    ASSERT_STREQ(info.failed_task, "middle");
    ASSERT_EQ(atomic_load(&p[0].runs), 4);
    ASSERT_EQ(atomic_load(&p[1].runs), 4);
    ASSERT_EQ(atomic_load(&p[2].runs), 3);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(failed_task_name_is_truncated_to_127_bytes) {
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow(NULL);
    struct probe p = { .code = -1 };
    weft_task t = must_emplace(tf, probe_task, &p);
    char name[301];
    for (int i = 0; i < 300; i++) name[i] = (char)('a' + i % 26);
    name[300] = '\0';
    ASSERT_OK(weft_task_set_name(t, name));
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ETASK);
    ASSERT_OK(weft_taskflow_destroy(tf)); /* the name lives in the future */
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, -1);
    ASSERT_EQ(strlen(info.failed_task), 127);
    ASSERT_EQ(strncmp(info.failed_task, name, 127), 0);
    weft_future_destroy(f);
    weft_executor_destroy(ex);
}

TEST(detached_failing_run_is_harmless) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow(NULL);
    struct probe p[2] = { { .code = 5 }, { 0 } };
    ASSERT_OK(weft_precede(must_emplace(tf, probe_task, &p[0]), must_emplace(tf, probe_task, &p[1])));
    ASSERT_OK(weft_run(ex, tf, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&p[0].runs), 1);
    ASSERT_EQ(atomic_load(&p[1].runs), 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- cancellation ------------------------------------------------------------ */

TEST(cancel_stops_new_tasks) {
    enum { N = 20, K = 5 };
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("cancel-chain");
    static struct probe p[N];
    atomic_int release = 0, k_started = 0;
    weft_task t[N];
    for (int i = 0; i < N; i++) {
        t[i] = must_emplace(tf, probe_task, &p[i]);
        if (i) ASSERT_OK(weft_precede(t[i - 1], t[i]));
    }
    p[K].block = 1;
    p[K].release = &release;
    p[K].started = &k_started;

    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&k_started, 1, 5.0));
    ASSERT_OK(weft_future_cancel(f));
    atomic_store(&release, 1);
    ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ECANCELED);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STATUS(info.status, WEFT_ECANCELED);
    ASSERT_EQ(info.task_code, 0);
    ASSERT_EQ(info.skipped, N - 1 - K);
    for (int i = 0; i < N; i++) ASSERT_EQ(atomic_load(&p[i].runs), i <= K ? 1 : 0);
    ASSERT_EQ(atomic_load(&p[K].saw_cancel), 1);
    ASSERT_STATUS(weft_future_cancel(f), WEFT_ENOENT);
    ASSERT_STATUS(weft_future_status(f), WEFT_ECANCELED);
    weft_future_destroy(f);

    /* The taskflow runs whole again. */
    p[K].block = 0;
    reset(p, N);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(count_ran(p, N), N);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(cancelled_queued_run_runs_nothing) {
    enum { N = 6 };
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow(NULL);
    static struct probe p[N];
    atomic_int release = 0, started = 0;
    weft_task t[N];
    for (int i = 0; i < N; i++) {
        t[i] = must_emplace(tf, probe_task, &p[i]);
        if (i) ASSERT_OK(weft_precede(t[i - 1], t[i]));
    }
    p[0].block = 1;
    p[0].release = &release;
    p[0].started = &started;

    /* Runs of one taskflow queue: the second waits behind the blocked first. */
    weft_future *f1 = NULL, *f2 = NULL;
    ASSERT_OK(weft_run(ex, tf, &f1));
    ASSERT_OK(weft_run(ex, tf, &f2));
    ASSERT_TRUE(wait_flag(&started, 1, 5.0));
    ASSERT_OK(weft_future_cancel(f2));
    atomic_store(&release, 1);
    ASSERT_OK(weft_future_wait_for(f1, 10 * SEC));
    ASSERT_STATUS(weft_future_wait_for(f2, 10 * SEC), WEFT_ECANCELED);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f2, &info));
    ASSERT_EQ(info.skipped, N);
    for (int i = 0; i < N; i++) ASSERT_EQ(atomic_load(&p[i].runs), 1);
    weft_future_destroy(f1);
    weft_future_destroy(f2);

    /* A cancelled run_n runs no iteration either. */
    atomic_store(&release, 0);
    atomic_store(&started, 0);
    reset(p, N);
    ASSERT_OK(weft_run(ex, tf, &f1));
    ASSERT_OK(weft_run_n(ex, tf, 5, &f2));
    ASSERT_TRUE(wait_flag(&started, 1, 5.0));
    ASSERT_OK(weft_future_cancel(f2));
    atomic_store(&release, 1);
    ASSERT_OK(weft_future_wait_for(f1, 10 * SEC));
    ASSERT_STATUS(weft_future_wait_for(f2, 10 * SEC), WEFT_ECANCELED);
    ASSERT_OK(weft_future_info(f2, &info));
    ASSERT_EQ(info.iterations, 0);
    for (int i = 0; i < N; i++) ASSERT_EQ(atomic_load(&p[i].runs), 1);
    weft_future_destroy(f1);
    weft_future_destroy(f2);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

struct slow {
    atomic_int runs;
};

static int slow_task(weft_ctx *ctx, void *arg) {
    sleep_us(1000);
    atomic_fetch_add(&((struct slow *)arg)->runs, 1);
    return 0;
}

/* The third run of the task holds its body until the test has cancelled the
 * run: the cancel comes after every task of the iteration has started. */
struct held {
    atomic_int runs;
    atomic_int entered, go;
};

static int held_task(weft_ctx *ctx, void *arg) {
    struct held *h = arg;
    if (atomic_load(&h->runs) == 2) {
        atomic_store(&h->entered, 1);
        while (!atomic_load(&h->go)) sleep_us(100);
    }
    atomic_fetch_add(&h->runs, 1);
    return 0;
}

TEST(run_n_counts_the_iteration_a_cancel_reached_after_all_its_tasks_started) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow(NULL);
    struct held h = { 0 };
    must_emplace(tf, held_task, &h);
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, tf, 100, &f));
    ASSERT_TRUE(wait_at_least(&h.entered, 1, 5.0));
    ASSERT_OK(weft_future_cancel(f));
    atomic_store(&h.go, 1);
    ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ECANCELED);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(atomic_load(&h.runs), 3);
    ASSERT_EQ(info.iterations, 3); /* the third ran whole: 2 before the fix */
    ASSERT_EQ(info.skipped, 0);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(cancel_stops_further_iterations_of_run_n) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow(NULL);
    struct slow s = { 0 };
    must_emplace(tf, slow_task, &s);
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, tf, 100000, &f));
    ASSERT_TRUE(wait_at_least(&s.runs, 3, 5.0));
    ASSERT_OK(weft_future_cancel(f));
    ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ECANCELED);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    int runs = atomic_load(&s.runs);
    /* Every run of the one task is an iteration whose every task ran, also
     * the last one when the cancel came while it was in its body (16 workers
     * of the device machine saw 2 iterations for 3 runs before). */
    ASSERT_TRUE(info.iterations >= 3);
    ASSERT_EQ(info.iterations, (uint64_t)runs);
    weft_future_destroy(f);
    sleep_us(20000);
    ASSERT_EQ(atomic_load(&s.runs), runs); /* nothing more ran */
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(destroying_executor_after_cancel_finishes_quickly) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow(NULL);
    struct slow s = { 0 };
    for (int i = 0; i < 4; i++) must_emplace(tf, slow_task, &s);
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, tf, 1000000, &f)); /* would take ~30 min */
    ASSERT_TRUE(wait_at_least(&s.runs, 1, 5.0));
    ASSERT_OK(weft_future_cancel(f));
    double t0 = now_s();
    weft_executor_destroy(ex);
    ASSERT_TRUE(now_s() - t0 < 5.0);
    ASSERT_STATUS(weft_future_status(f), WEFT_ECANCELED);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
}
