/* Session-43 hunt: cross-feature combinations and the metrics of every kind of
 * work, pass 2 (after obs_hunt40, which counts the kinds one at a time).  Here:
 * the kinds obs_hunt40 leaves out (simple and data pipelines, a failing stage,
 * algorithms emplaced in a graph and called from tasks, task groups and typed
 * fork-join, weft_run_n_parallel, custom and priority scheduling), what the
 * observer and the per-task profile attribute to which run and taskflow
 * (subflow and module children), and combinations a user reaches (a module
 * whose body another executor runs, observers that call back into the
 * executor, a token shared by an async task, a graph run and a loop).  Only
 * the public API: a reader of the figures waits for weft_executor_waiters ==
 * workers, as weft/observe.h says. */
#define _GNU_SOURCE
#include "obs_util.h"

#include "weft/async.h"
#include "weft/cancel.h"
#include "weft/observe.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ---- the invariants ---- */

typedef obs_want want;

/* The figures agree once every worker is idle (observe.h, Timing). */
static void settle(weft_executor *ex) {
    unsigned n = weft_executor_workers(ex);
    for (int k = 0; k < 2000; k++) {
        if (weft_executor_waiters(ex) == n) return;
        sleep_us(500);
    }
    TEST_FAIL_("the workers never all went idle (%u of %u)", weft_executor_waiters(ex), n);
}

/* Checks the metrics' invariants, the counts wanted, and, profiled, that the
 * profile agrees (spans == tasks, entries sum to the spans, per worker). */
static weft_metrics check(weft_executor *ex, want w, bool profiled, const char *what) {
    settle(ex);
    weft_worker_metrics pw[8];
    unsigned n = 0;
    weft_metrics m = obs_check_metrics(ex, w, pw, &n, what);
    if (profiled) obs_check_profile(ex, &m, pw, n, what);
    return m;
}

static weft_executor *make_ex(unsigned workers, bool profile) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){ .workers = workers, .metrics = true, .profile = profile }, &err);
    if (!ex) TEST_FAIL_("weft_executor_create failed: %s", weft_errname(err));
    return ex;
}

static void restart(weft_executor *ex, bool profile) {
    ASSERT_OK(weft_executor_wait_all(ex));
    settle(ex);
    if (profile) {
        ASSERT_OK(weft_profiler_stop(ex));
        ASSERT_OK(weft_metrics_enable(ex, false));
        ASSERT_OK(weft_metrics_enable(ex, true));
        ASSERT_OK(weft_profiler_start(ex));
    } else {
        ASSERT_OK(weft_metrics_enable(ex, true));
    }
}

static void run_tf(weft_executor *ex, weft_taskflow *tf, uint64_t n, weft_status want_st) {
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, tf, n, &f));
    ASSERT_EQ(weft_future_wait(f), want_st);
    weft_future_destroy(f);
    ASSERT_OK(weft_executor_wait_all(ex));
}

/* Sum of the profile's counts of entries of `kind` (and id, when not NULL). */
static uint64_t profile_count(weft_executor *ex, weft_profile_kind kind, const void *id, int64_t index) {
    weft_profile *p = NULL;
    ASSERT_OK(weft_profile_get(ex, &p));
    uint64_t c = 0;
    for (size_t i = 0; i < p->ntasks; i++)
        if (p->tasks[i].kind == kind && (!id || p->tasks[i].id == id) &&
            (index < 0 || p->tasks[i].index == (uint32_t)index))
            c += p->tasks[i].count;
    weft_profile_free(p);
    return c;
}

static atomic_int ran;

static int count_fn(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    atomic_fetch_add(&ran, 1);
    return 0;
}

/* ---- simple and data pipelines ---- */

static int item_stage(void *item, size_t index, void *arg) {
    (void)arg;
    ((int *)item)[0] += (int)index;
    return 0;
}

static int data_first(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)in, (void)arg;
    if (weft_pipeflow_token(pf) == 5) return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : -1;
    *(int *)out = (int)weft_pipeflow_token(pf);
    return 0;
}
static int data_mid(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)pf, (void)arg;
    *(int *)out = *(int *)in * 2;
    return 0;
}
static int data_last(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)pf, (void)out, (void)arg;
    atomic_fetch_add(&ran, *(int *)in);
    return 0;
}

/* A simple pipeline of 10 items and 3 stages makes 30 stage calls (its own
 * token-making stage not counted), a data pipeline of 5 tokens and 3 stages
 * 5 * 3 + 1 (the first stage's call that stops it): observe.h's rule, with
 * the pipeline's task on top, in both scheduling modes, and each stage's
 * calls are the profile entry of that stage. */
static void pipelines(unsigned workers, bool profile) {
    weft_executor *ex = make_ex(workers, profile);
    char what[96];
    int items[10] = { 0 };
    weft_item_stage is[3] = { { WEFT_STAGE_PARALLEL, item_stage, NULL, "a" },
                              { WEFT_STAGE_SERIAL, item_stage, NULL, "b" },
                              { WEFT_STAGE_PARALLEL, item_stage, NULL, "c" } };
    weft_data_stage ds[3] = {
        { .kind = WEFT_STAGE_SERIAL, .fn = data_first, .name = "first", .WEFT_DATA_OUT(int) },
        { .kind = WEFT_STAGE_PARALLEL, .fn = data_mid, .name = "mid", .WEFT_DATA_IN(int), .WEFT_DATA_OUT(int) },
        { .kind = WEFT_STAGE_SERIAL, .fn = data_last, .name = "last", .WEFT_DATA_IN(int) },
    };
    for (int how = WEFT_PIPELINE_AUTO; how <= WEFT_PIPELINE_INLINE; how++) {
        weft_status err = WEFT_OK;
        weft_pipeline *sp = weft_simple_pipeline_create(2, items, 10, sizeof items[0], is, 3, &err);
        ASSERT_NOT_NULL(sp);
        weft_pipeline *dp = weft_data_pipeline_create(3, ds, 3, &err);
        ASSERT_NOT_NULL(dp);
        ASSERT_OK(weft_pipeline_set_scheduling(sp, (weft_pipeline_scheduling)how));
        ASSERT_OK(weft_pipeline_set_scheduling(dp, (weft_pipeline_scheduling)how));
        weft_taskflow *tf = make_taskflow("simple");
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, sp)));
        restart(ex, profile);
        run_tf(ex, tf, 1, WEFT_OK);
        snprintf(what, sizeof what, "simple pipeline (%d) on %u", how, workers);
        check(ex, (want){ 30 + 1, 0, 0 }, profile, what);
        if (profile)
            for (int s = 0; s < 3; s++) {
                uint64_t c = profile_count(ex, WEFT_PROFILE_PIPELINE_STAGE, sp, s);
                if (c != 10) TEST_FAIL_("%s: stage %d has %llu calls in the profile, want 10", what, s,
                                        (unsigned long long)c);
            }
        weft_taskflow_destroy(tf);

        tf = make_taskflow("data");
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, dp)));
        atomic_store(&ran, 0);
        restart(ex, profile);
        run_tf(ex, tf, 1, WEFT_OK);
        ASSERT_EQ(atomic_load(&ran), 2 * (0 + 1 + 2 + 3 + 4));
        snprintf(what, sizeof what, "data pipeline (%d) on %u", how, workers);
        check(ex, (want){ 5 * 3 + 1 + 1, 0, 0 }, profile, what);
        if (profile) {
            uint64_t c0 = profile_count(ex, WEFT_PROFILE_PIPELINE_STAGE, dp, 0),
                     c1 = profile_count(ex, WEFT_PROFILE_PIPELINE_STAGE, dp, 1);
            if (c0 != 6 || c1 != 5) TEST_FAIL_("%s: stage calls %llu and %llu in the profile, want 6 and 5", what,
                                               (unsigned long long)c0, (unsigned long long)c1);
        }
        weft_taskflow_destroy(tf);
        ASSERT_OK(weft_pipeline_destroy(sp));
        ASSERT_OK(weft_pipeline_destroy(dp));
    }
    weft_executor_destroy(ex);
}

TEST(simple_and_data_pipeline_stage_calls_are_counted_once_each_on_1_and_2_workers) {
    for (unsigned w = 1; w <= 2; w++) pipelines(w, false);
}

TEST(simple_and_data_pipeline_stage_calls_agree_with_the_profile_on_1_and_2_workers) {
    for (unsigned w = 1; w <= 2; w++) pipelines(w, true);
}

/* A stage that fails: the call counts as failed, and so does the pipeline's
 * task (it fails with that value); the run fails. */
static int fail_at_3(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_stage(pf) == 0 && weft_pipeflow_token(pf) == 8) weft_pipeflow_stop(pf);
    if (weft_pipeflow_stage(pf) == 1 && weft_pipeflow_token(pf) == 3) return 42;
    return 0;
}

TEST(a_failing_stage_counts_its_call_and_the_pipeline_task_as_failed) {
    for (unsigned workers = 1; workers <= 2; workers++)
        for (int profile = 0; profile <= 1; profile++)
            for (int how = WEFT_PIPELINE_SPREAD; how <= WEFT_PIPELINE_INLINE; how++) {
                weft_executor *ex = make_ex(workers, profile);
                weft_stage st[2] = { { WEFT_STAGE_SERIAL, fail_at_3, NULL, "a" },
                                     { WEFT_STAGE_SERIAL, fail_at_3, NULL, "b" } };
                weft_pipeline *p = weft_pipeline_create(1, st, 2, NULL);
                ASSERT_NOT_NULL(p);
                ASSERT_OK(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)how));
                weft_taskflow *tf = make_taskflow("failing pipe");
                ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
                restart(ex, profile);
                run_tf(ex, tf, 1, WEFT_ETASK);
                char what[96];
                snprintf(what, sizeof what, "failing stage (%d) on %u%s", how, workers, profile ? " profiled" : "");
                /* One line: tokens 0..3 through stage 0, 0..3 through stage 1
                 * (3 fails), then no new token. */
                check(ex, (want){ 4 + 4 + 1, 2, -1 }, profile, what);
                weft_taskflow_destroy(tf);
                ASSERT_OK(weft_pipeline_destroy(p));
                weft_executor_destroy(ex);
            }
}

/* ---- algorithms: emplaced, called from tasks, under every scheduler ---- */

static void range_nop(size_t lo, size_t hi, void *arg) {
    (void)lo, (void)hi, (void)arg;
}
static void sum_int(void *acc, const void *x, void *arg) {
    (void)arg;
    *(int *)acc += *(const int *)x;
}
static int cmp_int(const void *a, const void *b, void *arg) {
    (void)arg;
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
static void idx_nop(size_t i, void *arg) { (void)i, (void)arg; }

static int algo_in_task(weft_ctx *cx, void *arg) {
    (void)arg;
    return weft_parallel_for(weft_ctx_executor(cx), 0, 20000, 1, idx_nop, NULL, NULL) == WEFT_OK ? 0 : -1;
}

static int fj_leaf(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

static int group_of_64(weft_ctx *cx, void *arg) {
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int i = 0; i < 64; i++)
        if (weft_task_group_spawn(&g, fj_leaf, arg) != WEFT_OK) return -1;
    return weft_task_group_wait(&g);
}

WEFT_FJ_TASK(long, tfib, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(tfib) x;
    WEFT_FJ_SPAWN(tfib, &x, n - 1);
    long b = WEFT_FJ_CALL(tfib, n - 2);
    return WEFT_FJ_SYNC(tfib, &x) + b;
}

static int typed_root(weft_ctx *cx, void *arg) {
    *(long *)arg = WEFT_FJ_RUN(cx, tfib, 18);
    return 0;
}

static int items[4096];

/* Every kind of work under one scheduler: the metrics and the profile agree,
 * with exact counts where the program knows them. */
/* A user policy: a locked LIFO stack that refuses every third push (the job
 * then runs outside it, sched.h) and, with dup set, hands an item out twice
 * now and then (caught: not run twice). */
typedef struct lifo {
    pthread_mutex_t m;
    weft_sched_item *items[4096];
    size_t n, pushes, pops;
    weft_sched_item *last;
    bool dup;
} lifo;

static int lifo_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    lifo *l = st;
    (void)p, (void)worker;
    pthread_mutex_lock(&l->m);
    int refuse = ++l->pushes % 3 == 0 || l->n == sizeof l->items / sizeof l->items[0];
    if (!refuse) l->items[l->n++] = it;
    pthread_mutex_unlock(&l->m);
    return refuse;
}
static weft_sched_item *lifo_pop(void *st, int worker) {
    lifo *l = st;
    (void)worker;
    pthread_mutex_lock(&l->m);
    weft_sched_item *it = NULL;
    if (l->dup && l->last && ++l->pops % 7 == 0) it = l->last, l->last = NULL;
    else if (l->n) it = l->last = l->items[--l->n];
    pthread_mutex_unlock(&l->m);
    return it;
}

static lifo the_lifo = { .m = PTHREAD_MUTEX_INITIALIZER };

static void under_sched(weft_sched_kind kind, unsigned workers, bool profile) {
    weft_status err = WEFT_OK;
    weft_sched_policy pol = { .state = &the_lifo, .push = lifo_push, .pop = lifo_pop };
    weft_sched_config sc = { .kind = kind, .policy = kind == WEFT_SCHED_CUSTOM ? &pol : NULL };
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers, .metrics = true,
                                                                      .profile = profile, .sched = &sc },
                                             &err);
    ASSERT_NOT_NULL(ex);
    char what[96];

    /* Emplaced algorithms: a task each (counted once per run in the
     * profile) plus the jobs the workers ran. */
    for (int i = 0; i < 4096; i++) items[i] = (i * 7919) % 4096;
    int red = 0, scanned[4096];
    weft_taskflow *tf = make_taskflow("algos");
    weft_task tfor = weft_emplace_for(tf, &(weft_for_desc){ .first = 0, .last = 100000, .step = 1,
                                                            .body = range_nop });
    weft_task tred = weft_emplace_reduce(tf, &(weft_reduce_desc){ .in = items, .n = 4096, .size = sizeof(int),
                                                                  .result = &red, .op = sum_int });
    weft_task tscan = weft_emplace_scan(tf, &(weft_scan_desc){ .in = items, .out = scanned, .n = 4096,
                                                               .size = sizeof(int), .op = sum_int });
    weft_task tsort = weft_emplace_sort(tf, &(weft_sort_desc){ .base = items, .n = 4096, .size = sizeof(int),
                                                               .cmp = cmp_int });
    weft_task tin = must_emplace(tf, algo_in_task, NULL);
    ASSERT_FALSE(weft_task_is_null(tfor) || weft_task_is_null(tred) || weft_task_is_null(tscan) ||
                 weft_task_is_null(tsort));
    ASSERT_OK(weft_precede(tscan, tsort));
    ASSERT_OK(weft_precede(tred, tsort)); /* the sort writes what both read */
    restart(ex, profile);
    run_tf(ex, tf, 2, WEFT_OK);
    snprintf(what, sizeof what, "emplaced algorithms (sched %d) on %u", (int)kind, workers);
    weft_metrics m = check(ex, (want){ -1, 0, 0 }, profile, what);
    if (m.total.tasks < 10) TEST_FAIL_("%s: %llu tasks for 10 task runs", what, (unsigned long long)m.total.tasks);
    if (profile) {
        weft_task ts[5] = { tfor, tred, tscan, tsort, tin };
        for (int k = 0; k < 5; k++) {
            uint64_t c = profile_count(ex, WEFT_PROFILE_TASK, tf, (int64_t)weft_task_index(ts[k]));
            if (c != 2) TEST_FAIL_("%s: task %d has %llu runs in the profile, want 2", what, k,
                                   (unsigned long long)c);
        }
        uint64_t jobs = profile_count(ex, WEFT_PROFILE_ALGORITHM_JOB, NULL, -1);
        if (jobs + 10 != m.total.tasks)
            TEST_FAIL_("%s: %llu algorithm jobs + 10 tasks, metrics %llu", what, (unsigned long long)jobs,
                       (unsigned long long)m.total.tasks);
    }
    weft_taskflow_destroy(tf);

    /* Fork-join: a task group of 64 and a typed fib in roots: 1 root each,
     * plus the frames thieves ran (each a steal). */
    atomic_int leaves = 0;
    long fib = 0;
    restart(ex, profile);
    ASSERT_EQ(weft_run_root(ex, group_of_64, &leaves), 0);
    ASSERT_EQ(weft_run_root(ex, typed_root, &fib), 0);
    ASSERT_EQ(atomic_load(&leaves), 64);
    ASSERT_EQ(fib, 2584);
    ASSERT_OK(weft_executor_wait_all(ex));
    snprintf(what, sizeof what, "task group and typed fork-join (sched %d) on %u", (int)kind, workers);
    m = check(ex, (want){ -1, 0, 0 }, profile, what);
    if (m.total.tasks < 2) TEST_FAIL_("%s: %llu tasks for 2 roots", what, (unsigned long long)m.total.tasks);
    if (profile) {
        uint64_t roots = profile_count(ex, WEFT_PROFILE_FORK_JOIN_ROOT, NULL, -1),
                 stolen = profile_count(ex, WEFT_PROFILE_STOLEN_FRAME, NULL, -1);
        if (roots != 2 || roots + stolen != m.total.tasks)
            TEST_FAIL_("%s: %llu roots and %llu stolen frames for %llu tasks", what, (unsigned long long)roots,
                       (unsigned long long)stolen, (unsigned long long)m.total.tasks);
        if (workers == 1 && stolen) TEST_FAIL_("%s: %llu frames stolen on one worker", what,
                                               (unsigned long long)stolen);
    }

    /* weft_run_n_parallel: 3 instances of 8 tasks; async from the main
     * thread and from tasks. */
    tf = make_taskflow("parallel");
    for (int i = 0; i < 8; i++) must_emplace(tf, count_fn, NULL);
    restart(ex, profile);
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n_parallel(ex, tf, 3, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    for (int i = 0; i < 6; i++) ASSERT_OK(weft_silent_async(ex, count_fn, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    snprintf(what, sizeof what, "run_n_parallel and async (sched %d) on %u", (int)kind, workers);
    check(ex, (want){ 24 + 6, 0, 0 }, profile, what);
    if (profile) {
        uint64_t c = profile_count(ex, WEFT_PROFILE_TASK, tf, -1);
        if (c != 24) TEST_FAIL_("%s: %llu task runs in the profile, want 24", what, (unsigned long long)c);
    }
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

TEST(algorithms_fork_join_and_parallel_runs_are_counted_alike_under_every_scheduler) {
    weft_sched_kind kinds[] = { WEFT_SCHED_WORK_STEALING, WEFT_SCHED_FIFO, WEFT_SCHED_PRIORITY,
                                WEFT_SCHED_ROUND_ROBIN, WEFT_SCHED_RANDOM, WEFT_SCHED_CUSTOM };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (unsigned w = 1; w <= 2; w++) {
            under_sched(kinds[k], w, false);
            under_sched(kinds[k], w, true);
        }
}

/* The same under a user policy that hands items out twice: the duplicates
 * are caught (weft_sched_stats.policy_errors) and never run, nor counted. */
TEST(work_under_a_policy_that_hands_items_out_twice_is_counted_once) {
    the_lifo.dup = true;
    weft_log_level lv = weft_log_get_level();
    weft_log_set_level(WEFT_LOG_OFF); /* each duplicate is logged as an error */
    for (unsigned w = 1; w <= 2; w++) {
        under_sched(WEFT_SCHED_CUSTOM, w, false);
        under_sched(WEFT_SCHED_CUSTOM, w, true);
    }
    the_lifo.dup = false;
    weft_log_set_level(lv);
}

/* ---- what the observer attributes to which run, task and taskflow ---- */

#define MAXEV 512
typedef struct evlog {
    atomic_int n, ends, bad;
    weft_executor *ex;
    struct {
        uint64_t run;
        size_t index;
        const void *tf_of_task; /* weft_task_module's answer is not it: the node's index and name */
        char name[16];
        unsigned worker;
        int iteration;
    } ev[MAXEV];
} evlog;

static void log_begin(void *user, const weft_task_event *e) {
    evlog *l = user;
    if (e->executor != l->ex || e->worker >= weft_executor_workers(l->ex) || !e->name ||
        e->outcome != WEFT_TASK_RUNNING || e->index != weft_task_index(e->task))
        atomic_fetch_add(&l->bad, 1);
    int k = atomic_fetch_add(&l->n, 1);
    if (k >= MAXEV) return;
    l->ev[k].run = e->run_id;
    l->ev[k].index = e->index;
    l->ev[k].worker = e->worker;
    snprintf(l->ev[k].name, sizeof l->ev[k].name, "%s", e->name);
}
static void log_end(void *user, const weft_task_event *e) {
    evlog *l = user;
    (void)e;
    atomic_fetch_add(&l->ends, 1);
}

static int sub3(weft_ctx *cx, weft_subflow *sf, void *arg) {
    (void)cx, (void)arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 3; i++) {
        weft_task t = weft_emplace(g, count_fn, NULL);
        if (weft_task_is_null(t) || weft_task_set_name(t, "child") != WEFT_OK) return -1;
    }
    return 0;
}

/* Every event of a run's tasks, those of its subflows' and modules' graphs
 * included, carries the id of the run (weft_future_id) it is part of: one id
 * for the iterations of weft_run_n, and, for weft_run_many, each member's
 * own id, in index order; the index is the task's in its own graph. */
TEST(observer_events_of_subflow_and_module_children_carry_their_runs_id) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        static evlog l;
        memset(&l, 0, sizeof l);
        weft_observer obs = { log_begin, log_end, &l };
        weft_status err = WEFT_OK;
        weft_executor *ex =
            weft_executor_create(&(weft_executor_config){ .workers = workers, .observer = &obs }, &err);
        ASSERT_NOT_NULL(ex);
        l.ex = ex;
        weft_taskflow *body = make_taskflow("body");
        for (int i = 0; i < 2; i++) ASSERT_OK(weft_task_set_name(must_emplace(body, count_fn, NULL), "bodytask"));
        weft_taskflow *tf = make_taskflow("top");
        weft_task a = must_emplace(tf, count_fn, NULL);
        ASSERT_OK(weft_task_set_name(a, "a"));
        weft_task s = weft_emplace_subflow(tf, sub3, NULL);
        weft_task m = weft_emplace_module(tf, body);
        ASSERT_OK(weft_precede(a, s));
        ASSERT_OK(weft_precede(s, m));
        /* 1 + 1 + 3 + 2 tasks a run (the module task itself is not reported:
         * its body's tasks are). */
        weft_future *f = NULL;
        ASSERT_OK(weft_run_n(ex, tf, 2, &f));
        ASSERT_OK(weft_future_wait(f));
        uint64_t id = weft_future_id(f);
        weft_future_destroy(f);
        ASSERT_OK(weft_executor_wait_all(ex));
        int n = atomic_load(&l.n);
        ASSERT_EQ(atomic_load(&l.bad), 0);
        ASSERT_EQ(atomic_load(&l.ends), n);
        int subs = 0, bodies = 0;
        for (int k = 0; k < n; k++) {
            if (l.ev[k].run != id) TEST_FAIL_("%u workers: event %d (%s) has run %llu, want %llu", workers, k,
                                              l.ev[k].name, (unsigned long long)l.ev[k].run,
                                              (unsigned long long)id);
            subs += strcmp(l.ev[k].name, "child") == 0;
            bodies += strcmp(l.ev[k].name, "bodytask") == 0;
        }
        if (n != 2 * 7 || subs != 6 || bodies != 4)
            TEST_FAIL_("%u workers: %d events, %d subflow children, %d body tasks; want 14, 6, 4", workers, n,
                       subs, bodies);

        /* run_many: tf twice and body once; each member its own id. */
        memset(&l, 0, sizeof l);
        l.ex = ex;
        weft_taskflow *set[2] = { tf, body };
        ASSERT_OK(weft_run_many(ex, set, 2, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        ASSERT_OK(weft_executor_wait_all(ex));
        n = atomic_load(&l.n);
        ASSERT_EQ(n, 7 + 2);
        uint64_t lo = UINT64_MAX, hi = 0;
        for (int k = 0; k < n; k++) {
            if (l.ev[k].run == 0) TEST_FAIL_("run_many: event %d (%s) has run id 0", k, l.ev[k].name);
            if (l.ev[k].run < lo) lo = l.ev[k].run;
            if (l.ev[k].run > hi) hi = l.ev[k].run;
        }
        if (hi != lo + 1) TEST_FAIL_("run_many: ids %llu..%llu for 2 members", (unsigned long long)lo,
                                     (unsigned long long)hi);
        int in_lo = 0;
        for (int k = 0; k < n; k++) in_lo += l.ev[k].run == lo;
        if (in_lo != 7) TEST_FAIL_("run_many: %d events with the first member's id, want 7", in_lo);
        weft_executor_destroy(ex);
        weft_taskflow_destroy(tf);
        weft_taskflow_destroy(body);
    }
}

/* The per-task profile keys a module's tasks by the body (a task's taskflow)
 * and a subflow child by its subflow's graph: the body's entries count its
 * runs as a module, and as a run of its own, once each. */
static weft_taskflow *seen_graph;
static int sub3_note(weft_ctx *cx, weft_subflow *sf, void *arg) {
    seen_graph = weft_subflow_graph(sf);
    return sub3(cx, sf, arg);
}

TEST(the_per_task_profile_keys_module_tasks_by_their_body_and_subflow_children_by_their_graph) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_ex(workers, true);
        weft_taskflow *body = make_taskflow("body");
        weft_task b0 = must_emplace(body, count_fn, NULL), b1 = must_emplace(body, count_fn, NULL);
        weft_taskflow *tf = make_taskflow("top");
        weft_task s = weft_emplace_subflow(tf, sub3_note, NULL);
        weft_task m = weft_emplace_module(tf, body);
        ASSERT_OK(weft_precede(s, m));
        restart(ex, true);
        run_tf(ex, tf, 3, WEFT_OK);
        ASSERT_OK(weft_run_and_wait(ex, body));
        ASSERT_OK(weft_executor_wait_all(ex));
        check(ex, (want){ 3 * (1 + 3 + 2) + 2, 0, 0 }, true, "module and subflow attribution");
        uint64_t c0 = profile_count(ex, WEFT_PROFILE_TASK, body, (int64_t)weft_task_index(b0)),
                 c1 = profile_count(ex, WEFT_PROFILE_TASK, body, (int64_t)weft_task_index(b1)),
                 cs = profile_count(ex, WEFT_PROFILE_TASK, tf, (int64_t)weft_task_index(s)),
                 cm = profile_count(ex, WEFT_PROFILE_TASK, tf, (int64_t)weft_task_index(m)),
                 cc = profile_count(ex, WEFT_PROFILE_TASK, seen_graph, -1);
        if (c0 != 4 || c1 != 4 || cs != 3 || cm != 0 || cc != 9)
            TEST_FAIL_("%u workers: body tasks %llu and %llu (want 4), subflow task %llu (3), module task %llu "
                       "(0), subflow children %llu (9)",
                       workers, (unsigned long long)c0, (unsigned long long)c1, (unsigned long long)cs,
                       (unsigned long long)cm, (unsigned long long)cc);
        weft_executor_destroy(ex);
        weft_taskflow_destroy(tf);
        weft_taskflow_destroy(body);
    }
}

/* ---- combinations ---- */

static int nap_1ms(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    sleep_us(1000);
    atomic_fetch_add(&ran, 1);
    return 0;
}

/* A taskflow run on one executor while a module of it (its body) runs on
 * another: the module waits in the body's queue (flow.h) and its run
 * executes on the module's run's executor; each executor counts exactly the
 * body tasks it ran, its observer sees only those, and both runs succeed. */
static atomic_int seen_on[2];
static weft_executor *exs[2];
static void which_ex(void *user, const weft_task_event *e) {
    (void)user;
    for (int i = 0; i < 2; i++)
        if (e->executor == exs[i]) atomic_fetch_add(&seen_on[i], 1);
}

TEST(a_module_whose_body_runs_on_another_executor_is_counted_on_the_executor_that_ran_it) {
    weft_observer obs = { which_ex, NULL, NULL };
    for (int round = 0; round < 3; round++) {
        weft_status err = WEFT_OK;
        for (int i = 0; i < 2; i++) {
            exs[i] = weft_executor_create(&(weft_executor_config){ .workers = 2, .metrics = true,
                                                                   .observer = &obs },
                                          &err);
            ASSERT_NOT_NULL(exs[i]);
            atomic_store(&seen_on[i], 0);
        }
        weft_taskflow *body = make_taskflow("body");
        for (int i = 0; i < 4; i++) must_emplace(body, nap_1ms, NULL);
        weft_taskflow *tf = make_taskflow("outer");
        weft_task m = weft_emplace_module(tf, body);
        weft_task after = must_emplace(tf, count_fn, NULL);
        ASSERT_OK(weft_precede(m, after));
        atomic_store(&ran, 0);
        weft_future *f2 = NULL, *f1 = NULL;
        ASSERT_OK(weft_run_n(exs[1], body, 2, &f2)); /* the body, on the second */
        ASSERT_OK(weft_run(exs[0], tf, &f1));        /* its module, on the first */
        ASSERT_OK(weft_future_wait(f1));
        ASSERT_OK(weft_future_wait(f2));
        weft_future_destroy(f1), weft_future_destroy(f2);
        for (int i = 0; i < 2; i++) ASSERT_OK(weft_executor_wait_all(exs[i]));
        ASSERT_EQ(atomic_load(&ran), 3 * 4 + 1);
        want w[2] = { { 4 + 1, 0, 0 }, { 8, 0, 0 } };
        for (int i = 0; i < 2; i++) {
            check(exs[i], w[i], false, i ? "the body's own runs" : "the module's run");
            ASSERT_EQ(atomic_load(&seen_on[i]), w[i].tasks);
        }
        for (int i = 0; i < 2; i++) weft_executor_destroy(exs[i]);
        weft_taskflow_destroy(tf);
        weft_taskflow_destroy(body);
    }
}

/* Observers that call back into the executor from their callbacks: submit
 * async work, read the metrics and the waiters, dump the state.  Nothing
 * deadlocks, and the async work is counted as the work it is (the observer
 * sees taskflow tasks only). */
typedef struct calling_back {
    weft_executor *ex;
    atomic_int begins, ends, bad;
    int devnull;
} calling_back;

static void cb_begin(void *user, const weft_task_event *e) {
    calling_back *c = user;
    atomic_fetch_add(&c->begins, 1);
    if (weft_silent_async(e->executor, count_fn, NULL) != WEFT_OK) atomic_fetch_add(&c->bad, 1);
    weft_metrics m;
    if (weft_executor_metrics(e->executor, &m, NULL, 0) != WEFT_OK || m.total.tasks != m.total.succeeded + m.total.failed)
        atomic_fetch_add(&c->bad, 1);
    if (weft_executor_waiters(e->executor) >= weft_executor_workers(e->executor)) atomic_fetch_add(&c->bad, 100);
}
static void cb_end(void *user, const weft_task_event *e) {
    calling_back *c = user;
    atomic_fetch_add(&c->ends, 1);
    weft_future *f = NULL;
    if (weft_async(e->executor, count_fn, NULL, &f) != WEFT_OK) atomic_fetch_add(&c->bad, 1);
    weft_future_destroy(f); /* not waited for: it still runs */
    uint64_t spans = 0;
    if (weft_profiler_count(e->executor, &spans, NULL) != WEFT_OK) atomic_fetch_add(&c->bad, 1);
    /* The state dump, from inside a callback: it takes no lock (and reads
     * the other worker's task without one: TSan would report that read,
     * observe.h). */
#ifndef UNDER_TSAN
    if (e->index == 7 && c->devnull >= 0 && weft_executor_dump_fd(e->executor, c->devnull) != WEFT_OK)
        atomic_fetch_add(&c->bad, 1);
#endif
}

TEST(observers_that_submit_work_and_read_metrics_from_their_callbacks_are_counted_exactly) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        calling_back c = { .devnull = open("/dev/null", O_WRONLY) };
        weft_observer obs = { cb_begin, cb_end, &c };
        weft_status err = WEFT_OK;
        weft_executor *ex = weft_executor_create(
            &(weft_executor_config){ .workers = workers, .observer = &obs, .profile = true }, &err);
        ASSERT_NOT_NULL(ex);
        c.ex = ex;
        weft_taskflow *tf = make_taskflow("calls back");
        for (int i = 0; i < 20; i++) must_emplace(tf, count_fn, NULL);
        atomic_store(&ran, 0);
        run_tf(ex, tf, 2, WEFT_OK);
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(atomic_load(&c.bad), 0);
        ASSERT_EQ(atomic_load(&c.begins), 40);
        ASSERT_EQ(atomic_load(&c.ends), 40);
        ASSERT_EQ(atomic_load(&ran), 40 * 3);
        check(ex, (want){ 40 * 3, 0, 0 }, true, workers == 1 ? "calling back on 1" : "calling back on 2");
        if (c.devnull >= 0) close(c.devnull);
        weft_executor_destroy(ex);
        weft_taskflow_destroy(tf);
    }
}

/* One token stops an async task, a graph run and a parallel loop at once:
 * each reports WEFT_ECANCELED, and the metrics count as skipped exactly what
 * did not run of the async task and the graph (the loop's chunks are no tasks
 * skipped). */
typedef struct gate {
    atomic_int in;
    weft_cancel_token *tok;
} gate;

static int gate_task(weft_ctx *cx, void *arg) {
    gate *g = arg;
    atomic_fetch_add(&g->in, 1);
    while (!weft_ctx_cancelled(cx)) sleep_us(100);
    return 0;
}

static void idx_count(size_t i, void *arg) {
    (void)i;
    atomic_fetch_add((atomic_int *)arg, 1);
}

TEST(one_token_stops_an_async_task_a_graph_run_a_root_and_a_loop_and_the_skipped_count_is_exact) {
    for (int round = 0; round < 5; round++) {
        weft_executor *ex = make_ex(1, round % 2);
        gate g = { 0 };
        weft_cancel_token *tok = weft_cancel_token_create(NULL, NULL);
        ASSERT_NOT_NULL(tok);
        g.tok = tok;
        /* The one worker held by a task that waits for the token. */
        weft_taskflow *hold = make_taskflow("hold");
        must_emplace(hold, gate_task, &g);
        weft_future *fh = NULL;
        ASSERT_OK(weft_run(ex, hold, &fh));
        ASSERT_OK(weft_cancel_attach(tok, fh));
        ASSERT_TRUE(wait_flag(&g.in, 1, 5));
        /* Queued behind it: an async task and a run of 10 tasks. */
        weft_future *fa = NULL, *fr = NULL;
        ASSERT_OK(weft_async(ex, count_fn, NULL, &fa));
        ASSERT_OK(weft_cancel_attach(tok, fa));
        weft_taskflow *tf = make_taskflow("ten");
        for (int i = 0; i < 10; i++) must_emplace(tf, count_fn, NULL);
        ASSERT_OK(weft_run(ex, tf, &fr));
        ASSERT_OK(weft_cancel_attach(tok, fr));
        atomic_store(&ran, 0);
        ASSERT_OK(weft_cancel_token_cancel_with(tok, "enough"));
        ASSERT_EQ(weft_future_wait(fh), WEFT_ECANCELED);
        ASSERT_EQ(weft_future_wait(fa), WEFT_ECANCELED);
        ASSERT_EQ(weft_future_wait(fr), WEFT_ECANCELED);
        /* A loop and a root given the cancelled token run nothing. */
        atomic_int loop = 0;
        weft_algo_config cfg = { .cancel = tok };
        ASSERT_EQ(weft_parallel_for(ex, 0, 1000, 1, idx_count, &loop, &cfg), WEFT_ECANCELED);
        int res = 0;
        ASSERT_EQ(weft_run_root_with_token(ex, tok, count_fn, NULL, &res), WEFT_ECANCELED);
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(atomic_load(&ran), 0);
        ASSERT_EQ(atomic_load(&loop), 0);
        weft_run_info info;
        ASSERT_OK(weft_future_info(fr, &info));
        ASSERT_EQ(info.skipped, 10);
        /* The holder ran (its task saw the cancel); the async task, the 10
         * tasks and the root did not. */
        check(ex, (want){ 1, 0, 1 + 10 + 1 }, round % 2, "one token for every kind");
        weft_future_destroy(fh), weft_future_destroy(fa), weft_future_destroy(fr);
        weft_cancel_token_destroy(tok);
        weft_executor_destroy(ex);
        weft_taskflow_destroy(hold);
        weft_taskflow_destroy(tf);
    }
}

/* ---- priorities set on a thread, and what nested work inherits ---- */

typedef struct prio_seen {
    atomic_int seen[4]; /* chunks per level seen by weft_algo_priority(), at level + 1 */
    atomic_int nested[4];
    weft_executor *ex;
    bool nest;
} prio_seen;

static void nested_chunk(size_t lo, size_t hi, void *arg) {
    prio_seen *p = arg;
    (void)lo, (void)hi;
    atomic_fetch_add(&p->nested[(weft_algo_priority() + 1) & 3], 1);
}

static void prio_chunk(size_t lo, size_t hi, void *arg) {
    prio_seen *p = arg;
    (void)lo, (void)hi;
    atomic_fetch_add(&p->seen[(weft_algo_priority() + 1) & 3], 1);
    if (p->nest && weft_parallel_for_range(p->ex, 0, 64, 1, nested_chunk, p, &(weft_algo_config){ .chunk = 1 }))
        atomic_fetch_add(&p->nested[0], 1000000);
    sleep_us(50);
}

static int prio_after(weft_ctx *cx, void *arg) {
    (void)cx;
    /* A task after the call: its worker's setting is back to the default. */
    return weft_algo_priority() == WEFT_PRIORITY_NORMAL ? 0 : 1 + (int)weft_algo_priority() + 0 * *(int *)arg;
}

static int levels_seen(prio_seen *p, int except) {
    int other = 0;
    for (int k = 0; k < 4; k++)
        if (k != except) other += atomic_load(&p->seen[k]);
    return other;
}

static atomic_int wrong_level;
static int sibling_check(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    if (weft_algo_priority() != WEFT_PRIORITY_NORMAL) atomic_fetch_add(&wrong_level, 1);
    sleep_us(100);
    return 0;
}
static int critical_caller(weft_ctx *cx, void *arg) {
    prio_seen *p = arg;
    weft_priority old;
    if (weft_algo_set_priority(WEFT_PRIORITY_CRITICAL, &old) != WEFT_OK) return -1;
    weft_status st = weft_parallel_for_range(weft_ctx_executor(cx), 0, 16, 1, prio_chunk, p,
                                             &(weft_algo_config){ .chunk = 1 });
    (void)weft_algo_set_priority(old, NULL);
    return st == WEFT_OK ? 0 : -2;
}

TEST(chunks_see_their_calls_priority_nested_calls_inherit_it_and_later_tasks_see_the_default) {
    weft_executor *ex = make_ex(2, false);
    /* A call from the main thread at CRITICAL, each chunk making a nested
     * call: every chunk of both sees CRITICAL. */
    prio_seen p = { .ex = ex, .nest = true };
    weft_priority old;
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_CRITICAL, &old));
    ASSERT_OK(weft_parallel_for_range(ex, 0, 16, 1, prio_chunk, &p, &(weft_algo_config){ .chunk = 1 }));
    ASSERT_OK(weft_algo_set_priority(old, NULL));
    ASSERT_EQ(atomic_load(&p.seen[WEFT_PRIORITY_CRITICAL + 1]), 16);
    ASSERT_EQ(atomic_load(&p.nested[WEFT_PRIORITY_CRITICAL + 1]), 16 * 64);
    /* Emplaced: at the task's own priority, else its run's; a task after
     * it sees the default. */
    weft_priority levels[2] = { WEFT_PRIORITY_HIGH, WEFT_PRIORITY_LOW };
    for (int how = 0; how < 2; how++) {
        prio_seen q = { .ex = ex, .nest = false };
        int z = 0;
        weft_taskflow *tf = make_taskflow("prio");
        weft_task t = weft_emplace_for(tf, &(weft_for_desc){ .first = 0, .last = 16, .step = 1,
                                                             .body = prio_chunk, .arg = &q,
                                                             .config = { .chunk = 1 } });
        ASSERT_FALSE(weft_task_is_null(t));
        for (int i = 0; i < 4; i++) ASSERT_OK(weft_precede(t, must_emplace(tf, prio_after, &z)));
        weft_future *f = NULL;
        if (how == 0) {
            ASSERT_OK(weft_task_set_priority(t, levels[0]));
            ASSERT_OK(weft_run(ex, tf, &f));
        } else {
            ASSERT_OK(weft_run_with_priority(ex, tf, levels[1], &f));
        }
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        if (atomic_load(&q.seen[levels[how] + 1]) != 16 || levels_seen(&q, levels[how] + 1))
            TEST_FAIL_("emplaced %s: %d of 16 chunks saw %s (others %d: low %d normal %d high %d critical %d)", how ? "in a LOW run" : "HIGH task",
                       atomic_load(&q.seen[levels[how] + 1]), weft_priority_name(levels[how]), levels_seen(&q, levels[how] + 1), atomic_load(&q.seen[0]), atomic_load(&q.seen[1]), atomic_load(&q.seen[2]), atomic_load(&q.seen[3]));
        weft_taskflow_destroy(tf);
    }
    /* A task that calls at CRITICAL beside 30 siblings: whatever its worker
     * runs while it waits for the call sees the default. */
    for (int round = 0; round < 5; round++) {
        prio_seen q = { .ex = ex, .nest = false };
        weft_taskflow *tf = make_taskflow("waits");
        must_emplace(tf, critical_caller, &q);
        for (int i = 0; i < 30; i++) must_emplace(tf, sibling_check, NULL);
        atomic_store(&wrong_level, 0);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&q.seen[WEFT_PRIORITY_CRITICAL + 1]), 16);
        ASSERT_EQ(atomic_load(&wrong_level), 0);
        weft_taskflow_destroy(tf);
    }
    weft_executor_destroy(ex);
}

/* ---- GPU work in every place a user puts it (the emulator) ---- */

#include "weft/gpu.h"

static int gpu_ok(weft_ctx *cx, weft_gpu_stream *s, void *arg) {
    (void)cx, (void)s, (void)arg;
    atomic_fetch_add(&ran, 1);
    return 0;
}
static int gpu_fail(weft_ctx *cx, weft_gpu_stream *s, void *arg) {
    (void)cx, (void)s, (void)arg;
    atomic_fetch_add(&ran, 1);
    return 9;
}
static int gpu_stage_fn(weft_pipeflow *pf, weft_gpu_stream *s, void *arg) {
    (void)pf, (void)s, (void)arg;
    atomic_fetch_add(&ran, 1);
    return 0;
}
static int first_stops_at_4(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) == 4) weft_pipeflow_stop(pf);
    return 0;
}
static weft_gpu_device *the_dev;
static int async_gpu_call(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    return weft_gpu_call(the_dev, gpu_ok, NULL);
}
static int gpu_sub(weft_ctx *cx, weft_subflow *sf, void *arg) {
    (void)cx, (void)arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 2; i++)
        if (weft_task_is_null(weft_emplace_gpu(g, the_dev, gpu_ok, NULL))) return -1;
    return 0;
}

TEST(gpu_tasks_in_modules_subflows_stages_and_async_calls_count_once_and_a_failing_one_once_failed) {
    the_dev = weft_gpu_open(&(weft_gpu_config){ .kind = WEFT_GPU_EMULATOR }, NULL);
    ASSERT_NOT_NULL(the_dev);
    for (unsigned workers = 1; workers <= 2; workers++)
        for (int profile = 0; profile <= 1; profile++) {
            weft_executor *ex = make_ex(workers, profile);
            char what[96];
            /* A module of 2 GPU tasks, a subflow of 2, and 3 async calls. */
            weft_taskflow *body = make_taskflow("gpu body");
            for (int i = 0; i < 2; i++) ASSERT_FALSE(weft_task_is_null(weft_emplace_gpu(body, the_dev, gpu_ok, NULL)));
            weft_taskflow *tf = make_taskflow("gpu outer");
            weft_task m = weft_emplace_module(tf, body);
            weft_task s = weft_emplace_subflow(tf, gpu_sub, NULL);
            ASSERT_OK(weft_precede(m, s));
            atomic_store(&ran, 0);
            restart(ex, profile);
            run_tf(ex, tf, 2, WEFT_OK);
            weft_future *fs[3];
            for (int i = 0; i < 3; i++) ASSERT_OK(weft_async(ex, async_gpu_call, NULL, &fs[i]));
            for (int i = 0; i < 3; i++) {
                ASSERT_OK(weft_future_wait(fs[i]));
                weft_future_destroy(fs[i]);
            }
            ASSERT_OK(weft_executor_wait_all(ex));
            ASSERT_EQ(atomic_load(&ran), 2 * 4 + 3);
            snprintf(what, sizeof what, "gpu module, subflow and calls on %u%s", workers, profile ? " profiled" : "");
            /* Per run: 2 + (subflow task + 2); and 3 async tasks. */
            check(ex, (want){ 2 * 5 + 3, 0, 0 }, profile, what);
            weft_taskflow_destroy(tf);
            weft_taskflow_destroy(body);

            /* A GPU stage: 4 tokens through it, 5 first-stage calls. */
            weft_gpu_stage gs = { the_dev, ex, gpu_stage_fn, NULL };
            weft_stage st[2] = { { WEFT_STAGE_SERIAL, first_stops_at_4, NULL, "make" },
                                 { WEFT_STAGE_PARALLEL, weft_gpu_stage_run, &gs, "gpu" } };
            weft_pipeline *p = weft_pipeline_create(2, st, 2, NULL);
            ASSERT_NOT_NULL(p);
            tf = make_taskflow("gpu stage");
            ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
            atomic_store(&ran, 0);
            restart(ex, profile);
            run_tf(ex, tf, 1, WEFT_OK);
            ASSERT_EQ(atomic_load(&ran), 4);
            snprintf(what, sizeof what, "gpu stage on %u%s", workers, profile ? " profiled" : "");
            check(ex, (want){ 5 + 4 + 1, 0, 0 }, profile, what);
            weft_taskflow_destroy(tf);
            ASSERT_OK(weft_pipeline_destroy(p));

            /* A failing GPU task between two: the one after it skipped. */
            tf = make_taskflow("gpu fail");
            weft_task a = weft_emplace_gpu(tf, the_dev, gpu_ok, NULL);
            weft_task b = weft_emplace_gpu(tf, the_dev, gpu_fail, NULL);
            weft_task c = weft_emplace_gpu(tf, the_dev, gpu_ok, NULL);
            ASSERT_OK(weft_precede(a, b));
            ASSERT_OK(weft_precede(b, c));
            restart(ex, profile);
            run_tf(ex, tf, 1, WEFT_ETASK);
            snprintf(what, sizeof what, "failing gpu task on %u%s", workers, profile ? " profiled" : "");
            check(ex, (want){ 2, 1, 1 }, profile, what);
            weft_taskflow_destroy(tf);
            weft_executor_destroy(ex);
        }
    weft_gpu_close(the_dev);
}

/* ---- cancelled at every point of a graph of every kind of task ---- */

static atomic_int cut_at; /* the count of `ran` at which a task cancels its run */
static atomic_int cut_fails; /* it fails instead (returns 3) */
static int maybe_cut(weft_ctx *cx, void *arg) {
    (void)arg;
    if (atomic_fetch_add(&ran, 1) + 1 == atomic_load(&cut_at)) {
        if (atomic_load(&cut_fails)) return 3;
        (void)weft_future_cancel((weft_future *)weft_ctx_run(cx));
    }
    return 0;
}
static atomic_int loops_left;
static int cut_cond(weft_ctx *cx, void *arg) {
    if (maybe_cut(cx, arg)) return -3; /* a condition task fails by a negative value */
    return atomic_fetch_sub(&loops_left, 1) > 1 ? 0 : 1;
}
static int cut_first(weft_ctx *cx, void *arg) {
    atomic_store(&loops_left, 3); /* each pass loops 3 times */
    return maybe_cut(cx, arg);
}
static int cut_sub(weft_ctx *cx, weft_subflow *sf, void *arg) {
    if (maybe_cut(cx, NULL)) return 3;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (intptr_t i = 0; i < 3; i++)
        if (weft_task_is_null(weft_emplace(g, maybe_cut, NULL))) return -1;
    if ((intptr_t)arg && weft_subflow_detach(sf) != WEFT_OK) return -1;
    return 0;
}
static int cut_stage(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_stage(pf) == 0 && weft_pipeflow_token(pf) == 3) return weft_pipeflow_stop(pf);
    return 0;
}
static int cut_gpu(weft_ctx *cx, weft_gpu_stream *s, void *arg) {
    (void)s;
    return maybe_cut(cx, arg);
}

/* i -> loop(a -> cond, 3 times) -> {detached subflow, joined subflow,
 * module, pipeline, gpu, 3 tasks sharing a semaphore of 1} -> z, in a run_n
 * of 2, cancelled by its own task at each point in turn, or failed by it: the
 * metrics' skipped equals the future's, a failure is counted once, and the
 * tasks counted are at least the tasks that ran. */
TEST(a_run_of_every_kind_of_task_cancelled_or_failed_at_any_point_skips_as_many_in_the_metrics_as_in_its_future) {
    weft_gpu_device *dev = weft_gpu_open(&(weft_gpu_config){ .kind = WEFT_GPU_EMULATOR }, NULL);
    ASSERT_NOT_NULL(dev);
    weft_semaphore *sem = weft_semaphore_create(1, NULL);
    ASSERT_NOT_NULL(sem);
    weft_stage st[2] = { { WEFT_STAGE_SERIAL, cut_stage, NULL, "a" }, { WEFT_STAGE_PARALLEL, cut_stage, NULL, "b" } };
    weft_pipeline *p = weft_pipeline_create(2, st, 2, NULL);
    ASSERT_NOT_NULL(p);
    weft_taskflow *body = make_taskflow("body");
    weft_task bp = { 0 };
    for (int i = 0; i < 3; i++) {
        weft_task t = must_emplace(body, maybe_cut, NULL);
        if (i) ASSERT_OK(weft_precede(bp, t));
        bp = t;
    }
    weft_taskflow *tf = make_taskflow("every kind");
    weft_task i0 = must_emplace(tf, cut_first, NULL);
    weft_task a = must_emplace(tf, maybe_cut, NULL);
    weft_task c = weft_emplace_condition(tf, cut_cond, NULL);
    weft_task hub = must_emplace(tf, maybe_cut, NULL);
    ASSERT_OK(weft_precede(i0, a));
    ASSERT_OK(weft_precede(a, c));
    ASSERT_OK(weft_precede(c, a));
    ASSERT_OK(weft_precede(c, hub));
    weft_task z = must_emplace(tf, maybe_cut, NULL);
    weft_task mid[9];
    mid[0] = weft_emplace_subflow(tf, cut_sub, (void *)(intptr_t)1);
    mid[1] = weft_emplace_subflow(tf, cut_sub, (void *)(intptr_t)0);
    mid[2] = weft_emplace_module(tf, body);
    mid[3] = weft_pipeline_emplace(tf, p);
    mid[4] = weft_emplace_gpu(tf, dev, cut_gpu, NULL);
    for (int k = 5; k < 8; k++) {
        mid[k] = must_emplace(tf, maybe_cut, NULL);
        ASSERT_OK(weft_task_acquire(mid[k], sem));
        ASSERT_OK(weft_task_release(mid[k], sem));
    }
    mid[8] = weft_emplace_for(tf, &(weft_for_desc){ .first = 0, .last = 5000, .step = 1, .body = range_nop });
    for (int k = 0; k < 9; k++) {
        ASSERT_FALSE(weft_task_is_null(mid[k]));
        ASSERT_OK(weft_precede(hub, mid[k]));
        ASSERT_OK(weft_precede(mid[k], z));
    }
    /* ran per pass: i0 1, a 3, cond 3, hub 1, subflows 2 * (1 + 3), module 3,
     * gpu 1, semaphore tasks 3, z 1 = 24; 48 in all. */
    for (unsigned workers = 1; workers <= 4; workers++) {
        int fails = workers > 2; /* 3 and 4: a task fails instead, on 1 and 2 workers */
        atomic_store(&cut_fails, fails);
        weft_executor *ex = make_ex(fails ? workers - 2 : workers, false);
        for (int at = 1; at <= 49; at++) {
            atomic_store(&ran, 0);
            atomic_store(&cut_at, at);
            ASSERT_OK(weft_pipeline_reset(p));
            restart(ex, false);
            weft_future *f = NULL;
            ASSERT_OK(weft_run_n(ex, tf, 2, &f));
            weft_status s = weft_future_wait(f);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            weft_future_destroy(f);
            ASSERT_OK(weft_executor_wait_all(ex));
            char what[64];
            snprintf(what, sizeof what, "%s at %d on %u", fails ? "failed" : "cancelled", at,
                     fails ? workers - 2 : workers);
            if (at <= 48 && fails) {
                if (s != WEFT_ETASK) TEST_FAIL_("%s (failing): status %s", what, weft_errname(s));
            } else if (at <= 48) {
                if (s != WEFT_ECANCELED)
                    TEST_FAIL_("%s: status %s (ran %d, skipped %llu)", what, weft_errname(s), atomic_load(&ran),
                               (unsigned long long)info.skipped);
            } else if (s != WEFT_OK) {
                TEST_FAIL_("%s: status %s (ran %d)", what, weft_errname(s), atomic_load(&ran));
            }
            weft_metrics m = check(ex, (want){ -1, fails && at <= 48 ? 1 : 0, (int64_t)info.skipped }, false, what);
            if (m.total.tasks < (uint64_t)atomic_load(&ran))
                TEST_FAIL_("%s: %llu tasks counted, %d ran", what, (unsigned long long)m.total.tasks,
                           atomic_load(&ran));
        }
        weft_executor_destroy(ex);
    }
    weft_taskflow_destroy(tf);
    weft_taskflow_destroy(body);
    ASSERT_OK(weft_pipeline_destroy(p));
    ASSERT_OK(weft_semaphore_destroy(sem));
    weft_gpu_close(dev);
}

/* An observer whose callbacks wait for async work (a cooperative wait: the
 * worker runs other work, other tasks of the run included, inside the
 * callback): every task and async task counted once, the profile agrees, and
 * each task's begin comes before its end. */
typedef struct waiting_obs {
    atomic_int begins, ends, bad;
} waiting_obs;

static void wait_in_cb(void *user, const weft_task_event *e) {
    waiting_obs *o = user;
    if (e->outcome == WEFT_TASK_RUNNING) atomic_fetch_add(&o->begins, 1);
    else atomic_fetch_add(&o->ends, 1);
    weft_future *f = NULL;
    if (weft_async(e->executor, count_fn, NULL, &f) != WEFT_OK) {
        atomic_fetch_add(&o->bad, 1);
        return;
    }
    if (weft_future_wait(f) != WEFT_OK) atomic_fetch_add(&o->bad, 1);
    weft_future_destroy(f);
}

TEST(an_observer_that_waits_for_async_work_in_its_callbacks_is_counted_exactly) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        waiting_obs o = { 0 };
        weft_observer obs = { wait_in_cb, wait_in_cb, &o };
        weft_status err = WEFT_OK;
        weft_executor *ex = weft_executor_create(
            &(weft_executor_config){ .workers = workers, .observer = &obs, .profile = true }, &err);
        ASSERT_NOT_NULL(ex);
        weft_taskflow *tf = make_taskflow("waits in callbacks");
        weft_task prev = { 0 };
        for (int i = 0; i < 30; i++) {
            weft_task t = must_emplace(tf, count_fn, NULL);
            if (i % 3 && !weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, t));
            prev = t;
        }
        atomic_store(&ran, 0);
        run_tf(ex, tf, 2, WEFT_OK);
        ASSERT_EQ(atomic_load(&o.bad), 0);
        ASSERT_EQ(atomic_load(&o.begins), 60);
        ASSERT_EQ(atomic_load(&o.ends), 60);
        ASSERT_EQ(atomic_load(&ran), 60 * 3);
        check(ex, (want){ 60 * 3, 0, 0 }, true, workers == 1 ? "waiting observer on 1" : "waiting observer on 2");
        weft_executor_destroy(ex);
        weft_taskflow_destroy(tf);
    }
}

/* Dependent async tasks cancelled while they wait for their dependencies:
 * each is skipped (counted once, when its dependencies finish), and its own
 * dependents still run (weft_dependent_async: whatever its status). */
static atomic_int gate_open;
static int wait_gate(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    while (!atomic_load(&gate_open)) sleep_us(100);
    atomic_fetch_add(&ran, 1);
    return 0;
}

TEST(dependent_async_tasks_cancelled_while_waiting_are_skipped_once_and_their_dependents_run) {
    for (unsigned workers = 1; workers <= 2; workers++)
        for (int profile = 0; profile <= 1; profile++) {
            weft_executor *ex = make_ex(workers, profile);
            restart(ex, profile);
            atomic_store(&gate_open, 0);
            atomic_store(&ran, 0);
            weft_future *a = NULL, *b = NULL, *c = NULL, *d = NULL;
            ASSERT_OK(weft_async(ex, wait_gate, NULL, &a));
            ASSERT_OK(weft_dependent_async(ex, count_fn, NULL, &a, 1, &b));     /* cancelled */
            ASSERT_OK(weft_dependent_async(ex, count_fn, NULL, &b, 1, &c));     /* runs */
            weft_future *bc[2] = { b, c };
            ASSERT_OK(weft_dependent_async(ex, count_fn, NULL, bc, 2, NULL));   /* silent, runs */
            ASSERT_OK(weft_dependent_async(ex, count_fn, NULL, &a, 1, &d));     /* cancelled too */
            ASSERT_OK(weft_future_cancel(b));
            ASSERT_OK(weft_future_cancel(d));
            atomic_store(&gate_open, 1);
            ASSERT_OK(weft_future_wait(c));
            ASSERT_EQ(weft_future_wait(b), WEFT_ECANCELED);
            ASSERT_EQ(weft_future_wait(d), WEFT_ECANCELED);
            ASSERT_OK(weft_executor_wait_all(ex));
            ASSERT_EQ(atomic_load(&ran), 3);
            check(ex, (want){ 3, 0, 2 }, profile, profile ? "cancelled dependents, profiled" : "cancelled dependents");
            if (profile) {
                uint64_t n = profile_count(ex, WEFT_PROFILE_ASYNC, (const void *)(uintptr_t)count_fn, -1) +
                             profile_count(ex, WEFT_PROFILE_SILENT_ASYNC, (const void *)(uintptr_t)count_fn, -1);
                ASSERT_EQ(n, 2);
            }
            weft_future_destroy(a), weft_future_destroy(b), weft_future_destroy(c), weft_future_destroy(d);
            weft_executor_destroy(ex);
        }
}

/* ---- an algorithm inside a fork-join task inside a pipeline stage ---- */

#define ARR 3000
static long arr[ARR];

static void sum_long(void *acc, const void *x, void *arg) {
    (void)arg;
    *(long *)acc += *(const long *)x;
}

typedef struct part {
    size_t lo, hi;
    long sum;
} part;

static int reduce_part(weft_ctx *cx, void *arg) {
    part *p = arg;
    p->sum = 0;
    return weft_parallel_reduce(weft_ctx_executor(cx), arr + p->lo, p->hi - p->lo, sizeof(long), &p->sum, sum_long,
                                NULL, &(weft_algo_config){ .chunk = 64 }) == WEFT_OK
               ? 0
               : -1;
}

static int fj_sum(weft_ctx *cx, void *arg) {
    part *ps = arg; /* 4 parts */
    for (int i = 1; i < 4; i++)
        if (weft_spawn(cx, reduce_part, &ps[i]) != WEFT_OK) return -1;
    int r = reduce_part(cx, &ps[0]);
    int s = 0;
    for (int i = 1; i < 4; i++) {
        int k = weft_sync(cx);
        if (!s) s = k;
    }
    return r ? r : s;
}

WEFT_FJ_TASK(long, tsum, size_t, lo) {
    /* lo .. lo + 750: halves as typed children, each half a parallel sum. */
    if (lo % 750 == 0) {
        WEFT_FJ_SLOT(tsum) x;
        WEFT_FJ_SPAWN(tsum, &x, lo + 375);
        long a = WEFT_FJ_CALL(tsum, lo + 1); /* lo + 1: the first half */
        return WEFT_FJ_SYNC(tsum, &x) + a;
    }
    size_t first = lo % 750 == 1 ? lo - 1 : lo;
    long s = 0;
    (void)WEFT_FJ_CTX; /* a direct algorithm call: write the top back (forkjoin.h) */
    if (weft_parallel_reduce(weft_ctx_executor(WEFT_FJ_CTX), arr + first, 375, sizeof(long), &s, sum_long, NULL,
                             &(weft_algo_config){ .chunk = 32 }) != WEFT_OK)
        return -1000000;
    return s;
}

static atomic_long stage_sums;
static int sum_stage(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_stage(pf) == 0) {
        if (weft_pipeflow_token(pf) == 8) weft_pipeflow_stop(pf);
        return 0;
    }
    weft_ctx *cx = weft_current_ctx();
    if (!cx) return -1;
    long total = 0;
    if (weft_pipeflow_token(pf) % 2 == 0) {
        part ps[4];
        for (int i = 0; i < 4; i++) ps[i] = (part){ (size_t)i * ARR / 4, (size_t)(i + 1) * ARR / 4, 0 };
        /* Nested in the stage: a root of its own, run right there. */
        if (weft_run_root(weft_ctx_executor(cx), fj_sum, ps) != 0) return -2;
        for (int i = 0; i < 4; i++) total += ps[i].sum;
    } else {
        for (size_t lo = 0; lo < ARR; lo += 750) total += WEFT_FJ_RUN(cx, tsum, lo);
    }
    atomic_fetch_add(&stage_sums, total);
    return 0;
}

TEST(an_algorithm_in_a_fork_join_task_in_a_pipeline_stage_sums_exactly_and_is_counted) {
    long expect = 0;
    for (int i = 0; i < ARR; i++) arr[i] = i % 97, expect += arr[i];
    for (unsigned workers = 1; workers <= 2; workers++)
        for (int how = WEFT_PIPELINE_SPREAD; how <= WEFT_PIPELINE_INLINE; how++) {
            weft_executor *ex = make_ex(workers, true);
            weft_stage st[2] = { { WEFT_STAGE_SERIAL, sum_stage, NULL, "make" },
                                 { WEFT_STAGE_PARALLEL, sum_stage, NULL, "sum" } };
            weft_pipeline *p = weft_pipeline_create(3, st, 2, NULL);
            ASSERT_NOT_NULL(p);
            ASSERT_OK(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)how));
            weft_taskflow *tf = make_taskflow("nested kinds");
            ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
            atomic_store(&stage_sums, 0);
            restart(ex, true);
            run_tf(ex, tf, 1, WEFT_OK);
            ASSERT_EQ(atomic_load(&stage_sums), 8 * expect);
            char what[64];
            snprintf(what, sizeof what, "nested kinds (%d) on %u", how, workers);
            weft_metrics m = check(ex, (want){ -1, 0, 0 }, true, what);
            /* 9 + 8 stage calls, the pipeline task, 4 roots, and the jobs and
             * stolen frames the workers ran. */
            uint64_t stages = profile_count(ex, WEFT_PROFILE_PIPELINE_STAGE, p, -1),
                     roots = profile_count(ex, WEFT_PROFILE_FORK_JOIN_ROOT, NULL, -1),
                     tasks = profile_count(ex, WEFT_PROFILE_TASK, tf, -1);
            if (stages != 17 || roots != 4 || tasks != 1)
                TEST_FAIL_("%s: %llu stage calls (want 17), %llu roots (4), %llu tasks (1) of %llu", what,
                           (unsigned long long)stages, (unsigned long long)roots, (unsigned long long)tasks,
                           (unsigned long long)m.total.tasks);
            weft_taskflow_destroy(tf);
            ASSERT_OK(weft_pipeline_destroy(p));
            weft_executor_destroy(ex);
        }
}

/* ---- work nested deeper than the profiler times (16 levels) ---- */

static int nest_root(weft_ctx *cx, void *arg) {
    intptr_t left = (intptr_t)arg;
    atomic_fetch_add(&ran, 1);
    if (left <= 1) return 0;
    return weft_run_root(weft_ctx_executor(cx), nest_root, (void *)(left - 1));
}

static int nest_async(weft_ctx *cx, void *arg) {
    intptr_t left = (intptr_t)arg;
    atomic_fetch_add(&ran, 1);
    if (left <= 1) return 0;
    weft_future *f = NULL;
    if (weft_async(weft_ctx_executor(cx), nest_async, (void *)(left - 1), &f) != WEFT_OK) return -1;
    weft_status st = weft_future_wait_isolated(f);
    weft_future_destroy(f);
    return st == WEFT_OK ? 0 : -2;
}

/* Roots nested 30 deep (each a weft_run_root from inside the last, run right
 * there) and async tasks nested 30 deep (isolated waits that run the task
 * in place): every one counted in tasks; the ones past 16 deep are not timed,
 * so not in the histogram, and, profiled, count as dropped: spans + dropped
 * is every run (observe.h). */
TEST(work_nested_past_the_timed_depth_is_counted_and_dropped_not_lost) {
    for (int profile = 0; profile <= 1; profile++)
        for (int kind = 0; kind < 2; kind++) {
            weft_executor *ex = make_ex(1, profile);
            restart(ex, profile);
            atomic_store(&ran, 0);
            ASSERT_EQ(weft_run_root(ex, kind ? nest_async : nest_root, (void *)(intptr_t)30), 0);
            ASSERT_OK(weft_executor_wait_all(ex));
            ASSERT_EQ(atomic_load(&ran), 30);
            settle(ex);
            weft_metrics m;
            ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
            uint64_t h = 0;
            for (unsigned b = 0; b < WEFT_METRICS_BUCKETS; b++) h += m.total.histogram[b];
            int want_tasks = 30; /* the root, and 29 roots or async tasks nested in it */
            if (m.total.tasks != (uint64_t)want_tasks || h != 16 || m.total.failed)
                TEST_FAIL_("%s%s: %llu tasks (want %d), %llu timed (want 16)", kind ? "async" : "roots",
                           profile ? " profiled" : "", (unsigned long long)m.total.tasks, want_tasks,
                           (unsigned long long)h);
            if (profile) {
                uint64_t spans = 0, dropped = 0;
                ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
                if (spans != 16 || spans + dropped != m.total.tasks)
                    TEST_FAIL_("%s: %llu spans and %llu dropped for %llu tasks", kind ? "async" : "roots",
                               (unsigned long long)spans, (unsigned long long)dropped,
                               (unsigned long long)m.total.tasks);
            }
            weft_executor_destroy(ex);
        }
}

/* ---- one pipeline in taskflows run on two executors at once ---- */

static atomic_int pipe_calls, first_calls;
/* Each run: 19 tokens, then the 20th first-stage call stops it (the runs of
 * the pipeline never overlap, so one count serves them all). */
static int stop_at_20(weft_pipeflow *pf, void *arg) {
    (void)arg;
    atomic_fetch_add(&pipe_calls, 1);
    sleep_us(20); /* long enough for the two runs to meet */
    if (weft_pipeflow_stage(pf) == 0 && atomic_fetch_add(&first_calls, 1) % 20 == 19) weft_pipeflow_stop(pf);
    return 0;
}

/* The pipeline must not run twice at once: the second task fails with task
 * code WEFT_EBUSY (pipeline.h), whichever executor runs it; the first runs
 * whole; each executor counts what it ran (a refused task, failed, and no
 * stage call). */
TEST(one_pipeline_run_from_two_executors_at_once_runs_once_and_the_other_task_fails_ebusy) {
    weft_executor *ex[2] = { make_ex(2, false), make_ex(1, false) };
    weft_stage st[2] = { { WEFT_STAGE_SERIAL, stop_at_20, NULL, "a" }, { WEFT_STAGE_PARALLEL, stop_at_20, NULL, "b" } };
    weft_pipeline *p = weft_pipeline_create(2, st, 2, NULL);
    ASSERT_NOT_NULL(p);
    weft_taskflow *tf[2] = { make_taskflow("p0"), make_taskflow("p1") };
    for (int i = 0; i < 2; i++) ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf[i], p)));
    int busy = 0;
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 2; i++) restart(ex[i], false);
        atomic_store(&pipe_calls, 0);
        atomic_store(&first_calls, 0);
        ASSERT_OK(weft_pipeline_reset(p));
        weft_future *f[2];
        for (int i = 0; i < 2; i++) ASSERT_OK(weft_run(ex[i], tf[i], &f[i]));
        int ok = 0, refused = 0;
        for (int i = 0; i < 2; i++) {
            weft_status s = weft_future_wait(f[i]);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f[i], &info));
            if (s == WEFT_OK) ok++;
            else if (s == WEFT_ETASK && info.task_code == WEFT_EBUSY) refused++;
            else TEST_FAIL_("round %d: run %d: %s, code %d", round, i, weft_errname(s), info.task_code);
            weft_future_destroy(f[i]);
        }
        busy += refused;
        for (int i = 0; i < 2; i++) ASSERT_OK(weft_executor_wait_all(ex[i]));
        /* Each run that ran made 20 tokens: 19 * 2 + 1 calls. */
        ASSERT_EQ(atomic_load(&pipe_calls), ok * 39);
        ASSERT_EQ(weft_pipeline_num_tokens(p), (uint64_t)ok * 19);
        uint64_t tasks = 0, failed = 0;
        for (int i = 0; i < 2; i++) {
            weft_metrics m = check(ex[i], (want){ -1, -1, 0 }, false, "pipeline on two executors");
            tasks += m.total.tasks, failed += m.total.failed;
        }
        if (tasks != (uint64_t)(ok * 40 + refused) || failed != (uint64_t)refused)
            TEST_FAIL_("round %d: %llu tasks (%llu failed) for %d runs and %d refused", round,
                       (unsigned long long)tasks, (unsigned long long)failed, ok, refused);
    }
    if (getenv("VERBOSE")) fprintf(stderr, "refused %d of 50\n", busy);
    for (int i = 0; i < 2; i++) {
        weft_taskflow_destroy(tf[i]);
        weft_executor_destroy(ex[i]);
    }
    ASSERT_OK(weft_pipeline_destroy(p));
}

/* ---- queued async tasks removed, re-prioritised and escalated ---- */

static weft_sched_handle handles[12];
static weft_executor *handle_ex;
static atomic_int removed_in_task;
static int remove_two(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    atomic_fetch_add(&ran, 1);
    for (int k = 10; k < 12; k++)
        if (weft_sched_remove(handle_ex, handles[k]) == WEFT_OK) atomic_fetch_add(&removed_in_task, 1);
    return 0;
}

/* Async tasks queued with handles behind two held workers: 3 removed from
 * main, 2 removed from inside the first task to run (a CRITICAL one), 3
 * raised, the rest escalated by hand.  The metrics count the ones that ran
 * and, as skipped, the ones removed (a removal off the workers in worker
 * 0's figures), and their futures say ECANCELED. */
TEST(async_tasks_removed_from_main_and_from_a_task_are_skipped_once_each) {
    for (int profile = 0; profile <= 1; profile++) {
        weft_executor *ex = make_ex(2, profile);
        handle_ex = ex;
        restart(ex, profile);
        atomic_store(&gate_open, 0);
        atomic_store(&ran, 0);
        atomic_store(&removed_in_task, 0);
        weft_future *g[2], *f[12];
        for (int i = 0; i < 2; i++) ASSERT_OK(weft_async(ex, wait_gate, NULL, &g[i]));
        for (int k = 0; k < 2000 && weft_executor_waiters(ex) > 0; k++) sleep_us(500);
        for (int k = 0; k < 12; k++) {
            weft_async_options o = { .priority = k == 0 ? WEFT_PRIORITY_CRITICAL : WEFT_PRIORITY_LOW,
                                     .handle = &handles[k] };
            ASSERT_OK(weft_async_with(ex, k == 0 ? remove_two : count_fn, NULL, &o, &f[k]));
        }
        for (int k = 1; k <= 3; k++) ASSERT_OK(weft_sched_remove(ex, handles[k]));
        for (int k = 4; k <= 6; k++) ASSERT_OK(weft_sched_reprioritize(ex, handles[k], WEFT_PRIORITY_HIGH));
        size_t moved = 0;
        ASSERT_OK(weft_sched_escalate(ex, &moved));
        atomic_store(&gate_open, 1);
        int cancelled = 0;
        for (int k = 0; k < 12; k++) {
            weft_status s = weft_future_wait(f[k]);
            if (s == WEFT_ECANCELED) cancelled++;
            else ASSERT_OK(s);
            weft_future_destroy(f[k]);
        }
        for (int i = 0; i < 2; i++) {
            ASSERT_OK(weft_future_wait(g[i]));
            weft_future_destroy(g[i]);
        }
        ASSERT_OK(weft_executor_wait_all(ex));
        int rem = 3 + atomic_load(&removed_in_task);
        ASSERT_EQ(cancelled, rem);
        ASSERT_EQ(atomic_load(&ran), 2 + 12 - rem);
        check(ex, (want){ 2 + 12 - rem, 0, rem }, profile, profile ? "removed, profiled" : "removed");
        weft_sched_stats ss;
        ASSERT_OK(weft_sched_get_stats(ex, &ss));
        ASSERT_EQ(ss.removed, (uint64_t)rem);
        ASSERT_EQ(ss.queued, 0);
        weft_executor_destroy(ex);
    }
}

/* A run cancelled while its module waits in the body's queue behind a run of
 * the body on another executor: the run ends ECANCELED, the skipped tasks in
 * its future are the ones its executor's metrics count (the body's and the
 * module's successor), and the body's own run on the other executor is
 * untouched. */
TEST(a_run_cancelled_while_its_module_waits_behind_another_executors_run_of_the_body_skips_exactly) {
    for (int round = 0; round < 4; round++) {
        weft_executor *e1 = make_ex(2, round % 2), *e2 = make_ex(1, false);
        restart(e1, round % 2);
        restart(e2, false);
        weft_taskflow *body = make_taskflow("body");
        weft_task gt = must_emplace(body, wait_gate, NULL);
        for (int i = 0; i < 3; i++) ASSERT_OK(weft_precede(gt, must_emplace(body, count_fn, NULL)));
        weft_taskflow *tf = make_taskflow("outer");
        weft_task first = must_emplace(tf, count_fn, NULL);
        weft_task m = weft_emplace_module(tf, body);
        weft_task after = must_emplace(tf, count_fn, NULL);
        ASSERT_OK(weft_precede(first, m));
        ASSERT_OK(weft_precede(m, after));
        atomic_store(&gate_open, 0);
        atomic_store(&ran, 0);
        weft_future *fb = NULL, *ft = NULL;
        ASSERT_OK(weft_run(e2, body, &fb));
        ASSERT_OK(weft_run(e1, tf, &ft));
        /* Let the outer run reach its module (first ran), then cancel. */
        ASSERT_TRUE(wait_flag(&ran, 1, 5));
        sleep_us(2000);
        ASSERT_OK(weft_future_cancel(ft));
        atomic_store(&gate_open, 1);
        ASSERT_EQ(weft_future_wait(ft), WEFT_ECANCELED);
        ASSERT_OK(weft_future_wait(fb));
        weft_run_info info;
        ASSERT_OK(weft_future_info(ft, &info));
        ASSERT_OK(weft_executor_wait_all(e1));
        ASSERT_OK(weft_executor_wait_all(e2));
        check(e2, (want){ 4, 0, 0 }, false, "the body's own run");
        check(e1, (want){ atomic_load(&ran) - 4 + 0 * (int)info.skipped, 0, (int64_t)info.skipped }, round % 2,
              "the cancelled outer run");
        if (info.skipped != 5) TEST_FAIL_("round %d: %llu skipped, want 5 (the body's 4, after)", round,
                                          (unsigned long long)info.skipped);
        weft_future_destroy(ft), weft_future_destroy(fb);
        weft_executor_destroy(e1), weft_executor_destroy(e2);
        weft_taskflow_destroy(tf), weft_taskflow_destroy(body);
    }
}

/* One token with a deadline, shared while they run by an async task that
 * polls it, a graph run of 200 slow tasks, a parallel loop from another
 * thread and a fork-join root: all end ECANCELED soon after the deadline,
 * and the run's skipped tasks are the metrics' skipped. */
static int poll_until_cancelled(weft_ctx *cx, void *arg) {
    (void)arg;
    while (weft_ctx_check(cx) == WEFT_OK) sleep_us(100);
    return 0;
}
static int slow_task(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    sleep_us(500);
    return 0;
}
static void slow_index(size_t i, void *arg) {
    (void)i, (void)arg;
    sleep_us(500);
}
static atomic_int root_ran, async_ran;
static int root_poll(weft_ctx *cx, void *arg) {
    atomic_store(&root_ran, 1);
    return poll_until_cancelled(cx, arg);
}
static int async_poll(weft_ctx *cx, void *arg) {
    atomic_store(&async_ran, 1);
    return poll_until_cancelled(cx, arg);
}
typedef struct loop_arg {
    weft_executor *ex;
    weft_cancel_token *tok;
    weft_status st;
} loop_arg;
static void *loop_thread(void *p) {
    loop_arg *a = p;
    /* Chunks of one element: a chunk that has started runs to its end
     * (algo.h), and the default chunks of this loop hold thousands. */
    a->st = weft_parallel_for(a->ex, 0, 20000, 1, slow_index, NULL,
                              &(weft_algo_config){ .cancel = a->tok, .chunk = 1 });
    return NULL;
}

TEST(a_deadline_token_shared_by_running_async_graph_loop_and_root_stops_them_all) {
    for (int round = 0; round < 3; round++) {
        weft_executor *ex = make_ex(2, round == 1);
        restart(ex, round == 1);
        weft_cancel_token *tok = weft_cancel_token_create(NULL, NULL);
        ASSERT_NOT_NULL(tok);
        weft_future *fa = NULL, *fr = NULL;
        atomic_store(&async_ran, 0);
        ASSERT_OK(weft_async(ex, async_poll, NULL, &fa));
        ASSERT_OK(weft_cancel_attach(tok, fa));
        weft_taskflow *tf = make_taskflow("slow");
        weft_task prev = { 0 };
        for (int i = 0; i < 200; i++) {
            weft_task t = must_emplace(tf, slow_task, NULL);
            if (i % 2) ASSERT_OK(weft_precede(prev, t));
            prev = t;
        }
        ASSERT_OK(weft_run(ex, tf, &fr));
        ASSERT_OK(weft_cancel_attach(tok, fr));
        loop_arg la = { ex, tok, WEFT_OK };
        pthread_t th;
        ASSERT_EQ(pthread_create(&th, NULL, loop_thread, &la), 0);
        ASSERT_OK(weft_cancel_after(tok, 5 * MS));
        uint64_t t0 = now_ns();
        int res = 0;
        atomic_store(&root_ran, 0);
        weft_status rs = weft_run_root_with_token(ex, tok, root_poll, NULL, &res);
        ASSERT_TRUE(rs == WEFT_ECANCELED);
        uint64_t t1 = now_ns();
        ASSERT_EQ(weft_future_wait(fa), WEFT_ECANCELED);
        uint64_t t2 = now_ns();
        ASSERT_EQ(weft_future_wait(fr), WEFT_ECANCELED);
        uint64_t t3 = now_ns();
        ASSERT_EQ(pthread_join(th, NULL), 0);
        if (getenv("VERBOSE"))
            fprintf(stderr, "root %.1f async %.1f run %.1f loop %.1f ms (root ran %d)\n", (t1 - t0) / 1e6,
                    (t2 - t0) / 1e6, (t3 - t0) / 1e6, (now_ns() - t0) / 1e6, atomic_load(&root_ran));
        ASSERT_EQ(la.st, WEFT_ECANCELED);
        if (now_ns() - t0 > 2 * SEC) TEST_FAIL_("round %d: %.1f ms to stop", round, (now_ns() - t0) / 1e6);
        ASSERT_OK(weft_executor_wait_all(ex));
        weft_run_info info;
        ASSERT_OK(weft_future_info(fr, &info));
        ASSERT_TRUE(info.skipped > 0);
        /* A root or async task the deadline stopped before it started is
         * skipped too. */
        check(ex, (want){ -1, 0, (int64_t)info.skipped + !atomic_load(&root_ran) + !atomic_load(&async_ran) },
              round == 1, "deadline token");
        weft_future_destroy(fa), weft_future_destroy(fr);
        weft_cancel_token_destroy(tok);
        weft_taskflow_destroy(tf);
        weft_executor_destroy(ex);
    }
}

/* ---- spawns a graph task leaves unsynced ---- */

/* forkjoin.h: spawns a task leaves unsynced when it returns are synced by
 * weft right then; weft_run_root and async tasks count them as part of the
 * task (a root that returned 0 returns the first child's non-zero value).  A
 * graph task's leftover children ran after its end was observed: the task
 * that failed its run (ETASK, named in the future) was reported SUCCEEDED to
 * the observer and not counted failed in the metrics or the profile, and the
 * children's 20 ms ran outside every span: busy 0.0 ms. */
static int spin_child(weft_ctx *cx, void *arg) {
    (void)cx;
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < 20 * MS) {
    }
    return (int)(intptr_t)arg; /* 0, or the failure to report */
}
static int leave_child(weft_ctx *cx, void *arg) {
    return weft_spawn(cx, spin_child, arg) == WEFT_OK ? 0 : -1;
}
static int leave_child_cond(weft_ctx *cx, void *arg) {
    return leave_child(cx, arg) == 0 ? 0 : -1; /* branch 0 */
}
static int leave_child_sub(weft_ctx *cx, weft_subflow *sf, void *arg) {
    (void)sf;
    return leave_child(cx, arg);
}

typedef struct end_seen {
    atomic_int failed, code, ends;
} end_seen;
static void note_end(void *user, const weft_task_event *e) {
    end_seen *s = user;
    atomic_fetch_add(&s->ends, 1);
    if (e->outcome == WEFT_TASK_FAILED) {
        atomic_fetch_add(&s->failed, 1);
        atomic_store(&s->code, e->code);
    }
}

TEST(a_graph_task_whose_unsynced_spawns_fail_is_reported_failed_and_busy_while_they_run) {
    /* kind 0: a source task; 1: a task with a predecessor; 2: a condition
     * task; 3: a subflow task; 4: a task of a weft_run_n_parallel instance. */
    for (int kind = 0; kind < 5; kind++)
        for (intptr_t code = 0; code <= 5; code += 5) {
            end_seen s = { 0 };
            weft_observer obs = { NULL, note_end, &s };
            weft_status err = WEFT_OK;
            weft_executor *ex = weft_executor_create(
                &(weft_executor_config){ .workers = 1, .observer = &obs, .profile = true, .profile_exact = true },
                &err);
            ASSERT_NOT_NULL(ex);
            weft_taskflow *tf = make_taskflow("leaves spawns");
            weft_task first = must_emplace(tf, noop, NULL), t;
            if (kind == 2) t = weft_emplace_condition(tf, leave_child_cond, (void *)code);
            else if (kind == 3) t = weft_emplace_subflow(tf, leave_child_sub, (void *)code);
            else t = must_emplace(tf, leave_child, (void *)code);
            ASSERT_FALSE(weft_task_is_null(t));
            if (kind != 0 && kind != 4) ASSERT_OK(weft_precede(first, t));
            weft_future *f = NULL;
            if (kind == 4) ASSERT_OK(weft_run_n_parallel(ex, tf, 1, &f));
            else ASSERT_OK(weft_run(ex, tf, &f));
            weft_status st = weft_future_wait(f);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            weft_future_destroy(f);
            ASSERT_OK(weft_executor_wait_all(ex));
            settle(ex);
            char what[64];
            snprintf(what, sizeof what, "kind %d, child returning %d", kind, (int)code);
            if (code) {
                if (st != WEFT_ETASK || info.task_code != 5)
                    TEST_FAIL_("%s: run %s code %d", what, weft_errname(st), info.task_code);
            } else if (st != WEFT_OK) {
                TEST_FAIL_("%s: run %s", what, weft_errname(st));
            }
            weft_metrics m = check(ex, (want){ 2, code ? 1 : 0, 0 }, true, what);
            if (atomic_load(&s.ends) != 2 || atomic_load(&s.failed) != (code ? 1 : 0) ||
                (code && atomic_load(&s.code) != 5))
                TEST_FAIL_("%s: the observer saw %d ends, %d failed (code %d)", what, atomic_load(&s.ends),
                           atomic_load(&s.failed), atomic_load(&s.code));
            if (m.total.busy_ns < 18 * MS)
                TEST_FAIL_("%s: busy %.2f ms for a task whose child spun 20 ms", what, m.total.busy_ns / 1e6);
            weft_profile *p = NULL;
            ASSERT_OK(weft_profile_get(ex, &p));
            bool found = false;
            for (size_t i = 0; i < p->ntasks; i++)
                if (p->tasks[i].kind == WEFT_PROFILE_TASK && p->tasks[i].id == (const void *)tf &&
                    p->tasks[i].index == weft_task_index(t)) {
                    found = true;
                    if (p->tasks[i].total_ns < 18 * MS || p->tasks[i].failed != (code ? 1u : 0u))
                        TEST_FAIL_("%s: the task's profile: %.2f ms, %llu failed", what,
                                   p->tasks[i].total_ns / 1e6, (unsigned long long)p->tasks[i].failed);
                }
            weft_profile_free(p);
            if (!found) TEST_FAIL_("%s: the task has no profile entry", what);
            weft_executor_destroy(ex);
            weft_taskflow_destroy(tf);
        }
}

/* weft_run_n_parallel with a failing task and a cancel: the metrics' skipped
 * equals the future's, and tasks are the ones that ran. */
static int fail_in_instance_2(weft_ctx *cx, void *arg) {
    (void)arg;
    atomic_fetch_add(&ran, 1);
    return weft_ctx_iteration(cx) == 2 ? 7 : 0;
}

TEST(a_failing_or_cancelled_run_n_parallel_skips_as_many_in_the_metrics_as_in_its_future) {
    for (unsigned workers = 1; workers <= 2; workers++)
        for (int how = 0; how < 2; how++) {
            weft_executor *ex = make_ex(workers, how == 1);
            weft_taskflow *tf = make_taskflow("instances");
            weft_task prev = { 0 };
            for (int i = 0; i < 12; i++) {
                weft_task t = must_emplace(tf, i == 3 ? fail_in_instance_2 : count_fn, NULL);
                if (i % 4) ASSERT_OK(weft_precede(prev, t));
                prev = t;
            }
            restart(ex, how == 1);
            atomic_store(&ran, 0);
            weft_future *f = NULL;
            ASSERT_OK(weft_run_n_parallel(ex, tf, 6, &f));
            if (how == 1) {
                weft_status c = weft_future_cancel(f); /* ENOENT: it had ended */
                ASSERT_TRUE(c == WEFT_OK || c == WEFT_ENOENT);
            }
            weft_status st = weft_future_wait(f);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            weft_future_destroy(f);
            ASSERT_OK(weft_executor_wait_all(ex));
            ASSERT_TRUE(st == WEFT_ETASK || st == WEFT_ECANCELED);
            char what[64];
            snprintf(what, sizeof what, "run_n_parallel %s on %u", how ? "cancelled" : "failing", workers);
            check(ex, (want){ atomic_load(&ran), st == WEFT_ETASK ? 1 : -1, (int64_t)info.skipped }, how == 1, what);
            if (atomic_load(&ran) + (int)info.skipped != 72)
                TEST_FAIL_("%s: %d ran and %llu skipped of 72", what, atomic_load(&ran),
                           (unsigned long long)info.skipped);
            weft_executor_destroy(ex);
            weft_taskflow_destroy(tf);
        }
}

/* The NUMA node hint, like the priority: a call's chunks see its hint (also
 * where it places nothing), tasks the caller's worker runs while it waits see
 * none, and an emplaced algorithm in a run nested in a hinted task runs
 * unhinted (algo.h). */
static atomic_int hinted_chunks, unhinted_chunks, sibling_hinted, emplaced_hinted, emplaced_chunks;
static void hint_chunk(size_t lo, size_t hi, void *a) {
    (void)lo, (void)hi, (void)a;
    atomic_fetch_add(weft_algo_numa_node() ? &hinted_chunks : &unhinted_chunks, 1);
    sleep_us(200);
}
static int hint_sibling(weft_ctx *c, void *a) {
    (void)c, (void)a;
    if (weft_algo_numa_node() != 0) atomic_fetch_add(&sibling_hinted, 1);
    sleep_us(100);
    return 0;
}
static void emplaced_hint_chunk(size_t lo, size_t hi, void *a) {
    (void)lo, (void)hi, (void)a;
    atomic_fetch_add(&emplaced_chunks, 1);
    if (weft_algo_numa_node() != 0) atomic_fetch_add(&emplaced_hinted, 1);
}
static weft_for_desc hint_desc = { .first = 0, .last = 8, .step = 1, .body = emplaced_hint_chunk,
                                   .config = { .chunk = 1 } };
static int hinted_caller(weft_ctx *c, void *a) {
    (void)a;
    unsigned old;
    if (weft_algo_set_numa_node(WEFT_NUMA_NODE(0), &old) != WEFT_OK) return -1;
    int s = weft_parallel_for_range(weft_ctx_executor(c), 0, 16, 1, hint_chunk, NULL,
                                    &(weft_algo_config){ .chunk = 1 }) != WEFT_OK;
    /* Put back before a wait that runs other tasks: they would see it (the
     * setting is the worker thread's; algo.h). */
    (void)weft_algo_set_numa_node(old, NULL);
    weft_taskflow *tf = weft_taskflow_create("nested", NULL);
    if (!tf || weft_task_is_null(weft_emplace_for(tf, &hint_desc))) s = -2;
    else if (weft_run_and_wait(weft_ctx_executor(c), tf) != WEFT_OK) s = -3;
    weft_taskflow_destroy(tf);
    return s;
}

TEST(a_numa_hint_reaches_its_calls_chunks_and_nothing_else_the_worker_runs) {
    weft_executor *ex = make_ex(2, false);
    weft_taskflow *tf = make_taskflow("hinted");
    must_emplace(tf, hinted_caller, NULL);
    for (int i = 0; i < 30; i++) must_emplace(tf, hint_sibling, NULL);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&hinted_chunks), 16);
    ASSERT_EQ(atomic_load(&unhinted_chunks), 0);
    ASSERT_EQ(atomic_load(&sibling_hinted), 0);
    ASSERT_EQ(atomic_load(&emplaced_chunks), 8);
    ASSERT_EQ(atomic_load(&emplaced_hinted), 0);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

static int stage_stop_at_6(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_stage(pf) == 0 && weft_pipeflow_token(pf) == 5) weft_pipeflow_stop(pf);
    return 0;
}

/* Work of every priority: graph tasks with their own levels in runs of each
 * level, a CRITICAL spread pipeline, prioritised async tasks and a LOW
 * parallel loop from a task: each counted once, and the profile agrees. */
static int low_loop_task(weft_ctx *cx, void *arg) {
    (void)arg;
    weft_priority old;
    if (weft_algo_set_priority(WEFT_PRIORITY_LOW, &old) != WEFT_OK) return -1;
    weft_status st = weft_parallel_for(weft_ctx_executor(cx), 0, 5000, 1, idx_nop, NULL,
                                       &(weft_algo_config){ .chunk = 100 });
    (void)weft_algo_set_priority(old, NULL);
    return st == WEFT_OK ? 0 : -2;
}

TEST(work_of_every_priority_is_counted_once_and_agrees_with_the_profile) {
    for (unsigned workers = 1; workers <= 2; workers++)
        for (int profile = 0; profile <= 1; profile++) {
            weft_executor *ex = make_ex(workers, profile);
            weft_taskflow *tf = make_taskflow("levels");
            weft_task prev = { 0 };
            for (int i = 0; i < 24; i++) {
                weft_task t = must_emplace(tf, count_fn, NULL);
                if (i % 3) ASSERT_OK(weft_task_set_priority(t, (weft_priority)(i % 4 - 1)));
                if (i % 2 && !weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, t));
                prev = t;
            }
            weft_task lt = must_emplace(tf, low_loop_task, NULL);
            ASSERT_OK(weft_task_set_priority(lt, WEFT_PRIORITY_HIGH));
            weft_stage st[2] = { { WEFT_STAGE_SERIAL, stage_stop_at_6, NULL, "a" },
                                 { WEFT_STAGE_PARALLEL, stage_stop_at_6, NULL, "b" } };
            weft_pipeline *p = weft_pipeline_create(2, st, 2, NULL);
            ASSERT_NOT_NULL(p);
            ASSERT_OK(weft_pipeline_set_scheduling(p, WEFT_PIPELINE_SPREAD));
            ASSERT_OK(weft_pipeline_set_priority(p, WEFT_PRIORITY_CRITICAL));
            weft_task pt = weft_pipeline_emplace(tf, p);
            ASSERT_FALSE(weft_task_is_null(pt));
            restart(ex, profile);
            uint64_t loop_jobs = 0;
            for (int level = WEFT_PRIORITY_LOW; level <= WEFT_PRIORITY_CRITICAL; level++) {
                ASSERT_OK(weft_pipeline_reset(p));
                weft_future *f = NULL;
                ASSERT_OK(weft_run_with_priority(ex, tf, (weft_priority)level, &f));
                ASSERT_OK(weft_future_wait(f));
                weft_future_destroy(f);
            }
            weft_future *fa[4];
            for (int k = 0; k < 4; k++)
                ASSERT_OK(weft_async_with(ex, count_fn, NULL,
                                          &(weft_async_options){ .priority = (weft_priority)(k - 1) }, &fa[k]));
            for (int k = 0; k < 4; k++) {
                ASSERT_OK(weft_future_wait(fa[k]));
                weft_future_destroy(fa[k]);
            }
            ASSERT_OK(weft_executor_wait_all(ex));
            char what[64];
            snprintf(what, sizeof what, "every priority on %u%s", workers, profile ? " profiled" : "");
            weft_metrics m = check(ex, (want){ -1, 0, 0 }, profile, what);
            /* Per run: 24 + 1 + 1 tasks and 6 * 2 - 1 stage calls; 4 async
             * tasks; the loop's jobs run by workers besides. */
            uint64_t known = 4 * (26 + 11) + 4;
            if (m.total.tasks < known) TEST_FAIL_("%s: %llu tasks, at least %llu", what,
                                                  (unsigned long long)m.total.tasks, (unsigned long long)known);
            if (profile) {
                loop_jobs = profile_count(ex, WEFT_PROFILE_ALGORITHM_JOB, NULL, -1);
                uint64_t c = profile_count(ex, WEFT_PROFILE_TASK, tf, -1),
                         s = profile_count(ex, WEFT_PROFILE_PIPELINE_STAGE, p, -1),
                         a = profile_count(ex, WEFT_PROFILE_ASYNC, NULL, -1);
                if (c != 4 * 26 || s != 4 * 11 || a != 4 || c + s + a + loop_jobs != m.total.tasks)
                    TEST_FAIL_("%s: %llu tasks, %llu stage calls, %llu async, %llu jobs; metrics %llu", what,
                               (unsigned long long)c, (unsigned long long)s, (unsigned long long)a,
                               (unsigned long long)loop_jobs, (unsigned long long)m.total.tasks);
            } else if (workers == 1 && m.total.tasks != known) {
                TEST_FAIL_("%s: %llu tasks, want %llu", what, (unsigned long long)m.total.tasks,
                           (unsigned long long)known);
            }
            weft_taskflow_destroy(tf);
            ASSERT_OK(weft_pipeline_destroy(p));
            weft_executor_destroy(ex);
        }
}

/* ---- the switches refuse a call from inside a run (observe.h) ---------------------- */

typedef struct switch_probe {
    weft_executor *ex;
    weft_status metrics, profiler, get;
    weft_profile *got;
    char msg[256];
} switch_probe;

static int flip_switches(weft_ctx *cx, void *arg) {
    (void)cx;
    switch_probe *p = arg;
    p->metrics = weft_metrics_enable(p->ex, true);
    snprintf(p->msg, sizeof p->msg, "%s", weft_last_error_message());
    p->profiler = weft_profiler_start(p->ex);
    p->got = (weft_profile *)&p->got; /* weft_profile_get must set it NULL on its error */
    p->get = weft_profile_get(p->ex, &p->got);
    return 0;
}

TEST(metrics_and_profiler_switches_flipped_and_profile_read_from_a_task_of_their_executor_are_refused) {
    weft_executor *ex = make_ex(2, false);
    switch_probe p = {.ex = ex};
    ASSERT_OK(weft_run_root(ex, flip_switches, &p));
    ASSERT_EQ(p.metrics, WEFT_EBUSY);
    ASSERT_EQ(p.profiler, WEFT_EBUSY);
    ASSERT_EQ(p.get, WEFT_EBUSY); /* a read of the spans its own run is writing */
    ASSERT_TRUE(p.got == NULL);
    ASSERT_TRUE(strstr(p.msg, "weft_metrics_enable") != NULL);
    ASSERT_TRUE(strstr(p.msg, "own workers") != NULL);
    /* From a task of another executor, profile_get reads ex's profile. */
    weft_executor *other = make_ex(1, false);
    switch_probe q = {.ex = ex};
    ASSERT_OK(weft_run_root(other, flip_switches, &q));
    ASSERT_OK(q.get);
    ASSERT_NOT_NULL(q.got);
    weft_profile_free(q.got);
    ASSERT_OK(weft_profiler_stop(ex));
    weft_executor_destroy(other);
    /* Nothing changed: from main both still work. */
    ASSERT_OK(weft_profiler_start(ex));
    ASSERT_OK(weft_profiler_stop(ex));
    ASSERT_OK(weft_metrics_enable(ex, true));
    weft_executor_destroy(ex);
}
