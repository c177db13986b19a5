/* Running taskflows: run_n, run_until, concurrent and queued runs, nested waits,
 * futures (timeouts, readiness, detaching). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static void wait_ok(weft_future *f, const char *what) {
    weft_status st = weft_future_wait_for(f, 10 * SEC);
    if (st != WEFT_OK) TEST_FAIL_("%s: run ended with %s", what, weft_errname(st));
}

/* A task that blocks until *gate->release is set (at most 10 s, so a broken test
 * cannot hang), after saying that it started. */
struct gate {
    atomic_int started, release, ran;
    atomic_int saw_cancel;
};

static int gated(weft_ctx *ctx, void *arg) {
    struct gate *g = arg;
    atomic_fetch_add(&g->started, 1);
    wait_flag(&g->release, 1, 10.0);
    atomic_fetch_add(&g->ran, 1);
    return 0;
}

/* ---- run_n / run_until ------------------------------------------------------- */

/* Diamond a -> {b, c} -> d whose tasks check, each iteration, that the previous
 * iteration has finished and that their own predecessors have run. */
struct iter_state {
    atomic_int a, b, c, d;
    atomic_int violations;
    atomic_int in_task; /* tasks currently running */
};

static int iter_a(weft_ctx *ctx, void *arg) {
    struct iter_state *s = arg;
    atomic_fetch_add(&s->in_task, 1);
    if (atomic_load(&s->d) != atomic_load(&s->a)) atomic_fetch_add(&s->violations, 1);
    atomic_fetch_add(&s->a, 1);
    atomic_fetch_sub(&s->in_task, 1);
    return 0;
}
static int iter_b(weft_ctx *ctx, void *arg) {
    struct iter_state *s = arg;
    atomic_fetch_add(&s->in_task, 1);
    if (atomic_load(&s->a) != atomic_load(&s->b) + 1) atomic_fetch_add(&s->violations, 1);
    atomic_fetch_add(&s->b, 1);
    atomic_fetch_sub(&s->in_task, 1);
    return 0;
}
static int iter_c(weft_ctx *ctx, void *arg) {
    struct iter_state *s = arg;
    atomic_fetch_add(&s->in_task, 1);
    if (atomic_load(&s->a) != atomic_load(&s->c) + 1) atomic_fetch_add(&s->violations, 1);
    atomic_fetch_add(&s->c, 1);
    atomic_fetch_sub(&s->in_task, 1);
    return 0;
}
static int iter_d(weft_ctx *ctx, void *arg) {
    struct iter_state *s = arg;
    atomic_fetch_add(&s->in_task, 1);
    int d = atomic_load(&s->d);
    if (atomic_load(&s->b) != d + 1 || atomic_load(&s->c) != d + 1)
        atomic_fetch_add(&s->violations, 1);
    atomic_fetch_sub(&s->in_task, 1);
    atomic_fetch_add(&s->d, 1); /* last: a of the next iteration checks it */
    return 0;
}

static weft_taskflow *build_iter_diamond(struct iter_state *s) {
    weft_taskflow *tf = make_taskflow("diamond");
    weft_task a = must_emplace(tf, iter_a, s);
    weft_task b = must_emplace(tf, iter_b, s);
    weft_task c = must_emplace(tf, iter_c, s);
    weft_task d = must_emplace(tf, iter_d, s);
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_precede(a, c));
    ASSERT_OK(weft_precede(b, d));
    ASSERT_OK(weft_precede(c, d));
    return tf;
}

static void assert_counts(struct iter_state *s, int n) {
    ASSERT_EQ(atomic_load(&s->a), n);
    ASSERT_EQ(atomic_load(&s->b), n);
    ASSERT_EQ(atomic_load(&s->c), n);
    ASSERT_EQ(atomic_load(&s->d), n);
    ASSERT_EQ(atomic_load(&s->violations), 0);
}

TEST(run_n_runs_exactly_n_times) {
    weft_executor *ex = make_executor(3);
    struct iter_state s = { 0 };
    weft_taskflow *tf = build_iter_diamond(&s);

    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, tf, 50, &f));
    wait_ok(f, "run_n(50)");
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STATUS(info.status, WEFT_OK);
    ASSERT_EQ(info.iterations, 50);
    ASSERT_EQ(info.skipped, 0);
    ASSERT_EQ(info.task_code, 0);
    ASSERT_STREQ(info.failed_task, "");
    weft_future_destroy(f);
    assert_counts(&s, 50);

    ASSERT_OK(weft_run_n(ex, tf, 1, &f));
    wait_ok(f, "run_n(1)");
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 1);
    weft_future_destroy(f);
    assert_counts(&s, 51);

    /* Detached, and two run_n of the same taskflow queued back to back. */
    ASSERT_OK(weft_run_n(ex, tf, 7, NULL));
    ASSERT_OK(weft_run_n(ex, tf, 3, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    assert_counts(&s, 61);

    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(run_n_zero_completes_at_once) {
    weft_executor *ex = make_executor(2);
    struct iter_state s = { 0 };
    weft_taskflow *tf = build_iter_diamond(&s);
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, tf, 0, &f));
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_future_wait_for(f, 1 * SEC));
    ASSERT_TRUE(weft_future_ready(f));
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STATUS(info.status, WEFT_OK);
    ASSERT_EQ(info.iterations, 0);
    weft_future_destroy(f);
    assert_counts(&s, 0);
    /* And the taskflow is not left busy. */
    ASSERT_FALSE(weft_task_is_null(weft_placeholder(tf)));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

struct until_state {
    struct iter_state *iter;
    int limit;
    atomic_int calls;
    atomic_int overlapped; /* pred called while a task of the run was running */
    atomic_int inside;     /* pred calls in flight */
};

/* True once it has been called `limit` times before, so the taskflow runs
 * `limit` iterations. */
static bool until_pred(void *arg) {
    struct until_state *u = arg;
    if (atomic_fetch_add(&u->inside, 1) != 0) atomic_fetch_add(&u->overlapped, 1);
    if (atomic_load(&u->iter->in_task) != 0) atomic_fetch_add(&u->overlapped, 1);
    int c = atomic_fetch_add(&u->calls, 1);
    atomic_fetch_sub(&u->inside, 1);
    return c >= u->limit;
}

TEST(run_until_stops_when_predicate_true) {
    weft_executor *ex = make_executor(3);
    struct iter_state s = { 0 };
    weft_taskflow *tf = build_iter_diamond(&s);

    struct until_state u = { .iter = &s, .limit = 7 };
    weft_future *f = NULL;
    ASSERT_OK(weft_run_until(ex, tf, until_pred, &u, &f));
    wait_ok(f, "run_until");
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 7);
    ASSERT_EQ(atomic_load(&u.calls), 8); /* before each iteration and once more */
    ASSERT_EQ(atomic_load(&u.overlapped), 0);
    weft_future_destroy(f);
    assert_counts(&s, 7);

    /* A predicate that is true at once: zero iterations. */
    struct until_state u0 = { .iter = &s, .limit = 0 };
    ASSERT_OK(weft_run_until(ex, tf, until_pred, &u0, &f));
    wait_ok(f, "run_until(true)");
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 0);
    ASSERT_EQ(atomic_load(&u0.calls), 1);
    weft_future_destroy(f);
    assert_counts(&s, 7);

    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- several runs ------------------------------------------------------------ */

struct rendezvous {
    atomic_int *mine, *theirs;
    atomic_int met;
};

static int meet(weft_ctx *ctx, void *arg) {
    struct rendezvous *r = arg;
    atomic_store(r->mine, 1);
    if (wait_flag(r->theirs, 1, 5.0)) atomic_store(&r->met, 1);
    return 0;
}

TEST(several_taskflows_in_flight_at_once) {
    weft_executor *ex = make_executor(2);
    /* Two one-task flows that can only both finish "met" if they run at the same
     * time. */
    atomic_int fa = 0, fb = 0;
    struct rendezvous ra = { &fa, &fb, 0 }, rb = { &fb, &fa, 0 };
    weft_taskflow *ta = make_taskflow("a"), *tb = make_taskflow("b");
    must_emplace(ta, meet, &ra);
    must_emplace(tb, meet, &rb);
    weft_future *f1 = NULL, *f2 = NULL;
    ASSERT_OK(weft_run(ex, ta, &f1));
    ASSERT_OK(weft_run(ex, tb, &f2));
    wait_ok(f1, "a");
    wait_ok(f2, "b");
    ASSERT_EQ(atomic_load(&ra.met), 1);
    ASSERT_EQ(atomic_load(&rb.met), 1);
    weft_future_destroy(f1);
    weft_future_destroy(f2);
    ASSERT_OK(weft_taskflow_destroy(ta));
    ASSERT_OK(weft_taskflow_destroy(tb));

    /* Many flows, each with fan-out work, in flight together. */
    enum { FLOWS = 8, TASKS = 200 };
    weft_taskflow *tf[FLOWS];
    weft_future *fut[FLOWS];
    static atomic_int count[FLOWS];
    for (int i = 0; i < FLOWS; i++) {
        tf[i] = make_taskflow(NULL);
        weft_task root = must_emplace(tf[i], bump, &count[i]);
        for (int k = 1; k < TASKS; k++) ASSERT_OK(weft_precede(root, must_emplace(tf[i], bump, &count[i])));
    }
    for (int r = 1; r <= 5; r++) {
        for (int i = 0; i < FLOWS; i++) ASSERT_OK(weft_run(ex, tf[i], &fut[i]));
        for (int i = 0; i < FLOWS; i++) {
            wait_ok(fut[i], "fan-out flow");
            weft_future_destroy(fut[i]);
            ASSERT_EQ(atomic_load(&count[i]), r * TASKS);
        }
    }
    for (int i = 0; i < FLOWS; i++) ASSERT_OK(weft_taskflow_destroy(tf[i]));
    weft_executor_destroy(ex);
}

/* root -> m0..m3 -> sink.  root marks the run active, sink marks it done; any
 * task that finds the wrong state proves two runs overlapped. */
struct serial_state {
    atomic_int active, overlaps, started, finished;
};

static int serial_root(weft_ctx *ctx, void *arg) {
    struct serial_state *s = arg;
    if (atomic_exchange(&s->active, 1) != 0) atomic_fetch_add(&s->overlaps, 1);
    atomic_fetch_add(&s->started, 1);
    return 0;
}
static int serial_mid(weft_ctx *ctx, void *arg) {
    struct serial_state *s = arg;
    if (atomic_load(&s->active) != 1) atomic_fetch_add(&s->overlaps, 1);
    sleep_us(100);
    if (atomic_load(&s->active) != 1) atomic_fetch_add(&s->overlaps, 1);
    return 0;
}
static int serial_sink(weft_ctx *ctx, void *arg) {
    struct serial_state *s = arg;
    atomic_fetch_add(&s->finished, 1);
    if (atomic_exchange(&s->active, 0) != 1) atomic_fetch_add(&s->overlaps, 1);
    return 0;
}

TEST(runs_of_same_taskflow_queue_in_order) {
    enum { RUNS = 30 };
    weft_executor *ex = make_executor(4);
    struct serial_state s = { 0 };
    weft_taskflow *tf = make_taskflow("serial");
    weft_task root = must_emplace(tf, serial_root, &s);
    weft_task sink = must_emplace(tf, serial_sink, &s);
    for (int i = 0; i < 4; i++) {
        weft_task m = must_emplace(tf, serial_mid, &s);
        ASSERT_OK(weft_precede(root, m));
        ASSERT_OK(weft_precede(m, sink));
    }
    weft_future *f[RUNS];
    for (int i = 0; i < RUNS; i++) {
        if (i % 3 == 2) ASSERT_OK(weft_run_n(ex, tf, 1, &f[i]));
        else ASSERT_OK(weft_run(ex, tf, &f[i]));
    }

    /* Futures must become ready in submission order.  Reading from the last to the
     * first, a ready f[i] followed by a not-ready f[j], j < i, shows f[i] finished
     * first (readiness never goes back). */
    double deadline = now_s() + 20.0;
    for (;;) {
        bool ready[RUNS];
        for (int i = RUNS - 1; i >= 0; i--) ready[i] = weft_future_ready(f[i]);
        for (int i = 1; i < RUNS; i++)
            if (ready[i] && !ready[i - 1])
                TEST_FAIL_("run %d finished before run %d", i, i - 1);
        if (ready[RUNS - 1]) break;
        if (now_s() > deadline) TEST_FAIL_("runs not finished after 20 s");
        sleep_us(20);
    }
    for (int i = 0; i < RUNS; i++) {
        ASSERT_OK(weft_future_status(f[i]));
        weft_future_destroy(f[i]);
    }
    ASSERT_EQ(atomic_load(&s.overlaps), 0);
    ASSERT_EQ(atomic_load(&s.started), RUNS);
    ASSERT_EQ(atomic_load(&s.finished), RUNS);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- waiting inside a task --------------------------------------------------- */

struct nested {
    weft_taskflow *inner;   /* run with run_and_wait */
    weft_taskflow *inner2;  /* run with weft_run + weft_future_wait */
    atomic_int status1, status2, done;
};

static int run_inner(weft_ctx *ctx, void *arg) {
    struct nested *n = arg;
    weft_executor *ex = weft_ctx_executor(ctx);
    atomic_store(&n->status1, (int)weft_run_and_wait(ex, n->inner));
    weft_future *f = NULL;
    weft_status st = weft_run(ex, n->inner2, &f);
    if (st == WEFT_OK) st = weft_future_wait(f);
    weft_future_destroy(f);
    atomic_store(&n->status2, (int)st);
    atomic_store(&n->done, 1);
    return 0;
}

TEST(run_and_wait_from_inside_a_task_does_not_deadlock) {
    weft_executor *ex = make_executor(1);
    atomic_int inner_count = 0, inner2_count = 0;
    struct nested n = { .status1 = 12345, .status2 = 12345 };
    n.inner = make_taskflow("inner");
    n.inner2 = make_taskflow("inner2");
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < 10; i++) {
        weft_task t = must_emplace(n.inner, bump, &inner_count);
        if (!weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, t));
        prev = t;
        must_emplace(n.inner2, bump, &inner2_count);
    }
    /* Three levels: outer task -> middle taskflow (run_and_wait) whose task waits
     * for the inner flows. */
    struct nested mid = { .status1 = 12345, .status2 = 12345 };
    mid.inner = make_taskflow("middle");
    mid.inner2 = make_taskflow("empty");
    must_emplace(mid.inner, run_inner, &n);

    weft_taskflow *outer = make_taskflow("outer");
    must_emplace(outer, run_inner, &mid);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, outer, &f));
    weft_status st = weft_future_wait_for(f, 10 * SEC);
    if (st == WEFT_ETIMEDOUT)
        TEST_FAIL_("nested run_and_wait on a 1-worker executor did not finish: deadlock");
    ASSERT_OK(st);
    ASSERT_EQ(atomic_load(&mid.done), 1);
    ASSERT_EQ(atomic_load(&n.done), 1);
    ASSERT_OK(atomic_load(&mid.status1));
    ASSERT_OK(atomic_load(&mid.status2));
    ASSERT_OK(atomic_load(&n.status1));
    ASSERT_OK(atomic_load(&n.status2));
    ASSERT_EQ(atomic_load(&inner_count), 10);
    ASSERT_EQ(atomic_load(&inner2_count), 10);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(outer));
    ASSERT_OK(weft_taskflow_destroy(mid.inner));
    ASSERT_OK(weft_taskflow_destroy(mid.inner2));
    ASSERT_OK(weft_taskflow_destroy(n.inner));
    ASSERT_OK(weft_taskflow_destroy(n.inner2));
    weft_executor_destroy(ex);
}

/* Many tasks of a 1-worker executor each wait for a run of their own. */
struct waiter {
    weft_taskflow *tf;
    atomic_int status;
};

static int wait_own_flow(weft_ctx *ctx, void *arg) {
    struct waiter *w = arg;
    atomic_store(&w->status, (int)weft_run_and_wait(weft_ctx_executor(ctx), w->tf));
    return 0;
}

TEST(many_tasks_waiting_for_nested_runs_on_one_worker_finish) {
    enum { N = 16 };
    weft_executor *ex = make_executor(1);
    struct waiter w[N];
    atomic_int count = 0;
    weft_taskflow *outer = make_taskflow("outer");
    for (int i = 0; i < N; i++) {
        w[i].tf = make_taskflow(NULL);
        atomic_init(&w[i].status, 12345);
        for (int k = 0; k < 8; k++) must_emplace(w[i].tf, bump, &count);
        must_emplace(outer, wait_own_flow, &w[i]);
    }
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, outer, &f));
    weft_status st = weft_future_wait_for(f, 10 * SEC);
    if (st == WEFT_ETIMEDOUT) TEST_FAIL_("nested waits on one worker did not finish: deadlock");
    ASSERT_OK(st);
    for (int i = 0; i < N; i++) ASSERT_OK(atomic_load(&w[i].status));
    ASSERT_EQ(atomic_load(&count), N * 8);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(outer));
    for (int i = 0; i < N; i++) ASSERT_OK(weft_taskflow_destroy(w[i].tf));
    weft_executor_destroy(ex);
}

/* ---- futures ----------------------------------------------------------------- */

TEST(future_wait_for_times_out) {
    weft_executor *ex = make_executor(2);
    struct gate g = { 0 };
    weft_taskflow *tf = make_taskflow(NULL);
    must_emplace(tf, gated, &g);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&g.started, 1, 5.0));

    double t0 = now_s();
    ASSERT_STATUS(weft_future_wait_for(f, 10 * MS), WEFT_ETIMEDOUT);
    double waited = now_s() - t0;
    ASSERT_TRUE(waited >= 0.009);
    ASSERT_TRUE(waited < 5.0);
    ASSERT_STATUS(weft_future_wait_for(f, 0), WEFT_ETIMEDOUT); /* a pure poll */
    ASSERT_FALSE(weft_future_ready(f));

    atomic_store(&g.release, 1);
    ASSERT_OK(weft_future_wait_for(f, 10 * SEC));
    ASSERT_OK(weft_future_wait_for(f, 0));
    ASSERT_EQ(atomic_load(&g.ran), 1);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(future_ready_and_status) {
    weft_executor *ex = make_executor(2);
    struct gate g = { 0 };
    weft_taskflow *tf = make_taskflow(NULL);
    must_emplace(tf, gated, &g);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&g.started, 1, 5.0));

    ASSERT_FALSE(weft_future_ready(f));
    ASSERT_STATUS(weft_future_status(f), WEFT_EAGAIN);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STATUS(info.status, WEFT_EAGAIN);

    atomic_store(&g.release, 1);
    ASSERT_OK(weft_future_wait(f));
    ASSERT_TRUE(weft_future_ready(f));
    ASSERT_OK(weft_future_status(f));
    ASSERT_OK(weft_future_wait(f)); /* waiting again returns the same status */
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STATUS(info.status, WEFT_OK);
    ASSERT_EQ(info.task_code, 0);
    ASSERT_STREQ(info.failed_task, "");
    ASSERT_EQ(info.skipped, 0);
    ASSERT_STATUS(weft_future_cancel(f), WEFT_ENOENT);
    ASSERT_OK(weft_future_status(f)); /* a late cancel changes nothing */
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

struct shared_wait {
    weft_future *f;
    atomic_int status;
};

static void *wait_thread(void *arg) {
    struct shared_wait *w = arg;
    atomic_store(&w->status, (int)weft_future_wait_for(w->f, 10 * SEC));
    return NULL;
}

TEST(several_threads_wait_on_one_future) {
    enum { THREADS = 4 };
    weft_executor *ex = make_executor(2);
    struct gate g = { 0 };
    weft_taskflow *tf = make_taskflow(NULL);
    must_emplace(tf, gated, &g);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    pthread_t th[THREADS];
    struct shared_wait w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct shared_wait){ .f = f, .status = 12345 };
        ASSERT_EQ(pthread_create(&th[i], NULL, wait_thread, &w[i]), 0);
    }
    sleep_us(20000);
    atomic_store(&g.release, 1);
    for (int i = 0; i < THREADS; i++) {
        ASSERT_EQ(pthread_join(th[i], NULL), 0);
        ASSERT_OK(atomic_load(&w[i].status));
    }
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(detached_run_completes) {
    weft_executor *ex = make_executor(2);
    atomic_int count = 0;
    weft_taskflow *tf = make_taskflow(NULL);
    for (int i = 0; i < 100; i++) must_emplace(tf, bump, &count);
    ASSERT_OK(weft_run(ex, tf, NULL));
    ASSERT_OK(weft_run(ex, tf, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&count), 200);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(future_destroyed_before_the_run_ends_detaches_it) {
    weft_executor *ex = make_executor(2);
    struct gate g = { 0 };
    atomic_int after = 0;
    weft_taskflow *tf = make_taskflow(NULL);
    weft_task a = must_emplace(tf, gated, &g);
    ASSERT_OK(weft_precede(a, must_emplace(tf, bump, &after)));
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&g.started, 1, 5.0));
    weft_future_destroy(f);
    atomic_store(&g.release, 1);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&g.ran), 1);
    ASSERT_EQ(atomic_load(&after), 1);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(empty_taskflow_runs_and_completes) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("empty");
    ASSERT_OK(weft_run_and_wait(ex, tf));
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, tf, 5, &f));
    wait_ok(f, "empty run_n");
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 5);
    weft_future_destroy(f);

    /* run_until asks its predicate before each (empty) iteration as usual. */
    struct iter_state s = { 0 };
    struct until_state u = { .iter = &s, .limit = 3 };
    ASSERT_OK(weft_run_until(ex, tf, until_pred, &u, &f));
    wait_ok(f, "empty run_until");
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 3);
    ASSERT_EQ(atomic_load(&u.calls), 4);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(taskflow_runs_on_two_executors_one_after_another) {
    weft_executor *ex1 = make_executor(1), *ex2 = make_executor(3);
    atomic_int count = 0;
    weft_taskflow *tf = make_taskflow(NULL);
    weft_task root = must_emplace(tf, bump, &count);
    for (int i = 0; i < 50; i++) ASSERT_OK(weft_precede(root, must_emplace(tf, bump, &count)));
    for (int r = 1; r <= 10; r++) {
        ASSERT_OK(weft_run_and_wait(r % 2 ? ex1 : ex2, tf));
        ASSERT_EQ(atomic_load(&count), r * 51);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex1);
    weft_executor_destroy(ex2);
}

/* On one worker the awaited run can only progress if the waiting task runs it:
 * a timed wait must run other work too, not just sleep until the deadline. */
struct timed_inner {
    weft_executor *ex;
    weft_taskflow *inner;
    atomic_int ran;
    weft_status got;
};

static int wait_for_inner(weft_ctx *ctx, void *arg) {
    struct timed_inner *t = arg;
    weft_future *f = NULL;
    weft_status st = weft_run(t->ex, t->inner, &f);
    if (st != WEFT_OK) return 1;
    t->got = weft_future_wait_for(f, 10 * SEC);
    weft_future_destroy(f);
    return 0;
}

TEST(future_wait_for_inside_a_task_runs_the_awaited_work) {
    weft_executor *ex = make_executor(1);
    weft_taskflow *outer = make_taskflow("outer"), *inner = make_taskflow("inner");
    struct timed_inner t = {ex, inner, 0, WEFT_EAGAIN};
    for (int i = 0; i < 10; i++) must_emplace(inner, bump, &t.ran);
    must_emplace(outer, wait_for_inner, &t);
    double t0 = now_s();
    ASSERT_OK(weft_run_and_wait(ex, outer));
    ASSERT_OK(t.got);
    ASSERT_EQ(atomic_load(&t.ran), 10);
    ASSERT_LT(now_s() - t0, 5.0); /* it ran the inner run, not out the clock */
    ASSERT_OK(weft_taskflow_destroy(outer));
    ASSERT_OK(weft_taskflow_destroy(inner));
    weft_executor_destroy(ex);
}

/* ---- counts held back on a worker (run.c) ------------------------------------ */

/* Tasks that ready nothing hold their -1 back on the worker.  The run must still
 * end as soon as its last task has, even when that worker goes straight on to a
 * long task of another run. */
struct moves_on {
    weft_executor *ex;
    weft_taskflow *slow;
    atomic_int started;
};

static int start_slow_run(weft_ctx *ctx, void *arg) {
    struct moves_on *m = arg;
    /* The chain's last task: the slow run's start job goes to this worker's
     * deque, which it pops right after this task. */
    if (atomic_fetch_add(&m->started, 1) == 49 && weft_run(m->ex, m->slow, NULL) != WEFT_OK) return 1;
    return 0;
}

static int sleep_300ms(weft_ctx *ctx, void *arg) {
    sleep_us(300000);
    return 0;
}

TEST(a_run_ends_when_its_last_task_does_though_its_worker_goes_on_to_a_long_task) {
    weft_executor *ex = make_executor(1);
    struct moves_on m = { ex, make_taskflow("slow"), 0 };
    must_emplace(m.slow, sleep_300ms, NULL);
    weft_taskflow *fan = make_taskflow("chain");
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < 50; i++) {
        weft_task t = must_emplace(fan, start_slow_run, &m);
        if (i) ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    for (int round = 0; round < 3; round++) {
        atomic_store(&m.started, 0);
        double t0 = now_s();
        weft_future *f;
        ASSERT_OK(weft_run(ex, fan, &f));
        ASSERT_OK(weft_future_wait_for(f, 10 * SEC));
        double took = now_s() - t0;
        weft_future_destroy(f);
        /* The chain's last task held its -1 back and queued the slow run on
         * this worker; the chain must not wait for the slow run's task. */
        if (took > 0.2) TEST_FAIL_("round %d: the chain took %.3f s, as if it waited for the slow run", round, took);
        ASSERT_OK(weft_executor_wait_all(ex));
    }
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(fan));
    ASSERT_OK(weft_taskflow_destroy(m.slow));
}

/* Many runs of trees and fans at once on 4 workers: every task checks that its
 * run has not been reported finished (a held-back count must never let a run
 * end early), and every run ends with all of its tasks run. */
struct early {
    weft_future *_Atomic fut;
    atomic_int ran, early;
};

static int check_not_done(weft_ctx *ctx, void *arg) {
    struct early *e = arg;
    weft_future *f = atomic_load(&e->fut);
    if (f && weft_future_ready(f)) atomic_fetch_add(&e->early, 1);
    atomic_fetch_add(&e->ran, 1);
    return 0;
}

TEST(held_back_counts_never_end_a_run_early_under_load) {
    enum { RUNS = 8, TREE = 1023, FAN = 300 };
    weft_executor *ex = make_executor(4);
    static struct early e[RUNS];
    weft_taskflow *tf[RUNS];
    for (int k = 0; k < RUNS; k++) {
        tf[k] = make_taskflow("load");
        if (k % 2) {
            for (int i = 0; i < FAN; i++) must_emplace(tf[k], check_not_done, &e[k]);
        } else {
            weft_task t[TREE];
            for (int i = 0; i < TREE; i++) {
                t[i] = must_emplace(tf[k], check_not_done, &e[k]);
                if (i) ASSERT_OK(weft_precede(t[(i - 1) / 2], t[i]));
            }
        }
    }
    for (int round = 0; round < 40; round++) {
        weft_future *f[RUNS];
        for (int k = 0; k < RUNS; k++) {
            atomic_store(&e[k].ran, 0);
            atomic_store(&e[k].fut, NULL);
        }
        for (int k = 0; k < RUNS; k++) {
            ASSERT_OK(weft_run_n(ex, tf[k], 3, &f[k]));
            atomic_store(&e[k].fut, f[k]);
        }
        for (int k = 0; k < RUNS; k++) {
            ASSERT_OK(weft_future_wait_for(f[k], 10 * SEC));
            int want = 3 * (k % 2 ? FAN : TREE);
            if (atomic_load(&e[k].ran) != want)
                TEST_FAIL_("round %d run %d: %d tasks ran, want %d", round, k, atomic_load(&e[k].ran), want);
            atomic_store(&e[k].fut, NULL);
            weft_future_destroy(f[k]);
        }
    }
    for (int k = 0; k < RUNS; k++) {
        ASSERT_EQ(atomic_load(&e[k].early), 0);
        ASSERT_OK(weft_taskflow_destroy(tf[k]));
    }
    weft_executor_destroy(ex);
}

/* Applying a held-back count can end a nested run (a module's body, a subflow's
 * graph) and so release its task in the parent run, whose -1 is then held back
 * in turn: that one must be applied too before the worker sleeps. */
static int nop_task(weft_ctx *ctx, void *arg) { return 0; }

TEST(a_held_back_count_that_ends_a_nested_run_is_followed_by_its_parents) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        weft_taskflow *body = make_taskflow("body");
        for (int i = 0; i < 40; i++) must_emplace(body, nop_task, NULL);
        weft_taskflow *mid = make_taskflow("mid");
        for (int i = 0; i < 3; i++) (void)weft_emplace_module(mid, body);
        weft_taskflow *top = make_taskflow("top");
        for (int i = 0; i < 2; i++) (void)weft_emplace_module(top, mid);
        for (int round = 0; round < 200; round++) {
            weft_future *f;
            ASSERT_OK(weft_run_n(ex, top, 2, &f));
            ASSERT_OK(weft_future_wait_for(f, 10 * SEC));
            weft_future_destroy(f);
        }
        weft_executor_destroy(ex);
        ASSERT_OK(weft_taskflow_destroy(top));
        ASSERT_OK(weft_taskflow_destroy(mid));
        ASSERT_OK(weft_taskflow_destroy(body));
    }
}
