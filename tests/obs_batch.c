/* Batched timing of short tasks (src/observe/obs.c): every task still gets
 * exactly one span, spans of one worker never overlap, counts stay exact, long
 * tasks and nested ones are timed on their own, and open batches survive the
 * buffers being read or cleared.  The spans are read through the library's own
 * visitor, so the tests see what every exporter sees. */
#define _GNU_SOURCE
#include "obs_util.h"

#include "observe/obs.h"

typedef struct rec {
    uint64_t begin, end;
    uint32_t run, index;
    unsigned worker;
    bool estimated, failed;
} rec;

typedef struct recs {
    rec *r;
    size_t n, cap;
} recs;

static bool collect(const weft__span *s, unsigned w, void *arg) {
    recs *rs = arg;
    if (s->kind != WEFT__SPAN_TASK) return true;
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 1024;
        rs->r = realloc(rs->r, rs->cap * sizeof *rs->r);
        if (!rs->r) TEST_FAIL_("out of memory");
    }
    rs->r[rs->n++] = (rec){ s->begin, s->end, s->run, s->index, w, s->estimated, s->failed };
    return true;
}

/* Batches whatever the tasks' length: under the sanitizers even an empty task
 * takes longer than the threshold; and goes on batching after a batch that
 * overran (on a loaded machine the OS may stop a worker for milliseconds
 * inside one).  Before any run (runs publish it). */
static void force_batching(weft_executor *ex) {
    ASSERT_NOT_NULL(ex->obs_state);
    ex->obs_state->batch_max = UINT64_MAX;
    ex->obs_state->batch_long = UINT64_MAX / 64;
}

static recs spans_of(weft_executor *ex) {
    recs rs = { 0 };
    if (ex->obs_state) weft__spans_for_each(ex->obs_state, collect, &rs);
    return rs;
}

static int by_worker_then_begin(const void *a_, const void *b_) {
    const rec *a = a_, *b = b_;
    if (a->worker != b->worker) return a->worker < b->worker ? -1 : 1;
    if (a->begin != b->begin) return a->begin < b->begin ? -1 : 1;
    return a->end < b->end ? -1 : a->end > b->end;
}

/* Every span has begin <= end, and on one worker no two spans overlap unless
 * one holds the other (a task that waited ran the other inside it). */
static void check_tiling(recs *rs) {
    qsort(rs->r, rs->n, sizeof *rs->r, by_worker_then_begin);
    for (size_t i = 0; i < rs->n; i++) {
        const rec *a = &rs->r[i];
        if (a->begin > a->end) TEST_FAIL_("span %zu ends before it begins", i);
        if (i + 1 == rs->n || rs->r[i + 1].worker != a->worker) continue;
        const rec *b = &rs->r[i + 1];
        if (b->begin < a->end && b->end > a->end)
            TEST_FAIL_("spans of tasks %u and %u overlap on worker %u", a->index, b->index, a->worker);
    }
}

/* The number of spans of (run, index) pairs seen more than once, after sorting. */
static int by_run_then_index(const void *a_, const void *b_) {
    const rec *a = a_, *b = b_;
    if (a->run != b->run) return a->run < b->run ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static size_t duplicates(recs *rs) {
    qsort(rs->r, rs->n, sizeof *rs->r, by_run_then_index);
    size_t d = 0;
    for (size_t i = 1; i < rs->n; i++)
        d += rs->r[i].run == rs->r[i - 1].run && rs->r[i].index == rs->r[i - 1].index;
    return d;
}

static uint64_t hist_total(const weft_metrics *m) {
    uint64_t h = 0;
    for (int b = 0; b < WEFT_METRICS_BUCKETS; b++) h += m->total.histogram[b];
    return h;
}

TEST(short_tasks_are_batched_yet_each_has_one_span_and_the_counts_stay_exact) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_profiled(workers, 0);
        force_batching(ex);
        atomic_int count = 0;
        weft_taskflow *tf = make_chains(20000, workers, &count, false);
        for (int k = 0; k < 3; k++) ASSERT_OK(weft_run_and_wait(ex, tf));
        /* Read at once: batches may still be open on the workers. */
        weft_metrics m;
        ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
        ASSERT_EQ(m.total.tasks, 60000);
        ASSERT_EQ(hist_total(&m), 60000);
        recs rs = spans_of(ex);
        ASSERT_EQ(rs.n, 60000);
        size_t est = 0;
        for (size_t i = 0; i < rs.n; i++) est += rs.r[i].estimated;
        /* Empty tasks back to back: nearly all of them go in batches. */
        if (est < rs.n / 2) TEST_FAIL_("only %zu of %zu spans came from batches", est, rs.n);
        check_tiling(&rs);
        ASSERT_EQ(duplicates(&rs), 0);
        free(rs.r);
        ASSERT_OK(weft_executor_wait_all(ex));
        weft_executor_destroy(ex);
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
}

TEST(exact_profiling_times_every_task_on_its_own) {
    weft_status err;
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){ .workers = 1, .profile = true, .profile_exact = true }, &err);
    ASSERT_NOT_NULL(ex);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(5000, 1, &count, false);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    recs rs = spans_of(ex);
    ASSERT_EQ(rs.n, 5000);
    for (size_t i = 0; i < rs.n; i++) ASSERT_FALSE(rs.r[i].estimated);
    check_tiling(&rs);
    free(rs.r);
    weft_executor_destroy(ex);
    /* The environment variable does the same. */
    setenv("WEFT_PROFILE_EXACT", "1", 1);
    ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .profile = true }, &err);
    unsetenv("WEFT_PROFILE_EXACT");
    ASSERT_NOT_NULL(ex);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    rs = spans_of(ex);
    ASSERT_EQ(rs.n, 5000);
    for (size_t i = 0; i < rs.n; i++) ASSERT_FALSE(rs.r[i].estimated);
    free(rs.r);
    weft_executor_destroy(ex);
    /* "false" (like "0", "no", "off") leaves batching allowed; it used to turn
     * exact timing on, as any value but "0" did.  (Whether batches then form
     * depends on the tasks' speed: not under TSan.  The setting is what is
     * checked.) */
    const char *off[] = { "false", "0", "no", "OFF" }, *on[] = { "true", "1", "yes", "On" };
    for (int i = 0; i < 4; i++) {
        setenv("WEFT_PROFILE_EXACT", off[i], 1);
        ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .profile = true }, &err);
        ASSERT_NOT_NULL(ex);
        if (ex->obs_state->exact) TEST_FAIL_("WEFT_PROFILE_EXACT=%s turned exact timing on", off[i]);
        weft_executor_destroy(ex);
        setenv("WEFT_PROFILE_EXACT", on[i], 1);
        ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .profile = true }, &err);
        ASSERT_NOT_NULL(ex);
        if (!ex->obs_state->exact) TEST_FAIL_("WEFT_PROFILE_EXACT=%s left exact timing off", on[i]);
        weft_executor_destroy(ex);
    }
    unsetenv("WEFT_PROFILE_EXACT");
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* profile_exact (or WEFT_PROFILE_EXACT) on an executor that records nothing
 * at create holds for a profiler started later: it used to be read only when
 * something was on at create, so weft_profiler_start batched anyway. */
TEST(exact_timing_holds_for_a_profiler_started_after_create) {
    weft_status err;
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(5000, 1, &count, false);
    for (int how = 0; how < 2; how++) {
        if (how == 1) setenv("WEFT_PROFILE_EXACT", "1", 1);
        weft_executor *ex = weft_executor_create(
            &(weft_executor_config){ .workers = 1, .profile_exact = how == 0 }, &err);
        unsetenv("WEFT_PROFILE_EXACT");
        ASSERT_NOT_NULL(ex);
        ASSERT_OK(weft_profiler_start(ex));
        ASSERT_NOT_NULL(ex->obs_state);
        if (!ex->obs_state->exact || ex->obs_state->batch_max != 0)
            TEST_FAIL_("%s left batching on for weft_profiler_start",
                       how ? "WEFT_PROFILE_EXACT=1" : ".profile_exact");
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_executor_wait_all(ex));
        recs rs = spans_of(ex);
        ASSERT_EQ(rs.n, 5000);
        for (size_t i = 0; i < rs.n; i++) ASSERT_FALSE(rs.r[i].estimated);
        free(rs.r);
        weft_executor_destroy(ex);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* weft_metrics_enable(ex, true) right after a run's future said it ended (no
 * run in flight) resets exactly: a batch that run left open, closed by its
 * idle worker after the reset, used to add its tasks to the new histogram
 * (and their time to the new busy time), so the histogram held more tasks
 * than were counted. */
TEST(a_metrics_reset_right_after_a_run_leaves_none_of_its_tasks_in_the_histogram) {
    weft_status err;
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex =
            weft_executor_create(&(weft_executor_config){ .workers = workers, .metrics = true }, &err);
        ASSERT_NOT_NULL(ex);
        force_batching(ex);
        atomic_int count = 0;
        /* 37 tasks: a full batch of 20, then 17 left in an open one. */
        weft_taskflow *tf = make_chains(37, 1, &count, false);
        for (int k = 0; k < 200; k++) {
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_OK(weft_metrics_enable(ex, true));
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_OK(weft_executor_wait_all(ex));
            weft_metrics m;
            ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
            ASSERT_EQ(m.total.tasks, 37);
            ASSERT_EQ(hist_total(&m), 37);
        }
        weft_executor_destroy(ex);
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
}

static int spin_1ms(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < MS) {
    }
    return 0;
}

TEST(long_tasks_after_short_ones_are_timed_exactly) {
    weft_executor *ex = make_profiled(1, 0);
    atomic_int count = 0;
    weft_taskflow *tf = make_taskflow("short-then-long");
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < 500; i++) { /* indices 0..499 short, then NLONG long */
        weft_task t = must_emplace(tf, bump, &count);
        if (!weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    enum { NLONG = WEFT__BATCH + 20 }; /* more than a batch holds */
    for (int i = 0; i < NLONG; i++) {
        weft_task t = must_emplace(tf, spin_1ms, NULL);
        ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    ASSERT_OK(weft_run_and_wait(ex, tf));
    recs rs = spans_of(ex);
    ASSERT_EQ(rs.n, 500 + NLONG);
    check_tiling(&rs);
    size_t exact_long = 0;
    for (size_t i = 0; i < rs.n; i++) {
        const rec *r = &rs.r[i];
        if (r->index < 500 || r->estimated) continue;
        exact_long++;
        double ns = weft__ticks_ns(ex->obs_state, r->end - r->begin);
        if (ns < 0.9e6) TEST_FAIL_("task %u spun 1 ms but its span says %.0f ns", r->index, ns);
    }
    /* The first long ones may fall in the batch open when they came (it shares
     * its time out evenly); once it closes, each long one ends a long stretch
     * and reads the clock itself. */
    if (exact_long < NLONG - (WEFT__BATCH - 1))
        TEST_FAIL_("only %zu of the %d long tasks were timed exactly", exact_long, (int)NLONG);
    free(rs.r);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

struct waiter {
    weft_executor *ex;
    weft_taskflow *inner;
};

static int run_inner(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct waiter *w = arg;
    return weft_run_and_wait(w->ex, w->inner) == WEFT_OK ? 0 : -1;
}

TEST(a_task_that_waits_holds_its_nested_tasks_inside_its_span) {
    weft_executor *ex = make_profiled(1, 0);
    force_batching(ex);
    atomic_int count = 0;
    weft_taskflow *inner = make_chains(300, 1, &count, false);
    struct waiter wt = { ex, inner };
    weft_taskflow *outer = make_taskflow("outer");
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < 601; i++) { /* short tasks, and the waiter at index 300 */
        weft_task t = must_emplace(outer, i == 300 ? run_inner : bump, i == 300 ? (void *)&wt : (void *)&count);
        if (!weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    ASSERT_OK(weft_run_and_wait(ex, outer));
    ASSERT_EQ(atomic_load(&count), 900);
    recs rs = spans_of(ex);
    ASSERT_EQ(rs.n, 901);
    check_tiling(&rs);
    /* The waiter's run id is the outer run's; the nested run has its own. */
    const rec *waiter = NULL;
    uint32_t outer_run = 0;
    for (size_t i = 0; i < rs.n; i++)
        if (rs.r[i].index == 300 && (!waiter || rs.r[i].end - rs.r[i].begin > waiter->end - waiter->begin))
            waiter = &rs.r[i];
    ASSERT_NOT_NULL(waiter);
    outer_run = waiter->run;
    size_t inside = 0, nested = 0;
    for (size_t i = 0; i < rs.n; i++) {
        const rec *r = &rs.r[i];
        if (r->run == outer_run) continue;
        nested++;
        inside += r->begin >= waiter->begin && r->end <= waiter->end;
    }
    ASSERT_EQ(nested, 300);
    ASSERT_EQ(inside, 300);
    free(rs.r);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(outer));
    ASSERT_OK(weft_taskflow_destroy(inner));
}

TEST(restarting_the_profiler_over_open_batches_keeps_only_the_new_spans) {
    weft_executor *ex = make_profiled(2, 0);
    force_batching(ex);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(3000, 2, &count, false);
    for (int k = 0; k < 50; k++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        /* At once: a worker may still hold an open batch of the run. */
        ASSERT_OK(weft_profiler_start(ex));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        recs rs = spans_of(ex);
        ASSERT_EQ(rs.n, 3000);
        ASSERT_EQ(duplicates(&rs), 0);
        check_tiling(&rs);
        free(rs.r);
        uint64_t spans, dropped;
        ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
        ASSERT_EQ(spans, 3000);
        ASSERT_EQ(dropped, 0);
    }
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(the_span_limit_counts_batched_spans_one_by_one) {
    weft_executor *ex = make_profiled(1, 1000);
    force_batching(ex);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(5000, 1, &count, false);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    uint64_t spans, dropped;
    ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
    ASSERT_EQ(spans + dropped, 5000);
    ASSERT_LE(spans, 1000);
    ASSERT_GE(spans, 990);
    recs rs = spans_of(ex);
    ASSERT_EQ(rs.n, spans);
    free(rs.r);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* Checks, per span, that its label is "t<index>" (the names make_chains gives). */
struct label_check {
    const struct weft__obs *o;
    size_t spans, wrong;
};

static bool check_label(const weft__span *s, unsigned w, void *arg) {
    struct label_check *c = arg;
    if (s->kind != WEFT__SPAN_TASK) return true;
    char buf[24], want[24];
    snprintf(want, sizeof want, "t%u", s->index);
    c->spans++;
    c->wrong += strcmp(weft__span_label(c->o, w, s, buf, sizeof buf), want) != 0;
    return true;
}

static int fail_5(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 5;
}

TEST(batched_spans_keep_task_names_and_failures) {
    weft_executor *ex = make_profiled(1, 0);
    force_batching(ex);
    atomic_int count = 0;
    weft_taskflow *named = make_chains(300, 1, &count, true);
    ASSERT_OK(weft_run_and_wait(ex, named));
    struct label_check c = { ex->obs_state, 0, 0 };
    weft__spans_for_each(ex->obs_state, check_label, &c);
    ASSERT_EQ(c.spans, 300);
    ASSERT_EQ(c.wrong, 0);
    /* An unnamed chain (its batches store bare indices) whose last task fails. */
    ASSERT_OK(weft_profiler_start(ex));
    weft_taskflow *tf = make_taskflow("fails-last");
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < 300; i++) {
        weft_task t = must_emplace(tf, i == 299 ? fail_5 : bump, &count);
        if (!weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ETASK);
    recs rs = spans_of(ex);
    ASSERT_EQ(rs.n, 300);
    size_t failed = 0, estimated = 0;
    for (size_t i = 0; i < rs.n; i++) {
        if (rs.r[i].failed) {
            failed++;
            ASSERT_EQ(rs.r[i].index, 299);
        }
        estimated += rs.r[i].estimated;
    }
    ASSERT_EQ(failed, 1);
    ASSERT_GT(estimated, 250);
    free(rs.r);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(named));
    ASSERT_OK(weft_taskflow_destroy(tf));
}
