/* Control flow, adversarial round 38: long condition loops with fork-join and
 * subflows in the body, modules used twice and by two graphs at once,
 * detached subflows across iterations and module runs, graphs edited between
 * runs, run_until that stops at once, parallel runs of condition loops; exact
 * counts at 1, 2 and 4 workers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#include <limits.h>
#include <pthread.h>

static const unsigned WORKERS[] = {1, 2, 4};

static void wait_ok(weft_future *f) {
    weft_status st = weft_future_wait(f);
    if (st != WEFT_OK) {
        weft_run_info info;
        (void)weft_future_info(f, &info);
        TEST_FAIL_("run: %s (task_code %d)", weft_errname(st), info.task_code);
    }
}

/* ---- a loop of 100k turns whose body forks, joins a subflow and spawns ---- */

struct bigloop {
    long n;
    atomic_long init, head, left, right, join, sub, leaves, done;
    long turns; /* written by the condition only */
};

static int bl_init(weft_ctx *ctx, void *arg) {
    struct bigloop *b = arg;
    b->turns = 0;
    atomic_fetch_add(&b->init, 1);
    return 0;
}
static int bl_head(weft_ctx *ctx, void *arg) {
    atomic_fetch_add_explicit(&((struct bigloop *)arg)->head, 1, memory_order_relaxed);
    return 0;
}
static int bl_leaf(weft_ctx *ctx, void *arg) {
    atomic_fetch_add_explicit(&((struct bigloop *)arg)->leaves, 1, memory_order_relaxed);
    return 0;
}
/* Forks two leaves, syncs one and leaves the other to weft. */
static int bl_left(weft_ctx *ctx, void *arg) {
    struct bigloop *b = arg;
    ASSERT_OK(weft_spawn(ctx, bl_leaf, b));
    ASSERT_OK(weft_spawn(ctx, bl_leaf, b));
    ASSERT_EQ(weft_sync(ctx), 0);
    atomic_fetch_add_explicit(&b->left, 1, memory_order_relaxed);
    return 0;
}
static int bl_sub_child(weft_ctx *ctx, void *arg) {
    atomic_fetch_add_explicit(&((struct bigloop *)arg)->sub, 1, memory_order_relaxed);
    return 0;
}
static int bl_right(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct bigloop *b = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task a = weft_emplace(g, bl_sub_child, b), c = weft_emplace(g, bl_sub_child, b);
    if (weft_task_is_null(a) || weft_task_is_null(c)) return 1;
    atomic_fetch_add_explicit(&b->right, 1, memory_order_relaxed);
    return 0;
}
static int bl_cond(weft_ctx *ctx, void *arg) {
    struct bigloop *b = arg;
    atomic_fetch_add_explicit(&b->join, 1, memory_order_relaxed);
    /* The joined subflow and the left branch are done before the join runs. */
    long t = ++b->turns;
    if (atomic_load(&b->sub) < 2 * t || atomic_load(&b->leaves) < 2 * t) return -5;
    return t < b->n ? 0 : 1;
}
static int bl_done(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&((struct bigloop *)arg)->done, 1);
    return 0;
}

TEST(a_condition_loop_of_100k_turns_with_fork_join_and_a_subflow_in_its_body_counts_every_task) {
    struct bigloop b = {.n = (long)test_scale(100000)};
    weft_taskflow *tf = make_taskflow("bigloop");
    weft_task init = must_emplace(tf, bl_init, &b);
    weft_task head = must_emplace(tf, bl_head, &b);
    weft_task left = must_emplace(tf, bl_left, &b);
    weft_task right = weft_emplace_subflow(tf, bl_right, &b);
    weft_task cond = weft_emplace_condition(tf, bl_cond, &b);
    weft_task done = must_emplace(tf, bl_done, &b);
    ASSERT_OK(weft_precede(init, head));
    ASSERT_OK(weft_precede(head, left));
    ASSERT_OK(weft_precede(head, right));
    ASSERT_OK(weft_precede(left, cond));
    ASSERT_OK(weft_precede(right, cond));
    ASSERT_OK(weft_precede(cond, head)); /* 0: again */
    ASSERT_OK(weft_precede(cond, done)); /* 1: out */
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        long base_runs = (long)wi;
        ASSERT_OK(weft_run_and_wait(ex, tf));
        long k = (base_runs + 1) * b.n;
        ASSERT_EQ(atomic_load(&b.init), base_runs + 1);
        ASSERT_EQ(atomic_load(&b.head), k);
        ASSERT_EQ(atomic_load(&b.left), k);
        ASSERT_EQ(atomic_load(&b.right), k);
        ASSERT_EQ(atomic_load(&b.join), k);
        ASSERT_EQ(atomic_load(&b.sub), 2 * k);
        ASSERT_EQ(atomic_load(&b.leaves), 2 * k);
        ASSERT_EQ(atomic_load(&b.done), base_runs + 1);
        weft_executor_destroy(ex); /* the counts go on adding up on the next executor */
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* ---- out-of-range conditions ---- */

struct oor {
    int ret;
    atomic_int after, cond_runs;
};
static int oor_cond(weft_ctx *ctx, void *arg) {
    struct oor *o = arg;
    atomic_fetch_add(&o->cond_runs, 1);
    return o->ret;
}

TEST(conditions_returning_int_max_or_with_no_successor_end_their_branch_and_the_run) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("oor");
    struct oor a = {.ret = INT_MAX}, b = {.ret = 0}, c = {.ret = 2};
    weft_task ca = weft_emplace_condition(tf, oor_cond, &a);
    weft_task cb = weft_emplace_condition(tf, oor_cond, &b); /* no successor at all */
    weft_task cc = weft_emplace_condition(tf, oor_cond, &c);
    ASSERT_OK(weft_precede(ca, must_emplace(tf, bump, &a.after)));
    ASSERT_OK(weft_precede(ca, must_emplace(tf, bump, &a.after)));
    ASSERT_OK(weft_precede(cc, must_emplace(tf, bump, &c.after)));
    ASSERT_OK(weft_precede(cc, must_emplace(tf, bump, &c.after)));
    (void)cb;
    weft_future *f;
    ASSERT_OK(weft_run_n(ex, tf, 100, &f));
    wait_ok(f);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 100);
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&a.cond_runs), 100);
    ASSERT_EQ(atomic_load(&b.cond_runs), 100);
    ASSERT_EQ(atomic_load(&c.cond_runs), 100);
    ASSERT_EQ(atomic_load(&a.after), 0);
    ASSERT_EQ(atomic_load(&c.after), 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- one body, two modules in one graph, and a second graph at once ---- */

struct body {
    atomic_int running, overlap, tasks;
    int turns; /* the body's condition loop, per body run */
};
static int body_enter(weft_ctx *ctx, void *arg) {
    struct body *b = arg;
    if (atomic_fetch_add(&b->running, 1) != 0) atomic_fetch_add(&b->overlap, 1);
    b->turns = 0;
    atomic_fetch_add(&b->tasks, 1);
    return 0;
}
static int body_step(weft_ctx *ctx, void *arg) {
    struct body *b = arg;
    atomic_fetch_add(&b->tasks, 1);
    return 0;
}
static int body_cond(weft_ctx *ctx, void *arg) {
    struct body *b = arg;
    return ++b->turns < 10 ? 0 : 1;
}
static int body_leave(weft_ctx *ctx, void *arg) {
    struct body *b = arg;
    atomic_fetch_sub(&b->running, 1);
    atomic_fetch_add(&b->tasks, 1);
    return 0;
}

struct seq {
    atomic_int before, between, after;
};

TEST(one_body_used_by_two_modules_of_a_graph_and_by_a_second_graph_at_once_runs_whole_each_time) {
    struct body b = {0};
    weft_taskflow *body = make_taskflow("body");
    weft_task e = must_emplace(body, body_enter, &b), s = must_emplace(body, body_step, &b);
    weft_task c = weft_emplace_condition(body, body_cond, &b), l = must_emplace(body, body_leave, &b);
    ASSERT_OK(weft_precede(e, s));
    ASSERT_OK(weft_precede(s, c));
    ASSERT_OK(weft_precede(c, s));
    ASSERT_OK(weft_precede(c, l));
    /* Graph 1: two modules in parallel branches and one after both. */
    weft_taskflow *g1 = make_taskflow("g1");
    weft_task m1 = weft_emplace_module(g1, body), m2 = weft_emplace_module(g1, body),
              m3 = weft_emplace_module(g1, body);
    ASSERT_FALSE(weft_task_is_null(m3));
    weft_task j = must_emplace(g1, noop, NULL);
    ASSERT_OK(weft_precede(m1, j));
    ASSERT_OK(weft_precede(m2, j));
    ASSERT_OK(weft_precede(j, m3));
    /* Graph 2: the body twice in a chain. */
    weft_taskflow *g2 = make_taskflow("g2");
    weft_task n1 = weft_emplace_module(g2, body), n2 = weft_emplace_module(g2, body);
    ASSERT_OK(weft_precede(n1, n2));
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex1 = make_executor(WORKERS[wi]), *ex2 = make_executor(2);
        atomic_store(&b.tasks, 0);
        weft_future *f1, *f2, *f3;
        ASSERT_OK(weft_run_n(ex1, g1, 20, &f1));
        ASSERT_OK(weft_run_n(ex2, g2, 20, &f2));
        ASSERT_OK(weft_run_n(ex2, body, 5, &f3));
        wait_ok(f1);
        wait_ok(f2);
        wait_ok(f3);
        weft_future_destroy(f1);
        weft_future_destroy(f2);
        weft_future_destroy(f3);
        /* 20 * 3 + 20 * 2 + 5 body runs of 1 + 10 + 1 tasks each. */
        ASSERT_EQ(atomic_load(&b.tasks), (20 * 3 + 20 * 2 + 5) * 12);
        ASSERT_EQ(atomic_load(&b.overlap), 0);
        weft_executor_destroy(ex1);
        weft_executor_destroy(ex2);
    }
    ASSERT_OK(weft_taskflow_destroy(g1));
    ASSERT_OK(weft_taskflow_destroy(g2));
    ASSERT_OK(weft_taskflow_destroy(body));
}

/* ---- a subflow that forks, waits on a future, then builds its graph ---- */

struct sfw {
    atomic_int leaves, async_runs, children, checks_bad;
};
static int sfw_leaf(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&((struct sfw *)arg)->leaves, 1);
    return 0;
}
static int sfw_async(weft_ctx *ctx, void *arg) {
    struct sfw *s = arg;
    /* Fork-join inside the async task too. */
    ASSERT_OK(weft_spawn(ctx, sfw_leaf, s));
    ASSERT_OK(weft_spawn(ctx, sfw_leaf, s));
    ASSERT_EQ(weft_sync(ctx) + weft_sync(ctx), 0);
    atomic_fetch_add(&s->async_runs, 1);
    return 0;
}
static int sfw_child(weft_ctx *ctx, void *arg) {
    struct sfw *s = arg;
    weft_task_group g;
    weft_task_group_init(&g, ctx);
    for (int i = 0; i < 8; i++) ASSERT_OK(weft_task_group_spawn(&g, sfw_leaf, s));
    ASSERT_EQ(weft_task_group_wait(&g), 0);
    atomic_fetch_add(&s->children, 1);
    return 0;
}
static int sfw_fn(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct sfw *s = arg;
    int before = atomic_load(&s->leaves);
    weft_task_group g;
    weft_task_group_init(&g, ctx);
    for (int i = 0; i < 16; i++) ASSERT_OK(weft_task_group_spawn(&g, sfw_leaf, s));
    weft_future *f;
    ASSERT_OK(weft_async(weft_ctx_executor(ctx), sfw_async, s, &f));
    ASSERT_EQ(weft_task_group_wait(&g), 0);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    if (atomic_load(&s->leaves) < before + 18) atomic_fetch_add(&s->checks_bad, 1);
    weft_taskflow *sg = weft_subflow_graph(sf);
    for (int i = 0; i < 4; i++)
        if (weft_task_is_null(weft_emplace(sg, sfw_child, s))) return 1;
    return 0;
}

TEST(a_subflow_that_forks_and_waits_on_a_future_before_building_its_graph_counts_every_leaf) {
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        struct sfw s = {0};
        weft_taskflow *tf = make_taskflow("sfw");
        for (int i = 0; i < 4; i++) ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, sfw_fn, &s)));
        weft_future *f;
        ASSERT_OK(weft_run_n(ex, tf, 50, &f));
        wait_ok(f);
        weft_future_destroy(f);
        /* per subflow run: 16 + 2 leaves before, 4 children of 8 leaves after */
        ASSERT_EQ(atomic_load(&s.async_runs), 50 * 4);
        ASSERT_EQ(atomic_load(&s.children), 50 * 4 * 4);
        ASSERT_EQ(atomic_load(&s.leaves), 50 * 4 * (18 + 32));
        ASSERT_EQ(atomic_load(&s.checks_bad), 0);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* ---- detached subflows: each iteration's, and a module run's ---- */

struct det {
    int children;
    atomic_long ran;
    atomic_int bad_start, bad_after_module;
    atomic_int started;
};
static int det_child(weft_ctx *ctx, void *arg) {
    struct det *d = arg;
    if ((atomic_load(&d->ran) & 15) == 0) sleep_us(200); /* now and then a slow one */
    atomic_fetch_add(&d->ran, 1);
    return 0;
}
static int det_fn(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct det *d = arg;
    ASSERT_OK(weft_subflow_detach(sf));
    for (int i = 0; i < d->children; i++)
        if (weft_task_is_null(weft_emplace(weft_subflow_graph(sf), det_child, d))) return 1;
    return 0;
}
/* The iteration's first task: every detached child of the earlier iterations
 * has run (they join the end of their iteration). */
static int det_start(weft_ctx *ctx, void *arg) {
    struct det *d = arg;
    uint64_t it = weft_ctx_iteration(ctx);
    if (atomic_load(&d->ran) != (long)it * d->children) atomic_fetch_add(&d->bad_start, 1);
    atomic_fetch_add(&d->started, 1);
    return 0;
}

TEST(detached_subflows_outlive_their_task_but_not_their_iteration) {
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        struct det d = {.children = 16};
        weft_taskflow *tf = make_taskflow("det");
        weft_task s = must_emplace(tf, det_start, &d);
        weft_task sub = weft_emplace_subflow(tf, det_fn, &d);
        weft_task after = must_emplace(tf, noop, NULL);
        ASSERT_OK(weft_precede(s, sub));
        ASSERT_OK(weft_precede(sub, after));
        weft_future *f;
        ASSERT_OK(weft_run_n(ex, tf, 100, &f));
        wait_ok(f);
        weft_future_destroy(f);
        ASSERT_EQ(atomic_load(&d.ran), 100 * 16);
        ASSERT_EQ(atomic_load(&d.bad_start), 0);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

static int det_after_module(weft_ctx *ctx, void *arg) {
    struct det *d = arg;
    /* The module's body run includes its detached subflow. */
    if (atomic_load(&d->ran) % d->children != 0) atomic_fetch_add(&d->bad_after_module, 1);
    return 0;
}

TEST(a_detached_subflow_in_a_module_body_ends_before_the_module_task_does) {
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        struct det d = {.children = 16};
        weft_taskflow *body = make_taskflow("body");
        ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(body, det_fn, &d)));
        weft_taskflow *tf = make_taskflow("outer");
        weft_task m = weft_emplace_module(tf, body);
        weft_task chk = must_emplace(tf, det_after_module, &d);
        ASSERT_OK(weft_precede(m, chk));
        weft_future *f;
        ASSERT_OK(weft_run_n(ex, tf, 100, &f));
        wait_ok(f);
        weft_future_destroy(f);
        ASSERT_EQ(atomic_load(&d.ran), 100 * 16);
        ASSERT_EQ(atomic_load(&d.bad_after_module), 0);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_taskflow_destroy(body));
        weft_executor_destroy(ex);
    }
}

/* ---- editing between runs ---- */

struct edit_counts {
    atomic_int c[8];
};
static struct edit_counts ec;
static int ec_task(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&ec.c[(intptr_t)arg], 1);
    return 0;
}
static int ec_pick1(weft_ctx *ctx, void *arg) { return 1; }

TEST(a_graph_with_a_condition_edited_between_runs_runs_what_the_edit_left) {
    weft_executor *ex = make_executor(2);
    memset(&ec, 0, sizeof ec);
    weft_taskflow *tf = make_taskflow("edit");
    weft_task t0 = must_emplace(tf, ec_task, (void *)0);
    weft_task cond = weft_emplace_condition(tf, ec_pick1, NULL);
    weft_task t1 = must_emplace(tf, ec_task, (void *)1);
    weft_task t2 = must_emplace(tf, ec_task, (void *)2);
    weft_task t3 = must_emplace(tf, ec_task, (void *)3);
    ASSERT_OK(weft_precede(t0, cond));
    ASSERT_OK(weft_precede(cond, t1)); /* 0 */
    ASSERT_OK(weft_precede(cond, t2)); /* 1: picked */
    ASSERT_OK(weft_precede(cond, t3)); /* 2 */
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ec.c[2]), 1);
    ASSERT_EQ(atomic_load(&ec.c[1]) + atomic_load(&ec.c[3]), 0);
    /* Erase branch 0: t3 becomes branch 1. */
    ASSERT_OK(weft_task_erase(t1));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ec.c[2]), 1);
    ASSERT_EQ(atomic_load(&ec.c[3]), 1);
    /* Erase the condition with edges both ways: t0, t2, t3 become independent
     * sources (t2 and t3 had only weak predecessors, and now none). */
    ASSERT_OK(weft_task_erase(cond));
    ASSERT_EQ(weft_task_num_dependents(t2), 0);
    ASSERT_EQ(weft_task_num_weak_dependents(t3), 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ec.c[0]), 3);
    ASSERT_EQ(atomic_load(&ec.c[2]), 2);
    ASSERT_EQ(atomic_load(&ec.c[3]), 2);
    /* A new task takes an erased slot and joins a chain. */
    weft_task t4 = must_emplace(tf, ec_task, (void *)4);
    ASSERT_OK(weft_linearize((weft_task[]){t0, t4, t2, t3}, 4));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ec.c[4]), 1);
    ASSERT_EQ(atomic_load(&ec.c[3]), 3);
    /* Clear and build afresh, edges first added to the cleared graph. */
    ASSERT_OK(weft_taskflow_clear(tf));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 0);
    weft_task a = must_emplace(tf, ec_task, (void *)5), b = must_emplace(tf, ec_task, (void *)6);
    weft_task c2 = weft_emplace_condition(tf, ec_pick1, NULL);
    ASSERT_OK(weft_precede(a, c2));
    ASSERT_OK(weft_precede(c2, must_emplace(tf, ec_task, (void *)7))); /* 0: not picked */
    ASSERT_OK(weft_precede(c2, b)); /* 1 */
    weft_future *f;
    ASSERT_OK(weft_run_n(ex, tf, 10, &f));
    wait_ok(f);
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&ec.c[5]), 10);
    ASSERT_EQ(atomic_load(&ec.c[6]), 10);
    ASSERT_EQ(atomic_load(&ec.c[7]), 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

static int sf_one(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    return weft_task_is_null(weft_emplace(weft_subflow_graph(sf), ec_task, arg)) ? 1 : 0;
}

TEST(a_subflow_or_module_task_erased_between_runs_gives_its_slot_to_a_new_task_that_runs_right) {
    weft_executor *ex = make_executor(2);
    memset(&ec, 0, sizeof ec);
    weft_taskflow *body = make_taskflow("body");
    must_emplace(body, ec_task, (void *)0);
    weft_taskflow *tf = make_taskflow("tf");
    weft_task s = weft_emplace_subflow(tf, sf_one, (void *)1);
    weft_task m = weft_emplace_module(tf, body);
    weft_task t = must_emplace(tf, ec_task, (void *)2);
    ASSERT_OK(weft_precede(s, m));
    ASSERT_OK(weft_precede(m, t));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_task_erase(s));
    ASSERT_OK(weft_task_erase(m));
    /* A subflow in the module's old slot, a module in the subflow's. */
    weft_task s2 = weft_emplace_subflow(tf, sf_one, (void *)3);
    weft_task m2 = weft_emplace_module(tf, body);
    ASSERT_FALSE(weft_task_is_null(s2));
    ASSERT_FALSE(weft_task_is_null(m2));
    ASSERT_OK(weft_precede(t, s2));
    ASSERT_OK(weft_precede(s2, m2));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ec.c[0]), 2);
    ASSERT_EQ(atomic_load(&ec.c[1]), 1);
    ASSERT_EQ(atomic_load(&ec.c[2]), 2);
    ASSERT_EQ(atomic_load(&ec.c[3]), 1);
    /* The body may change now that no run holds it... */
    must_emplace(body, ec_task, (void *)4);
    /* ...and erasing the only module lets it be destroyed after the run. */
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ec.c[4]), 1);
    ASSERT_OK(weft_task_erase(m2));
    ASSERT_OK(weft_taskflow_destroy(body));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ec.c[3]), 3);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- run_until that stops at once ---- */

static bool yes(void *arg) {
    atomic_fetch_add((atomic_int *)arg, 1);
    return true;
}

TEST(run_until_true_at_once_runs_nothing_even_behind_other_runs_and_with_subflows) {
    weft_executor *ex = make_executor(2);
    memset(&ec, 0, sizeof ec);
    weft_taskflow *tf = make_taskflow("until");
    weft_task a = weft_emplace_subflow(tf, sf_one, (void *)1);
    weft_task c = weft_emplace_condition(tf, ec_pick1, NULL);
    ASSERT_OK(weft_precede(a, c));
    ASSERT_OK(weft_precede(c, must_emplace(tf, ec_task, (void *)2)));
    ASSERT_OK(weft_precede(c, must_emplace(tf, ec_task, (void *)3)));
    atomic_int calls = 0;
    weft_future *f1, *f2, *f3;
    ASSERT_OK(weft_run_n(ex, tf, 3, &f1));
    ASSERT_OK(weft_run_until(ex, tf, yes, &calls, &f2));
    ASSERT_OK(weft_run(ex, tf, &f3));
    wait_ok(f2);
    ASSERT_TRUE(weft_future_ready(f1)); /* queued behind it */
    weft_run_info info;
    ASSERT_OK(weft_future_info(f2, &info));
    ASSERT_EQ(info.iterations, 0);
    ASSERT_EQ(info.skipped, 0);
    ASSERT_EQ(atomic_load(&calls), 1);
    wait_ok(f3);
    weft_future_destroy(f1);
    weft_future_destroy(f2);
    weft_future_destroy(f3);
    ASSERT_EQ(atomic_load(&ec.c[1]), 4);
    ASSERT_EQ(atomic_load(&ec.c[2]), 0);
    ASSERT_EQ(atomic_load(&ec.c[3]), 4);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- parallel instances of a condition loop ---- */

#define PAR_N 16
struct par {
    atomic_int body[PAR_N];
    int turns[PAR_N];
    atomic_int outs[PAR_N];
};
static int par_init(weft_ctx *ctx, void *arg) {
    struct par *p = arg;
    p->turns[weft_ctx_iteration(ctx)] = 0;
    return 0;
}
static int par_body(weft_ctx *ctx, void *arg) {
    struct par *p = arg;
    atomic_fetch_add(&p->body[weft_ctx_iteration(ctx)], 1);
    ASSERT_OK(weft_spawn(ctx, noop, NULL)); /* left to weft */
    return 0;
}
static int par_cond(weft_ctx *ctx, void *arg) {
    struct par *p = arg;
    return ++p->turns[weft_ctx_iteration(ctx)] < 1000 ? 0 : 1;
}
static int par_out(weft_ctx *ctx, void *arg) {
    struct par *p = arg;
    atomic_fetch_add(&p->outs[weft_ctx_iteration(ctx)], 1);
    return 0;
}

TEST(parallel_instances_of_a_condition_loop_each_turn_their_own_count) {
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        struct par *p = calloc(1, sizeof *p);
        ASSERT_NOT_NULL(p);
        weft_taskflow *tf = make_taskflow("par");
        weft_task i = must_emplace(tf, par_init, p), b = must_emplace(tf, par_body, p);
        weft_task c = weft_emplace_condition(tf, par_cond, p), o = must_emplace(tf, par_out, p);
        ASSERT_OK(weft_precede(i, b));
        ASSERT_OK(weft_precede(b, c));
        ASSERT_OK(weft_precede(c, b));
        ASSERT_OK(weft_precede(c, o));
        weft_future *f;
        ASSERT_OK(weft_run_n_parallel(ex, tf, PAR_N, &f));
        wait_ok(f);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.iterations, PAR_N);
        weft_future_destroy(f);
        for (int k = 0; k < PAR_N; k++) {
            ASSERT_EQ(atomic_load(&p->body[k]), 1000);
            ASSERT_EQ(atomic_load(&p->outs[k]), 1);
        }
        ASSERT_OK(weft_taskflow_destroy(tf));
        free(p);
        weft_executor_destroy(ex);
    }
}

/* ---- weft_subflow_join from a child of the subflow's function ---- */

/* The child of the function is part of it: building and joining the graph
 * from there, while the function waits in its sync, is one thread at a time
 * (the sync orders them).  A thief that runs the child must run the graph as
 * itself: the join ran it as the function's worker (pushed onto that worker's
 * deque, ran its tasks with that worker's context, frame stack and ctx chain)
 * from the thief's thread, while that worker was in the sync. */
struct sfj {
    atomic_int started, stolen, ran, leaves, foreign, joins_ok;
};
struct sfj_child {
    struct sfj *s;
    weft_subflow *sf;
    int parent_worker;
};
static int sfj_leaf(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&((struct sfj *)arg)->leaves, 1);
    return 0;
}
/* A task of the joined graph: runs on the thread of the worker its context
 * names, and forks on that worker's frame stack. */
static int sfj_task(weft_ctx *ctx, void *arg) {
    struct sfj *s = arg;
    if (weft_ctx_worker_id(ctx) != weft_executor_worker_id(weft_ctx_executor(ctx))) atomic_fetch_add(&s->foreign, 1);
    ASSERT_OK(weft_spawn(ctx, sfj_leaf, s));
    ASSERT_OK(weft_spawn(ctx, sfj_leaf, s));
    ASSERT_EQ(weft_sync(ctx) + weft_sync(ctx), 0);
    atomic_fetch_add(&s->ran, 1);
    return 0;
}
static int sfj_child(weft_ctx *ctx, void *arg) {
    struct sfj_child *c = arg;
    atomic_store(&c->s->started, 1);
    if (weft_ctx_worker_id(ctx) != c->parent_worker) atomic_fetch_add(&c->s->stolen, 1);
    weft_taskflow *g = weft_subflow_graph(c->sf);
    for (int i = 0; i < 20; i++)
        if (weft_task_is_null(weft_emplace(g, sfj_task, c->s))) return 1;
    if (weft_subflow_join(c->sf) == WEFT_OK) atomic_fetch_add(&c->s->joins_ok, 1);
    return 0;
}
static int sfj_fn(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct sfj *s = arg;
    struct sfj_child c = {s, sf, weft_ctx_worker_id(ctx)};
    atomic_store(&s->started, 0);
    ASSERT_OK(weft_spawn(ctx, sfj_child, &c));
    double t0 = now_s(); /* give the idle worker time to take the child */
    while (!atomic_load(&s->started) && now_s() - t0 < 0.2) sleep_us(20);
    return weft_sync(ctx);
}

TEST(a_subflow_joined_by_a_child_that_a_thief_runs_runs_its_graph_on_the_thiefs_own_worker) {
    watchdog_start(60);
    weft_executor *ex = make_executor(2);
    struct sfj s = {0};
    weft_taskflow *tf = make_taskflow("sfj");
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, sfj_fn, &s)));
    const int runs = 30;
    for (int i = 0; i < runs; i++) ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_GT(atomic_load(&s.stolen), 0); /* else the test tested nothing */
    ASSERT_EQ(atomic_load(&s.joins_ok), runs);
    ASSERT_EQ(atomic_load(&s.ran), runs * 20);
    ASSERT_EQ(atomic_load(&s.leaves), runs * 40);
    ASSERT_EQ(atomic_load(&s.foreign), 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
    watchdog_stop();
}
