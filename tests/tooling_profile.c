/* Profile data as structs (weft_profile_get) and the standalone SVG timeline
 * (weft_profiler_write_timeline_svg). */
#define _GNU_SOURCE
#include "obs_util.h"

#include <time.h>

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spins for *arg microseconds (read at the call: a run may change it). */
static int spin_us(weft_ctx *ctx, void *arg) {
    (void)ctx;
    uint64_t end = mono_ns() + 1000u * *(const uint64_t *)arg;
    while (mono_ns() < end) {}
    return 0;
}

static int fail_task(weft_ctx *ctx, void *arg) { (void)ctx; (void)arg; return 1; }

static weft_executor *exact_profiled(unsigned workers) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){ .workers = workers, .profile = true, .profile_exact = true }, &err);
    if (!ex) TEST_FAIL_("weft_executor_create: %s", weft_errname(err));
    return ex;
}

static const weft_task_stats *find_task(const weft_profile *p, const char *name) {
    for (size_t i = 0; i < p->ntasks; i++)
        if (strcmp(p->tasks[i].name, name) == 0) return &p->tasks[i];
    return NULL;
}

/* A run of spin_timed: spins for `us`, and records how long it spun by its
 * own clock (the profiler's span encloses that). */
struct timed {
    uint64_t us, took_ns;
};

static int spin_timed(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct timed *t = arg;
    uint64_t t0 = mono_ns(), end = t0 + 1000u * t->us, now;
    while ((now = mono_ns()) < end) {}
    t->took_ns = now - t0;
    return 0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The span's duration is the task's own measure plus the hooks around it:
 * a few microseconds, 1 ms allowed for a preemption there; 1% below for the
 * profiler's clock (the TSC, calibrated against the monotonic clock). */
#define NEAR(span_ns, own_ns) ((span_ns) >= (own_ns) - (own_ns) / 100 && (span_ns) < (own_ns) + 1000000u)

TEST(profile_percentiles_are_nearest_rank_of_the_durations) {
    weft_executor *ex = exact_profiled(1);
    weft_taskflow *tf = make_taskflow("ranks");
    struct timed run = { 0 };
    ASSERT_OK(weft_task_set_name(must_emplace(tf, spin_timed, &run), "varying"));
    /* Ten runs of 1, 2, ..., 10 ms, in a shuffled order. */
    const int order[10] = { 7, 2, 10, 5, 1, 9, 4, 8, 3, 6 };
    uint64_t took[10], sum = 0;
    for (int r = 0; r < 10; r++) {
        run.us = 1000u * (uint64_t)order[r];
        ASSERT_OK(weft_run_and_wait(ex, tf));
        sum += took[r] = run.took_ns;
    }
    qsort(took, 10, sizeof took[0], cmp_u64);
    weft_profile *p = NULL;
    ASSERT_OK(weft_profile_get(ex, &p));
    ASSERT_EQ(p->ntasks, 1u);
    const weft_task_stats *t = &p->tasks[0];
    ASSERT_STREQ(t->name, "varying");
    ASSERT_EQ(t->kind, WEFT_PROFILE_TASK);
    ASSERT_TRUE(t->id == (const void *)tf);
    ASSERT_EQ(t->index, 0u);
    ASSERT_EQ(t->count, 10u);
    ASSERT_EQ(t->estimated, 0u);
    ASSERT_TRUE(NEAR(t->min_ns, took[0]));
    ASSERT_TRUE(NEAR(t->p50_ns, took[4])); /* nearest rank: the 5th of 10 */
    ASSERT_TRUE(NEAR(t->p90_ns, took[8])); /* the 9th */
    ASSERT_TRUE(NEAR(t->p99_ns, took[9]) && t->p99_ns == t->max_ns); /* the 10th */
    ASSERT_TRUE(t->total_ns >= sum - sum / 100 && t->total_ns < sum + 10000000u);
    ASSERT_TRUE(t->mean_ns > (double)t->total_ns / 10 - 1 && t->mean_ns < (double)t->total_ns / 10 + 1);
    weft_profile_free(p);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

static int quick(weft_ctx *ctx, void *arg) { (void)ctx; (void)arg; return 0; }

TEST(profile_groups_tasks_and_work_and_sums_per_worker) {
    weft_executor *ex = exact_profiled(2);
    weft_taskflow *tf = make_taskflow("mix");
    uint64_t a_us = 200, b_us = 50;
    ASSERT_OK(weft_task_set_name(must_emplace(tf, spin_us, &a_us), "a"));
    ASSERT_OK(weft_task_set_name(must_emplace(tf, spin_us, &b_us), "b"));
    weft_taskflow *bad = make_taskflow("bad");
    must_emplace(bad, fail_task, NULL); /* unnamed: "#0", fails */
    for (int r = 0; r < 6; r++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_STATUS(weft_run_and_wait(ex, bad), WEFT_ETASK);
    }
    for (int i = 0; i < 4; i++) {
        weft_future *f = NULL;
        ASSERT_OK(weft_async(ex, quick, NULL, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_profile *p = NULL;
    ASSERT_OK(weft_profile_get(ex, &p));
    ASSERT_EQ(p->workers, 2u);
    const weft_task_stats *a = find_task(p, "a"), *b = find_task(p, "b"), *f = find_task(p, "#0");
    const weft_task_stats *as = find_task(p, "async");
    ASSERT_TRUE(a && b && f && as);
    ASSERT_EQ(a->count, 6u);
    ASSERT_EQ(b->count, 6u);
    ASSERT_EQ(f->count, 6u);
    ASSERT_EQ(f->failed, 6u);
    ASSERT_EQ(a->failed, 0u);
    ASSERT_EQ(as->count, 4u);
    ASSERT_EQ(as->kind, WEFT_PROFILE_ASYNC);
    ASSERT_TRUE(as->id == (const void *)(uintptr_t)quick);
    ASSERT_TRUE(a->min_ns >= 198000u && b->min_ns >= 49500u); /* 1%: the clocks differ */
    /* Largest total first.  Whether "a" (6 x 200 us) leads is the machine's
     * business: spans are wall time, and under TSan with other tests on both
     * cores a preempted 50 us task once outgrew it. */
    for (size_t i = 0; i + 1 < p->ntasks; i++) ASSERT_TRUE(p->tasks[i].total_ns >= p->tasks[i + 1].total_ns);
    /* Per worker and in total, the counts are the metrics' counts. */
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    uint64_t sum = 0, count = 0;
    for (unsigned w = 0; w < 2; w++) sum += p->per_worker[w].tasks;
    for (size_t i = 0; i < p->ntasks; i++) count += p->tasks[i].count;
    ASSERT_EQ(sum, m.total.tasks);
    ASSERT_EQ(p->total.tasks, m.total.tasks);
    ASSERT_EQ(p->spans, count);
    ASSERT_EQ(count, 6u * 3 + 4);
    ASSERT_TRUE(p->total.busy_ns >= 6u * 250000u);
    ASSERT_TRUE(p->wall_ns >= p->per_worker[0].busy_ns && p->wall_ns >= p->per_worker[1].busy_ns);
    ASSERT_TRUE(p->total.utilisation > 0 && p->total.utilisation <= 1.0);
    ASSERT_TRUE(f->id == (const void *)bad);
    weft_profile_free(p);
    weft_taskflow_destroy(tf);
    weft_taskflow_destroy(bad);
    weft_executor_destroy(ex);
}

TEST(profile_get_checks_its_arguments_and_is_empty_without_a_profile) {
    weft_executor *ex = make_executor(1);
    weft_profile *p = (weft_profile *)1;
    ASSERT_STATUS(weft_profile_get(NULL, &p), WEFT_EINVAL);
    ASSERT_NULL(p);
    ASSERT_STATUS(weft_profile_get(ex, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_profile_get(ex, &p));
    ASSERT_EQ(p->ntasks, 0u);
    ASSERT_EQ(p->workers, 1u);
    ASSERT_EQ(p->total.tasks, 0u);
    ASSERT_EQ(p->wall_ns, 0u);
    weft_profile_free(p);
    weft_profile_free(NULL);
    weft_executor_destroy(ex);
}

TEST(timeline_svg_is_a_standalone_drawing_of_every_span) {
    weft_executor *ex = exact_profiled(2);
    atomic_int counter = 0;
    weft_taskflow *tf = make_chains(40, 4, &counter, true);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    char path[64];
    temp_path(path, sizeof path, ".svg");
    FILE *f = fopen(path, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_STATUS(weft_profiler_write_timeline_svg(NULL, f), WEFT_EINVAL);
    ASSERT_STATUS(weft_profiler_write_timeline_svg(ex, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_profiler_write_timeline_svg(ex, f));
    fclose(f);
    char *s = read_file(path);
    ASSERT_EQ(strncmp(s, "<svg ", 5), 0);
    ASSERT_NOT_NULL(strstr(s, "xmlns=\"http://www.w3.org/2000/svg\""));
    ASSERT_NOT_NULL(strstr(s, ">worker 1</text>"));
    ASSERT_EQ(strcmp(s + strlen(s) - 7, "</svg>\n"), 0);
    ASSERT_NULL(strstr(s, "<h2>")); /* no HTML around it */
    int titles = 0;
    for (const char *q = s; (q = strstr(q, "<title>t")); q++) titles++;
    ASSERT_EQ(titles, 40); /* a rectangle per task, named */
    free(s);
    if (have_program("xmllint")) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "xmllint --noout %s", path);
        ASSERT_EQ(shell(cmd), 0); /* well-formed XML */
    }
    unlink(path);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}
