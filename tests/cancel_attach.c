/* Tokens attached to runs and async tasks: skipped tasks are counted, running
 * ones see the cancel and its reason through weft_ctx_check, "cancelled" is
 * told from "a sibling failed", pipelines stop with their run, deadlines stop
 * runs, tokens destroyed or executors destroyed with work attached, and the
 * race of a cancel with 10^6 tasks starting and finishing on 4 threads. */
#include "cancel_test.h"

/* A task that waits for the test to open the gate. */
struct gate {
    atomic_int entered, open;
};
static int wait_gate(weft_ctx *cx, void *p) {
    struct gate *g = p;
    atomic_store(&g->entered, 1);
    while (!atomic_load(&g->open)) sleep_us(100);
    return 0;
}
static int count_run(weft_ctx *cx, void *p) {
    atomic_fetch_add((atomic_int *)p, 1);
    return 0;
}

TEST(cancel_attached_token_skips_unstarted_tasks_of_a_run_and_counts_them) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("chain");
    struct gate g = {0};
    atomic_int ran = 0;
    weft_task prev = must_emplace(tf, wait_gate, &g);
    for (int i = 0; i < 9; i++) {
        weft_task t = must_emplace(tf, count_run, &ran);
        ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    weft_cancel_token *tok = new_token();
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_OK(weft_cancel_attach(tok, f));
    ASSERT_TRUE(wait_flag(&g.entered, 1, 5));
    ASSERT_OK(weft_cancel_token_cancel_with(tok, "user pressed stop"));
    atomic_store(&g.open, 1);
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.skipped, 9);
    ASSERT_EQ(atomic_load(&ran), 0);
    weft_future_destroy(f);
    weft_cancel_token_destroy(tok);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* A running task polls weft_ctx_check and reports what it saw. */
struct poll {
    atomic_int started;
    weft_status seen;
    char reason[64], message[64];
};
static int poll_check(weft_ctx *cx, void *p) {
    struct poll *s = p;
    atomic_store(&s->started, 1);
    weft_status st;
    uint64_t t0 = now_ns();
    while ((st = weft_ctx_check(cx)) == WEFT_OK && now_ns() - t0 < 10 * SEC) {
    }
    s->seen = st;
    snprintf(s->reason, sizeof s->reason, "%s", weft_ctx_cancel_reason(cx));
    snprintf(s->message, sizeof s->message, "%s", weft_last_error_message());
    return 0;
}

TEST(cancel_running_task_sees_the_cancel_and_its_reason) {
    weft_executor *ex = make_executor(2);
    struct poll s = {0};
    weft_cancel_token *tok = new_token();
    weft_future *f;
    ASSERT_OK(weft_async(ex, poll_check, &s, &f));
    ASSERT_OK(weft_cancel_attach(tok, f));
    ASSERT_TRUE(wait_flag(&s.started, 1, 5));
    ASSERT_OK(weft_cancel_token_cancel_with(tok, "client disconnected"));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    ASSERT_STATUS(s.seen, WEFT_ECANCELED);
    ASSERT_STREQ(s.reason, "client disconnected");
    ASSERT_STREQ(s.message, "client disconnected");
    weft_future_destroy(f);
    weft_cancel_token_destroy(tok);
    weft_executor_destroy(ex);
}

static int fail_after_start(weft_ctx *cx, void *p) {
    struct poll *s = p;
    while (!atomic_load(&s->started)) sleep_us(100);
    return 42;
}

TEST(cancel_ctx_check_tells_a_failed_sibling_from_a_cancel) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("siblings");
    struct poll s = {0};
    must_emplace(tf, poll_check, &s);
    must_emplace(tf, fail_after_start, &s);
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ETASK);
    ASSERT_STATUS(s.seen, WEFT_ETASK); /* not WEFT_ECANCELED: nobody cancelled */
    ASSERT_STREQ(s.reason, "");
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

TEST(cancel_ctx_check_reports_a_plain_future_cancel_without_reason) {
    weft_executor *ex = make_executor(2);
    struct poll s = {0};
    weft_future *f;
    ASSERT_OK(weft_async(ex, poll_check, &s, &f));
    ASSERT_TRUE(wait_flag(&s.started, 1, 5));
    ASSERT_OK(weft_future_cancel(f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    ASSERT_STATUS(s.seen, WEFT_ECANCELED);
    ASSERT_STREQ(s.reason, "");
    ASSERT_STREQ(s.message, "cancelled");
    weft_future_destroy(f);
    weft_executor_destroy(ex);
}

TEST(cancel_one_token_stops_forty_queued_async_tasks) {
    weft_executor *ex = make_executor(1);
    struct gate g = {0};
    atomic_int ran = 0;
    weft_future *block, *f[40];
    ASSERT_OK(weft_async(ex, wait_gate, &g, &block));
    ASSERT_TRUE(wait_flag(&g.entered, 1, 5));
    weft_cancel_token *tok = new_token();
    for (int i = 0; i < 40; i++) {
        ASSERT_OK(weft_async(ex, count_run, &ran, &f[i]));
        ASSERT_OK(weft_cancel_attach(tok, f[i]));
        weft_future_destroy(f[i]); /* the attachment keeps the record alive */
        f[i] = NULL;
    }
    weft_cancel_token_destroy(tok); /* destroyed before it fires: tasks run */
    tok = new_token();
    for (int i = 0; i < 40; i++) {
        ASSERT_OK(weft_async(ex, count_run, &ran, &f[i]));
        ASSERT_OK(weft_cancel_attach(tok, f[i]));
    }
    ASSERT_OK(weft_cancel_token_cancel(tok));
    atomic_store(&g.open, 1);
    for (int i = 0; i < 40; i++) {
        ASSERT_STATUS(weft_future_wait(f[i]), WEFT_ECANCELED);
        weft_future_destroy(f[i]);
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran), 40); /* only the first forty */
    ASSERT_OK(weft_future_wait(block));
    weft_future_destroy(block);
    weft_cancel_token_destroy(tok);
    weft_executor_destroy(ex);
}

TEST(cancelled_async_task_counts_itself_skipped_in_its_run_info) {
    weft_executor *ex = make_executor(1);
    struct gate g = {0};
    atomic_int ran = 0;
    weft_future *block, *f, *g2;
    ASSERT_OK(weft_async(ex, wait_gate, &g, &block));
    ASSERT_TRUE(wait_flag(&g.entered, 1, 5));
    weft_cancel_token *tok = new_token();
    ASSERT_OK(weft_async(ex, count_run, &ran, &f));
    ASSERT_OK(weft_async(ex, count_run, &ran, &g2)); /* not cancelled */
    ASSERT_OK(weft_cancel_attach(tok, f));
    ASSERT_OK(weft_cancel_token_cancel(tok));
    atomic_store(&g.open, 1);
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    ASSERT_OK(weft_future_wait(g2));
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.skipped, 1);
    ASSERT_OK(weft_future_info(g2, &info));
    ASSERT_EQ(info.skipped, 0);
    ASSERT_EQ(atomic_load(&ran), 1);
    weft_future_destroy(f);
    weft_future_destroy(g2);
    ASSERT_OK(weft_future_wait(block));
    weft_future_destroy(block);
    weft_cancel_token_destroy(tok);
    weft_executor_destroy(ex);
}

TEST(cancel_attach_to_a_cancelled_token_cancels_at_once) {
    weft_executor *ex = make_executor(1);
    struct gate g = {0};
    weft_future *block, *f;
    atomic_int ran = 0;
    ASSERT_OK(weft_async(ex, wait_gate, &g, &block));
    ASSERT_OK(weft_async(ex, count_run, &ran, &f));
    weft_cancel_token *tok = new_token();
    ASSERT_OK(weft_cancel_token_cancel(tok));
    ASSERT_OK(weft_cancel_attach(tok, f));
    atomic_store(&g.open, 1);
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    ASSERT_EQ(atomic_load(&ran), 0);
    weft_future_destroy(f);
    ASSERT_OK(weft_future_wait(block));
    weft_future_destroy(block);
    weft_cancel_token_destroy(tok);
    weft_executor_destroy(ex);
}

/* A pipeline that never stops by itself ends when a deadline on its run's
 * token fires. */
static int endless(weft_pipeflow *pf, void *arg) {
    sleep_us(50);
    return 0;
}

TEST(cancel_deadline_stops_a_pipeline_run) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("endless");
    weft_stage stages[2] = {{WEFT_STAGE_SERIAL, endless, NULL, "gen"}, {WEFT_STAGE_PARALLEL, endless, NULL, "work"}};
    weft_status st;
    weft_pipeline *p = weft_pipeline_create(4, stages, 2, &st);
    ASSERT_OK(st);
    weft_pipeline_emplace(tf, p);
    weft_cancel_token *tok = new_token();
    uint64_t t0 = now_ns();
    ASSERT_OK(weft_cancel_after(tok, 30 * MS));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_OK(weft_cancel_attach(tok, f));
    ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ECANCELED);
    ASSERT_GE(now_ns() - t0, 30 * MS);
    ASSERT_GT(weft_pipeline_num_tokens(p), 0);
    weft_future_destroy(f);
    weft_cancel_token_destroy(tok);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(ex);
}

/* A task cancels its own run's token; the rest of the run is skipped. */
struct self_cancel {
    weft_cancel_token *tok;
    atomic_int ran, attached;
};
static int cancel_own(weft_ctx *cx, void *p) {
    struct self_cancel *s = p;
    while (!atomic_load(&s->attached)) sleep_us(100);
    atomic_fetch_add(&s->ran, 1);
    ASSERT_OK(weft_cancel_token_cancel_with(s->tok, "from inside"));
    ASSERT_STATUS(weft_ctx_check(cx), WEFT_ECANCELED);
    ASSERT_STREQ(weft_ctx_cancel_reason(cx), "from inside");
    return 0;
}

TEST(cancel_from_inside_a_task_stops_its_run) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("self");
    struct self_cancel s = {.tok = new_token()};
    weft_task a = must_emplace(tf, cancel_own, &s);
    weft_task b = must_emplace(tf, cancel_own, &s);
    ASSERT_OK(weft_precede(a, b));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_OK(weft_cancel_attach(s.tok, f));
    atomic_store(&s.attached, 1);
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    ASSERT_EQ(atomic_load(&s.ran), 1);
    weft_future_destroy(f);
    weft_cancel_token_destroy(s.tok);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

TEST(cancel_executor_destroyed_with_deadlines_armed_on_attached_tokens) {
    weft_executor *ex = make_executor(2);
    weft_cancel_token *tok = new_token();
    atomic_int ran = 0;
    weft_future *f;
    ASSERT_OK(weft_async(ex, count_run, &ran, &f));
    ASSERT_OK(weft_cancel_attach(tok, f));
    ASSERT_OK(weft_cancel_after(tok, 20 * MS));
    weft_future_destroy(f);
    weft_executor_destroy(ex); /* the deadline fires after: on a finished future */
    uint64_t t0 = now_ns();
    while (!weft_cancel_token_is_cancelled(tok) && now_ns() - t0 < 5 * SEC) sleep_us(500);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(tok));
    ASSERT_EQ(atomic_load(&ran), 1);
    weft_cancel_token_destroy(tok);
}

/* Attaching a long-lived token to many short runs keeps memory bounded: the
 * links of finished futures are swept. */
TEST(cancel_long_lived_token_does_not_keep_finished_work) {
    weft_executor *ex = make_executor(2);
    weft_cancel_token *tok = new_token();
    atomic_int ran = 0;
    int n = (int)test_scale(20000);
    for (int i = 0; i < n; i++) {
        weft_future *f;
        ASSERT_OK(weft_async(ex, count_run, &ran, &f));
        ASSERT_OK(weft_cancel_attach(tok, f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
    }
    ASSERT_EQ(atomic_load(&ran), n);
    weft_cancel_token_destroy(tok); /* ASan: nothing leaked, nothing left */
    weft_executor_destroy(ex);
}

/* ---- cancel racing with 10^6 tasks starting and finishing ---- */

enum { RACE_THREADS = 4, RACE_WIDTH = 1000 };

struct race {
    weft_executor *ex;
    weft_cancel_token *tok;
    uint64_t runs_per_thread, half;
    atomic_uchar *ran; /* [thread][run][task] */
    atomic_ullong skipped, ran_total, doubles;
};
struct race_task {
    struct race *r;
    atomic_uchar *flag;
};
static int race_body(weft_ctx *cx, void *p) {
    struct race_task *t = p;
    if (atomic_exchange(t->flag, 1) != 0) atomic_fetch_add(&t->r->doubles, 1);
    /* The task that completes half the work cancels, while the rest is in
     * flight or queued.  main used to poll for half way every 100 µs: on a
     * loaded machine (CI, ASan's smaller count) every run had ended before it
     * woke, and nothing was left to skip. */
    if (atomic_fetch_add_explicit(&t->r->ran_total, 1, memory_order_relaxed) + 1 == t->r->half)
        (void)weft_cancel_token_cancel_with(t->r->tok, "half way");
    return 0;
}
struct race_arg {
    struct race *r;
    int id;
};
static void *race_thread(void *p) {
    struct race_arg *a = p;
    struct race *r = a->r;
    weft_taskflow *tf = make_taskflow("race");
    struct race_task *tasks = calloc(RACE_WIDTH, sizeof *tasks);
    for (int k = 0; k < RACE_WIDTH; k++) {
        tasks[k].r = r;
        must_emplace(tf, race_body, &tasks[k]);
    }
    for (uint64_t run = 0; run < r->runs_per_thread; run++) {
        atomic_uchar *base = r->ran + ((uint64_t)a->id * r->runs_per_thread + run) * RACE_WIDTH;
        for (int k = 0; k < RACE_WIDTH; k++) tasks[k].flag = base + k;
        weft_future *f;
        ASSERT_OK(weft_run(r->ex, tf, &f));
        ASSERT_OK(weft_cancel_attach(r->tok, f));
        weft_status st = weft_future_wait(f);
        if (st != WEFT_OK && st != WEFT_ECANCELED) TEST_FAIL_("run status %d", st);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        atomic_fetch_add(&r->skipped, info.skipped);
        weft_future_destroy(f);
    }
    weft_taskflow_destroy(tf);
    free(tasks);
    return NULL;
}

TEST(cancel_racing_a_million_tasks_each_ran_or_was_skipped_never_both) {
    struct race r = {.ex = make_executor(4), .tok = new_token()};
    uint64_t total = test_scale(1000000);
    r.runs_per_thread = total / (RACE_THREADS * RACE_WIDTH);
    if (r.runs_per_thread < 4) r.runs_per_thread = 4;
    total = r.runs_per_thread * RACE_THREADS * RACE_WIDTH;
    r.half = total / 2;
    r.ran = calloc(total, 1);
    pthread_t th[RACE_THREADS];
    struct race_arg args[RACE_THREADS];
    for (int i = 0; i < RACE_THREADS; i++) {
        args[i] = (struct race_arg){&r, i};
        pthread_create(&th[i], NULL, race_thread, &args[i]);
    }
    /* Cancelled when half the tasks have run (race_body). */
    for (int i = 0; i < RACE_THREADS; i++) pthread_join(th[i], NULL);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(r.tok));
    uint64_t ran = 0;
    for (uint64_t i = 0; i < total; i++) ran += atomic_load(&r.ran[i]);
    ASSERT_EQ(atomic_load(&r.doubles), 0);
    ASSERT_EQ(ran, atomic_load(&r.ran_total));
    ASSERT_EQ(ran + atomic_load(&r.skipped), total); /* none lost, none both */
    ASSERT_GT(atomic_load(&r.skipped), 0);
    free(r.ran);
    weft_cancel_token_destroy(r.tok);
    weft_executor_destroy(r.ex);
}
