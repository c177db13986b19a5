/* Many sources: an iteration with 16 or more sources starts them as range jobs
 * split lazily (src/graph/sources.c), summing the sinks' completions.  Every
 * kind of task may be a source; each must run exactly once per iteration, the
 * iteration must end exactly when all have, and failures, cancellation and
 * subflows with many children must behave as with a few sources. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <inttypes.h>
#include <stdatomic.h>

enum { WIDE = 240, ITER = 5 };

/* Per-iteration checks: every task counts its runs; the sink after the fan
 * (when there is one) sees all of the fan's tasks done. */
struct fan {
    atomic_int runs[WIDE];
    atomic_int succ_runs[WIDE];
    atomic_int children;     /* subflow children run */
    atomic_int module_runs;  /* tasks of the module's body run */
    atomic_int late;         /* tasks that ran after the iteration's end was seen */
    atomic_int iteration_end;
};

struct item {
    struct fan *f;
    int i;
};

static int plain(weft_ctx *ctx, void *arg) {
    struct item *it = arg;
    atomic_fetch_add(&it->f->runs[it->i], 1);
    return 0;
}

static int succ_task(weft_ctx *ctx, void *arg) {
    struct item *it = arg;
    atomic_fetch_add(&it->f->succ_runs[it->i], 1);
    return 0;
}

static int cond(weft_ctx *ctx, void *arg) {
    struct item *it = arg;
    atomic_fetch_add(&it->f->runs[it->i], 1);
    return 0; /* its first (and only) successor */
}

static int child(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&((struct fan *)arg)->children, 1);
    return 0;
}

static int spawner(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct item *it = arg;
    atomic_fetch_add(&it->f->runs[it->i], 1);
    weft_taskflow *g = weft_subflow_graph(sf);
    /* 40 children: the subflow's own run starts them as a range too. */
    for (int k = 0; k < 40; k++)
        if (weft_task_is_null(weft_emplace(g, child, it->f))) return 1;
    return 0;
}

static int body_task(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&((struct fan *)arg)->module_runs, 1);
    return 0;
}

/* The fan: WIDE sources of every kind, some with a successor. */
static weft_taskflow *make_fan(struct fan *f, struct item *items, weft_taskflow *body) {
    weft_taskflow *tf = make_taskflow("fan");
    for (int i = 0; i < WIDE; i++) {
        items[i] = (struct item){ f, i };
        weft_task t;
        switch (i % 8) {
        case 3: t = weft_emplace_condition(tf, cond, &items[i]); break;
        case 5: t = weft_emplace_subflow(tf, spawner, &items[i]); break;
        case 7:
            if (i == 7) { /* one module: a body runs one module task at a time */
                t = weft_emplace_module(tf, body);
                break;
            }
            /* fall through */
        default: t = must_emplace(tf, plain, &items[i]); break;
        }
        if (weft_task_is_null(t)) TEST_FAIL_("emplace %d failed", i);
        if (i % 8 == 3 || i % 4 == 1) {
            weft_task s = must_emplace(tf, succ_task, &items[i]);
            ASSERT_OK(weft_precede(t, s));
        }
    }
    return tf;
}

static void check_fan(struct fan *f, int iters) {
    int want_children = 0;
    for (int i = 0; i < WIDE; i++) {
        int want = (i == 7) ? 0 : iters; /* the module task is counted by its body */
        if (atomic_load(&f->runs[i]) != want)
            TEST_FAIL_("source %d ran %d times, want %d", i, atomic_load(&f->runs[i]), want);
        int ws = (i % 8 == 3 || i % 4 == 1) ? iters : 0;
        if (atomic_load(&f->succ_runs[i]) != ws)
            TEST_FAIL_("successor of %d ran %d times, want %d", i, atomic_load(&f->succ_runs[i]), ws);
        if (i % 8 == 5) want_children += 40 * iters;
    }
    ASSERT_EQ(atomic_load(&f->children), want_children);
    ASSERT_EQ(atomic_load(&f->module_runs), 3 * iters);
}

TEST(many_sources_of_every_kind_each_run_once_per_iteration) {
    static struct fan f;
    static struct item items[WIDE];
    for (unsigned workers = 1; workers <= 4; workers *= 2) {
        memset(&f, 0, sizeof f);
        weft_executor *ex = make_executor(workers);
        weft_taskflow *body = make_taskflow("body");
        for (int k = 0; k < 3; k++) must_emplace(body, body_task, &f);
        weft_taskflow *tf = make_fan(&f, items, body);
        weft_future *fut;
        ASSERT_OK(weft_run_n(ex, tf, ITER, &fut));
        ASSERT_OK(weft_future_wait_for(fut, 20 * SEC));
        weft_run_info info;
        ASSERT_OK(weft_future_info(fut, &info));
        ASSERT_EQ(info.iterations, ITER);
        weft_future_destroy(fut);
        check_fan(&f, ITER);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        check_fan(&f, ITER + 1);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_taskflow_destroy(body));
        weft_executor_destroy(ex);
    }
}

/* A run_until whose predicate sees each iteration's sinks all done. */
struct counted {
    atomic_long done;
    long per_iteration, iterations;
    atomic_int short_iteration;
};

static int count_one(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&((struct counted *)arg)->done, 1);
    return 0;
}

static bool all_done(void *arg) {
    struct counted *c = arg;
    long d = atomic_load(&c->done);
    if (d != c->per_iteration * c->iterations) atomic_store(&c->short_iteration, 1);
    return ++c->iterations > 20;
}

TEST(an_iteration_of_many_sinks_ends_only_when_all_have_run) {
    enum { SINKS = 5000 };
    static struct counted c;
    for (unsigned workers = 1; workers <= 4; workers *= 2) {
        memset(&c, 0, sizeof c);
        c.per_iteration = SINKS;
        weft_executor *ex = make_executor(workers);
        weft_taskflow *tf = make_taskflow("sinks");
        for (int i = 0; i < SINKS; i++) must_emplace(tf, count_one, &c);
        weft_future *fut;
        ASSERT_OK(weft_run_until(ex, tf, all_done, &c, &fut));
        ASSERT_OK(weft_future_wait_for(fut, 20 * SEC));
        weft_future_destroy(fut);
        ASSERT_EQ(atomic_load(&c.short_iteration), 0);
        ASSERT_EQ(atomic_load(&c.done), 20L * SINKS);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

static int count_ran(weft_ctx *ctx, void *arg) {
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

static int fails(weft_ctx *ctx, void *arg) { return 9; }

TEST(a_failing_source_among_many_fails_the_run_and_counts_every_task) {
    enum { N = 2000 };
    for (unsigned workers = 1; workers <= 4; workers *= 2) {
        weft_executor *ex = make_executor(workers);
        atomic_int ran = 0;
        weft_taskflow *tf = make_taskflow("wide-fail");
        for (int i = 0; i < N; i++) {
            weft_task t = must_emplace(tf, i == 500 ? fails : count_ran, &ran);
            if (i == 500) ASSERT_OK(weft_task_set_name(t, "the-bad-one"));
        }
        for (int round = 0; round < 10; round++) {
            atomic_store(&ran, 0);
            weft_future *f;
            ASSERT_OK(weft_run(ex, tf, &f));
            ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ETASK);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            ASSERT_EQ(info.task_code, 9);
            ASSERT_STREQ(info.failed_task, "the-bad-one");
            /* Every other task either ran or was skipped, exactly once. */
            if ((uint64_t)atomic_load(&ran) + info.skipped != N - 1)
                TEST_FAIL_("%d ran + %" PRIu64 " skipped != %d", atomic_load(&ran), info.skipped, N - 1);
            weft_future_destroy(f);
        }
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

static int slow_sink(weft_ctx *ctx, void *arg) {
    sleep_us(20);
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

TEST(cancelling_a_run_of_many_sources_ends_it_promptly) {
    enum { N = 20000 };
    weft_executor *ex = make_executor(2);
    atomic_int ran = 0;
    weft_taskflow *tf = make_taskflow("wide-cancel");
    for (int i = 0; i < N; i++) must_emplace(tf, slow_sink, &ran);
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    sleep_us(2000);
    ASSERT_OK(weft_future_cancel(f));
    ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_ECANCELED);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ((uint64_t)atomic_load(&ran) + info.skipped, N);
    ASSERT_LT(atomic_load(&ran), N);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- How a range spreads (sources.c looks at its deque every few sources) ---- */

enum { SPREAD_N = 64 };

struct spread {
    atomic_int ran;
    atomic_int seen; /* sources source 0 saw finish while it waited */
};

static int spread_src(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add(&((struct spread *)arg)->ran, 1);
    return 0;
}

/* Source 0 waits (up to 10 s) until half the others have run.  Its own thread
 * is busy waiting, so they ran on others: the range's owner splits it in two
 * before its first source, and a thief takes the upper half (the lower one
 * waits behind source 0). */
static int spread_first(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct spread *s = arg;
    uint64_t until = now_ns() + 10 * SEC;
    while (atomic_load(&s->ran) < SPREAD_N / 2 && now_ns() < until) sleep_us(50);
    atomic_store(&s->seen, atomic_load(&s->ran));
    atomic_fetch_add(&s->ran, 1);
    return 0;
}

TEST(a_wide_fan_whose_first_source_blocks_is_run_by_the_other_workers) {
    for (unsigned workers = 2; workers <= 3; workers++) {
        weft_executor *ex = make_executor(workers);
        struct spread s = { 0 };
        weft_taskflow *tf = make_taskflow("spread");
        must_emplace(tf, spread_first, &s);
        for (int i = 1; i < SPREAD_N; i++) must_emplace(tf, spread_src, &s);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&s.ran), SPREAD_N);
        ASSERT_GE(atomic_load(&s.seen), SPREAD_N / 2);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* Sources that leave fork-join children unsynced: the range's one context is
 * reused from source to source, and each source's children are still synced
 * when it returns, before the next source begins. */
struct leftover {
    atomic_int children;
    atomic_int bad; /* a source saw children of an earlier source still running */
    atomic_int running;
};

static int leftover_child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct leftover *l = arg;
    atomic_fetch_add(&l->children, 1);
    atomic_fetch_sub(&l->running, 1);
    return 0;
}

static int leftover_src(weft_ctx *ctx, void *arg) {
    struct leftover *l = arg;
    for (int k = 0; k < 3; k++) {
        atomic_fetch_add(&l->running, 1);
        if (weft_spawn(ctx, leftover_child, l) != WEFT_OK) return 1;
    }
    return 0; /* no sync: the run syncs them */
}

static int leftover_check(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct leftover *l = arg;
    if (atomic_load(&l->running) != 0) atomic_fetch_add(&l->bad, 1);
    return 0;
}

TEST(sources_of_a_range_that_leave_spawns_unsynced_have_them_synced_one_by_one) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        struct leftover l = { 0 };
        weft_taskflow *tf = make_taskflow("leftovers");
        for (int i = 0; i < 200; i++) must_emplace(tf, i % 2 ? leftover_check : leftover_src, &l);
        for (int it = 0; it < 3; it++) ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&l.children), 3 * 100 * 3);
        if (workers == 1) ASSERT_EQ(atomic_load(&l.bad), 0); /* one thread: strictly one source after another */
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* Emplace's fast path writes the sources array without a bound check of its
 * own (task.c counts that room into fast_slots).  A recount at a run start
 * (sources stale after an edge into an older task) rebuilds the array: tasks
 * emplaced after it must still fit (ASan sees an overflow). */
static int count_run(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

TEST(tasks_emplaced_after_a_run_that_recounted_the_sources_all_run) {
    enum { FIRST = 100, MORE = 3000 };
    static atomic_int runs[FIRST + MORE];
    for (int i = 0; i < FIRST + MORE; i++) atomic_store(&runs[i], 0);
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("recount");
    weft_task t[FIRST];
    for (int i = 0; i < 10; i++) t[i] = must_emplace(tf, count_run, &runs[i]);
    ASSERT_OK(weft_precede(t[0], t[5])); /* not the newest: the list goes stale */
    /* Stale, the list is not kept: these slots are counted without it. */
    for (int i = 10; i < FIRST; i++) t[i] = must_emplace(tf, count_run, &runs[i]);
    ASSERT_OK(weft_run_and_wait(ex, tf)); /* recounts: the array holds FIRST - 1 of FIRST */
    for (int i = FIRST; i < FIRST + MORE; i++) must_emplace(tf, count_run, &runs[i]);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    for (int i = 0; i < FIRST + MORE; i++) ASSERT_EQ(atomic_load(&runs[i]), i < FIRST ? 2 : 1);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- Sources kept implicit until the first edge (graph.h, sources_mode) ---- */

enum { MANY = 5000 }; /* chunks 0..6 of the slab: the range's walk crosses chunk ends */
static atomic_int many_runs[MANY + 64];

static void many_reset(void) {
    for (int i = 0; i < MANY + 64; i++) atomic_store(&many_runs[i], 0);
}
static void many_expect(int from, int to, int want, const char *when) {
    for (int i = from; i < to; i++)
        if (atomic_load(&many_runs[i]) != want)
            TEST_FAIL_("%s: task %d ran %d times, want %d", when, i, atomic_load(&many_runs[i]), want);
}

TEST(independent_tasks_over_many_chunks_each_run_once_per_iteration) {
    for (unsigned workers = 1; workers <= 4; workers *= 2) {
        many_reset();
        weft_executor *ex = make_executor(workers);
        weft_taskflow *tf = make_taskflow("many");
        for (int i = 0; i < MANY; i++) must_emplace(tf, count_run, &many_runs[i]);
        weft_future *f;
        ASSERT_OK(weft_run_n(ex, tf, 3, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        many_expect(0, MANY, 3, "weft_run_n(3)");
        ASSERT_OK(weft_run_n_parallel(ex, tf, 2, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        many_expect(0, MANY, 5, "then weft_run_n_parallel(2)");
        ASSERT_OK(weft_run_with_priority(ex, tf, WEFT_PRIORITY_HIGH, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        many_expect(0, MANY, 6, "then weft_run_with_priority");
        /* Some tasks with a priority of their own: the sources go through the
         * scheduling layer's queue. */
        for (int i = 0; i < MANY; i += 97) {
            weft_task t = must_emplace(tf, count_run, &many_runs[MANY + (i / 97) % 64]);
            ASSERT_OK(weft_task_set_priority(t, WEFT_PRIORITY_LOW));
        }
        ASSERT_OK(weft_run_and_wait(ex, tf));
        many_expect(0, MANY, 7, "then with prioritised tasks");
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* A task that checks that its predecessor ran first. */
struct after {
    atomic_int *before;
    atomic_int *mine;
    atomic_int bad;
};
static int after_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct after *a = arg;
    if (atomic_load(a->before) == 0) atomic_fetch_add(&a->bad, 1);
    atomic_fetch_add(a->mine, 1);
    return 0;
}

TEST(a_first_edge_into_the_newest_task_or_an_older_one_keeps_every_source) {
    for (int older = 0; older <= 1; older++) {
        many_reset();
        weft_executor *ex = make_executor(2);
        weft_taskflow *tf = make_taskflow("first-edge");
        weft_task t[300];
        for (int i = 0; i < 300; i++) t[i] = must_emplace(tf, count_run, &many_runs[i]);
        struct after a = { &many_runs[older ? 5 : 0], &many_runs[300], 0 };
        weft_task last = must_emplace(tf, after_task, &a);
        if (older) {
            /* An edge into a task that is not the newest, then the new task's. */
            struct after b = { &many_runs[5], &many_runs[301], 0 };
            ASSERT_OK(weft_task_set_work(t[10], after_task, &b));
            ASSERT_OK(weft_precede(t[5], t[10]));
            ASSERT_OK(weft_precede(t[5], last));
            for (int i = 302; i < 400; i++) must_emplace(tf, count_run, &many_runs[i]);
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_EQ(atomic_load(&b.bad), 0);
            many_expect(0, 10, 1, "older");
            many_expect(11, 301, 1, "older");
            ASSERT_EQ(atomic_load(&many_runs[301]), 1); /* t[10]'s new work */
            ASSERT_EQ(atomic_load(&many_runs[10]), 0);
            many_expect(302, 400, 1, "older, emplaced after the edges");
        } else {
            ASSERT_OK(weft_precede(t[0], last)); /* into the newest: the list is written out */
            for (int i = 301; i < 400; i++) must_emplace(tf, count_run, &many_runs[i]);
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_OK(weft_run_and_wait(ex, tf));
            many_expect(0, 400, 2, "newest");
        }
        ASSERT_EQ(atomic_load(&a.bad), 0);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

TEST(an_erase_among_independent_tasks_and_a_clear_keep_every_source) {
    many_reset();
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("erase-clear");
    weft_task t[200];
    for (int i = 0; i < 200; i++) t[i] = must_emplace(tf, count_run, &many_runs[i]);
    ASSERT_OK(weft_task_erase(t[7]));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&many_runs[7]), 0);
    many_expect(0, 7, 1, "after an erase");
    many_expect(8, 200, 1, "after an erase");
    must_emplace(tf, count_run, &many_runs[200]); /* takes the erased slot */
    ASSERT_OK(weft_run_and_wait(ex, tf));
    many_expect(0, 7, 2, "after the slot's reuse");
    many_expect(8, 200, 2, "after the slot's reuse");
    ASSERT_EQ(atomic_load(&many_runs[200]), 1);
    /* A chain, then cleared: independent tasks again, all sources. */
    ASSERT_OK(weft_taskflow_clear(tf));
    weft_task prev = must_emplace(tf, count_run, &many_runs[0]);
    for (int i = 1; i < 50; i++) {
        weft_task n = must_emplace(tf, count_run, &many_runs[i]);
        ASSERT_OK(weft_precede(prev, n));
        prev = n;
    }
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_taskflow_clear(tf));
    many_reset();
    for (int i = 0; i < 3000; i++) must_emplace(tf, count_run, &many_runs[i]);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    many_expect(0, 3000, 1, "after a clear");
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
