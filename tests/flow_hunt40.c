/* Control flow, adversarial round 40: probes that found nothing, on paths no
 * other test takes.  Graphs with no source (alone, run_n, as a module body),
 * a multi-condition picking past 64 in a loop, a subflow joined twice, edits
 * refused on bodies below a queued run, failures and cycles inside nested and
 * detached subflows and bodies, subflows that build a module of a taskflow
 * their run is in, a detached subflow re-entered while its graph waits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#include <limits.h>
#include <string.h>

static const unsigned WORKERS[] = {1, 2, 4};

/* ---- A: graphs with no source ---- */
static int cond0(weft_ctx *ctx, void *arg) { (void)ctx; (void)arg; return 0; }

TEST(a_graph_whose_tasks_all_have_a_predecessor_runs_nothing_alone_run_n_and_as_a_module_body) {
    atomic_int n = 0;
    weft_taskflow *tf = make_taskflow("nosrc");
    weft_task c = weft_emplace_condition(tf, cond0, NULL);
    weft_task a = must_emplace(tf, bump, &n);
    ASSERT_OK(weft_precede(c, a));
    ASSERT_OK(weft_precede(a, c)); /* c has a strong pred a; a has weak pred c only */
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        watchdog_start(10);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        weft_future *f;
        ASSERT_OK(weft_run_n(ex, tf, 5, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.iterations, 5);
        weft_future_destroy(f);
        /* as a module body and inside a subflow-free parent */
        weft_taskflow *p = make_taskflow("parent");
        weft_task m = weft_emplace_module(p, tf);
        weft_task after = must_emplace(p, bump, &n);
        ASSERT_OK(weft_precede(m, after));
        ASSERT_OK(weft_run_and_wait(ex, p));
        ASSERT_OK(weft_run_and_wait(ex, p));
        watchdog_stop();
        ASSERT_OK(weft_taskflow_destroy(p));
        weft_executor_destroy(ex);
    }
    ASSERT_EQ(atomic_load(&n), 6);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* ---- B: multi-condition picking >= 64 successors in a loop ---- */
struct mc {
    int turns, n;
    atomic_int hits[80];
    atomic_int joins;
};
static int mc_fn(weft_ctx *ctx, void *arg, weft_branches *out) {
    struct mc *m = arg;
    for (unsigned i = 0; i < 80; i++)
        if (i % 3 == (unsigned)(m->turns % 3) || i >= 64) {
            if (weft_branches_add(out, i) != WEFT_OK) return 7;
            if (weft_branches_add(out, i) != WEFT_OK) return 8; /* twice is once */
        }
    ASSERT_STATUS(weft_branches_add(out, 80), WEFT_EINVAL);
    return 0;
}
static struct mc *g_mc;
static int mc_hit(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&g_mc->hits[(size_t)(uintptr_t)arg], 1);
    return 0;
}
static int mc_loop(weft_ctx *ctx, void *arg) {
    struct mc *m = arg;
    return ++m->turns < m->n ? 0 : 1;
}
TEST(a_multi_condition_picking_past_64_successors_on_each_turn_of_a_loop_runs_each_pick_once) {
    static struct mc m;
    memset(&m, 0, sizeof m);
    g_mc = &m;
    m.n = 200;
    weft_taskflow *tf = make_taskflow("mc");
    weft_task init = must_emplace(tf, noop, NULL);
    weft_task mc = weft_emplace_multi_condition(tf, mc_fn, &m);
    weft_task loop = weft_emplace_condition(tf, mc_loop, &m);
    weft_task gate = must_emplace(tf, noop, NULL); /* joins nothing: picked only */
    ASSERT_OK(weft_precede(init, mc));
    weft_task kids[80];
    for (size_t i = 0; i < 80; i++) {
        kids[i] = must_emplace(tf, mc_hit, (void *)(uintptr_t)i);
        ASSERT_OK(weft_precede(mc, kids[i]));
    }
    /* kid 79 leads to the loop condition */
    ASSERT_OK(weft_precede(kids[79], loop));
    ASSERT_OK(weft_precede(loop, mc));
    ASSERT_OK(weft_precede(loop, gate));
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        memset(&m, 0, sizeof m);
        m.n = 200;
        ASSERT_OK(weft_run_and_wait(ex, tf));
        for (int i = 0; i < 80; i++) {
            int want = 0;
            for (int t = 0; t < 200; t++) want += (i % 3 == t % 3 || i >= 64);
            ASSERT_EQ(atomic_load(&m.hits[i]), want);
        }
        weft_executor_destroy(ex);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* ---- E: subflow join / detach combinations ---- */
struct sj {
    atomic_int kids;
    weft_status join1, join2, add_after, detach_after, detached_after;
};
static int sj_fn(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct sj *s = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task a = weft_emplace(g, bump, &s->kids), b = weft_emplace(g, bump, &s->kids);
    if (weft_precede(a, b) != WEFT_OK) return 1;
    s->join1 = weft_subflow_join(sf);
    if (atomic_load(&s->kids) % 2 != 0) return 2;
    s->join2 = weft_subflow_join(sf);
    weft_task c = weft_emplace(g, bump, &s->kids);
    s->add_after = weft_task_is_null(c) ? weft_taskflow_last_error(g) : WEFT_OK;
    s->detach_after = weft_subflow_detach(sf);
    s->detached_after = weft_subflow_detached(sf) ? WEFT_OK : WEFT_ENOENT;
    return 0;
}
TEST(a_subflow_joined_twice_is_sealed_and_reruns_whole_on_its_next_execution) {
    struct sj s = {0};
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("sj");
    weft_task t = weft_emplace_subflow(tf, sj_fn, &s);
    atomic_int after = 0;
    ASSERT_OK(weft_precede(t, must_emplace(tf, bump, &after)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(s.join1);
    ASSERT_OK(s.join2);
    ASSERT_STATUS(s.add_after, WEFT_EBUSY);
    ASSERT_EQ(atomic_load(&s.kids), 2);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_STATUS(s.add_after, WEFT_EBUSY);
    ASSERT_EQ(atomic_load(&s.kids), 4);
    ASSERT_EQ(atomic_load(&after), 2);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- I: destroy/clear/edit while a run is pending, also a module body ---- */
static int gate_wait(weft_ctx *ctx, void *arg) {
    atomic_int *g = arg;
    while (!atomic_load(g)) sleep_us(100);
    return 0;
}
TEST(a_taskflow_and_its_nested_bodies_refuse_destroy_clear_and_edits_while_a_run_waits_to_reach_them) {
    weft_executor *ex = make_executor(2);
    atomic_int gate = 0, n = 0;
    weft_taskflow *blocker = make_taskflow("blocker");
    must_emplace(blocker, gate_wait, &gate);
    weft_taskflow *inner = make_taskflow("inner");
    must_emplace(inner, bump, &n);
    weft_taskflow *body = make_taskflow("body");
    weft_emplace_module(body, inner);
    weft_task bt = must_emplace(body, bump, &n);
    weft_taskflow *top = make_taskflow("top");
    weft_task b = weft_emplace_module(top, blocker);
    weft_task m = weft_emplace_module(top, body);
    ASSERT_OK(weft_precede(b, m));
    weft_future *f;
    ASSERT_OK(weft_run(ex, top, &f));
    sleep_us(2000);
    ASSERT_STATUS(weft_taskflow_destroy(top), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_clear(top), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_destroy(body), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_clear(body), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_destroy(inner), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_clear(inner), WEFT_EBUSY);
    ASSERT_TRUE(weft_task_is_null(weft_emplace(inner, bump, &n)));
    ASSERT_STATUS(weft_taskflow_last_error(inner), WEFT_EBUSY);
    ASSERT_STATUS(weft_task_set_name(bt, "x"), WEFT_EBUSY);
    ASSERT_STATUS(weft_task_erase(bt), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_set_name(inner, "y"), WEFT_EBUSY);
    ASSERT_STATUS(weft_task_set_priority(bt, WEFT_PRIORITY_HIGH), WEFT_EBUSY);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&n), 2);
    ASSERT_OK(weft_taskflow_destroy(top));
    ASSERT_OK(weft_taskflow_destroy(body));
    ASSERT_OK(weft_taskflow_destroy(inner));
    ASSERT_OK(weft_taskflow_destroy(blocker));
    weft_executor_destroy(ex);
}

/* ---- M: a failing task in a detached subflow, nested detached ---- */
static int failer(weft_ctx *ctx, void *arg) { return (int)(intptr_t)arg; }
static int det_inner(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task t = weft_emplace(g, failer, (void *)(intptr_t)42);
    weft_task_set_name(t, "deepfail");
    return weft_subflow_detach(sf) == WEFT_OK ? 0 : 1;
}
static int det_outer(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task t = weft_emplace_subflow(g, det_inner, NULL);
    if (weft_task_is_null(t)) return 1;
    return weft_subflow_detach(sf) == WEFT_OK ? 0 : 1;
}
TEST(a_failure_in_a_detached_subflow_of_a_detached_subflow_fails_the_run_naming_the_task) {
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        weft_taskflow *tf = make_taskflow("det");
        atomic_int n = 0;
        weft_task s = weft_emplace_subflow(tf, det_outer, NULL);
        weft_task a = must_emplace(tf, bump, &n);
        ASSERT_OK(weft_precede(s, a));
        weft_future *f;
        ASSERT_OK(weft_run_n(ex, tf, 3, &f));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.task_code, 42);
        ASSERT_STREQ(info.failed_task, "deepfail");
        ASSERT_EQ(info.iterations, 0);
        weft_future_destroy(f);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* ---- e: a subflow that builds a module of its own run's taskflow ---- */
static weft_taskflow *g_self;
static int sub_self_module(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    weft_task t = weft_emplace_module(weft_subflow_graph(sf), g_self);
    return weft_task_is_null(t) ? 3 : 0;
}
TEST(a_subflow_building_a_module_of_its_own_taskflow_fails_the_run_with_edeadlk) {
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        g_self = make_taskflow("self");
        weft_emplace_subflow(g_self, sub_self_module, NULL);
        watchdog_start(10);
        weft_future *f;
        ASSERT_OK(weft_run(ex, g_self, &f));
        weft_status st = weft_future_wait(f);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_STATUS(st, WEFT_ETASK);
        ASSERT_EQ(info.task_code, WEFT_EDEADLK);
        weft_future_destroy(f);
        /* and one level further: parent P has module body B whose subflow builds a module of P */
        watchdog_stop();
        ASSERT_OK(weft_taskflow_destroy(g_self));
        weft_executor_destroy(ex);
    }
}
static weft_taskflow *g_parent;
static int sub_parent_module(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    weft_task t = weft_emplace_module(weft_subflow_graph(sf), g_parent);
    return weft_task_is_null(t) ? 3 : 0;
}
TEST(a_body_subflow_building_a_module_of_the_parent_fails_the_run_with_edeadlk) {
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        weft_taskflow *body = make_taskflow("body");
        weft_emplace_subflow(body, sub_parent_module, NULL);
        g_parent = make_taskflow("parent");
        weft_emplace_module(g_parent, body);
        watchdog_start(10);
        weft_future *f;
        ASSERT_OK(weft_run(ex, g_parent, &f));
        weft_status st = weft_future_wait(f);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_STATUS(st, WEFT_ETASK);
        ASSERT_EQ(info.task_code, WEFT_EDEADLK);
        weft_future_destroy(f);
        watchdog_stop();
        ASSERT_OK(weft_taskflow_destroy(g_parent));
        ASSERT_OK(weft_taskflow_destroy(body));
        weft_executor_destroy(ex);
    }
}

/* ---- j/k: strong cycles in a subflow graph and in a module body ---- */
static int sub_cycle(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task a = weft_emplace(g, noop, NULL), b = weft_emplace(g, noop, NULL), c = weft_emplace(g, noop, NULL);
    weft_precede(a, b);
    weft_precede(b, c);
    weft_precede(c, b);
    if (arg) {
        weft_status st = weft_subflow_join(sf);
        if (st != WEFT_ECYCLE) return 77;
    }
    return 0;
}
TEST(strong_cycles_in_subflow_graphs_joined_or_not_and_in_bodies_fail_the_run_with_ecycle) {
    for (size_t wi = 0; wi < 3; wi++)
        for (int join = 0; join < 2; join++) {
            weft_executor *ex = make_executor(WORKERS[wi]);
            weft_taskflow *tf = make_taskflow("cyc");
            atomic_int after = 0;
            weft_task s = weft_emplace_subflow(tf, sub_cycle, join ? (void *)1 : NULL);
            weft_task_set_name(s, "cyclesub");
            ASSERT_OK(weft_precede(s, must_emplace(tf, bump, &after)));
            watchdog_start(10);
            weft_future *f;
            ASSERT_OK(weft_run_n(ex, tf, 3, &f));
            weft_status st = weft_future_wait(f);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            ASSERT_STATUS(st, WEFT_ETASK);
            ASSERT_EQ(info.task_code, WEFT_ECYCLE);
            weft_future_destroy(f);
            watchdog_stop();
            ASSERT_OK(weft_taskflow_destroy(tf));
            weft_executor_destroy(ex);
        }
    /* a body with a cycle */
    weft_executor *ex = make_executor(2);
    weft_taskflow *body = make_taskflow("cbody");
    weft_task a = must_emplace(body, noop, NULL), b = must_emplace(body, noop, NULL);
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_precede(b, a));
    weft_taskflow *tf = make_taskflow("top");
    atomic_int before = 0;
    weft_task pre = must_emplace(tf, bump, &before);
    weft_task m = weft_emplace_module(tf, body);
    ASSERT_OK(weft_precede(pre, m));
    weft_future *f;
    weft_status st = weft_run(ex, tf, &f);
    if (st == WEFT_OK) {
        st = weft_future_wait(f);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.task_code, WEFT_ECYCLE);
        weft_future_destroy(f);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
    weft_executor_destroy(ex);
}

/* ---- h: a detached subflow re-run in the same iteration while its graph runs ---- */
struct dl {
    atomic_int gate, kids, turns, busy_seen;
};
static int dl_kid(weft_ctx *ctx, void *arg) {
    struct dl *d = arg;
    /* Held until the run has failed (the second execution of its subflow
     * task finds this graph still running). */
    while (!atomic_load(&d->gate) && !weft_ctx_cancelled(ctx)) sleep_us(50);
    atomic_fetch_add(&d->kids, 1);
    return 0;
}
static int dl_sub(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct dl *d = arg;
    weft_emplace(weft_subflow_graph(sf), dl_kid, d);
    weft_subflow_detach(sf);
    return 0;
}
static int dl_cond(weft_ctx *ctx, void *arg) {
    struct dl *d = arg;
    int t = atomic_fetch_add(&d->turns, 1);
    if (t == 1) atomic_store(&d->gate, 1); /* let the detached graph finish after the 2nd try */
    return t < 3 ? 0 : 1;
}
TEST(a_detached_subflow_looping_while_its_graph_waits_fails_the_run_with_ebusy_and_ends) {
    for (size_t wi = 1; wi < 3; wi++) {
        struct dl d = {0};
        weft_executor *ex = make_executor(WORKERS[wi]);
        weft_taskflow *tf = make_taskflow("dl");
        weft_task s = weft_emplace_subflow(tf, dl_sub, &d);
        weft_task c = weft_emplace_condition(tf, dl_cond, &d);
        ASSERT_OK(weft_precede(must_emplace(tf, noop, NULL), s));
        ASSERT_OK(weft_precede(s, c));
        ASSERT_OK(weft_precede(c, s));
        watchdog_start(10);
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        weft_status st = weft_future_wait(f);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_STATUS(st, WEFT_ETASK);
        ASSERT_EQ(info.task_code, WEFT_EBUSY);
        weft_future_destroy(f);
        watchdog_stop();
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}
