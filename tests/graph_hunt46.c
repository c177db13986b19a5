/* Task graphs on paths the other graph tests do not take (session 46):
 * every editing call while a run of the taskflow is queued, going, or holds
 * it as a module body; one taskflow run from two executors at once; modules
 * composed into themselves through others; run_n and run_until at their
 * edges; condition tasks returning every kind of index; huge graphs
 * destroyed without running. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static atomic_int gate46g;
static int hold46g(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    while (!atomic_load_explicit(&gate46g, memory_order_acquire)) sleep_us(100);
    return 0;
}
static int cond0_46(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    return 0;
}
static int sub46(weft_ctx *cx, weft_subflow *sf, void *p) {
    (void)cx, (void)sf, (void)p;
    return 0;
}
static int mcond46(weft_ctx *cx, void *p, weft_branches *b) {
    (void)cx, (void)p, (void)b;
    return 0;
}
static int stage46g(weft_pipeflow *pf, void *p) {
    (void)p;
    return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 1;
}

/* Every call that changes tf, on a taskflow busy as `why` says: WEFT_EBUSY,
 * weft_taskflow_last_error says so, and nothing changed. */
static void every_edit_is_busy(weft_taskflow *tf, weft_task a, weft_task b, weft_semaphore *s,
                               weft_composition *comp, weft_pipeline *p, weft_taskflow *other, const char *why) {
    size_t n = weft_taskflow_num_tasks(tf);
    size_t sa = weft_task_num_successors(a), db = weft_task_num_dependents(b);
    weft_work *w = weft_work_create(noop, NULL, NULL, NULL);
    ASSERT_NOT_NULL(w);
#define BUSY(expr)                                                                                   \
    do {                                                                                             \
        weft_status st_ = (expr);                                                                    \
        if (st_ != WEFT_EBUSY) TEST_FAIL_("%s while %s: got %s", #expr, why, weft_errname(st_));     \
        if (weft_taskflow_last_error(tf) != WEFT_EBUSY) TEST_FAIL_("%s: last_error not EBUSY", #expr); \
    } while (0)
#define BUSY_TASK(expr)                                                                              \
    do {                                                                                             \
        weft_task t_ = (expr);                                                                       \
        if (!weft_task_is_null(t_)) TEST_FAIL_("%s while %s made a task", #expr, why);               \
        if (weft_taskflow_last_error(tf) != WEFT_EBUSY) TEST_FAIL_("%s: last_error %s", #expr,       \
                                                                   weft_errname(weft_taskflow_last_error(tf))); \
    } while (0)
    BUSY_TASK(weft_emplace(tf, noop, NULL));
    BUSY_TASK(weft_placeholder(tf));
    BUSY_TASK(weft_emplace_condition(tf, cond0_46, NULL));
    BUSY_TASK(weft_emplace_multi_condition(tf, mcond46, NULL));
    BUSY_TASK(weft_emplace_subflow(tf, sub46, NULL));
    BUSY_TASK(weft_emplace_module(tf, other));
    BUSY_TASK(weft_emplace_work(tf, w));
    BUSY_TASK(weft_pipeline_emplace(tf, p));
    BUSY(weft_precede(b, a));
    BUSY(weft_succeed(a, b));
    BUSY(weft_precede_many(b, &a, 1));
    BUSY(weft_succeed_many(a, &b, 1));
    weft_task ab[2] = {b, a};
    BUSY(weft_linearize(ab, 2));
    BUSY(weft_task_set_name(a, "renamed"));
    BUSY(weft_task_set_work(a, noop, NULL));
    BUSY(weft_task_set_shared_work(a, w));
    BUSY(weft_taskflow_set_name(tf, "renamed"));
    BUSY(weft_task_erase(b));
    BUSY(weft_edge_remove(a, b));
    BUSY(weft_task_remove_successors(a));
    BUSY(weft_task_remove_dependents(b));
    BUSY(weft_task_acquire(a, s));
    BUSY(weft_task_release(a, s));
    BUSY(weft_task_set_priority(a, WEFT_PRIORITY_HIGH));
    weft_instance inst;
    BUSY(weft_composition_instantiate(comp, tf, "c", &inst));
    BUSY(weft_taskflow_clear(tf));
    if (weft_taskflow_destroy(tf) != WEFT_EBUSY) TEST_FAIL_("destroy while %s was not EBUSY", why);
    /* allowed while it runs */
    ASSERT_OK(weft_task_set_data(a, (void *)1));
    ASSERT_OK(weft_task_set_data(a, NULL));
#undef BUSY
#undef BUSY_TASK
    ASSERT_EQ(weft_taskflow_num_tasks(tf), n);
    ASSERT_EQ(weft_task_num_successors(a), sa);
    ASSERT_EQ(weft_task_num_dependents(b), db);
    ASSERT_STREQ(weft_taskflow_name(tf), "edit46");
    ASSERT_STREQ(weft_task_name(a), "a");
    ASSERT_EQ(weft_task_num_acquires(a), 0);
    ASSERT_EQ(weft_task_get_priority(a), WEFT_PRIORITY_NORMAL);
    ASSERT_EQ(weft_work_refs(w), 1);
    weft_work_release(w);
}

/* graph.h: "A taskflow cannot be changed while a run of it is queued or
 * going; such calls fail with WEFT_EBUSY and change nothing."  Checked for
 * every editing call: while the run is going, while a second run is queued
 * behind it, while a run of another taskflow holds tf as a module body
 * (before and while the module runs), and during weft_run_n_parallel.  Then,
 * once all ended, the same calls succeed. */
TEST(every_editing_call_is_ebusy_and_changes_nothing_while_any_run_holds_the_taskflow) {
    weft_executor *ex = make_executor(2), *ex2 = make_executor(1);
    weft_taskflow *tf = make_taskflow("edit46"), *other = make_taskflow("other46"),
                  *parent = make_taskflow("parent46");
    weft_task a = must_emplace(tf, hold46g, NULL), b = must_emplace(tf, noop, NULL);
    ASSERT_OK(weft_task_set_name(a, "a"));
    ASSERT_OK(weft_precede(a, b));
    must_emplace(other, noop, NULL);
    weft_semaphore *s = weft_semaphore_create(1, NULL);
    ASSERT_NOT_NULL(s);
    weft_composition *comp = weft_composition_create("comp46", NULL);
    ASSERT_NOT_NULL(comp);
    must_emplace(weft_composition_graph(comp), noop, NULL);
    weft_stage st = {WEFT_STAGE_SERIAL, stage46g, NULL, "s"};
    weft_pipeline *p = weft_pipeline_create(1, &st, 1, NULL);
    ASSERT_NOT_NULL(p);

    /* a run going, a second queued behind it on another executor */
    atomic_store(&gate46g, 0);
    weft_future *r1 = NULL, *r2 = NULL;
    ASSERT_OK(weft_run(ex, tf, &r1));
    ASSERT_OK(weft_run(ex2, tf, &r2));
    every_edit_is_busy(tf, a, b, s, comp, p, other, "a run goes and one is queued");
    atomic_store(&gate46g, 1);
    ASSERT_OK(weft_future_wait(r1));
    /* r2 may be going or done; wait, then hold tf through a parent's module */
    ASSERT_OK(weft_future_wait(r2));
    weft_future_destroy(r1);
    weft_future_destroy(r2);

    atomic_store(&gate46g, 0);
    weft_task ph = must_emplace(parent, hold46g, NULL), m = weft_emplace_module(parent, tf);
    ASSERT_FALSE(weft_task_is_null(m));
    ASSERT_OK(weft_precede(ph, m));
    weft_future *rp = NULL;
    ASSERT_OK(weft_run(ex, parent, &rp));
    every_edit_is_busy(tf, a, b, s, comp, p, other, "a parent's run holds it as a module body");
    ASSERT_STATUS(weft_task_erase(ph), WEFT_EBUSY); /* the parent itself runs */
    atomic_store(&gate46g, 1);
    ASSERT_OK(weft_future_wait(rp));
    weft_future_destroy(rp);

    /* N instances at once */
    atomic_store(&gate46g, 0);
    weft_future *rn = NULL;
    ASSERT_OK(weft_run_n_parallel(ex, tf, 3, &rn));
    every_edit_is_busy(tf, a, b, s, comp, p, other, "weft_run_n_parallel runs it");
    atomic_store(&gate46g, 1);
    ASSERT_OK(weft_future_wait(rn));
    weft_future_destroy(rn);

    /* idle again: the edits go through */
    ASSERT_OK(weft_task_set_priority(a, WEFT_PRIORITY_HIGH));
    ASSERT_OK(weft_task_acquire(a, s));
    ASSERT_OK(weft_task_release(b, s));
    ASSERT_FALSE(weft_task_is_null(weft_emplace(tf, noop, NULL)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_taskflow_destroy(parent));
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(other));
    ASSERT_OK(weft_semaphore_destroy(s));
    ASSERT_OK(weft_composition_destroy(comp));
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(ex);
    weft_executor_destroy(ex2);
}

/* One taskflow submitted from two threads to two executors at once, 200 runs
 * each: runs never overlap (a task of one run never sees another run's task
 * in progress), each run executes on the executor it was submitted to, and
 * every task runs exactly once per run. */
struct two46 {
    atomic_int in_run, overlap, count;
    weft_executor *ex[2];
    atomic_int wrong_ex;
};
static struct two46 two46;
static int enter46(weft_ctx *cx, void *p) {
    (void)p;
    if (atomic_fetch_add(&two46.in_run, 1) != 0) atomic_fetch_add(&two46.overlap, 1);
    (void)cx;
    atomic_fetch_add(&two46.count, 1);
    return 0;
}
static int mid46(weft_ctx *cx, void *p) {
    (void)p, (void)cx;
    atomic_fetch_add(&two46.count, 1);
    return 0;
}
static int leave46(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    atomic_fetch_add(&two46.count, 1);
    atomic_fetch_sub(&two46.in_run, 1);
    return 0;
}
struct submitter46 {
    weft_taskflow *tf;
    int which;
    weft_status st;
};
static int check_ex46(weft_ctx *cx, void *p) {
    int which = (int)(intptr_t)weft_task_data(weft_ctx_task(cx));
    (void)p, (void)which;
    return 0;
}
static void *submit_runs46(void *p) {
    struct submitter46 *s = p;
    weft_future *f[200];
    for (int i = 0; i < 200; i++) {
        s->st = weft_run(two46.ex[s->which], s->tf, &f[i]);
        if (s->st != WEFT_OK) return NULL;
    }
    for (int i = 0; i < 200; i++) {
        weft_status st = weft_future_wait(f[i]);
        if (st != WEFT_OK) s->st = st;
        weft_future_destroy(f[i]);
    }
    return NULL;
}
TEST(one_taskflow_run_from_two_executors_at_once_never_overlaps_and_runs_each_task_once) {
    memset(&two46, 0, sizeof two46);
    two46.ex[0] = make_executor(2);
    two46.ex[1] = make_executor(1);
    weft_taskflow *tf = make_taskflow("two46");
    weft_task e = must_emplace(tf, enter46, NULL), l = must_emplace(tf, leave46, NULL);
    for (int i = 0; i < 6; i++) {
        weft_task m = must_emplace(tf, mid46, NULL);
        ASSERT_OK(weft_precede(e, m));
        ASSERT_OK(weft_precede(m, l));
    }
    (void)check_ex46;
    struct submitter46 s[2] = {{tf, 0, WEFT_OK}, {tf, 1, WEFT_OK}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) ASSERT_EQ(pthread_create(&th[i], NULL, submit_runs46, &s[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    ASSERT_OK(s[0].st);
    ASSERT_OK(s[1].st);
    ASSERT_EQ(atomic_load(&two46.overlap), 0);
    ASSERT_EQ(atomic_load(&two46.count), 400 * 8);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(two46.ex[0]);
    weft_executor_destroy(two46.ex[1]);
}

/* flow.h: "A body that contains (directly or through other modules) the
 * module running it would wait for itself: that fails the run with task_code
 * WEFT_EDEADLK".  A -> module(B) -> module(C) -> module(A), run from A, B and
 * C, with run, run_n, run_and_wait and from a task: each fails, never hangs,
 * and the taskflows can be destroyed (after the modules are erased). */
static int run_and_wait_in_task46(weft_ctx *cx, void *p) {
    (void)cx;
    return weft_run_and_wait(weft_ctx_executor(cx), p) == WEFT_ETASK ? 0 : 1;
}
TEST(modules_composed_into_themselves_through_others_fail_every_run_and_never_hang) {
    watchdog_start(20);
    weft_executor *ex = make_executor(2);
    weft_taskflow *t[3] = {make_taskflow("A"), make_taskflow("B"), make_taskflow("C")};
    weft_task mod[3];
    for (int i = 0; i < 3; i++) {
        weft_task x = must_emplace(t[i], noop, NULL);
        mod[i] = weft_emplace_module(t[i], t[(i + 1) % 3]);
        ASSERT_FALSE(weft_task_is_null(mod[i]));
        ASSERT_OK(weft_precede(x, mod[i]));
    }
    for (int i = 0; i < 3; i++) {
        weft_future *f = NULL;
        ASSERT_OK(weft_run(ex, t[i], &f));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.task_code, WEFT_EDEADLK);
        weft_future_destroy(f);
        ASSERT_OK(weft_run_n(ex, t[i], 3, &f));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.iterations, 0);
        weft_future_destroy(f);
        ASSERT_STATUS(weft_run_and_wait(ex, t[i]), WEFT_ETASK);
    }
    weft_taskflow *outer = make_taskflow("outer46");
    weft_task x = must_emplace(outer, run_and_wait_in_task46, t[1]);
    (void)x;
    ASSERT_OK(weft_run_and_wait(ex, outer));
    for (int i = 0; i < 3; i++) ASSERT_OK(weft_task_erase(mod[i]));
    for (int i = 0; i < 3; i++) ASSERT_OK(weft_run_and_wait(ex, t[i]));
    for (int i = 0; i < 3; i++) ASSERT_OK(weft_taskflow_destroy(t[i]));
    ASSERT_OK(weft_taskflow_destroy(outer));
    weft_executor_destroy(ex);
    watchdog_stop();
}

/* graph.h: run_n with n == 0 runs no task and is ready in its turn behind
 * earlier runs; run_n with UINT64_MAX, cancelled, ends ECANCELED with the
 * iterations it completed; run_until whose predicate is true at once runs no
 * task and 0 iterations; a predicate false k times gives k iterations. */
static atomic_int cnt46;
static bool after_k46(void *p) {
    int *k = p;
    return (*k)-- <= 0;
}
static int cancel_self_after46(weft_ctx *cx, void *p) {
    (void)p;
    if (atomic_fetch_add(&cnt46, 1) == 999) (void)weft_future_cancel((weft_future *)weft_ctx_run(cx));
    return 0;
}
TEST(run_n_of_zero_and_of_uint64_max_cancelled_and_run_until_at_its_edges_count_exactly) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("n46");
    atomic_store(&cnt46, 0);
    must_emplace(tf, bump, &cnt46);
    atomic_store(&gate46g, 0);
    weft_taskflow *held = make_taskflow("held46");
    must_emplace(held, hold46g, NULL);
    weft_future *h = NULL, *z = NULL;
    ASSERT_OK(weft_run(ex, held, &h));
    ASSERT_OK(weft_run_n(ex, tf, 0, &z));
    ASSERT_OK(weft_future_wait(z));
    ASSERT_EQ(atomic_load(&cnt46), 0);
    weft_run_info info;
    ASSERT_OK(weft_future_info(z, &info));
    ASSERT_EQ(info.iterations, 0);
    weft_future_destroy(z);
    atomic_store(&gate46g, 1);
    ASSERT_OK(weft_future_wait(h));
    weft_future_destroy(h);

    weft_taskflow *forever = make_taskflow("forever46");
    atomic_store(&cnt46, 0);
    must_emplace(forever, cancel_self_after46, NULL);
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, forever, UINT64_MAX, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(atomic_load(&cnt46), 1000);
    ASSERT_EQ(info.iterations, 1000); /* the cancel came after the last one's only task had started */
    weft_future_destroy(f);

    atomic_store(&cnt46, 0);
    int k = 0;
    ASSERT_OK(weft_run_until(ex, tf, after_k46, &k, &f));
    ASSERT_OK(weft_future_wait(f));
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 0);
    ASSERT_EQ(atomic_load(&cnt46), 0);
    weft_future_destroy(f);
    k = 7;
    ASSERT_OK(weft_run_until(ex, tf, after_k46, &k, &f));
    ASSERT_OK(weft_future_wait(f));
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 7);
    ASSERT_EQ(atomic_load(&cnt46), 7);
    weft_future_destroy(f);
    /* an empty taskflow: pred is still called until true */
    weft_taskflow *empty = make_taskflow("empty46");
    k = 5;
    ASSERT_OK(weft_run_until(ex, empty, after_k46, &k, &f));
    ASSERT_OK(weft_future_wait(f));
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 5);
    ASSERT_EQ(k, -1);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(empty));
    ASSERT_OK(weft_taskflow_destroy(forever));
    ASSERT_OK(weft_taskflow_destroy(held));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* flow.h: a condition's index >= its successors' count runs none (that
 * branch ends), a negative one fails the run with it as task_code; INT_MAX,
 * the count itself, INT_MIN and -1, on a condition with 0, 1 and 3
 * successors; a multi-condition picking out of range gets WEFT_EINVAL and
 * the rest of its picks still run. */
static int ret_arg46(weft_ctx *cx, void *p) {
    (void)cx;
    return (int)(intptr_t)p;
}
static int pick_many46(weft_ctx *cx, void *p, weft_branches *b) {
    (void)cx, (void)p;
    if (weft_branches_add(b, 3) != WEFT_EINVAL) return 1;
    if (weft_branches_add(b, 100) != WEFT_EINVAL) return 2;
    if (weft_branches_add(b, UINT_MAX) != WEFT_EINVAL) return 3;
    if (weft_branches_add(b, 2) != WEFT_OK) return 4;
    if (weft_branches_add(b, 2) != WEFT_OK) return 5;
    if (weft_branches_add(b, 0) != WEFT_OK) return 6;
    return 0;
}
TEST(condition_tasks_returning_out_of_range_or_negative_indexes_end_or_fail_as_documented) {
    weft_executor *ex = make_executor(2);
    int vals[] = {INT_MAX, 0, 1, 3, -1, INT_MIN};
    for (int nsucc = 0; nsucc <= 3; nsucc += (nsucc ? 2 : 1)) {
        for (size_t v = 0; v < sizeof vals / sizeof *vals; v++) {
            weft_taskflow *tf = make_taskflow("cond46");
            atomic_store(&cnt46, 0);
            weft_task c = weft_emplace_condition(tf, ret_arg46, (void *)(intptr_t)vals[v]);
            ASSERT_FALSE(weft_task_is_null(c));
            ASSERT_OK(weft_task_set_name(c, "c"));
            weft_task after = must_emplace(tf, bump, &cnt46); /* strong successor of a plain task */
            weft_task src = must_emplace(tf, noop, NULL);
            ASSERT_OK(weft_precede(src, after));
            for (int i = 0; i < nsucc; i++) ASSERT_OK(weft_precede(c, must_emplace(tf, bump, &cnt46)));
            weft_future *f = NULL;
            ASSERT_OK(weft_run(ex, tf, &f));
            weft_status st = weft_future_wait(f);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            if (vals[v] < 0) {
                ASSERT_STATUS(st, WEFT_ETASK);
                ASSERT_EQ(info.task_code, vals[v]);
                ASSERT_STREQ(info.failed_task, "c");
            } else {
                ASSERT_OK(st);
                int want = 1 + (vals[v] < nsucc ? 1 : 0);
                ASSERT_EQ(atomic_load(&cnt46), want);
                ASSERT_EQ(info.iterations, 1);
            }
            weft_future_destroy(f);
            ASSERT_OK(weft_taskflow_destroy(tf));
        }
    }
    weft_taskflow *tf = make_taskflow("mcond46");
    atomic_store(&cnt46, 0);
    weft_task mc = weft_emplace_multi_condition(tf, pick_many46, NULL);
    ASSERT_FALSE(weft_task_is_null(mc));
    for (int i = 0; i < 3; i++) ASSERT_OK(weft_precede(mc, must_emplace(tf, bump, &cnt46)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&cnt46), 2);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* flow.h: a task with strong and weak predecessors runs when its strong ones
 * are done or a condition picks it: a loop entered once through a strong
 * edge, repeated 10 times through the weak one; with a second strong
 * predecessor it waits for both on entry, and the loop's body runs 10 times
 * per run, over 3 runs (the join counters are reset per run). */
struct loop46 {
    atomic_int body, turns;
};
static int body46(weft_ctx *cx, void *p) {
    (void)cx;
    atomic_fetch_add(&((struct loop46 *)p)->body, 1);
    return 0;
}
static int again46(weft_ctx *cx, void *p) {
    (void)cx;
    struct loop46 *l = p;
    return atomic_fetch_add(&l->turns, 1) % 10 < 9 ? 0 : 1;
}
TEST(a_loop_entered_through_two_strong_edges_and_repeated_through_a_weak_one_runs_exactly) {
    weft_executor *ex = make_executor(2);
    struct loop46 l = {0, 0};
    weft_taskflow *tf = make_taskflow("loop46");
    weft_task s1 = must_emplace(tf, noop, NULL), s2 = must_emplace(tf, noop, NULL);
    weft_task body = must_emplace(tf, body46, &l);
    weft_task cond = weft_emplace_condition(tf, again46, &l);
    weft_task done = must_emplace(tf, bump, &cnt46);
    atomic_store(&cnt46, 0);
    ASSERT_OK(weft_precede(s1, body));
    ASSERT_OK(weft_precede(s2, body));
    ASSERT_OK(weft_precede(body, cond));
    ASSERT_OK(weft_precede(cond, body)); /* 0: again (weak) */
    ASSERT_OK(weft_precede(cond, done)); /* 1: out */
    ASSERT_EQ(weft_task_num_weak_dependents(body), 1);
    ASSERT_EQ(weft_task_num_dependents(body), 3);
    for (int r = 1; r <= 3; r++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&l.body), 10 * r);
        ASSERT_EQ(atomic_load(&cnt46), r);
    }
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, tf, 4, &f));
    ASSERT_OK(weft_future_wait(f));
    ASSERT_EQ(atomic_load(&l.body), 70);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* A graph of 10^6 tasks (named, in a chain, with a fan-in) destroyed without
 * ever running, and one cleared and refilled: quick (well under a second
 * each) and nothing leaks (ASan). */
TEST(a_million_task_graph_destroyed_or_cleared_without_running_is_quick_and_leaks_nothing) {
    enum { N = 1000000 };
    weft_taskflow *tf = make_taskflow("big46");
    weft_task *t = malloc(N * sizeof *t);
    ASSERT_NOT_NULL(t);
    for (int i = 0; i < N; i++) t[i] = must_emplace(tf, noop, NULL);
    ASSERT_OK(weft_linearize(t, N));
    ASSERT_OK(weft_task_set_name(t[N / 2], "middle"));
    ASSERT_OK(weft_succeed_many(t[N - 1], t, 1000));
    ASSERT_OK(weft_taskflow_validate(tf, NULL));
    double t0 = now_s();
    ASSERT_OK(weft_taskflow_clear(tf));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 0);
    for (int i = 0; i < N; i++) t[i] = must_emplace(tf, noop, NULL);
    ASSERT_OK(weft_linearize(t, N));
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_LT(now_s() - t0, 5.0);
    free(t);
}

/* One body shared by modules of two parents and run directly too, the three
 * submitted at once from three threads to three executors, each with run_n:
 * the body's runs never overlap (flow.h: runs of one taskflow never overlap)
 * and every task of every graph runs exactly once per iteration. */
struct shared46 {
    atomic_int in_body, overlap, body_tasks, parent_tasks;
};
static struct shared46 sh46;
static int body_enter46(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    if (atomic_fetch_add(&sh46.in_body, 1) != 0) atomic_fetch_add(&sh46.overlap, 1);
    atomic_fetch_add(&sh46.body_tasks, 1);
    return 0;
}
static int body_mid46(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    atomic_fetch_add(&sh46.body_tasks, 1);
    return 0;
}
static int body_leave46(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    atomic_fetch_add(&sh46.body_tasks, 1);
    atomic_fetch_sub(&sh46.in_body, 1);
    return 0;
}
static int parent_task46(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    atomic_fetch_add(&sh46.parent_tasks, 1);
    return 0;
}
struct runner46 {
    weft_executor *ex;
    weft_taskflow *tf;
    weft_status st;
};
static void *run_n_times46(void *p) {
    struct runner46 *r = p;
    weft_future *f[20];
    for (int i = 0; i < 20; i++)
        if ((r->st = weft_run_n(r->ex, r->tf, 5, &f[i])) != WEFT_OK) return NULL;
    for (int i = 0; i < 20; i++) {
        weft_status st = weft_future_wait(f[i]);
        if (st != WEFT_OK) r->st = st;
        weft_future_destroy(f[i]);
    }
    return NULL;
}
TEST(a_body_shared_by_two_parents_and_run_directly_on_three_executors_never_overlaps) {
    memset(&sh46, 0, sizeof sh46);
    weft_executor *ex[3] = {make_executor(2), make_executor(1), make_executor(2)};
    weft_taskflow *body = make_taskflow("body46");
    weft_task e = must_emplace(body, body_enter46, NULL), l = must_emplace(body, body_leave46, NULL);
    for (int i = 0; i < 4; i++) {
        weft_task m = must_emplace(body, body_mid46, NULL);
        ASSERT_OK(weft_precede(e, m));
        ASSERT_OK(weft_precede(m, l));
    }
    weft_taskflow *par[2] = {make_taskflow("p0"), make_taskflow("p1")};
    for (int k = 0; k < 2; k++) {
        weft_task a = must_emplace(par[k], parent_task46, NULL);
        weft_task m1 = weft_emplace_module(par[k], body), m2 = weft_emplace_module(par[k], body);
        weft_task z = must_emplace(par[k], parent_task46, NULL);
        ASSERT_OK(weft_precede(a, m1));
        ASSERT_OK(weft_precede(a, m2)); /* two modules of one body side by side */
        ASSERT_OK(weft_precede(m1, z));
        ASSERT_OK(weft_precede(m2, z));
    }
    struct runner46 r[3] = {{ex[0], par[0], WEFT_OK}, {ex[1], par[1], WEFT_OK}, {ex[2], body, WEFT_OK}};
    pthread_t th[3];
    for (int i = 0; i < 3; i++) ASSERT_EQ(pthread_create(&th[i], NULL, run_n_times46, &r[i]), 0);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 3; i++) ASSERT_OK(r[i].st);
    ASSERT_EQ(atomic_load(&sh46.overlap), 0);
    /* 100 iterations each: parents run the body twice an iteration */
    ASSERT_EQ(atomic_load(&sh46.body_tasks), (2 * 100 * 2 + 100) * 6);
    ASSERT_EQ(atomic_load(&sh46.parent_tasks), 2 * 100 * 2);
    for (int k = 0; k < 2; k++) ASSERT_OK(weft_taskflow_destroy(par[k]));
    ASSERT_OK(weft_taskflow_destroy(body));
    for (int i = 0; i < 3; i++) weft_executor_destroy(ex[i]);
}

/* graph.h: a clear removes every task ("the memory is kept for reuse"), and
 * an erased task's slot is taken by the next task added, which gets none of
 * what the old one had.  Tasks of every kind, each with a name, data (some
 * set during a run, from a task), a priority, a semaphore, weak and strong
 * edges; cleared (or erased), then plain tasks added: each new task has no
 * name, no data, NORMAL priority, no semaphore, plain kind, no edges, and a
 * run runs each once. */
static int set_own_data46(weft_ctx *cx, void *p) {
    (void)p;
    return weft_task_set_data(weft_ctx_task(cx), (void *)0x46) == WEFT_OK ? 0 : 1;
}
static int one46(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    return 1;
}
static void fill_every_kind46(weft_taskflow *tf, weft_taskflow *body, weft_semaphore *s, weft_work *w) {
    weft_task t[8];
    t[0] = must_emplace(tf, set_own_data46, NULL);
    t[1] = weft_emplace_condition(tf, one46, NULL);
    t[2] = weft_emplace_subflow(tf, sub46, NULL);
    t[3] = weft_emplace_module(tf, body);
    t[4] = weft_emplace_work(tf, w);
    t[5] = weft_emplace_multi_condition(tf, mcond46, NULL);
    t[6] = must_emplace(tf, set_own_data46, NULL);
    t[7] = weft_placeholder(tf);
    for (int i = 0; i < 8; i++) {
        ASSERT_FALSE(weft_task_is_null(t[i]));
        char name[16];
        snprintf(name, sizeof name, "old%d", i);
        ASSERT_OK(weft_task_set_name(t[i], name));
        if (i != 0 && i != 6) ASSERT_OK(weft_task_set_data(t[i], (void *)(intptr_t)(i + 1)));
        ASSERT_OK(weft_task_set_priority(t[i], WEFT_PRIORITY_LOW));
    }
    ASSERT_OK(weft_task_acquire(t[0], s));
    ASSERT_OK(weft_task_release(t[6], s));
    ASSERT_OK(weft_precede(t[0], t[1]));
    ASSERT_OK(weft_precede(t[1], t[7])); /* weak, index 0 */
    ASSERT_OK(weft_precede(t[1], t[6])); /* weak, index 1: picked */
    ASSERT_OK(weft_precede(t[2], t[3]));
    ASSERT_OK(weft_precede(t[3], t[4]));
    ASSERT_OK(weft_precede(t[5], t[6]));
}
static void check_fresh46(weft_task t) {
    ASSERT_STREQ(weft_task_name(t), "");
    ASSERT_NULL(weft_task_data(t));
    ASSERT_EQ(weft_task_get_priority(t), WEFT_PRIORITY_NORMAL);
    ASSERT_EQ(weft_task_num_acquires(t), 0);
    ASSERT_EQ(weft_task_num_releases(t), 0);
    ASSERT_EQ(weft_task_get_kind(t), WEFT_TASK_STATIC);
    ASSERT_EQ(weft_task_num_successors(t), 0);
    ASSERT_EQ(weft_task_num_dependents(t), 0);
    ASSERT_EQ(weft_task_num_weak_dependents(t), 0);
    ASSERT_NULL(weft_task_module(t));
}
struct collect46 {
    weft_task t[16];
    size_t n;
};
static bool collect_task46(weft_task t, void *arg) {
    struct collect46 *c = arg;
    if (c->n < 16) c->t[c->n++] = t;
    return true;
}
TEST(tasks_added_after_a_clear_or_into_erased_slots_inherit_nothing_from_the_old_ones) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("fresh46"), *body = make_taskflow("fbody46");
    must_emplace(body, noop, NULL);
    weft_semaphore *s = weft_semaphore_create(1, NULL);
    weft_work *w = weft_work_create(noop, NULL, NULL, NULL);
    ASSERT_NOT_NULL(s);
    ASSERT_NOT_NULL(w);
    for (int round = 0; round < 4; round++) {
        fill_every_kind46(tf, body, s, w);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(weft_semaphore_value(s), 1);
        ASSERT_EQ(weft_work_refs(w), 2);
        if (round % 2 == 0) {
            ASSERT_OK(weft_taskflow_clear(tf));
        } else { /* erase every task instead, last first */
            struct collect46 c = {.n = 0};
            ASSERT_OK(weft_taskflow_for_each_task(tf, collect_task46, &c));
            ASSERT_EQ(c.n, 8);
            for (size_t i = c.n; i-- > 0;) ASSERT_OK(weft_task_erase(c.t[i]));
        }
        ASSERT_EQ(weft_work_refs(w), 1);
        ASSERT_EQ(weft_taskflow_num_tasks(tf), 0);
        atomic_store(&cnt46, 0);
        weft_task fresh[8];
        for (int i = 0; i < 8; i++) {
            fresh[i] = must_emplace(tf, bump, &cnt46);
            check_fresh46(fresh[i]);
        }
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&cnt46), 8);
        ASSERT_OK(weft_run_with_priority(ex, tf, WEFT_PRIORITY_HIGH, NULL));
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(atomic_load(&cnt46), 16);
        ASSERT_OK(weft_taskflow_clear(tf));
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
    ASSERT_EQ(weft_work_refs(w), 1);
    weft_work_release(w);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}

/* graph.h: weft_ctx_iteration in a serial run is the number of iterations
 * completed before the current one, also in the tasks of its subflows and
 * modules; in weft_run_n_parallel, the instance's index.  Recorded by a
 * plain task, a module body's task, a subflow's child and a condition loop's
 * body over run_n(4) and run_until(3); and by the instances of run_n_parallel. */
static _Atomic uint64_t seen_iter46[4][8];
static int record_iter46(weft_ctx *cx, void *p) {
    int where = (int)(intptr_t)p;
    uint64_t it = weft_ctx_iteration(cx);
    if (it < 8) atomic_fetch_add(&seen_iter46[where][it], 1);
    return 0;
}
static int sub_iter46(weft_ctx *cx, weft_subflow *sf, void *p) {
    (void)p;
    record_iter46(cx, (void *)2);
    return weft_task_is_null(weft_emplace(weft_subflow_graph(sf), record_iter46, (void *)2)) ? 1 : 0;
}
static int loop_twice46(weft_ctx *cx, void *p) {
    (void)cx;
    return atomic_fetch_add((atomic_int *)p, 1) % 2 == 0 ? 0 : 1;
}
static bool until3_46(void *p) {
    int *k = p;
    return (*k)++ >= 3;
}
TEST(ctx_iteration_counts_completed_iterations_in_modules_subflows_and_loops_and_instances) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("iter46"), *body = make_taskflow("ibody46");
    must_emplace(body, record_iter46, (void *)1);
    weft_task a = must_emplace(tf, record_iter46, (void *)0);
    weft_task m = weft_emplace_module(tf, body);
    weft_task s = weft_emplace_subflow(tf, sub_iter46, NULL);
    atomic_int turns = 0;
    weft_task lb = must_emplace(tf, record_iter46, (void *)3);
    weft_task c = weft_emplace_condition(tf, loop_twice46, &turns);
    ASSERT_OK(weft_precede(a, m));
    ASSERT_OK(weft_precede(m, s));
    ASSERT_OK(weft_precede(s, lb));
    ASSERT_OK(weft_precede(lb, c));
    ASSERT_OK(weft_precede(c, lb));
    memset(seen_iter46, 0, sizeof seen_iter46);
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, tf, 4, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    for (int it = 0; it < 8; it++) {
        ASSERT_EQ(atomic_load(&seen_iter46[0][it]), it < 4 ? 1 : 0);
        ASSERT_EQ(atomic_load(&seen_iter46[1][it]), it < 4 ? 1 : 0);
        ASSERT_EQ(atomic_load(&seen_iter46[2][it]), it < 4 ? 2 : 0);
        ASSERT_EQ(atomic_load(&seen_iter46[3][it]), it < 4 ? 2 : 0);
    }
    memset(seen_iter46, 0, sizeof seen_iter46);
    int k = 0;
    ASSERT_OK(weft_run_until(ex, tf, until3_46, &k, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    for (int it = 0; it < 8; it++) ASSERT_EQ(atomic_load(&seen_iter46[1][it]), it < 3 ? 1 : 0);
    /* parallel instances: plain and condition tasks only */
    weft_taskflow *flat = make_taskflow("iflat46");
    must_emplace(flat, record_iter46, (void *)0);
    memset(seen_iter46, 0, sizeof seen_iter46);
    ASSERT_OK(weft_run_n_parallel(ex, flat, 5, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    for (int it = 0; it < 8; it++) ASSERT_EQ(atomic_load(&seen_iter46[0][it]), it < 5 ? 1 : 0);
    ASSERT_OK(weft_taskflow_destroy(flat));
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
    weft_executor_destroy(ex);
}

/* A model-checked fuzz of graph editing: random emplaces (plain tasks,
 * placeholders and conditions that pick no branch), edges (strong, weak,
 * repeated), erases, edge and successor/dependent removals, linearizes and
 * clears, checked after every few edits against a model: the task count,
 * every task's successor, dependent and weak-dependent counts, WEFT_ECYCLE
 * exactly when a cycle of strong edges exists, and on a run, each task runs
 * exactly when the rules say (a source, or all its strong predecessors ran;
 * never one with weak predecessors only) and after each strong predecessor. */
enum { FZ_MAX = 24 };
struct fz_model {
    bool live[FZ_MAX], cond[FZ_MAX];
    int edges[FZ_MAX][FZ_MAX]; /* multiplicity of i -> j */
    weft_task t[FZ_MAX];
};
static struct fz_model fz;
static _Atomic int fz_seq, fz_order[FZ_MAX], fz_runs[FZ_MAX];
static int fz_task(weft_ctx *cx, void *p) {
    (void)cx;
    int i = (int)(intptr_t)p;
    atomic_fetch_add(&fz_runs[i], 1);
    atomic_store(&fz_order[i], atomic_fetch_add(&fz_seq, 1));
    return 0;
}
static int fz_cond(weft_ctx *cx, void *p) {
    fz_task(cx, p);
    return INT_MAX; /* picks none */
}
static uint64_t fz_rng;
static int fz_stats[2];
static unsigned fz_rand(unsigned n) {
    fz_rng ^= fz_rng << 13, fz_rng ^= fz_rng >> 7, fz_rng ^= fz_rng << 17;
    return (unsigned)(fz_rng % n);
}
static int fz_pick_live(void) {
    int c[FZ_MAX], k = 0;
    for (int i = 0; i < FZ_MAX; i++)
        if (fz.live[i]) c[k++] = i;
    return k ? c[fz_rand((unsigned)k)] : -1;
}
static bool fz_strong_cycle(void) {
    int color[FZ_MAX] = {0}; /* iterative three-colour DFS over strong edges */
    for (int s = 0; s < FZ_MAX; s++) {
        if (!fz.live[s] || color[s]) continue;
        int stack[FZ_MAX], next[FZ_MAX], sp = 0;
        stack[sp] = s, next[sp] = 0, sp++, color[s] = 1;
        while (sp) {
            int u = stack[sp - 1];
            if (next[sp - 1] >= FZ_MAX || fz.cond[u]) {
                color[u] = 2, sp--;
                continue;
            }
            int v = next[sp - 1]++;
            if (!fz.edges[u][v]) continue;
            if (color[v] == 1) return true;
            if (color[v] == 0) stack[sp] = v, next[sp] = 0, sp++, color[v] = 1;
        }
    }
    return false;
}
static void fz_check(weft_executor *ex, weft_taskflow *tf) {
    size_t n = 0;
    for (int i = 0; i < FZ_MAX; i++) {
        if (!fz.live[i]) continue;
        n++;
        size_t succ = 0, deps = 0, weak = 0;
        for (int j = 0; j < FZ_MAX; j++) {
            succ += (size_t)fz.edges[i][j];
            deps += (size_t)fz.edges[j][i];
            if (fz.cond[j]) weak += (size_t)fz.edges[j][i];
        }
        if (weft_task_num_successors(fz.t[i]) != succ || weft_task_num_dependents(fz.t[i]) != deps ||
            weft_task_num_weak_dependents(fz.t[i]) != weak)
            TEST_FAIL_("task %d: succ %zu/%zu deps %zu/%zu weak %zu/%zu", i, weft_task_num_successors(fz.t[i]), succ,
                       weft_task_num_dependents(fz.t[i]), deps, weft_task_num_weak_dependents(fz.t[i]), weak);
    }
    ASSERT_EQ(weft_taskflow_num_tasks(tf), n);
    bool cyc = fz_strong_cycle();
    weft_status v = weft_taskflow_validate(tf, NULL);
    if (cyc != (v == WEFT_ECYCLE)) TEST_FAIL_("model cycle %d, validate %s", cyc, weft_errname(v));
    fz_stats[cyc]++;
    if (cyc) return;
    /* which tasks run: fixpoint over strong edges */
    bool runs[FZ_MAX] = {false};
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < FZ_MAX; i++) {
            if (!fz.live[i] || runs[i]) continue;
            bool any = false, strong = false, all = true;
            for (int j = 0; j < FZ_MAX; j++) {
                if (!fz.edges[j][i]) continue;
                any = true;
                if (fz.cond[j]) continue;
                strong = true;
                if (!runs[j]) all = false;
            }
            if (!any || (strong && all)) runs[i] = changed = true;
        }
    }
    atomic_store(&fz_seq, 0);
    for (int i = 0; i < FZ_MAX; i++) atomic_store(&fz_runs[i], 0), atomic_store(&fz_order[i], -1);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    for (int i = 0; i < FZ_MAX; i++) {
        int want = fz.live[i] && runs[i] ? 1 : 0;
        if (atomic_load(&fz_runs[i]) != want) TEST_FAIL_("task %d ran %d times, model %d", i, atomic_load(&fz_runs[i]), want);
        for (int j = 0; want && j < FZ_MAX; j++)
            if (fz.edges[j][i] && !fz.cond[j] && atomic_load(&fz_order[j]) > atomic_load(&fz_order[i]))
                TEST_FAIL_("task %d ran before its predecessor %d", i, j);
    }
}
static void fz_add(weft_taskflow *tf, int kind) {
    int i = -1;
    for (int k = 0; k < FZ_MAX; k++)
        if (!fz.live[k]) { i = k; break; }
    if (i < 0) return;
    weft_task t = kind == 0   ? weft_emplace(tf, fz_task, (void *)(intptr_t)i)
                  : kind == 1 ? weft_emplace_condition(tf, fz_cond, (void *)(intptr_t)i)
                              : weft_placeholder(tf);
    ASSERT_FALSE(weft_task_is_null(t));
    if (kind == 2) ASSERT_OK(weft_task_set_work(t, fz_task, (void *)(intptr_t)i));
    fz.t[i] = t, fz.live[i] = true, fz.cond[i] = kind == 1;
    for (int j = 0; j < FZ_MAX; j++) fz.edges[i][j] = fz.edges[j][i] = 0;
}
TEST(random_graph_edits_keep_counts_cycles_and_runs_as_a_model_says) {
    weft_executor *ex = make_executor(2);
    for (uint64_t seed = 1; seed <= 150; seed++) {
        fz_rng = seed * 0x9e3779b97f4a7c15ull;
        memset(&fz, 0, sizeof fz);
        weft_taskflow *tf = make_taskflow("fuzz46");
        for (int op = 0; op < 300; op++) {
            unsigned r = fz_rand(100);
            int a = fz_pick_live(), b = fz_pick_live();
            if (r < 22 || a < 0) {
                fz_add(tf, fz_rand(10) < 2 ? 1 : fz_rand(10) < 2 ? 2 : 0);
            } else if (r < 55) {
                if (a >= b && fz_rand(10) < 9) { int x = a; a = b, b = x == b ? fz_pick_live() : x; } /* mostly acyclic */
                ASSERT_OK(weft_precede(fz.t[a], fz.t[b]));
                fz.edges[a][b]++;
            } else if (r < 62) {
                ASSERT_OK(weft_task_erase(fz.t[a]));
                fz.live[a] = false;
                for (int j = 0; j < FZ_MAX; j++) fz.edges[a][j] = fz.edges[j][a] = 0;
            } else if (r < 72) {
                weft_status st = weft_edge_remove(fz.t[a], fz.t[b]);
                ASSERT_STATUS(st, fz.edges[a][b] ? WEFT_OK : WEFT_ENOENT);
                fz.edges[a][b] = 0;
            } else if (r < 76) {
                ASSERT_OK(weft_task_remove_successors(fz.t[a]));
                for (int j = 0; j < FZ_MAX; j++) fz.edges[a][j] = 0;
            } else if (r < 80) {
                ASSERT_OK(weft_task_remove_dependents(fz.t[a]));
                for (int j = 0; j < FZ_MAX; j++) fz.edges[j][a] = 0;
            } else if (r < 85) {
                int c = fz_pick_live();
                if (fz_rand(10) < 9) { /* mostly in index order: acyclic */
                    if (a > b) { int x = a; a = b, b = x; }
                    if (b > c) { int x = b; b = c, c = x; }
                    if (a > b) { int x = a; a = b, b = x; }
                }
                weft_task chain[3] = {fz.t[a], fz.t[b], fz.t[c]};
                weft_status st = weft_linearize(chain, 3);
                if (st == WEFT_OK) fz.edges[a][b]++, fz.edges[b][c]++;
                else ASSERT_STATUS(st, WEFT_EINVAL); /* a task twice in a row */
            } else if (r < 87) {
                ASSERT_OK(weft_taskflow_clear(tf));
                memset(&fz, 0, sizeof fz);
            } else {
                fz_check(ex, tf);
            }
        }
        fz_check(ex, tf);
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
    if (getenv("FZ_STATS")) printf("acyclic %d cyclic %d\n", fz_stats[0], fz_stats[1]);
    weft_executor_destroy(ex);
}

/* graph.h, weft_run_until: the predicate runs on a worker between
 * iterations and counts as part of the run.  A predicate that waits for its
 * own run or runs its own taskflow and waits is refused (WEFT_EDEADLK); one
 * that runs another taskflow and waits gets its result; one that submits a
 * run of its own taskflow (not waiting) has it run after; one that cancels
 * its run ends it ECANCELED with no further call; one that destroys the
 * caller's handle of its run detaches it (it still ends, wait_all sees it). */
struct pred46 {
    weft_executor *ex;
    weft_taskflow *tf, *other;
    weft_future *_Atomic self;
    int calls, mode;
    weft_status st[4];
};
static bool pred_modes46(void *p) {
    struct pred46 *q = p;
    int call = q->calls++;
    weft_future *self = atomic_load(&q->self);
    while (q->mode != 0 && call >= 1 && !self) { /* the caller is about to store its handle */
        sleep_us(100);
        self = atomic_load(&q->self);
    }
    switch (q->mode) {
    case 0:
        q->st[0] = self ? weft_future_wait(self) : WEFT_EAGAIN;
        q->st[1] = weft_run_and_wait(q->ex, q->tf);
        q->st[2] = weft_run_and_wait(q->ex, q->other);
        q->st[3] = weft_run(q->ex, q->tf, NULL);
        return call >= 1;
    case 1:
        if (call == 2) (void)weft_future_cancel(self);
        return false;
    default:
        if (call == 1) {
            weft_future_destroy(self);
        }
        return call >= 3;
    }
}
TEST(run_until_predicates_that_wait_run_cancel_or_detach_their_own_run_behave_as_documented) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("pred46"), *other = make_taskflow("predo46");
    atomic_store(&cnt46, 0);
    must_emplace(tf, bump, &cnt46);
    must_emplace(other, bump, &cnt46);
    for (int mode = 0; mode < 3; mode++) {
        struct pred46 q = {ex, tf, other, NULL, 0, mode, {WEFT_EAGAIN, WEFT_EAGAIN, WEFT_EAGAIN, WEFT_EAGAIN}};
        atomic_store(&cnt46, 0);
        weft_future *f = NULL;
        ASSERT_OK(weft_run_until(ex, tf, pred_modes46, &q, &f));
        atomic_store(&q.self, f); /* the predicate may run before this: mode 0 copes */
        if (mode == 2) {
            ASSERT_OK(weft_executor_wait_all(ex));
            ASSERT_EQ(q.calls, 4);
            ASSERT_EQ(atomic_load(&cnt46), 3);
            continue; /* the predicate destroyed f */
        }
        weft_status st = weft_future_wait(f);
        ASSERT_OK(weft_executor_wait_all(ex));
        if (mode == 0) {
            ASSERT_OK(st);
            if (q.st[0] != WEFT_EAGAIN) ASSERT_STATUS(q.st[0], WEFT_EDEADLK);
            ASSERT_STATUS(q.st[1], WEFT_EDEADLK);
            ASSERT_OK(q.st[2]);
            ASSERT_OK(q.st[3]);
            /* 1 iteration + 2 runs of other + the 2 queued runs of tf */
            ASSERT_EQ(atomic_load(&cnt46), 1 + 2 + 2);
        } else {
            ASSERT_STATUS(st, WEFT_ECANCELED);
            ASSERT_EQ(q.calls, 3);
            ASSERT_EQ(atomic_load(&cnt46), 2);
        }
        weft_future_destroy(f);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(other));
    weft_executor_destroy(ex);
}

/* Random compositions: 6 taskflows, each with plain tasks and modules of
 * taskflows after it (so no module runs itself), random forward edges.
 * Running the first (run_n 3) and, at the same time from another thread,
 * the second on another executor runs every plain task of body b exactly
 * (instances of b under each top run) times per iteration: the modules'
 * shared bodies queue, never overlap or skip. */
enum { CF_TF = 6, CF_TASKS = 6 };
static _Atomic int cf_runs[CF_TF][CF_TASKS];
static int cf_task(weft_ctx *cx, void *p) {
    (void)cx;
    intptr_t k = (intptr_t)p;
    atomic_fetch_add(&cf_runs[k / CF_TASKS][k % CF_TASKS], 1);
    return 0;
}
struct cf_runner {
    weft_executor *ex;
    weft_taskflow *tf;
    weft_status st;
};
static void *cf_run3(void *p) {
    struct cf_runner *r = p;
    weft_future *f = NULL;
    r->st = weft_run_n(r->ex, r->tf, 3, &f);
    if (r->st == WEFT_OK) r->st = weft_future_wait(f);
    weft_future_destroy(f);
    return NULL;
}
TEST(random_compositions_of_shared_module_bodies_run_each_task_once_per_instance) {
    weft_executor *ex1 = make_executor(2), *ex2 = make_executor(1);
    for (uint64_t seed = 1; seed <= 30; seed++) {
        fz_rng = seed * 0x2545f4914f6cdd1dull;
        weft_taskflow *tf[CF_TF];
        uint64_t inst[CF_TF][2] = {{0}}; /* instances of each taskflow under top 0 and top 1 */
        int mods[CF_TF][CF_TF] = {{0}}; /* modules of j in i */
        for (int i = 0; i < CF_TF; i++) tf[i] = make_taskflow("cf");
        for (int i = CF_TF - 1; i >= 0; i--) {
            weft_task t[CF_TASKS + 4];
            int n = 0;
            for (int k = 0; k < CF_TASKS; k++) t[n++] = must_emplace(tf[i], cf_task, (void *)(intptr_t)(i * CF_TASKS + k));
            for (int m = 0; m < 4 && i + 1 < CF_TF; m++) {
                if (fz_rand(3) == 0) continue;
                int j = i + 1 + (int)fz_rand((unsigned)(CF_TF - i - 1));
                t[n] = weft_emplace_module(tf[i], tf[j]);
                ASSERT_FALSE(weft_task_is_null(t[n]));
                n++, mods[i][j]++;
            }
            for (int e = 0; e < n; e++) {
                int a = (int)fz_rand((unsigned)n), b = (int)fz_rand((unsigned)n);
                if (a < b) ASSERT_OK(weft_precede(t[a], t[b]));
            }
        }
        for (int top = 0; top < 2; top++) {
            inst[top][top] = 1;
            for (int i = top; i < CF_TF; i++)
                for (int j = i + 1; j < CF_TF; j++) inst[j][top] += inst[i][top] * (uint64_t)mods[i][j];
        }
        memset(cf_runs, 0, sizeof cf_runs);
        struct cf_runner r[2] = {{ex1, tf[0], WEFT_EAGAIN}, {ex2, tf[1], WEFT_EAGAIN}};
        pthread_t th;
        ASSERT_EQ(pthread_create(&th, NULL, cf_run3, &r[1]), 0);
        cf_run3(&r[0]);
        pthread_join(th, NULL);
        ASSERT_OK(r[0].st);
        ASSERT_OK(r[1].st);
        for (int i = 0; i < CF_TF; i++)
            for (int k = 0; k < CF_TASKS; k++)
                if ((uint64_t)atomic_load(&cf_runs[i][k]) != 3 * (inst[i][0] + inst[i][1]))
                    TEST_FAIL_("seed %llu: task %d of taskflow %d ran %d times, want %llu", (unsigned long long)seed, k, i,
                               atomic_load(&cf_runs[i][k]), (unsigned long long)(3 * (inst[i][0] + inst[i][1])));
        if (getenv("CF_STATS")) printf("seed %llu: instances of the last %llu + %llu\n", (unsigned long long)seed,
                                       (unsigned long long)inst[CF_TF - 1][0], (unsigned long long)inst[CF_TF - 1][1]);
        for (int i = 0; i < CF_TF; i++) ASSERT_OK(weft_taskflow_destroy(tf[i]));
    }
    weft_executor_destroy(ex1);
    weft_executor_destroy(ex2);
}
