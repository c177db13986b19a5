/* Pipelines, adversarial round 40.  A stage a spread phase gave to another
 * worker ran with no context there: its waits for its own run hung instead
 * of getting WEFT_EDEADLK, it could not spawn, and it did not see its run's
 * cancellation (fixed in pipeline/run.c).  Probes that found nothing:
 * pipelines in condition loops, module bodies and subflow graphs, cancelled
 * runs, simple pipelines of awkward sizes failing anywhere, data values
 * through stop, failure, re-run and reset. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#include <string.h>

static const unsigned WORKERS[] = {1, 2, 4};
static const weft_pipeline_scheduling SCHED[] = {WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE};

/* ---- P3: a pipeline inside a condition loop, a subflow and a module ---- */
typedef struct cnt {
    uint64_t per_run, made;
    uint64_t next_expect;
    atomic_int bad;
    atomic_long sum_stage1, sum_last;
    int turns, nturns;
} cnt;
static int c_first(weft_pipeflow *pf, void *arg) {
    cnt *c = arg;
    if (c->made == c->per_run) { c->made = 0; return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 99; }
    uint64_t t = weft_pipeflow_token(pf);
    if (t != c->next_expect) atomic_fetch_add(&c->bad, 1);
    c->next_expect = t + 1;
    c->made++;
    return 0;
}
static int c_par(weft_pipeflow *pf, void *arg) {
    cnt *c = arg;
    atomic_fetch_add(&c->sum_stage1, (long)weft_pipeflow_token(pf));
    return 0;
}
static int c_last(weft_pipeflow *pf, void *arg) {
    cnt *c = arg;
    atomic_fetch_add(&c->sum_last, (long)weft_pipeflow_token(pf) + 1);
    return 0;
}
static int c_loop(weft_ctx *ctx, void *arg) {
    cnt *c = arg;
    return ++c->turns < c->nturns ? 0 : 1;
}
static int c_reset_turns(weft_ctx *ctx, void *arg) { ((cnt *)arg)->turns = 0; return 0; }

static weft_pipeline *mk_pipe(cnt *c, size_t lines) {
    weft_stage st[3] = {
        {WEFT_STAGE_SERIAL, c_first, c, "first"},
        {WEFT_STAGE_PARALLEL, c_par, c, "par"},
        {WEFT_STAGE_SERIAL, c_last, c, "last"},
    };
    weft_status err;
    weft_pipeline *p = weft_pipeline_create(lines, st, 3, &err);
    ASSERT_NOT_NULL(p);
    return p;
}

TEST(pipe_a_pipeline_in_a_condition_loop_of_a_body_used_by_two_modules_passes_every_token_once) {
    for (size_t wi = 0; wi < 3; wi++)
        for (size_t si = 0; si < 3; si++)
            for (size_t lines = 1; lines <= 5; lines += 4) {
                cnt c = {.per_run = 37, .nturns = 7};
                weft_executor *ex = make_executor(WORKERS[wi]);
                weft_pipeline *p = mk_pipe(&c, lines);
                ASSERT_OK(weft_pipeline_set_scheduling(p, SCHED[si]));
                weft_taskflow *body = make_taskflow("body");
                weft_task init = must_emplace(body, c_reset_turns, &c);
                weft_task pt = weft_pipeline_emplace(body, p);
                weft_task loop = weft_emplace_condition(body, c_loop, &c);
                ASSERT_OK(weft_precede(init, pt));
                ASSERT_OK(weft_precede(pt, loop));
                ASSERT_OK(weft_precede(loop, pt));
                weft_taskflow *top = make_taskflow("top");
                weft_task m1 = weft_emplace_module(top, body), m2 = weft_emplace_module(top, body);
                (void)m1, (void)m2; /* independent: they queue on the body */
                weft_future *f;
                ASSERT_OK(weft_run_n(ex, top, 3, &f));
                ASSERT_OK(weft_future_wait(f));
                weft_future_destroy(f);
                uint64_t total = 3 * 2 * 7 * 37;
                ASSERT_EQ(weft_pipeline_num_tokens(p), total);
                ASSERT_EQ(atomic_load(&c.bad), 0);
                ASSERT_EQ(atomic_load(&c.sum_stage1), (long)(total * (total - 1) / 2));
                ASSERT_EQ(atomic_load(&c.sum_last), (long)(total * (total + 1) / 2));
                ASSERT_OK(weft_taskflow_destroy(top));
                ASSERT_OK(weft_taskflow_destroy(body));
                ASSERT_OK(weft_pipeline_destroy(p));
                weft_executor_destroy(ex);
            }
}

/* ---- P4: a pipeline emplaced into a subflow graph each execution ---- */
static weft_pipeline *g_sub_pipe;
static int sub_with_pipe(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    weft_task t = weft_pipeline_emplace(weft_subflow_graph(sf), g_sub_pipe);
    return weft_task_is_null(t) ? 5 : 0;
}
TEST(pipe_a_pipeline_emplaced_in_a_subflow_graph_runs_at_every_execution) {
    for (size_t wi = 0; wi < 3; wi++) {
        cnt c = {.per_run = 50};
        weft_executor *ex = make_executor(WORKERS[wi]);
        g_sub_pipe = mk_pipe(&c, 3);
        weft_taskflow *tf = make_taskflow("sub");
        weft_emplace_subflow(tf, sub_with_pipe, NULL);
        weft_future *f;
        ASSERT_OK(weft_run_n(ex, tf, 10, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        ASSERT_EQ(weft_pipeline_num_tokens(g_sub_pipe), 500);
        ASSERT_EQ(atomic_load(&c.bad), 0);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_pipeline_destroy(g_sub_pipe));
        weft_executor_destroy(ex);
    }
}

/* ---- P6: cancel mid-run, then reuse ---- */
typedef struct slow {
    atomic_long made, last;
    atomic_int started;
    int stop_at;
} slow;
static int s_first(weft_pipeflow *pf, void *arg) {
    slow *s = arg;
    if (s->stop_at >= 0 && weft_pipeflow_token(pf) >= (uint64_t)s->stop_at) return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 9;
    atomic_fetch_add(&s->made, 1);
    atomic_store(&s->started, 1);
    sleep_us(200);
    return 0;
}
static int s_last(weft_pipeflow *pf, void *arg) {
    slow *s = arg;
    atomic_fetch_add(&s->last, 1);
    return 0;
}
TEST(pipe_a_run_cancelled_mid_way_ends_every_token_it_made_and_the_next_run_continues) {
    for (size_t wi = 0; wi < 3; wi++)
        for (size_t si = 0; si < 3; si++) {
            slow s = {.stop_at = -1};
            weft_executor *ex = make_executor(WORKERS[wi]);
            weft_stage st[2] = {{WEFT_STAGE_SERIAL, s_first, &s, "f"}, {WEFT_STAGE_PARALLEL, s_last, &s, "l"}};
            weft_pipeline *p = weft_pipeline_create(4, st, 2, NULL);
            ASSERT_NOT_NULL(p);
            ASSERT_OK(weft_pipeline_set_scheduling(p, SCHED[si]));
            weft_taskflow *tf = make_taskflow("c");
            atomic_int after = 0;
            weft_task pt = weft_pipeline_emplace(tf, p);
            ASSERT_OK(weft_precede(pt, must_emplace(tf, bump, &after)));
            weft_future *f;
            watchdog_start(20);
            ASSERT_OK(weft_run(ex, tf, &f));
            ASSERT_TRUE(wait_flag(&s.started, 1, 5));
            sleep_us(5000);
            ASSERT_OK(weft_future_cancel(f));
            ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            weft_future_destroy(f);
            ASSERT_EQ(atomic_load(&after), 0);
            long made = atomic_load(&s.made);
            ASSERT_EQ(atomic_load(&s.last), made);
            ASSERT_EQ(weft_pipeline_num_tokens(p), (uint64_t)made);
            s.stop_at = (int)made + 10;
            ASSERT_OK(weft_run_and_wait(ex, tf));
            watchdog_stop();
            ASSERT_EQ(atomic_load(&s.made), made + 10);
            ASSERT_EQ(atomic_load(&s.last), made + 10);
            ASSERT_EQ(atomic_load(&after), 1);
            ASSERT_OK(weft_taskflow_destroy(tf));
            ASSERT_OK(weft_pipeline_destroy(p));
            weft_executor_destroy(ex);
        }
}

/* ---- P7: simple pipelines with a parallel first stage, lines > count ---- */
static int it_add(void *item, size_t index, void *arg) {
    long *v = item;
    *v = *v * 10 + (long)(uintptr_t)arg;
    return 0;
}
static int it_fail(void *item, size_t index, void *arg) {
    return index == (size_t)(uintptr_t)arg ? 17 : 0;
}
TEST(pipe_simple_pipelines_of_0_1_2_7_and_1000_items_with_a_parallel_first_stage_run_each_item_once) {
    size_t counts[] = {0, 1, 2, 7, 1000};
    for (size_t wi = 0; wi < 3; wi++)
        for (size_t si = 0; si < 3; si++)
            for (size_t ci = 0; ci < 5; ci++)
                for (size_t lines = 1; lines <= 16; lines *= 4) {
                    size_t n = counts[ci];
                    long *v = calloc(n + 1, sizeof *v);
                    weft_item_stage st[3] = {{WEFT_STAGE_PARALLEL, it_add, (void *)1, "a"},
                                             {WEFT_STAGE_SERIAL, it_add, (void *)2, "b"},
                                             {WEFT_STAGE_PARALLEL, it_add, (void *)3, "c"}};
                    weft_executor *ex = make_executor(WORKERS[wi]);
                    weft_status err;
                    weft_pipeline *p = weft_simple_pipeline_create(lines, v, n, sizeof *v, st, 3, &err);
                    ASSERT_NOT_NULL(p);
                    ASSERT_OK(weft_pipeline_set_scheduling(p, SCHED[si]));
                    weft_taskflow *tf = make_taskflow("s");
                    weft_pipeline_emplace(tf, p);
                    ASSERT_OK(weft_run_and_wait(ex, tf));
                    ASSERT_OK(weft_run_and_wait(ex, tf));
                    for (size_t i = 0; i < n; i++) ASSERT_EQ(v[i], 123123);
                    ASSERT_EQ(v[n], 0);
                    ASSERT_EQ(weft_pipeline_num_tokens(p), n);
                    ASSERT_OK(weft_taskflow_destroy(tf));
                    ASSERT_OK(weft_pipeline_destroy(p));
                    weft_executor_destroy(ex);
                    free(v);
                }
}
TEST(pipe_a_simple_pipeline_failing_at_its_first_middle_or_last_item_runs_none_past_it) {
    size_t n = 101;
    for (size_t wi = 0; wi < 3; wi++)
        for (size_t si = 0; si < 3; si++) {
            size_t fails[] = {0, 50, 100};
            for (size_t k = 0; k < 3; k++) {
                long *v = calloc(n, sizeof *v);
                weft_item_stage st[3] = {{WEFT_STAGE_SERIAL, it_add, (void *)1, "a"},
                                         {WEFT_STAGE_PARALLEL, it_fail, (void *)(uintptr_t)fails[k], "fail"},
                                         {WEFT_STAGE_SERIAL, it_add, (void *)3, "c"}};
                weft_executor *ex = make_executor(WORKERS[wi]);
                weft_pipeline *p = weft_simple_pipeline_create(4, v, n, sizeof *v, st, 3, NULL);
                ASSERT_NOT_NULL(p);
                ASSERT_OK(weft_pipeline_set_scheduling(p, SCHED[si]));
                weft_taskflow *tf = make_taskflow("s");
                weft_task t = weft_pipeline_emplace(tf, p);
                ASSERT_OK(weft_task_set_name(t, "pipe"));
                weft_future *f;
                ASSERT_OK(weft_run(ex, tf, &f));
                ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
                weft_run_info info;
                ASSERT_OK(weft_future_info(f, &info));
                ASSERT_EQ(info.task_code, 17);
                ASSERT_STREQ(info.failed_task, "pipe");
                weft_future_destroy(f);
                /* nothing run twice; the failing item never reaches c */
                for (size_t i = 0; i < n; i++) {
                    ASSERT_TRUE(v[i] == 0 || v[i] == 1 || v[i] == 13);
                    if (i == fails[k]) ASSERT_EQ(v[i], 1);
                    if (i < fails[k]) ASSERT_EQ(v[i], 13);
                }
                /* a new run processes the whole batch from index 0 */
                memset(v, 0, n * sizeof *v);
                ASSERT_OK(weft_taskflow_destroy(tf));
                ASSERT_OK(weft_pipeline_destroy(p));
                weft_executor_destroy(ex);
                free(v);
            }
        }
}

/* ---- P5: data pipelines: every value exact through mixed sizes, stop, failure, re-run ---- */
typedef struct dstate {
    uint64_t stop_at;   /* absolute token on which the first stage stops */
    uint64_t fail_at;   /* absolute token on which stage 2 fails */
    atomic_int bad;
    atomic_ullong sum;  /* sum of the last stage's values */
    atomic_ullong count;
} dstate;
typedef struct { uint64_t t; char pad[13]; } odd13;
static int d0(weft_pipeflow *pf, void *in, void *out, void *arg) {
    dstate *d = arg;
    uint64_t t = weft_pipeflow_token(pf);
    if (in) atomic_fetch_add(&d->bad, 1);
    if (t == d->stop_at) return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 5;
    *(uint16_t *)out = (uint16_t)(t & 0xffff);
    return 0;
}
static int d1(weft_pipeflow *pf, void *in, void *out, void *arg) {
    dstate *d = arg;
    uint64_t t = weft_pipeflow_token(pf);
    if (*(uint16_t *)in != (uint16_t)(t & 0xffff)) atomic_fetch_add(&d->bad, 1);
    odd13 *o = out;
    o->t = t * 3;
    memset(o->pad, (int)(t & 0x7f), sizeof o->pad);
    return 0;
}
static int d2(weft_pipeflow *pf, void *in, void *out, void *arg) {
    dstate *d = arg;
    uint64_t t = weft_pipeflow_token(pf);
    odd13 *o = in;
    if (o->t != t * 3) atomic_fetch_add(&d->bad, 1);
    for (size_t i = 0; i < sizeof o->pad; i++)
        if (o->pad[i] != (char)(t & 0x7f)) atomic_fetch_add(&d->bad, 1);
    if (t == d->fail_at) return 33;
    *(double *)out = (double)t + 0.5;
    return 0;
}
static int d3(weft_pipeflow *pf, void *in, void *out, void *arg) {
    dstate *d = arg;
    uint64_t t = weft_pipeflow_token(pf);
    if (out) atomic_fetch_add(&d->bad, 1);
    if (*(double *)in != (double)t + 0.5) atomic_fetch_add(&d->bad, 1);
    atomic_fetch_add(&d->sum, t);
    atomic_fetch_add(&d->count, 1);
    return 0;
}
TEST(pipe_data_values_stay_exact_through_a_stop_a_failure_a_rerun_and_a_reset) {
    weft_stage_kind kinds[2] = {WEFT_STAGE_SERIAL, WEFT_STAGE_PARALLEL};
    for (size_t wi = 0; wi < 3; wi++)
        for (size_t si = 0; si < 3; si++)
            for (size_t k = 0; k < 2; k++)
                for (size_t lines = 1; lines <= 7; lines += 6) {
                    dstate d = {.stop_at = 500, .fail_at = UINT64_MAX};
                    weft_data_stage st[4] = {
                        {.kind = WEFT_STAGE_SERIAL, .fn = d0, .arg = &d, .name = "gen", .WEFT_DATA_OUT(uint16_t)},
                        {.kind = kinds[k], .fn = d1, .arg = &d, .name = "widen", .WEFT_DATA_IN(uint16_t), .WEFT_DATA_OUT(odd13)},
                        {.kind = kinds[!k], .fn = d2, .arg = &d, .name = "conv", .WEFT_DATA_IN(odd13), .WEFT_DATA_OUT(double)},
                        {.kind = WEFT_STAGE_SERIAL, .fn = d3, .arg = &d, .name = "sink", .WEFT_DATA_IN(double)},
                    };
                    weft_status err;
                    weft_pipeline *p = weft_data_pipeline_create(lines, st, 4, &err);
                    ASSERT_NOT_NULL(p);
                    ASSERT_OK(weft_pipeline_set_scheduling(p, SCHED[si]));
                    weft_executor *ex = make_executor(WORKERS[wi]);
                    weft_taskflow *tf = make_taskflow("d");
                    weft_pipeline_emplace(tf, p);
                    ASSERT_OK(weft_run_and_wait(ex, tf));
                    ASSERT_EQ(atomic_load(&d.count), 500);
                    ASSERT_EQ(atomic_load(&d.sum), 500ull * 499 / 2);
                    ASSERT_EQ(weft_pipeline_num_tokens(p), 500);
                    /* run 2: continues from 500, fails at 777 */
                    d.stop_at = 2000, d.fail_at = 777;
                    weft_future *f;
                    ASSERT_OK(weft_run(ex, tf, &f));
                    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
                    weft_run_info info;
                    ASSERT_OK(weft_future_info(f, &info));
                    ASSERT_EQ(info.task_code, 33);
                    weft_future_destroy(f);
                    uint64_t made = weft_pipeline_num_tokens(p);
                    ASSERT_GE(made, 778);
                    ASSERT_LE(made, 778 + lines);
                    /* every token < made but 777 reached the sink once */
                    uint64_t c = atomic_load(&d.count);
                    ASSERT_EQ(c, made - 1);
                    /* run 3: continues from `made` to 2000 */
                    d.fail_at = UINT64_MAX;
                    ASSERT_OK(weft_run_and_wait(ex, tf));
                    ASSERT_EQ(weft_pipeline_num_tokens(p), 2000);
                    ASSERT_EQ(atomic_load(&d.count), 1999);
                    ASSERT_EQ(atomic_load(&d.sum), 2000ull * 1999 / 2 - 777);
                    /* reset: from 0 again */
                    ASSERT_OK(weft_pipeline_reset(p));
                    d.stop_at = 3;
                    ASSERT_OK(weft_run_and_wait(ex, tf));
                    ASSERT_EQ(atomic_load(&d.count), 2002);
                    ASSERT_EQ(atomic_load(&d.bad), 0);
                    ASSERT_OK(weft_taskflow_destroy(tf));
                    ASSERT_OK(weft_pipeline_destroy(p));
                    weft_executor_destroy(ex);
                }
}

/* A stage that a spread phase hands to another worker (a thief) ran with no
 * context on that worker: a wait there for a run of the pipeline's own
 * taskflow (or of a graph the pipeline's task is nested in, or for its own
 * run's future) was not refused with WEFT_EDEADLK, as it is from the worker
 * that runs the pipeline's task, and hung the run for ever. */
struct thiefwait {
    weft_executor *ex;
    weft_taskflow *own, *parent;
    atomic_int calls, deadlk, other, workers_seen;
    atomic_uint seen_mask;
};
static struct thiefwait g_tw;
static int tw_first(weft_pipeflow *pf, void *arg) {
    if (weft_pipeflow_token(pf) >= 48) return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 5;
    return 0;
}
static int tw_wait(weft_pipeflow *pf, void *arg) {
    struct thiefwait *t = &g_tw;
    int id = weft_executor_worker_id(t->ex);
    if (id >= 0 && id < 32) atomic_fetch_or(&t->seen_mask, 1u << id);
    sleep_us(300); /* time for the other workers to steal the next tokens */
    weft_status a = weft_run_and_wait(t->ex, t->own);
    weft_status b = t->parent ? weft_run_and_wait(t->ex, t->parent) : WEFT_EDEADLK;
    weft_status c = weft_future_wait((weft_future *)weft_pipeflow_run(pf));
    atomic_fetch_add(&t->calls, 1);
    if (a == WEFT_EDEADLK && b == WEFT_EDEADLK && c == WEFT_EDEADLK) atomic_fetch_add(&t->deadlk, 1);
    else atomic_fetch_add(&t->other, 1);
    return 0;
}
TEST(pipe_a_stage_run_by_a_thief_that_waits_for_its_own_run_gets_edeadlk_instead_of_hanging) {
    for (unsigned wk = 2; wk <= 4; wk += 2)
        for (int in_module = 0; in_module < 2; in_module++) {
            memset(&g_tw, 0, sizeof g_tw);
            g_tw.ex = make_executor(wk);
            weft_taskflow *pt = make_taskflow("pipe-graph");
            weft_taskflow *top = pt;
            if (in_module) {
                top = make_taskflow("parent");
                weft_emplace_module(top, pt);
                g_tw.parent = top;
            }
            g_tw.own = pt;
            weft_stage st[3] = {{WEFT_STAGE_SERIAL, tw_first, NULL, "first"},
                                {WEFT_STAGE_PARALLEL, tw_wait, NULL, "wait"},
                                {WEFT_STAGE_PARALLEL, tw_wait, NULL, "wait-again"}};
            weft_pipeline *p = weft_pipeline_create(4, st, 3, NULL);
            ASSERT_NOT_NULL(p);
            ASSERT_OK(weft_pipeline_set_scheduling(p, WEFT_PIPELINE_SPREAD));
            ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(pt, p)));
            watchdog_start(20);
            ASSERT_OK(weft_run_and_wait(g_tw.ex, top));
            watchdog_stop();
            ASSERT_EQ(atomic_load(&g_tw.calls), 96);
            ASSERT_EQ(atomic_load(&g_tw.other), 0);
            ASSERT_EQ(atomic_load(&g_tw.deadlk), 96);
            ASSERT_EQ(weft_pipeline_num_tokens(p), 48);
            /* Nothing was submitted by the refused waits: both graphs are idle. */
            ASSERT_OK(weft_taskflow_clear(pt));
            if (in_module) ASSERT_OK(weft_taskflow_destroy(top));
            ASSERT_OK(weft_taskflow_destroy(pt));
            ASSERT_OK(weft_pipeline_destroy(p));
            weft_executor_destroy(g_tw.ex);
        }
}

/* The context a stage finds on any worker (weft_current_ctx) serves fork-join
 * and sees the run's cancellation: a stage that spawns and syncs children
 * through it gets every child's result on every worker and schedule, and
 * once the run is cancelled every stage that starts sees it. */
#define SP_TOKENS 200
struct spawnstage {
    atomic_int kids[SP_TOKENS];
    atomic_int bad, nullctx, calls;
};
static struct spawnstage g_sp;
static int sp_kid(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&g_sp.kids[(uintptr_t)arg], 1);
    return 0;
}
static int sp_first(weft_pipeflow *pf, void *arg) {
    if (weft_pipeflow_token(pf) >= SP_TOKENS) return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 5;
    return 0;
}
static int sp_stage(weft_pipeflow *pf, void *arg) {
    uintptr_t t = (uintptr_t)weft_pipeflow_token(pf);
    weft_ctx *cx = weft_current_ctx();
    atomic_fetch_add(&g_sp.calls, 1);
    if (!cx) {
        atomic_fetch_add(&g_sp.nullctx, 1);
        return 0;
    }
    if (weft_spawn(cx, sp_kid, (void *)t) != WEFT_OK || weft_spawn(cx, sp_kid, (void *)t) != WEFT_OK) {
        atomic_fetch_add(&g_sp.bad, 1);
        return 0;
    }
    int a = weft_sync(cx), b = weft_sync(cx);
    if (a != 0 || b != 0) atomic_fetch_add(&g_sp.bad, 1);
    return 0;
}
static int sp_check(weft_pipeflow *pf, void *arg) {
    uintptr_t t = (uintptr_t)weft_pipeflow_token(pf);
    if (atomic_load(&g_sp.kids[t]) != 2) atomic_fetch_add(&g_sp.bad, 1);
    return 0;
}
TEST(pipe_stages_on_every_worker_spawn_and_sync_through_their_current_context) {
    for (size_t wi = 0; wi < 3; wi++)
        for (size_t si = 0; si < 3; si++) {
            memset(&g_sp, 0, sizeof g_sp);
            weft_executor *ex = make_executor(WORKERS[wi]);
            weft_stage st[3] = {{WEFT_STAGE_SERIAL, sp_first, NULL, "first"},
                                {WEFT_STAGE_PARALLEL, sp_stage, NULL, "spawn"},
                                {WEFT_STAGE_SERIAL, sp_check, NULL, "check"}};
            weft_pipeline *p = weft_pipeline_create(8, st, 3, NULL);
            ASSERT_NOT_NULL(p);
            ASSERT_OK(weft_pipeline_set_scheduling(p, SCHED[si]));
            weft_taskflow *tf = make_taskflow("spawning");
            ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
            watchdog_start(20);
            ASSERT_OK(weft_run_and_wait(ex, tf));
            watchdog_stop();
            ASSERT_EQ(atomic_load(&g_sp.calls), SP_TOKENS);
            ASSERT_EQ(atomic_load(&g_sp.nullctx), 0);
            ASSERT_EQ(atomic_load(&g_sp.bad), 0);
            ASSERT_OK(weft_taskflow_destroy(tf));
            ASSERT_OK(weft_pipeline_destroy(p));
            weft_executor_destroy(ex);
        }
}

struct cancelstage {
    weft_future *f;
    atomic_int started, after_cancel, saw, missed;
};
static struct cancelstage g_cs;
static int cs_first(weft_pipeflow *pf, void *arg) {
    atomic_store(&g_cs.started, 1);
    return 0; /* never stops: the cancel ends the run */
}
static int cs_stage(weft_pipeflow *pf, void *arg) {
    sleep_us(100);
    if (atomic_load(&g_cs.after_cancel)) {
        weft_ctx *cx = weft_current_ctx();
        if (cx && weft_ctx_cancelled(cx)) atomic_fetch_add(&g_cs.saw, 1);
        else atomic_fetch_add(&g_cs.missed, 1);
    }
    return 0;
}
TEST(pipe_stages_on_every_worker_see_their_runs_cancellation_in_their_current_context) {
    for (size_t wi = 1; wi < 3; wi++) {
        memset(&g_cs, 0, sizeof g_cs);
        weft_executor *ex = make_executor(WORKERS[wi]);
        weft_stage st[3] = {{WEFT_STAGE_SERIAL, cs_first, NULL, "first"},
                            {WEFT_STAGE_PARALLEL, cs_stage, NULL, "a"},
                            {WEFT_STAGE_PARALLEL, cs_stage, NULL, "b"}};
        weft_pipeline *p = weft_pipeline_create(8, st, 3, NULL);
        ASSERT_NOT_NULL(p);
        ASSERT_OK(weft_pipeline_set_scheduling(p, WEFT_PIPELINE_SPREAD));
        weft_taskflow *tf = make_taskflow("cancelled");
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
        watchdog_start(20);
        ASSERT_OK(weft_run(ex, tf, &g_cs.f));
        ASSERT_TRUE(wait_flag(&g_cs.started, 1, 5));
        sleep_us(3000);
        ASSERT_OK(weft_future_cancel(g_cs.f));
        atomic_store(&g_cs.after_cancel, 1);
        ASSERT_STATUS(weft_future_wait(g_cs.f), WEFT_ECANCELED);
        watchdog_stop();
        weft_future_destroy(g_cs.f);
        ASSERT_EQ(atomic_load(&g_cs.missed), 0);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_pipeline_destroy(p));
        weft_executor_destroy(ex);
    }
}
