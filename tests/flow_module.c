/* Modules: a taskflow run as one task of another; one body shared by several
 * modules and runs at once (its runs queue, never overlap); a body that would
 * wait for itself; failures inside a body. */
#define _GNU_SOURCE
#include "test_util.h"

/* A body whose tasks check they never overlap with another run of the body. */
struct body {
    atomic_int active, overlap, runs;
};
static int body_enter(weft_ctx *ctx, void *arg) {
    struct body *b = arg;
    if (atomic_fetch_add(&b->active, 1) != 0) atomic_fetch_add(&b->overlap, 1);
    return 0;
}
static int body_leave(weft_ctx *ctx, void *arg) {
    struct body *b = arg;
    atomic_fetch_add(&b->runs, 1);
    atomic_fetch_sub(&b->active, 1);
    return 0;
}

static weft_taskflow *make_body(struct body *b) {
    weft_taskflow *tf = make_taskflow("body");
    weft_task in = must_emplace(tf, body_enter, b), out = must_emplace(tf, body_leave, b);
    for (int i = 0; i < 4; i++) {
        weft_task mid = must_emplace(tf, noop, NULL);
        ASSERT_OK(weft_precede(in, mid));
        ASSERT_OK(weft_precede(mid, out));
    }
    return tf;
}

struct order {
    atomic_int before_seen, after_seen;
    struct body *b;
};
static int see_before(weft_ctx *ctx, void *arg) {
    struct order *o = arg;
    atomic_store(&o->before_seen, atomic_load(&o->b->runs));
    return 0;
}
static int see_after(weft_ctx *ctx, void *arg) {
    struct order *o = arg;
    atomic_store(&o->after_seen, atomic_load(&o->b->runs));
    return 0;
}

TEST(module_runs_its_body_between_its_predecessors_and_successors) {
    weft_executor *ex = make_executor(2);
    struct body b = {0};
    weft_taskflow *body = make_body(&b);
    weft_taskflow *tf = make_taskflow("parent");
    struct order o = {.b = &b};
    weft_task m = weft_emplace_module(tf, body);
    ASSERT_EQ(weft_task_get_kind(m), WEFT_TASK_MODULE);
    ASSERT_TRUE(weft_task_module(m) == body);
    ASSERT_OK(weft_precede(must_emplace(tf, see_before, &o), m));
    ASSERT_OK(weft_precede(m, must_emplace(tf, see_after, &o)));
    for (int i = 1; i <= 3; i++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&o.before_seen), i - 1);
        ASSERT_EQ(atomic_load(&o.after_seen), i);
    }
    ASSERT_STATUS(weft_taskflow_destroy(body) == WEFT_OK ? WEFT_OK : WEFT_EBUSY, WEFT_OK);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(one_body_in_several_parents_run_at_once_never_overlaps) {
    weft_executor *ex = make_executor(2);
    struct body b = {0};
    weft_taskflow *body = make_body(&b);
    enum { P = 4, M = 3, RUNS = 20 };
    weft_taskflow *parents[P];
    for (int p = 0; p < P; p++) {
        parents[p] = make_taskflow("parent");
        weft_task prev = WEFT_TASK_NULL;
        for (int k = 0; k < M; k++) { /* a chain of modules plus a parallel one */
            weft_task m = weft_emplace_module(parents[p], body);
            ASSERT_FALSE(weft_task_is_null(m));
            if (!weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, m));
            prev = m;
        }
        ASSERT_FALSE(weft_task_is_null(weft_emplace_module(parents[p], body)));
    }
    weft_future *f[P + 1];
    int runs = (int)test_scale(RUNS);
    for (int r = 0; r < runs; r++) {
        for (int p = 0; p < P; p++) ASSERT_OK(weft_run(ex, parents[p], &f[p]));
        ASSERT_OK(weft_run(ex, body, &f[P])); /* and the body on its own */
        for (int p = 0; p <= P; p++) {
            ASSERT_OK(weft_future_wait(f[p]));
            weft_future_destroy(f[p]);
        }
    }
    ASSERT_EQ(atomic_load(&b.runs), runs * (P * (M + 1) + 1));
    ASSERT_EQ(atomic_load(&b.overlap), 0);
    for (int p = 0; p < P; p++) ASSERT_OK(weft_taskflow_destroy(parents[p]));
    ASSERT_OK(weft_taskflow_destroy(body));
    weft_executor_destroy(ex);
}

TEST(module_containing_itself_fails_with_edeadlk) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *a = make_taskflow("a"), *b = make_taskflow("b");
    ASSERT_TRUE(weft_task_is_null(weft_emplace_module(a, a)));
    ASSERT_STATUS(weft_taskflow_last_error(a), WEFT_EINVAL);
    ASSERT_TRUE(weft_task_is_null(weft_emplace_module(a, NULL)));
    weft_task ma = weft_emplace_module(a, b);
    ASSERT_FALSE(weft_task_is_null(ma));
    weft_task mb = weft_emplace_module(b, a);
    ASSERT_OK(weft_task_set_name(mb, "b-runs-a"));
    weft_future *f;
    ASSERT_OK(weft_run(ex, a, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, WEFT_EDEADLK);
    ASSERT_STREQ(info.failed_task, "b-runs-a");
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(a));
    ASSERT_OK(weft_taskflow_destroy(b));
    weft_executor_destroy(ex);
}

static int fail9(weft_ctx *ctx, void *arg) { return 9; }

TEST(failing_task_or_strong_cycle_in_a_body_fails_the_parent_run) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *body = make_taskflow("bad-body"), *tf = make_taskflow("p");
    atomic_int after = 0;
    weft_task bad = must_emplace(body, fail9, NULL);
    ASSERT_OK(weft_task_set_name(bad, "nine"));
    weft_task m = weft_emplace_module(tf, body);
    ASSERT_OK(weft_precede(m, must_emplace(tf, bump, &after)));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, 9);
    ASSERT_STREQ(info.failed_task, "nine");
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&after), 0);
    /* now a strong cycle in the body */
    ASSERT_OK(weft_taskflow_clear(body));
    weft_task x = must_emplace(body, noop, NULL), y = must_emplace(body, noop, NULL);
    ASSERT_OK(weft_precede(x, y));
    ASSERT_OK(weft_precede(y, x));
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, WEFT_ECYCLE);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
    weft_executor_destroy(ex);
}

TEST(dot_draws_modules_and_subflows_as_clusters) {
    struct body b = {0};
    weft_taskflow *body = make_body(&b), *tf = make_taskflow("outer");
    weft_task m = weft_emplace_module(tf, body);
    ASSERT_OK(weft_task_set_name(m, "mod"));
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ASSERT_OK(weft_taskflow_dump_dot(tf, out));
    fclose(out);
    ASSERT_TRUE(strstr(text, "subgraph cluster_1") != NULL);
    ASSERT_TRUE(strstr(text, "module: mod [body]") != NULL);
    free(text);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
}
