/* A GPU task's recording (its fn, run on a worker before the outcome is known)
 * in the profile as well as the metrics: busy_ns holds it, the folded stacks
 * weigh it (under the task, "GPU recording"), the trace and the timeline show
 * it, and the task still counts once (spans == tasks).  Session 41, h41-10. */
#define _POSIX_C_SOURCE 200809L /* nanosleep, open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_test.h"

#define MS 1000000ull

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The kernel sleeps 5 ms: the task parks and completes on the watch. */
static int sleep_5ms(const weft_gpu_range *r, void *const *a) {
    (void)r, (void)a;
    struct timespec ts = {0, 5 * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 0;
}

struct rec {
    weft_gpu_kernel *k;
    int fail; /* the recording fails (no launch): the other path of gpu_node_run */
};

static int record_20ms(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    (void)ctx;
    const struct rec *r = arg;
    for (uint64_t until = now_ns() + 20 * MS; now_ns() < until;) {
    }
    if (r->fail) return 7;
    return weft_gpu_launch(s, r->k, &(weft_gpu_range){.global = {1}}, NULL, 0);
}

static int plain(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}

static char *read_out(weft_status (*write)(const weft_executor *, FILE *), const weft_executor *ex) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    if (write(ex, f) != WEFT_OK) TEST_FAIL_("writing the profile failed");
    fclose(f);
    return buf;
}

static weft_status write_folded(const weft_executor *ex, FILE *f) { return weft_profiler_write_folded(ex, NULL, f); }

TEST(a_gpu_tasks_recording_is_busy_time_and_a_span_under_the_task_in_the_profile) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "s", .host = sleep_5ms}, &st);
    ASSERT_OK(st);
    for (int fail = 0; fail <= 1; fail++)
        for (unsigned workers = 1; workers <= 2; workers++) {
            weft_executor *ex =
                weft_executor_create(&(weft_executor_config){.workers = workers, .profile = true}, &st);
            ASSERT_OK(st);
            weft_taskflow *tf = weft_taskflow_create("rec", &st);
            struct rec r = {k, fail};
            weft_task a = weft_emplace(tf, plain, NULL);
            weft_task g = weft_emplace_gpu(tf, d, record_20ms, &r);
            weft_task b = weft_emplace(tf, plain, NULL);
            ASSERT_FALSE(weft_task_is_null(g));
            ASSERT_OK(weft_task_set_name(g, "launcher"));
            ASSERT_OK(weft_precede(a, g));
            ASSERT_OK(weft_precede(g, b));
            weft_status want = fail ? WEFT_ETASK : WEFT_OK;
            ASSERT_EQ(weft_run_and_wait(ex, tf), want);
            ASSERT_OK(weft_executor_wait_all(ex));
            weft_metrics m;
            ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
            /* The GPU task counts once, at its outcome; b is skipped on failure. */
            ASSERT_EQ(m.total.tasks, fail ? 2 : 3);
            if (m.total.busy_ns < 19 * MS)
                TEST_FAIL_("fail %d, %u workers: busy_ns %llu misses the 20 ms recording", fail, workers,
                           (unsigned long long)m.total.busy_ns);
            uint64_t spans = 0, dropped = 0;
            ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
            ASSERT_EQ(spans, m.total.tasks); /* the recording is no run */
            ASSERT_EQ(dropped, 0);
            /* The profile: the recording is busy time, the task one run. */
            weft_profile *p = NULL;
            ASSERT_OK(weft_profile_get(ex, &p));
            ASSERT_EQ(p->spans, spans);
            uint64_t pbusy = 0, ptasks = 0;
            for (unsigned i = 0; i < p->workers; i++)
                pbusy += p->per_worker[i].busy_ns, ptasks += p->per_worker[i].tasks;
            ASSERT_EQ(ptasks, m.total.tasks);
            if (pbusy < 19 * MS) TEST_FAIL_("profile busy %llu ns misses the recording", (unsigned long long)pbusy);
            for (size_t i = 0; i < p->ntasks; i++)
                if (p->tasks[i].id == (const void *)tf && p->tasks[i].index == weft_task_index(g))
                    ASSERT_EQ(p->tasks[i].count, 1);
            weft_profile_free(p);
            /* Folded: weights add up to busy_ns, the recording's line under its task. */
            char *folded = read_out(write_folded, ex);
            ASSERT_NOT_NULL(folded);
            uint64_t weight = 0, lines = 0, rec = 0;
            for (char *line = folded; line && *line;) {
                char *nl = strchr(line, '\n');
                char *sp = nl ? nl : line + strlen(line);
                while (sp > line && sp[-1] != ' ') sp--;
                uint64_t w = strtoull(sp, NULL, 10);
                weight += w;
                lines++;
                if (strstr(line, ";launcher;GPU recording ") && strstr(line, ";launcher;GPU recording ") < sp) rec += w;
                line = nl ? nl + 1 : NULL;
            }
            uint64_t slack = 1000 * lines + 1000;
            if (weight + slack < m.total.busy_ns || weight > m.total.busy_ns + slack)
                TEST_FAIL_("fail %d, %u workers: folded weights %llu ns, busy %llu ns:\n%s", fail, workers,
                           (unsigned long long)weight, (unsigned long long)m.total.busy_ns, folded);
            if (rec < 19 * MS)
                TEST_FAIL_("fail %d, %u workers: no 'launcher;GPU recording' line of 20 ms:\n%s", fail, workers,
                           folded);
            free(folded);
            /* The trace and the timeline show it, named after the task. */
            char *json = read_out(weft_profiler_write_json, ex);
            ASSERT_NOT_NULL(json);
            if (!strstr(json, "{\"name\":\"launcher\",\"cat\":\"gpu recording\""))
                TEST_FAIL_("no recording span in the trace");
            free(json);
            char *svg = read_out(weft_profiler_write_timeline_svg, ex);
            ASSERT_NOT_NULL(svg);
            if (!strstr(svg, "launcher (gpu recording)")) TEST_FAIL_("no recording in the timeline");
            free(svg);
            weft_taskflow_destroy(tf);
            weft_executor_destroy(ex);
        }
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(d);
}

/* A recording that waits for a taskflow (weft_run_and_wait from fn: its worker
 * runs the inner tasks meanwhile): each nanosecond is counted once, the inner
 * tasks are stacked on the recording in the folded output, and the weights
 * still add up to busy_ns. */
static int spin_2ms(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    for (uint64_t until = now_ns() + 2 * MS; now_ns() < until;) {
    }
    return 0;
}

struct waits {
    weft_taskflow *inner;
    weft_gpu_kernel *k;
};

static int record_waiting_for_a_taskflow(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    const struct waits *w = arg;
    weft_status st = weft_run_and_wait(weft_ctx_executor(ctx), w->inner);
    if (st != WEFT_OK) return 1;
    return weft_gpu_launch(s, w->k, &(weft_gpu_range){.global = {1}}, NULL, 0);
}

TEST(a_gpu_recording_that_runs_a_taskflow_counts_each_nanosecond_once) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "s", .host = sleep_5ms}, &st);
    ASSERT_OK(st);
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = workers, .profile = true}, &st);
        ASSERT_OK(st);
        weft_taskflow *inner = weft_taskflow_create("inner", &st);
        for (int i = 0; i < 4; i++) ASSERT_FALSE(weft_task_is_null(weft_emplace(inner, spin_2ms, NULL)));
        weft_taskflow *tf = weft_taskflow_create("outer", &st);
        struct waits w = {inner, k};
        weft_task g = weft_emplace_gpu(tf, d, record_waiting_for_a_taskflow, &w);
        ASSERT_OK(weft_task_set_name(g, "launcher"));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_executor_wait_all(ex));
        weft_metrics m;
        ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
        ASSERT_EQ(m.total.tasks, 5);
        if (m.total.busy_ns < 7 * MS || m.total.busy_ns > m.wall_ns * workers + MS)
            TEST_FAIL_("%u workers: busy_ns %llu for 8 ms of work in a wall of %llu", workers,
                       (unsigned long long)m.total.busy_ns, (unsigned long long)m.wall_ns);
        uint64_t spans = 0;
        ASSERT_OK(weft_profiler_count(ex, &spans, NULL));
        ASSERT_EQ(spans, 5);
        char *folded = read_out(write_folded, ex);
        ASSERT_NOT_NULL(folded);
        uint64_t weight = 0, lines = 0;
        for (char *line = folded; line && *line;) {
            char *nl = strchr(line, '\n');
            char *sp = nl ? nl : line + strlen(line);
            while (sp > line && sp[-1] != ' ') sp--;
            weight += strtoull(sp, NULL, 10);
            lines++;
            line = nl ? nl + 1 : NULL;
        }
        uint64_t slack = 1000 * lines + 1000;
        if (weight + slack < m.total.busy_ns || weight > m.total.busy_ns + slack)
            TEST_FAIL_("%u workers: folded weights %llu ns, busy %llu ns:\n%s", workers, (unsigned long long)weight,
                       (unsigned long long)m.total.busy_ns, folded);
        if (workers == 1 && !strstr(folded, ";launcher;GPU recording;"))
            TEST_FAIL_("1 worker: the inner tasks are not stacked on the recording:\n%s", folded);
        free(folded);
        weft_taskflow_destroy(tf);
        weft_taskflow_destroy(inner);
        weft_executor_destroy(ex);
    }
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(d);
}
