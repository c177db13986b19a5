/* weft_run_many and weft_run_n_parallel. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "graph2_util.h"

#include <pthread.h>
#include <string.h>

static int fail_task(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    return 7;
}

TEST(run_many_reports_each_member_and_the_first_failure) {
    weft_executor *ex = make_executor(2);
    atomic_int ran = 0;
    weft_taskflow *ok1 = make_taskflow("ok1"), *bad = make_taskflow("bad"), *ok2 = make_taskflow("ok2");
    must_emplace(ok1, count_task, &ran);
    must_emplace(ok2, count_task, &ran);
    weft_task f = must_emplace(bad, fail_task, NULL);
    ASSERT_OK(weft_task_set_name(f, "boom"));
    weft_taskflow *tfs[] = {ok1, bad, NULL, ok2};
    weft_future *all = NULL;
    ASSERT_OK(weft_run_many(ex, tfs, 4, &all));
    ASSERT_STATUS(weft_future_wait(all), WEFT_ETASK);
    ASSERT_EQ(atomic_load(&ran), 2); /* the failure stopped no other member */
    ASSERT_OK(weft_run_many_status(all, 0));
    ASSERT_STATUS(weft_run_many_status(all, 1), WEFT_ETASK);
    ASSERT_STATUS(weft_run_many_status(all, 2), WEFT_EINVAL);
    ASSERT_OK(weft_run_many_status(all, 3));
    ASSERT_STATUS(weft_run_many_status(all, 4), WEFT_EINVAL);
    weft_run_info info;
    ASSERT_OK(weft_run_many_info(all, 1, &info));
    ASSERT_EQ(info.task_code, 7);
    ASSERT_STREQ(info.failed_task, "boom");
    ASSERT_OK(weft_future_info(all, &info));
    ASSERT_EQ(info.task_code, 7);
    ASSERT_STREQ(info.failed_task, "boom");
    ASSERT_EQ(info.iterations, 2); /* members that succeeded */
    weft_future_destroy(all);
    weft_status st[4];
    ASSERT_STATUS(weft_run_many_and_wait(ex, tfs, 4, st), WEFT_ETASK);
    ASSERT_OK(st[0]);
    ASSERT_STATUS(st[1], WEFT_ETASK);
    ASSERT_STATUS(st[2], WEFT_EINVAL);
    ASSERT_OK(st[3]);
    ASSERT_OK(weft_run_many_and_wait(ex, NULL, 0, NULL));
    ASSERT_STATUS(weft_run_many(ex, NULL, 1, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_many_status(NULL, 0), WEFT_EINVAL);
    weft_taskflow_destroy(ok1), weft_taskflow_destroy(bad), weft_taskflow_destroy(ok2);
    weft_executor_destroy(ex);
}

TEST(run_many_detached_set_frees_itself) {
    weft_executor *ex = make_executor(2);
    atomic_int ran = 0;
    weft_taskflow *a = make_taskflow("a"), *b = make_taskflow("b");
    must_emplace(a, count_task, &ran);
    must_emplace(b, count_task, &ran);
    weft_taskflow *tfs[] = {a, b, a};
    for (int i = 0; i < 50; i++) ASSERT_OK(weft_run_many(ex, tfs, 3, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran), 150);
    weft_taskflow_destroy(a), weft_taskflow_destroy(b);
    weft_executor_destroy(ex);
}

/* ---- parallel run_n ---------------------------------------------------------- */

#define MAXN 64
struct inst_counts {
    atomic_int seen[MAXN];
    atomic_int order_errors;
    atomic_int stage[MAXN]; /* per instance: the chain's position */
    int fail_at; /* instance whose middle task fails; -1: none */
};

static int stage_task(weft_ctx *cx, void *arg, int stage) {
    struct inst_counts *c = arg;
    uint64_t i = weft_ctx_iteration(cx);
    if (i >= MAXN) return 99;
    if (atomic_fetch_add(&c->stage[i], 1) != stage) atomic_fetch_add(&c->order_errors, 1);
    atomic_fetch_add(&c->seen[i], 1);
    return (stage == 1 && (int)i == c->fail_at) ? 5 : 0;
}
static int s0(weft_ctx *cx, void *arg) { return stage_task(cx, arg, 0); }
static int s1(weft_ctx *cx, void *arg) { return stage_task(cx, arg, 1); }
static int s2(weft_ctx *cx, void *arg) { return stage_task(cx, arg, 2); }

TEST(parallel_run_n_runs_every_instance_once_with_its_index) {
    weft_executor *ex = make_executor(4);
    weft_taskflow *tf = make_taskflow("chain");
    static struct inst_counts c;
    weft_task t[3] = {must_emplace(tf, s0, &c), must_emplace(tf, s1, &c), must_emplace(tf, s2, &c)};
    ASSERT_OK(weft_linearize(t, 3));
    const uint64_t ns[] = {1, 2, 64};
    for (int k = 0; k < 3; k++) {
        memset(&c, 0, sizeof c);
        c.fail_at = -1;
        weft_future *f;
        ASSERT_OK(weft_run_n_parallel(ex, tf, ns[k], &f));
        ASSERT_OK(weft_future_wait(f));
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.iterations, ns[k]);
        weft_future_destroy(f);
        for (uint64_t i = 0; i < MAXN; i++) ASSERT_EQ(atomic_load(&c.seen[i]), i < ns[k] ? 3 : 0);
        ASSERT_EQ(atomic_load(&c.order_errors), 0);
    }
    ASSERT_OK(weft_run_n_parallel(ex, tf, 0, NULL)); /* n == 0: done at once */
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

TEST(parallel_run_n_failing_instance_fails_the_run) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("chain");
    static struct inst_counts c;
    memset(&c, 0, sizeof c);
    c.fail_at = 5;
    weft_task t[3] = {must_emplace(tf, s0, &c), must_emplace(tf, s1, &c), must_emplace(tf, s2, &c)};
    ASSERT_OK(weft_task_set_name(t[1], "middle"));
    ASSERT_OK(weft_linearize(t, 3));
    weft_future *f;
    ASSERT_OK(weft_run_n_parallel(ex, tf, 16, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, 5);
    ASSERT_STREQ(info.failed_task, "middle");
    ASSERT_LT(info.iterations, 16);
    ASSERT_EQ(atomic_load(&c.seen[5]), 2); /* its last task was skipped */
    ASSERT_GE(info.skipped, 1);
    weft_future_destroy(f);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

static int sub_fn(weft_ctx *cx, weft_subflow *sf, void *arg) {
    (void)cx, (void)sf, (void)arg;
    return 0;
}

TEST(parallel_run_n_refuses_tasks_it_cannot_share) {
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow("sub");
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, sub_fn, NULL)));
    ASSERT_STATUS(weft_run_n_parallel(ex, tf, 2, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_n_parallel(ex, NULL, 2, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_run_and_wait(ex, tf)); /* nothing was left counted in */
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

static int one_token(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) >= 3) weft_pipeflow_stop(pf);
    return 0;
}

/* A pipeline runs one run at a time: before, weft_run_n_parallel accepted its
 * task and every instance but one failed at run time with task code
 * WEFT_EBUSY (on one worker it happened to pass).  Refused up front now, also
 * in a composition's copy; the task stops counting as a pipeline's once
 * weft_task_set_work gives it other work. */
TEST(parallel_run_n_refuses_a_pipeline_task_and_its_copies) {
    weft_executor *ex = make_executor(2);
    weft_status err;
    weft_stage st[] = {{WEFT_STAGE_SERIAL, one_token, NULL, "src"}};
    weft_pipeline *p = weft_pipeline_create(2, st, 1, &err);
    ASSERT_NOT_NULL(p);
    weft_taskflow *tf = make_taskflow("piped");
    weft_task t = weft_pipeline_emplace(tf, p);
    ASSERT_FALSE(weft_task_is_null(t));
    ASSERT_STATUS(weft_run_n_parallel(ex, tf, 2, NULL), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "pipeline") != NULL);
    ASSERT_OK(weft_run_and_wait(ex, tf)); /* a plain run is fine */

    weft_composition *c = weft_composition_create("with-pipe", &err);
    ASSERT_NOT_NULL(c);
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(weft_composition_graph(c), p)));
    weft_taskflow *dst = make_taskflow("copy");
    weft_instance inst;
    ASSERT_OK(weft_composition_instantiate(c, dst, "i", &inst));
    ASSERT_STATUS(weft_run_n_parallel(ex, dst, 2, NULL), WEFT_EINVAL);

    atomic_int ran = 0;
    ASSERT_OK(weft_task_set_work(t, count_task, &ran));
    weft_future *f;
    ASSERT_OK(weft_run_n_parallel(ex, tf, 3, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&ran), 3);
    weft_taskflow_destroy(dst);
    weft_composition_destroy(c);
    weft_taskflow_destroy(tf);
    weft_pipeline_destroy(p);
    weft_executor_destroy(ex);
}

static int record_iteration(weft_ctx *cx, void *arg) {
    uint64_t *seen = arg;
    seen[weft_ctx_iteration(cx)]++;
    return 0;
}

TEST(serial_run_n_tasks_see_their_iteration) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("it");
    uint64_t seen[8] = {0};
    must_emplace(tf, record_iteration, seen);
    weft_future *f;
    ASSERT_OK(weft_run_n(ex, tf, 8, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    for (int i = 0; i < 8; i++) ASSERT_EQ(seen[i], 1);
    ASSERT_EQ(weft_ctx_iteration(NULL), 0);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* ---- awkward paths ----------------------------------------------------------- */

/* The same taskflow twice in a set: two runs of it, one after the other (runs
 * of one taskflow queue), each reported. */
TEST(run_many_with_a_taskflow_twice_runs_it_twice) {
    weft_executor *ex = make_executor(2);
    atomic_int ran = 0;
    weft_taskflow *a = make_taskflow("a");
    weft_task t0 = must_emplace(a, count_task, &ran), t1 = must_emplace(a, count_task, &ran);
    ASSERT_OK(weft_precede(t0, t1));
    weft_taskflow *tfs[] = {a, a};
    weft_future *all;
    ASSERT_OK(weft_run_many(ex, tfs, 2, &all));
    ASSERT_OK(weft_future_wait(all));
    ASSERT_EQ(atomic_load(&ran), 4);
    ASSERT_OK(weft_run_many_status(all, 0));
    ASSERT_OK(weft_run_many_status(all, 1));
    weft_run_info info;
    ASSERT_OK(weft_future_info(all, &info));
    ASSERT_EQ(info.iterations, 2);
    weft_future_destroy(all);
    weft_taskflow_destroy(a);
    weft_executor_destroy(ex);
}

/* An empty set is a set: its future is ready at once with nothing to report,
 * and cancelling it finds it finished. */
TEST(run_many_of_an_empty_set_is_ready_at_once) {
    weft_executor *ex = make_executor(1);
    weft_future *all = NULL;
    ASSERT_OK(weft_run_many(ex, NULL, 0, &all));
    ASSERT_NOT_NULL(all);
    ASSERT_OK(weft_future_wait_for(all, 5 * SEC));
    weft_run_info info;
    ASSERT_OK(weft_future_info(all, &info));
    ASSERT_EQ(info.iterations, 0);
    ASSERT_EQ(info.skipped, 0);
    ASSERT_STATUS(weft_run_many_status(all, 0), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_many_cancel(all), WEFT_ENOENT);
    weft_future_destroy(all);
    ASSERT_OK(weft_run_many(ex, NULL, 0, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_executor_destroy(ex);
}

/* A member cannot be edited while the set runs it; the set's future being
 * ready means the member can be (its run ended before). */
TEST(run_many_member_is_busy_until_the_set_is_ready) {
    weft_executor *ex = make_executor(2);
    atomic_int gate = 0, ran = 0;
    weft_taskflow *a = make_taskflow("a"), *b = make_taskflow("b");
    weft_task g = must_emplace(a, wait_gate, &gate);
    weft_task c = must_emplace(b, count_task, &ran);
    weft_taskflow *tfs[] = {a, b};
    weft_future *all;
    ASSERT_OK(weft_run_many(ex, tfs, 2, &all));
    ASSERT_STATUS(weft_task_erase(g), WEFT_EBUSY);
    ASSERT_TRUE(weft_task_is_null(weft_emplace(a, count_task, &ran)));
    ASSERT_STATUS(weft_taskflow_last_error(a), WEFT_EBUSY);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(all));
    weft_future_destroy(all);
    ASSERT_OK(weft_task_erase(g));
    ASSERT_OK(weft_task_erase(c));
    ASSERT_EQ(weft_taskflow_num_tasks(a) + weft_taskflow_num_tasks(b), 0);
    weft_taskflow_destroy(a), weft_taskflow_destroy(b);
    weft_executor_destroy(ex);
}

/* Cancelling the set cancels its members' runs, queued or going. */
TEST(run_many_cancel_stops_every_member) {
    weft_executor *ex = make_executor(2);
    atomic_int gate = 0, ran = 0;
    weft_taskflow *a = make_taskflow("a");
    weft_task g = must_emplace(a, wait_gate, &gate), after = must_emplace(a, count_task, &ran);
    ASSERT_OK(weft_precede(g, after));
    weft_taskflow *tfs[] = {a, a, a};
    weft_future *all;
    ASSERT_OK(weft_run_many(ex, tfs, 3, &all));
    ASSERT_OK(weft_run_many_cancel(all));
    atomic_store(&gate, 1);
    ASSERT_STATUS(weft_future_wait(all), WEFT_ECANCELED);
    for (size_t i = 0; i < 3; i++) ASSERT_STATUS(weft_run_many_status(all, i), WEFT_ECANCELED);
    ASSERT_EQ(atomic_load(&ran), 0);
    weft_future_destroy(all);
    weft_taskflow_destroy(a);
    weft_executor_destroy(ex);
}

/* "weft_future_cancel on it cancels nothing submitted": so the set's status
 * is its members', WEFT_OK when all succeeded.  It was WEFT_ECANCELED with
 * every member WEFT_OK and every task run.  A token attached to the set
 * cancels the members (weft_cancel_attach, session 40: it stopped nothing),
 * and the set's status is still its members'. */
TEST(run_many_cancel_of_the_set_alone_leaves_its_status_to_the_members) {
    weft_executor *ex = make_executor(2);
    atomic_int gate = 0, ran = 0;
    weft_taskflow *a = make_taskflow("a");
    weft_task g = must_emplace(a, wait_gate, &gate), after = must_emplace(a, count_task, &ran);
    ASSERT_OK(weft_precede(g, after));
    weft_taskflow *tfs[] = {a, a, a};
    for (int how = 0; how < 2; how++) {
        atomic_store(&gate, 0);
        atomic_store(&ran, 0);
        weft_future *all;
        ASSERT_OK(weft_run_many(ex, tfs, 3, &all));
        weft_cancel_token *t = NULL;
        if (how == 0) {
            ASSERT_OK(weft_future_cancel(all));
        } else {
            t = weft_cancel_token_create(NULL, NULL);
            ASSERT_NOT_NULL(t);
            ASSERT_OK(weft_cancel_attach(t, all));
            ASSERT_OK(weft_cancel_token_cancel(t));
        }
        atomic_store(&gate, 1);
        weft_status want = how == 0 ? WEFT_OK : WEFT_ECANCELED;
        ASSERT_STATUS(weft_future_wait(all), want);
        for (size_t i = 0; i < 3; i++) ASSERT_STATUS(weft_run_many_status(all, i), want);
        ASSERT_EQ(atomic_load(&ran), how == 0 ? 3 : 0);
        weft_future_destroy(all);
        weft_cancel_token_destroy(t);
    }
    weft_taskflow_destroy(a);
    weft_executor_destroy(ex);
}

/* ---- parallel run_n: sizes and memory ------------------------------------------ */


/* n = 0, a huge n and every allocation failing in turn: WEFT_OK with every
 * instance run, or WEFT_ENOMEM with nothing run and the taskflow free to
 * edit and run again (no run left counted in). */
TEST(parallel_run_n_sizes_under_a_failing_allocator_leave_the_taskflow_usable) {
    install_failing_allocator();
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("p");
    atomic_int ran = 0;
    weft_task a = must_emplace(tf, count_task, &ran), b = must_emplace(tf, count_task, &ran);
    ASSERT_OK(weft_precede(a, b));
    weft_future *f = NULL;
    ASSERT_STATUS(weft_run_n_parallel(ex, tf, UINT64_MAX, &f), WEFT_ENOMEM);
    ASSERT_NULL(f);
    ASSERT_STATUS(weft_run_n_parallel(ex, tf, (uint64_t)1 << 60, NULL), WEFT_ENOMEM);
    const uint64_t ns[] = {0, 3};
    for (int k = 0; k < 2; k++) {
        for (long at = 1;; at++) {
            atomic_store(&ran, 0);
            atomic_store(&calls, 0);
            atomic_store(&fail_at, at);
            weft_status st = weft_run_n_parallel(ex, tf, ns[k], &f);
            long used = atomic_load(&calls);
            atomic_store(&fail_at, 0);
            if (st == WEFT_OK) {
                ASSERT_OK(weft_future_wait(f));
                weft_run_info info;
                ASSERT_OK(weft_future_info(f, &info));
                ASSERT_EQ(info.iterations, ns[k]);
                weft_future_destroy(f);
                ASSERT_EQ(atomic_load(&ran), 2 * (int)ns[k]);
            } else {
                ASSERT_STATUS(st, WEFT_ENOMEM);
                ASSERT_NULL(f);
                ASSERT_EQ(atomic_load(&ran), 0);
            }
            ASSERT_OK(weft_executor_wait_all(ex));
            ASSERT_OK(weft_task_set_name(a, "a")); /* editable: nothing counted in */
            if (used < at) break; /* every allocation of the call was failed once */
        }
    }
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
}

static int record_async_iteration(weft_ctx *cx, void *arg) {
    *(uint64_t *)arg = weft_ctx_iteration(cx) + 1;
    return 0;
}

static int nested_iteration(weft_ctx *cx, weft_subflow *sf, void *arg) {
    uint64_t *seen = arg;
    seen[weft_ctx_iteration(cx)]++;
    /* A task of the subflow's own graph sees the outermost run's iteration. */
    weft_task t = weft_emplace(weft_subflow_graph(sf), record_iteration, seen + 4);
    return weft_task_is_null(t) ? 1 : 0;
}

/* weft_ctx_iteration where no graph task is running: 0 on the calling thread
 * (no context), in an async task, and the top run's iteration in a subflow. */
TEST(ctx_iteration_outside_graph_tasks_is_zero) {
    ASSERT_EQ(weft_ctx_iteration(weft_current_ctx()), 0);
    weft_executor *ex = make_executor(2);
    uint64_t got = 99;
    weft_future *f;
    ASSERT_OK(weft_async(ex, record_async_iteration, &got, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(got, 1);
    weft_taskflow *tf = make_taskflow("sub");
    uint64_t seen[8] = {0};
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, nested_iteration, seen)));
    ASSERT_OK(weft_run_n(ex, tf, 4, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    for (int i = 0; i < 8; i++) ASSERT_EQ(seen[i], 1);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* ---- parallel instances beside a run with priorities ---- */

typedef struct prio_runner {
    weft_executor *ex;
    weft_taskflow *tf;
    atomic_int stop;
} prio_runner;

static void *run_with_priorities(void *arg) {
    prio_runner *p = arg;
    while (!atomic_load(&p->stop)) ASSERT_OK(weft_run_with_priority(p->ex, p->tf, WEFT_PRIORITY_HIGH, NULL));
    return NULL;
}

/* "does not queue behind other runs of tf (it shares no state with them)":
 * before, its check of the task kinds read every node's job function while a
 * run with priorities rewrote them on the workers (TSan, 50 of 50).  Checked by
 * TSan (make test-tsan); here the counts must hold. */
TEST(parallel_run_n_beside_a_run_with_priorities_of_the_same_taskflow) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("both");
    atomic_int ran = 0;
    for (int i = 0; i < 8; i++) must_emplace(tf, count_task, &ran);
    prio_runner p = {ex, tf, 0};
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, run_with_priorities, &p), 0);
    for (int i = 0; i < 200; i++) {
        weft_future *f;
        ASSERT_OK(weft_run_n_parallel(ex, tf, 2, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
    }
    atomic_store(&p.stop, 1);
    pthread_join(t, NULL);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran) % 8, 0);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* A refused submission sets *out to NULL, whichever run call refused it, as
 * weft_run_many and weft_run_n_parallel do (weft_run left it as it was, so a
 * caller's stale pointer survived a failure). */
TEST(every_run_call_that_refuses_sets_its_out_to_null) {
    weft_future *sentinel = (weft_future *)(uintptr_t)0x1;
    weft_future *f = sentinel;
    ASSERT_STATUS(weft_run(NULL, NULL, &f), WEFT_EINVAL);
    ASSERT_NULL(f);
    f = sentinel;
    ASSERT_STATUS(weft_run_n(NULL, NULL, 3, &f), WEFT_EINVAL);
    ASSERT_NULL(f);
    f = sentinel;
    ASSERT_STATUS(weft_run_until(NULL, NULL, NULL, NULL, &f), WEFT_EINVAL);
    ASSERT_NULL(f);
    f = sentinel;
    ASSERT_STATUS(weft_run_with_priority(NULL, NULL, (weft_priority)99, &f), WEFT_EINVAL);
    ASSERT_NULL(f);
}
