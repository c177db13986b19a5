/* Doubts left open by session 40, each settled by a test:
 *  - a module built inside a subflow at run time holds its body, as a module
 *    of the taskflow itself does (an edit or a destroy of the body was let
 *    through while the run could still start it);
 *  - weft_composition_destroy of a graph a run still uses (a module's body)
 *    refuses, instead of freeing the composition and leaking its graph;
 *  - weft_cancel_at(t, UINT64_MAX) and weft_cancel_after(t, UINT64_MAX) leave
 *    the same deadline (none: weft_cancel_disarm says false after both);
 *  - a member of a weft_run_many set cancelled by a token attached to the set
 *    sees the token's reason;
 *  - placeholder tasks count as run in the metrics when they run, as they
 *    count as skipped when they do not. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cancel_test.h"
#include "counting_alloc.h"

#include <stdint.h>
#include <string.h>

/* ---- 1. a module built inside a subflow holds its body ------------------------ */

/* What the subflow task builds, and the handshake with the test's thread. */
static struct {
    weft_taskflow *body;
    atomic_int built;  /* the subflow's function has emplaced the module */
    atomic_int go;     /* the test has tried its edits: return */
    atomic_int gate;   /* opens the gate task ahead of the module */
    atomic_int count;  /* the body's tasks that ran */
    int fail;          /* the subflow's function returns this */
    bool erase;        /* erase the module before returning */
    bool gated;        /* put a gate task ahead of the module */
} S;

static int s_gate(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return wait_flag(&S.gate, 1, 20.0) ? 0 : 1;
}

static int s_build(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx, (void)arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task m = weft_emplace_module(g, S.body);
    if (weft_task_is_null(m)) return 100;
    if (S.gated) {
        weft_task gt = weft_emplace(g, s_gate, NULL);
        if (weft_task_is_null(gt) || weft_precede(gt, m) != WEFT_OK) return 101;
    }
    if (S.erase && weft_task_erase(m) != WEFT_OK) return 102;
    atomic_store(&S.built, 1);
    if (!wait_flag(&S.go, 1, 20.0)) return 103;
    return S.fail;
}

static void s_reset(weft_taskflow *body) {
    memset(&S, 0, sizeof S);
    S.body = body;
}

/* A body of 4 counting tasks. */
static weft_taskflow *s_body(void) {
    weft_taskflow *body = make_taskflow("body");
    for (int i = 0; i < 4; i++) must_emplace(body, bump, &S.count);
    return body;
}

TEST(a_module_built_in_a_running_subflow_holds_its_body_from_its_emplace) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("outer"), *body = s_body();
    s_reset(body);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, s_build, NULL)));
    watchdog_start(30);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&S.built, 1, 20.0));
    /* The module exists and the run will start it: the body is in use. */
    ASSERT_STATUS(weft_taskflow_clear(body), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_set_name(body, "x"), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_destroy(body), WEFT_EBUSY);
    atomic_store(&S.go, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&S.count), 4);
    /* The run is over: the body is the builder's again. */
    ASSERT_OK(weft_taskflow_set_name(body, "y"));
    watchdog_stop();
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(body)); /* before its parent: the run no longer uses it */
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(a_module_of_a_subflow_graph_holds_its_body_until_the_module_has_run) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("outer"), *body = s_body();
    s_reset(body);
    S.gated = true;
    atomic_store(&S.go, 1); /* the function returns at once */
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, s_build, NULL)));
    watchdog_start(30);
    for (int round = 0; round < 3; round++) {
        atomic_store(&S.gate, 0);
        atomic_store(&S.built, 0);
        atomic_store(&S.count, 0);
        weft_future *f = NULL;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_TRUE(wait_flag(&S.built, 1, 20.0));
        /* The subflow's graph runs (its gate holds the module back). */
        ASSERT_STATUS(weft_taskflow_clear(body), WEFT_EBUSY);
        ASSERT_TRUE(weft_task_is_null(weft_emplace(body, noop, NULL)));
        ASSERT_STATUS(weft_taskflow_last_error(body), WEFT_EBUSY);
        atomic_store(&S.gate, 1);
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        ASSERT_EQ(atomic_load(&S.count), 4);
        ASSERT_EQ(weft_taskflow_num_tasks(body), 4u);
        ASSERT_OK(weft_taskflow_set_name(body, "free again"));
    }
    watchdog_stop();
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
}

/* The hold ends with the run also where the subflow's graph never runs. */
TEST(a_body_held_by_a_subflow_is_given_back_when_the_subflow_fails_or_erases_its_module) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("outer"), *body = s_body();
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, s_build, NULL)));
    watchdog_start(30);
    /* The function fails after building: its graph does not run. */
    s_reset(body);
    S.fail = 7;
    atomic_store(&S.go, 1);
    weft_run_info info;
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, 7);
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&S.count), 0);
    ASSERT_OK(weft_taskflow_set_name(body, "after a failed subflow"));
    /* The module is erased before the function returns: refused while it
     * existed, given back by the erase. */
    s_reset(body);
    S.erase = true;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&S.built, 1, 20.0));
    ASSERT_OK(weft_taskflow_set_name(body, "after an erased module"));
    atomic_store(&S.go, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&S.count), 0);
    /* A joined subflow (weft_subflow_join) gives it back after its graph. */
    watchdog_stop();
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(body));
    ASSERT_OK(weft_taskflow_destroy(tf));
}

static int s_build_join(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx, (void)arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    if (weft_task_is_null(weft_emplace_module(g, S.body))) return 100;
    if (weft_subflow_join(sf) != WEFT_OK) return 101;
    /* The graph has run: the body is free again, while the task still runs. */
    if (weft_taskflow_set_name(S.body, "joined") != WEFT_OK) return 102;
    return 0;
}

TEST(a_subflow_that_joins_its_module_gives_the_body_back_at_the_join) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("outer"), *body = s_body();
    s_reset(body);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, s_build_join, NULL)));
    for (int i = 0; i < 5; i++) {
        atomic_store(&S.count, 0);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&S.count), 4);
        ASSERT_STREQ(weft_taskflow_name(body), "joined");
        ASSERT_OK(weft_taskflow_set_name(body, "body"));
    }
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(body));
    ASSERT_OK(weft_taskflow_destroy(tf));
}

static int s_build_detached(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    if (weft_subflow_detach(sf) != WEFT_OK) return 104;
    return s_build(ctx, sf, arg);
}

/* Detached: the graph outlives its task; the body is held until it ends. */
TEST(a_detached_subflow_module_holds_its_body_until_the_detached_graph_ends) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("outer"), *body = s_body();
    s_reset(body);
    S.gated = true;
    atomic_store(&S.go, 1);
    atomic_int after = 0;
    weft_task sub = weft_emplace_subflow(tf, s_build_detached, NULL);
    ASSERT_FALSE(weft_task_is_null(sub));
    ASSERT_OK(weft_precede(sub, must_emplace(tf, bump, &after)));
    watchdog_start(30);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&after, 1, 20.0)); /* the task's successor ran: the graph waits at its gate */
    ASSERT_STATUS(weft_taskflow_clear(body), WEFT_EBUSY);
    atomic_store(&S.gate, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&S.count), 4);
    ASSERT_OK(weft_taskflow_clear(body));
    watchdog_stop();
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
}

static int s_build_self(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    /* A module of the taskflow the subflow runs in: it waits for itself. */
    return weft_task_is_null(weft_emplace_module(weft_subflow_graph(sf), arg)) ? 100 : 0;
}

/* A module in a subflow whose body is the subflow's own taskflow fails the
 * run (WEFT_EDEADLK) and leaves that taskflow free afterwards: the hold its
 * emplace took on it is given back. */
TEST(a_subflow_module_of_its_own_taskflow_fails_with_edeadlk_and_gives_the_hold_back) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("self");
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, s_build_self, tf)));
    watchdog_start(30);
    for (int i = 0; i < 3; i++) {
        weft_future *f = NULL;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.task_code, WEFT_EDEADLK);
        weft_future_destroy(f);
        ASSERT_OK(weft_taskflow_set_name(tf, "self")); /* not left busy */
    }
    watchdog_stop();
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* Nested: the subflow's module body has a module of its own; both are held. */
TEST(a_subflow_module_holds_the_bodies_below_its_body_too) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("outer"), *mid = make_taskflow("mid"), *body = s_body();
    s_reset(mid);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_module(mid, body)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, s_build, NULL)));
    watchdog_start(30);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&S.built, 1, 20.0));
    ASSERT_STATUS(weft_taskflow_clear(mid), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_clear(body), WEFT_EBUSY);
    atomic_store(&S.go, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&S.count), 4);
    ASSERT_OK(weft_taskflow_set_name(mid, "m"));
    ASSERT_OK(weft_taskflow_set_name(body, "b"));
    watchdog_stop();
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(mid));
    ASSERT_OK(weft_taskflow_destroy(body));
}

/* ---- 2. a composition whose graph is in use -------------------------------------- */

static int c_gate(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return wait_flag(arg, 1, 20.0) ? 0 : 1;
}

TEST(composition_destroy_of_a_graph_a_run_uses_refuses_and_frees_nothing) {
    weft_set_allocator(&counting);
    fail_allocation(0); /* count only */
    long long base = atomic_load(&A.outstanding);
    weft_executor *ex = make_executor(2);
    weft_status st;
    weft_composition *c = weft_composition_create("piece", &st);
    ASSERT_OK(st);
    atomic_int count = 0, open = 0;
    for (int i = 0; i < 3; i++) must_emplace(weft_composition_graph(c), bump, &count);
    weft_taskflow *tf = make_taskflow("user");
    weft_task g = must_emplace(tf, c_gate, &open), m = weft_emplace_module(tf, weft_composition_graph(c));
    ASSERT_FALSE(weft_task_is_null(m));
    ASSERT_OK(weft_precede(g, m));
    watchdog_start(30);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    /* The run will start the graph: it must neither go nor leak. */
    ASSERT_STATUS(weft_composition_destroy(c), WEFT_EBUSY);
    ASSERT_TRUE(strstr(weft_last_error_message(), "piece") != NULL);
    ASSERT_TRUE(weft_composition_graph(c) != NULL); /* c is whole */
    atomic_store(&open, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&count), 3);
    ASSERT_OK(weft_composition_destroy(c));
    ASSERT_OK(weft_composition_destroy(NULL));
    watchdog_stop();
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
    ASSERT_EQ(atomic_load(&A.outstanding), base); /* nothing leaked */
}

/* ---- 3. deadlines that never fire --------------------------------------------------- */

TEST(cancel_at_and_cancel_after_with_uint64_max_both_leave_no_deadline_to_disarm) {
    weft_cancel_token *a = new_token(), *b = new_token();
    ASSERT_OK(weft_cancel_at(a, UINT64_MAX));
    ASSERT_OK(weft_cancel_after(b, UINT64_MAX));
    ASSERT_EQ(weft_cancel_disarm(a), weft_cancel_disarm(b));
    ASSERT_FALSE(weft_cancel_disarm(a));
    /* Each replaces an earlier deadline, the same way. */
    ASSERT_OK(weft_cancel_after(a, 3600 * SEC));
    ASSERT_OK(weft_cancel_after(b, 3600 * SEC));
    ASSERT_OK(weft_cancel_at(a, UINT64_MAX));
    ASSERT_OK(weft_cancel_after(b, UINT64_MAX));
    ASSERT_FALSE(weft_cancel_disarm(a));
    ASSERT_FALSE(weft_cancel_disarm(b));
    ASSERT_FALSE(weft_cancel_token_is_cancelled(a));
    ASSERT_FALSE(weft_cancel_token_is_cancelled(b));
    /* A finite far deadline is one to disarm, through either call. */
    ASSERT_OK(weft_cancel_at(a, UINT64_MAX - 1));
    ASSERT_OK(weft_cancel_after(b, UINT64_MAX - weft_cancel_now_ns() - 3600 * SEC));
    ASSERT_TRUE(weft_cancel_disarm(a));
    ASSERT_TRUE(weft_cancel_disarm(b));
    weft_cancel_token_destroy(a);
    weft_cancel_token_destroy(b);
}

/* ---- 4. the reason a set's token gives its members ----------------------------------- */

static struct {
    atomic_int started, open;
    char reason[2][WEFT_CANCEL_REASON_MAX];
    weft_status check[2];
    char message[2][WEFT_CANCEL_REASON_MAX];
} R;

static int r_wait(weft_ctx *ctx, void *arg) {
    int i = (int)(intptr_t)arg;
    atomic_fetch_add(&R.started, 1);
    if (!wait_flag(&R.open, 1, 20.0)) return 1;
    R.check[i] = weft_ctx_check(ctx);
    snprintf(R.message[i], sizeof R.message[i], "%s", weft_last_error_message());
    snprintf(R.reason[i], sizeof R.reason[i], "%s", weft_ctx_cancel_reason(ctx));
    return 0;
}

TEST(members_of_a_run_many_set_cancelled_through_its_token_see_the_token_reason) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tfs[3] = {make_taskflow("m0"), make_taskflow("m1"), NULL /* refused: no run */};
    atomic_int after = 0;
    for (int i = 0; i < 2; i++) {
        weft_task t = must_emplace(tfs[i], r_wait, (void *)(intptr_t)i);
        ASSERT_OK(weft_precede(t, must_emplace(tfs[i], bump, &after)));
    }
    weft_cancel_token *tok = new_token();
    watchdog_start(30);
    weft_future *all = NULL;
    ASSERT_OK(weft_run_many(ex, tfs, 3, &all));
    ASSERT_OK(weft_cancel_attach(tok, all));
    ASSERT_TRUE(wait_flag(&R.started, 2, 20.0));
    ASSERT_OK(weft_cancel_token_cancel_with(tok, "quota spent"));
    atomic_store(&R.open, 1);
    ASSERT_STATUS(weft_future_wait(all), WEFT_ECANCELED);
    for (int i = 0; i < 2; i++) {
        ASSERT_STATUS(R.check[i], WEFT_ECANCELED);
        ASSERT_STREQ(R.reason[i], "quota spent");
        ASSERT_STREQ(R.message[i], "quota spent");
        ASSERT_STATUS(weft_run_many_status(all, (size_t)i), WEFT_ECANCELED);
    }
    ASSERT_STATUS(weft_run_many_status(all, 2), WEFT_EINVAL);
    ASSERT_EQ(atomic_load(&after), 0);
    weft_future_destroy(all);
    watchdog_stop();
    weft_cancel_token_destroy(tok);
    weft_executor_destroy(ex);
    for (int i = 0; i < 2; i++) ASSERT_OK(weft_taskflow_destroy(tfs[i]));
}

static int g_wait(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return wait_flag(arg, 1, 20.0) ? 0 : 1;
}

/* All the records or none: a token that could not be attached cancels
 * nothing, and leaves nothing behind. */
TEST(a_token_attached_to_a_set_without_memory_attaches_to_no_member) {
    weft_set_allocator(&counting);
    fail_allocation(0);
    long long base = atomic_load(&A.outstanding);
    weft_executor *ex = make_executor(2);
    weft_taskflow *tfs[2] = {make_taskflow("m0"), make_taskflow("m1")};
    atomic_int open = 0;
    for (int i = 0; i < 2; i++) must_emplace(tfs[i], g_wait, &open);
    watchdog_start(30);
    weft_future *all = NULL;
    ASSERT_OK(weft_run_many(ex, tfs, 2, &all));
    for (long k = 1; k <= 3; k++) { /* the records of member 0, member 1, the set */
        weft_cancel_token *tok = new_token();
        fail_allocation(k);
        ASSERT_STATUS(weft_cancel_attach(tok, all), WEFT_ENOMEM);
        fail_allocation(0);
        ASSERT_OK(weft_cancel_token_cancel(tok));
        weft_cancel_token_destroy(tok);
        ASSERT_STATUS(weft_run_many_status(all, 0), WEFT_EAGAIN);
        ASSERT_STATUS(weft_run_many_status(all, 1), WEFT_EAGAIN);
    }
    atomic_store(&open, 1);
    ASSERT_OK(weft_future_wait(all));
    weft_future_destroy(all);
    watchdog_stop();
    weft_executor_destroy(ex);
    for (int i = 0; i < 2; i++) ASSERT_OK(weft_taskflow_destroy(tfs[i]));
    ASSERT_EQ(atomic_load(&A.outstanding), base);
}

/* ---- 5. placeholders in the metrics ------------------------------------------------- */

static weft_worker_metrics totals(weft_executor *ex) {
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    return m.total;
}

static uint64_t hist_sum(const weft_worker_metrics *t) {
    uint64_t s = 0;
    for (int i = 0; i < WEFT_METRICS_BUCKETS; i++) s += t->histogram[i];
    return s;
}

static atomic_int obs_begins, obs_ends;
static void on_begin(void *u, const weft_task_event *ev) {
    (void)u, (void)ev;
    atomic_fetch_add(&obs_begins, 1);
}
static void on_end(void *u, const weft_task_event *ev) {
    (void)u;
    if (ev->outcome == WEFT_TASK_SUCCEEDED) atomic_fetch_add(&obs_ends, 1);
}

TEST(placeholder_tasks_that_run_count_as_run_as_those_skipped_count_as_skipped) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("shape");
    atomic_int count = 0;
    /* A placeholder source (sources.c), a placeholder after a task (the
     * successor path), a task with its work set back to none, and plain tasks. */
    weft_task p0 = weft_placeholder(tf), a = must_emplace(tf, bump, &count), p1 = weft_placeholder(tf);
    weft_task z = must_emplace(tf, bump, &count), b = must_emplace(tf, bump, &count);
    ASSERT_FALSE(weft_task_is_null(p0));
    ASSERT_FALSE(weft_task_is_null(p1));
    ASSERT_OK(weft_task_set_work(z, NULL, NULL));
    ASSERT_OK(weft_precede(p0, a));
    ASSERT_OK(weft_precede(a, p1));
    ASSERT_OK(weft_precede(p1, z));
    ASSERT_OK(weft_precede(z, b));
    const uint64_t n = weft_taskflow_num_tasks(tf); /* 5 */
    ASSERT_OK(weft_metrics_enable(ex, true));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    weft_worker_metrics t = totals(ex);
    ASSERT_EQ(atomic_load(&count), 2);
    ASSERT_EQ(t.tasks, n);
    ASSERT_EQ(t.succeeded, n);
    ASSERT_EQ(t.skipped, 0u);
    ASSERT_EQ(hist_sum(&t), n);
    /* The same run cancelled before it starts: every task is skipped. */
    ASSERT_OK(weft_metrics_enable(ex, true));
    weft_cancel_token *tok = new_token();
    ASSERT_OK(weft_cancel_token_cancel(tok));
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_OK(weft_cancel_attach(tok, f));
    weft_run_info info;
    (void)weft_future_wait(f);
    ASSERT_OK(weft_future_info(f, &info));
    weft_future_destroy(f);
    t = totals(ex);
    ASSERT_EQ(t.tasks + t.skipped, n);
    ASSERT_EQ(info.skipped, t.skipped);
    /* Instances of weft_run_n_parallel: 3 x 5. */
    ASSERT_OK(weft_metrics_enable(ex, true));
    ASSERT_OK(weft_run_n_parallel(ex, tf, 3, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    t = totals(ex);
    ASSERT_EQ(t.tasks, 3 * n);
    ASSERT_EQ(hist_sum(&t), 3 * n);
    weft_cancel_token_destroy(tok);
    weft_executor_destroy(ex);
    /* An observer hears of each as of any task that runs. */
    weft_observer obs = {.task_begin = on_begin, .task_end = on_end};
    weft_executor_config cfg = {.workers = 2, .observer = &obs};
    weft_status st;
    ex = weft_executor_create(&cfg, &st);
    ASSERT_OK(st);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ((uint64_t)atomic_load(&obs_begins), n);
    ASSERT_EQ((uint64_t)atomic_load(&obs_ends), n);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}
