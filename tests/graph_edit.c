/* Graph editing: erasing tasks, removing edges, linearize, slot reuse. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

struct log {
    atomic_int n;
    int order[32];
};

static int log_task(weft_ctx *cx, void *arg) {
    struct log *l = arg;
    int i = atomic_fetch_add(&l->n, 1);
    if (i < 32) l->order[i] = (int)weft_task_index(weft_ctx_task(cx));
    return 0;
}

TEST(erase_task_with_edges_both_ways_keeps_the_rest_runnable) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("e");
    struct log l = {0};
    weft_task a = must_emplace(tf, log_task, &l), b = must_emplace(tf, log_task, &l);
    weft_task c = must_emplace(tf, log_task, &l), d = must_emplace(tf, log_task, &l);
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_precede(b, c));
    ASSERT_OK(weft_precede(d, b)); /* b: two in, one out */
    ASSERT_OK(weft_precede(a, c));
    ASSERT_OK(weft_task_set_name(b, "b"));
    ASSERT_OK(weft_task_erase(b));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 3);
    ASSERT_EQ(weft_task_num_successors(a), 1);
    ASSERT_EQ(weft_task_num_successors(d), 0);
    ASSERT_EQ(weft_task_num_dependents(c), 1);
    ASSERT_STATUS(weft_task_erase(b), WEFT_EINVAL); /* twice */
    ASSERT_STATUS(weft_precede(a, b), WEFT_EINVAL);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&l.n), 3);
    int pos_a = -1, pos_c = -1;
    for (int i = 0; i < 3; i++) {
        if (l.order[i] == (int)weft_task_index(a)) pos_a = i;
        if (l.order[i] == (int)weft_task_index(c)) pos_c = i;
    }
    ASSERT_TRUE(pos_a >= 0 && pos_a < pos_c);
    /* The slot is reused, index and all. */
    weft_task e = must_emplace(tf, log_task, &l);
    ASSERT_EQ(weft_task_index(e), 1);
    ASSERT_EQ(weft_task_num_dependents(e), 0);
    ASSERT_STREQ(weft_task_name(e), "");
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 4);
    atomic_store(&l.n, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&l.n), 4);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

TEST(remove_edges_successors_dependents_and_linearize) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("r");
    struct log l = {0};
    weft_task t[4];
    for (int i = 0; i < 4; i++) t[i] = must_emplace(tf, log_task, &l);
    ASSERT_OK(weft_linearize(t, 4));
    ASSERT_EQ(weft_task_num_successors(t[0]), 1);
    ASSERT_OK(weft_edge_remove(t[1], t[2]));
    ASSERT_STATUS(weft_edge_remove(t[1], t[2]), WEFT_ENOENT);
    ASSERT_EQ(weft_task_num_dependents(t[2]), 0);
    ASSERT_OK(weft_precede(t[3], t[0])); /* no cycle now: 2 -> 3 -> 0 -> 1 */
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&l.n), 4);
    ASSERT_EQ(l.order[0], 2);
    ASSERT_EQ(l.order[3], 1);
    ASSERT_OK(weft_task_remove_successors(t[3]));
    ASSERT_EQ(weft_task_num_dependents(t[0]), 0);
    ASSERT_OK(weft_task_remove_dependents(t[3]));
    ASSERT_EQ(weft_task_num_successors(t[2]), 0);
    /* A cycle made by linearize is refused at run time, as any. */
    weft_task cyc[3] = {t[1], t[2], t[0]};
    ASSERT_OK(weft_linearize(cyc, 3));
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ECYCLE);
    ASSERT_OK(weft_task_remove_dependents(t[1]));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    weft_task bad[2] = {t[0], WEFT_TASK_NULL};
    size_t before = weft_task_num_successors(t[0]);
    ASSERT_STATUS(weft_linearize(bad, 2), WEFT_EINVAL);
    ASSERT_EQ(weft_task_num_successors(t[0]), before);
    ASSERT_OK(weft_linearize(NULL, 0));
    ASSERT_STATUS(weft_task_erase(WEFT_TASK_NULL), WEFT_EINVAL);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

static int wait_gate(weft_ctx *cx, void *arg) {
    (void)cx;
    wait_flag(arg, 1, 10.0);
    return 0;
}

TEST(erase_during_a_run_is_ebusy) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("busy");
    atomic_int gate = 0;
    weft_task a = must_emplace(tf, wait_gate, &gate), b = weft_placeholder(tf);
    ASSERT_OK(weft_precede(a, b));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_task_erase(b), WEFT_EBUSY);
    ASSERT_STATUS(weft_edge_remove(a, b), WEFT_EBUSY);
    ASSERT_STATUS(weft_task_remove_successors(a), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EBUSY);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_OK(weft_task_erase(b));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 1);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* ---- out of memory: erase and re-add --------------------------------------- */

static atomic_long calls, fail_at;
static void *f_alloc(void *ctx, size_t n) {
    (void)ctx;
    return atomic_fetch_add(&calls, 1) + 1 == atomic_load(&fail_at) ? NULL : malloc(n);
}
static void *f_realloc(void *ctx, void *p, size_t old, size_t n) {
    (void)ctx, (void)old;
    return atomic_fetch_add(&calls, 1) + 1 == atomic_load(&fail_at) ? NULL : realloc(p, n);
}
static void f_free(void *ctx, void *p, size_t n) {
    (void)ctx, (void)n;
    free(p);
}

/* Retries a builder step until it gets through (one allocation fails once). */
#define RETRY(expr) do { weft_status s_; while ((s_ = (expr)) == WEFT_ENOMEM) {} ASSERT_OK(s_); } while (0)

static weft_task emplace_retry(weft_taskflow *tf, weft_task_fn fn, void *arg) {
    for (;;) {
        weft_task t = weft_emplace(tf, fn, arg);
        if (!weft_task_is_null(t)) return t;
        ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_ENOMEM);
    }
}

TEST(erase_and_readd_under_oom_stay_consistent) {
    weft_executor *ex = make_executor(2);
    for (long at = 1; at < 200; at++) {
        weft_taskflow *tf = make_taskflow("oom");
        struct log l = {0};
        atomic_store(&calls, 0);
        atomic_store(&fail_at, at);
        weft_set_allocator(&(weft_allocator){f_alloc, f_realloc, f_free, NULL});
        weft_task t[8];
        for (int i = 0; i < 8; i++) t[i] = emplace_retry(tf, log_task, &l);
        for (int i = 1; i < 8; i++) RETRY(weft_precede(t[0], t[i])); /* fan-out: a spill array */
        RETRY(weft_task_set_name(t[3], "three"));
        ASSERT_OK(weft_task_erase(t[3]));
        ASSERT_OK(weft_task_erase(t[0]));
        t[0] = emplace_retry(tf, log_task, &l);
        t[3] = emplace_retry(tf, log_task, &l);
        RETRY(weft_linearize(t, 8));
        long used = atomic_load(&calls);
        weft_set_allocator(NULL);
        ASSERT_EQ(weft_taskflow_num_tasks(tf), 8);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&l.n), 8);
        for (int i = 0; i < 8; i++) ASSERT_EQ(l.order[i], (int)weft_task_index(t[i]));
        weft_taskflow_destroy(tf);
        if (used < at) break; /* no failure met: every allocation point was tried */
    }
    weft_executor_destroy(ex);
}
