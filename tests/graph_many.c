/* weft_run_many and weft_run_n_parallel. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

static int count_task(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

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
