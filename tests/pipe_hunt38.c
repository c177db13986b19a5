/* Pipelines under awkward use (adversarial round 38): probes that found
 * nothing, on paths no other test takes.  Runs of one pipeline alternating
 * between a one-worker and a four-worker executor, from two taskflows, with
 * 0, 1 and odd token counts per run (every token through every stage once,
 * serial order kept, lines right, the count exact); a run failed mid-way,
 * the run after it, another failing run and destroy; 65536 lines and 65536
 * stages; a second run on another executor while the first goes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#define MAXTOK 100000
typedef struct pstate {
    uint64_t stop_after;   /* tokens the first stage makes per run */
    uint64_t made_this_run;
    uint64_t last_serial[8];
    _Atomic int bad;
    _Atomic uint32_t visits[MAXTOK][4];
    size_t nstages, nlines;
    uint64_t fail_token; /* stage 1 fails on it (UINT64_MAX: never) */
} pstate;

static int st_first(weft_pipeflow *pf, void *arg) {
    pstate *s = arg;
    uint64_t t = weft_pipeflow_token(pf);
    if (weft_pipeflow_line(pf) != t % s->nlines) atomic_fetch_add(&s->bad, 1);
    if (s->made_this_run == s->stop_after) {
        if (weft_pipeflow_stop(pf) != WEFT_OK) atomic_fetch_add(&s->bad, 1);
        return 0;
    }
    s->made_this_run++;
    if (t >= MAXTOK) { atomic_fetch_add(&s->bad, 1); return 0; }
    if (s->last_serial[0] != UINT64_MAX && t != s->last_serial[0] + 1) atomic_fetch_add(&s->bad, 1);
    s->last_serial[0] = t;
    atomic_fetch_add(&s->visits[t][0], 1);
    return 0;
}
static int st_serial(weft_pipeflow *pf, void *arg) {
    pstate *s = arg;
    uint64_t t = weft_pipeflow_token(pf);
    size_t k = weft_pipeflow_stage(pf);
    if (weft_pipeflow_stop(pf) != WEFT_EINVAL) atomic_fetch_add(&s->bad, 1);
    if (s->last_serial[k] != UINT64_MAX && t <= s->last_serial[k]) atomic_fetch_add(&s->bad, 1);
    s->last_serial[k] = t;
    atomic_fetch_add(&s->visits[t][k], 1);
    return t == s->fail_token ? 42 : 0;
}
static int st_par(weft_pipeflow *pf, void *arg) {
    pstate *s = arg;
    uint64_t t = weft_pipeflow_token(pf);
    atomic_fetch_add(&s->visits[t][weft_pipeflow_stage(pf)], 1);
    return t == s->fail_token ? 42 : 0;
}

static pstate *ps_new(size_t nlines, size_t nstages) {
    pstate *s = calloc(1, sizeof *s);
    s->nlines = nlines, s->nstages = nstages, s->fail_token = UINT64_MAX;
    for (int k = 0; k < 8; k++) s->last_serial[k] = UINT64_MAX;
    return s;
}

TEST(pipe_runs_on_either_of_two_executors_continue_the_tokens_with_each_shape_and_schedule) {
    const weft_pipeline_scheduling how[] = { WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE };
    const size_t lines[] = { 1, 2, 7, 64 };
    weft_executor *ex1 = make_executor(1), *ex4 = make_executor(4);
    for (size_t h = 0; h < 3; h++)
        for (size_t li = 0; li < 4; li++)
            for (size_t ns = 1; ns <= 4; ns++) {
                pstate *s = ps_new(lines[li], ns);
                weft_stage st[4] = { { WEFT_STAGE_SERIAL, st_first, s, "first" },
                                     { WEFT_STAGE_PARALLEL, st_par, s, "par" },
                                     { WEFT_STAGE_SERIAL, st_serial, s, "ser" },
                                     { WEFT_STAGE_PARALLEL, st_par, s, "par2" } };
                weft_status err;
                weft_pipeline *p = weft_pipeline_create(lines[li], st, ns, &err);
                ASSERT_NOT_NULL(p);
                ASSERT_OK(weft_pipeline_set_scheduling(p, how[h]));
                weft_taskflow *tf1 = make_taskflow("a"), *tf2 = make_taskflow("b");
                ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf1, p)));
                ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf2, p)));
                uint64_t per[] = { 0, 1, 1000, 3, 777, 0, 2 };
                uint64_t total = 0;
                for (size_t r = 0; r < sizeof per / sizeof per[0]; r++) {
                    s->stop_after = per[r];
                    s->made_this_run = 0;
                    ASSERT_OK(weft_run_and_wait(r % 2 ? ex4 : ex1, r % 3 ? tf1 : tf2));
                    total += per[r];
                    if (weft_pipeline_num_tokens(p) != total)
                        TEST_FAIL_("how %zu lines %zu stages %zu run %zu: %llu tokens, want %llu", h, lines[li], ns, r,
                                   (unsigned long long)weft_pipeline_num_tokens(p), (unsigned long long)total);
                }
                for (uint64_t t = 0; t < total; t++)
                    for (size_t k = 0; k < ns; k++)
                        if (atomic_load(&s->visits[t][k]) != 1)
                            TEST_FAIL_("how %zu lines %zu stages %zu: token %llu stage %zu visited %u times", h,
                                       lines[li], ns, (unsigned long long)t, k, atomic_load(&s->visits[t][k]));
                for (size_t k = 0; k < ns; k++) ASSERT_EQ(atomic_load(&s->visits[total][k]), 0);
                ASSERT_EQ(atomic_load(&s->bad), 0);
                ASSERT_OK(weft_taskflow_destroy(tf1));
                ASSERT_OK(weft_taskflow_destroy(tf2));
                ASSERT_OK(weft_pipeline_destroy(p));
                free(s);
            }
    weft_executor_destroy(ex1);
    weft_executor_destroy(ex4);
}

TEST(pipe_a_run_failed_mid_way_is_followed_by_one_from_its_next_token_and_destroyed_after_another) {
    const weft_pipeline_scheduling how[] = { WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE };
    weft_executor *ex = make_executor(3);
    for (size_t h = 0; h < 3; h++)
        for (size_t ns = 2; ns <= 4; ns++) {
            pstate *s = ps_new(3, ns);
            weft_stage st[4] = { { WEFT_STAGE_SERIAL, st_first, s, "first" },
                                 { WEFT_STAGE_PARALLEL, st_par, s, "par" },
                                 { WEFT_STAGE_SERIAL, st_serial, s, "ser" },
                                 { WEFT_STAGE_PARALLEL, st_par, s, "par2" } };
            weft_status err;
            weft_pipeline *p = weft_pipeline_create(3, st, ns, &err);
            ASSERT_OK(weft_pipeline_set_scheduling(p, how[h]));
            weft_taskflow *tf = make_taskflow("f");
            ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
            s->stop_after = 500;
            s->fail_token = 100;
            weft_future *f;
            ASSERT_OK(weft_run(ex, tf, &f));
            ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            ASSERT_EQ(info.task_code, 42);
            weft_future_destroy(f);
            uint64_t made = weft_pipeline_num_tokens(p);
            ASSERT_GT(made, 100);
            ASSERT_LE(made, 104); /* at most lines in flight after the failure */
            /* tokens after the failed one: every stage before the failing one ran; after none */
            s->fail_token = UINT64_MAX;
            s->made_this_run = 0;
            s->stop_after = 50;
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_EQ(weft_pipeline_num_tokens(p), made + 50);
            for (uint64_t t = made; t < made + 50; t++)
                for (size_t k = 0; k < ns; k++) ASSERT_EQ(atomic_load(&s->visits[t][k]), 1);
            ASSERT_EQ(atomic_load(&s->bad), 0);
            s->fail_token = made + 60;
            s->made_this_run = 0;
            s->stop_after = 100;
            ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ETASK);
            ASSERT_OK(weft_pipeline_destroy(p));
            ASSERT_OK(weft_taskflow_destroy(tf));
            free(s);
        }
    weft_executor_destroy(ex);
}

static int big_first(weft_pipeflow *pf, void *arg) {
    if (weft_pipeflow_token(pf) == *(uint64_t *)arg) weft_pipeflow_stop(pf);
    return 0;
}
static int big_count(weft_pipeflow *pf, void *arg) {
    (void)pf;
    atomic_fetch_add((_Atomic uint64_t *)arg, 1);
    return 0;
}
TEST(pipe_pipelines_of_65536_lines_or_65536_stages_pass_every_token) {
    const weft_pipeline_scheduling how[] = { WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE };
    weft_executor *ex = make_executor(3);
    for (int h = 0; h < 3; h++) {
        uint64_t stop_at = 100000;
        _Atomic uint64_t cnt = 0;
        weft_stage st[] = { { WEFT_STAGE_SERIAL, big_first, &stop_at, "f" }, { WEFT_STAGE_PARALLEL, big_count, &cnt, "c" } };
        weft_status err;
        weft_pipeline *p = weft_pipeline_create(65536, st, 2, &err);
        ASSERT_NOT_NULL(p);
        ASSERT_OK(weft_pipeline_set_scheduling(p, how[h]));
        weft_taskflow *tf = make_taskflow("big");
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&cnt), 100000);
        ASSERT_EQ(weft_pipeline_num_tokens(p), 100000);
        stop_at = 100003;
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&cnt), 100003);
        weft_taskflow_destroy(tf);
        ASSERT_OK(weft_pipeline_destroy(p));
        /* 65536 stages, 3 lines */
        weft_stage *many = calloc(65536, sizeof *many);
        many[0] = st[0];
        for (size_t i = 1; i < 65536; i++) many[i] = (weft_stage){ i % 2 ? WEFT_STAGE_PARALLEL : WEFT_STAGE_SERIAL, big_count, &cnt, NULL };
        stop_at = 5;
        atomic_store(&cnt, 0);
        p = weft_pipeline_create(3, many, 65536, &err);
        ASSERT_NOT_NULL(p);
        ASSERT_OK(weft_pipeline_set_scheduling(p, how[h]));
        tf = make_taskflow("long");
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&cnt), 5 * 65535);
        weft_taskflow_destroy(tf);
        ASSERT_OK(weft_pipeline_destroy(p));
        free(many);
    }
    weft_executor_destroy(ex);
}

typedef struct slowp { _Atomic int started, release; uint64_t stop_at; _Atomic uint64_t seen; } slowp;
static int slow_first(weft_pipeflow *pf, void *arg) {
    slowp *s = arg;
    uint64_t t = weft_pipeflow_token(pf);
    if (t == s->stop_at) return weft_pipeflow_stop(pf), 0;
    if (t == 10) {
        atomic_store(&s->started, 1);
        while (!atomic_load(&s->release)) sleep_us(100);
    }
    return 0;
}
static int slow_last(weft_pipeflow *pf, void *arg) {
    slowp *s = arg;
    atomic_fetch_add(&s->seen, 1);
    (void)pf;
    return 0;
}

TEST(pipe_a_second_run_on_another_executor_meanwhile_is_busy_and_harmless) {
    const weft_pipeline_scheduling how[] = { WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE };
    weft_executor *ex1 = make_executor(2), *ex2 = make_executor(2);
    for (int h = 0; h < 3; h++) {
        slowp s = { 0, 0, 1000, 0 };
        weft_stage st[] = { { WEFT_STAGE_SERIAL, slow_first, &s, "f" }, { WEFT_STAGE_SERIAL, slow_last, &s, "l" } };
        weft_status err;
        weft_pipeline *p = weft_pipeline_create(4, st, 2, &err);
        ASSERT_OK(weft_pipeline_set_scheduling(p, how[h]));
        weft_taskflow *tf1 = make_taskflow("one"), *tf2 = make_taskflow("two");
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf1, p)));
        weft_task t2 = weft_pipeline_emplace(tf2, p);
        ASSERT_OK(weft_task_set_name(t2, "second"));
        weft_future *f1, *f2;
        ASSERT_OK(weft_run(ex1, tf1, &f1));
        ASSERT_TRUE(wait_flag(&s.started, 1, 30.0));
        ASSERT_OK(weft_run(ex2, tf2, &f2));
        ASSERT_STATUS(weft_future_wait(f2), WEFT_ETASK);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f2, &info));
        ASSERT_EQ(info.task_code, WEFT_EBUSY);
        ASSERT_STATUS(weft_pipeline_destroy(p), WEFT_EBUSY);
        atomic_store(&s.release, 1);
        ASSERT_OK(weft_future_wait(f1));
        ASSERT_EQ(atomic_load(&s.seen), 1000);
        ASSERT_EQ(weft_pipeline_num_tokens(p), 1000);
        /* now the second may run */
        s.stop_at = 1500;
        ASSERT_OK(weft_run_and_wait(ex2, tf2));
        ASSERT_EQ(atomic_load(&s.seen), 1500);
        weft_future_destroy(f1), weft_future_destroy(f2);
        weft_taskflow_destroy(tf1), weft_taskflow_destroy(tf2);
        ASSERT_OK(weft_pipeline_destroy(p));
    }
    weft_executor_destroy(ex1), weft_executor_destroy(ex2);
}

/* ---- weft_pipeline_num_inline_tokens during an inline run ------------------------
 *
 * The header bounds its lag during a run to one phase (16384 tokens, or 32
 * per line).  An INLINE run, and an AUTO run on a one-worker executor (which
 * runs inline throughout), is a single phase as long as the run, and the
 * count was only brought up to date when it ended: a stage at token 50000
 * read 0. */
typedef struct inl_probe {
    const weft_pipeline *p;
    uint64_t inline_at, tokens_at;
} inl_probe;

static int inl_first(weft_pipeflow *pf, void *arg) {
    inl_probe *s = arg;
    uint64_t t = weft_pipeflow_token(pf);
    if (t == 50000) {
        s->inline_at = weft_pipeline_num_inline_tokens(s->p);
        s->tokens_at = weft_pipeline_num_tokens(s->p);
    }
    if (t == 60000) weft_pipeflow_stop(pf);
    return 0;
}
static int inl_next(weft_pipeflow *pf, void *arg) {
    (void)pf, (void)arg;
    return 0;
}

TEST(pipe_num_inline_tokens_lags_by_at_most_a_phase_in_an_inline_run) {
    const struct { weft_pipeline_scheduling how; unsigned workers; } runs[] = {
        { WEFT_PIPELINE_AUTO, 1 }, { WEFT_PIPELINE_INLINE, 1 }, { WEFT_PIPELINE_INLINE, 2 } };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        weft_executor *ex = make_executor(runs[r].workers);
        inl_probe s = { 0 };
        weft_stage st[] = { { WEFT_STAGE_SERIAL, inl_first, &s, "first" }, { WEFT_STAGE_PARALLEL, inl_next, NULL, "next" } };
        weft_status err;
        weft_pipeline *p = weft_pipeline_create(2, st, 2, &err);
        ASSERT_NOT_NULL(p);
        s.p = p;
        ASSERT_OK(weft_pipeline_set_scheduling(p, runs[r].how));
        weft_taskflow *tf = make_taskflow("inline");
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
        for (int again = 0; again < 2; again++) { /* counted since the run began */
            ASSERT_OK(weft_run_and_wait(ex, tf));
            if (s.inline_at + 16384 < 50000 || s.inline_at > 50000 || s.tokens_at > 50000)
                TEST_FAIL_("run %zu: at token 50000 num_inline_tokens said %llu (num_tokens %llu)", r,
                           (unsigned long long)s.inline_at, (unsigned long long)s.tokens_at);
            ASSERT_EQ(weft_pipeline_num_inline_tokens(p), 60000);
            ASSERT_OK(weft_pipeline_reset(p));
            s.inline_at = s.tokens_at = 0;
        }
        weft_taskflow_destroy(tf);
        ASSERT_OK(weft_pipeline_destroy(p));
        weft_executor_destroy(ex);
    }
}
