/* GPU work as tasks: GPU tasks ordered with CPU tasks by edges, checked
 * against a serial oracle; a waiting GPU task keeps its worker running other
 * tasks; device errors fail the run; GPU work from async tasks. */
#define _POSIX_C_SOURCE 200809L /* nanosleep, open_memstream */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_test.h"

/* ---- a GPU task never blocks its worker ---------------------------------------- */

enum { HELPERS = 8 };
static _Atomic int helpers_done;

static int helper(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&helpers_done, 1);
    return 0;
}

/* The kernel finishes only once every helper task has run (or fails after
 * 10 s): with one worker, that worker must run them while the GPU task waits. */
static int wait_for_helpers(const weft_gpu_range *r, void *const *a) {
    for (long spins = 0; atomic_load(&helpers_done) < HELPERS; spins++) {
        if (spins > 2000000000L) return 1;
    }
    *(int *)a[0] = atomic_load(&helpers_done);
    return 0;
}

struct waiting {
    weft_gpu_kernel *k;
    weft_gpu_buffer *b;
    int seen;
};

static int record_waiting(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    struct waiting *w = arg;
    /* The helpers are queued on this worker after the GPU task has started,
     * so they can only run inside its wait. */
    for (int i = 0; i < HELPERS; i++)
        if (weft_silent_async(weft_ctx_executor(ctx), helper, NULL)) return 1;
    weft_gpu_arg a = WEFT_GPU_ARG_BUFFER(w->b);
    int st = weft_gpu_launch(s, w->k, &(weft_gpu_range){.global = {1}}, &a, 1);
    return st ? st : weft_gpu_copy_to_host_async(s, w->b, 0, &w->seen, 1);
}

static int after_gpu(weft_ctx *ctx, void *arg) {
    struct waiting *w = arg;
    return w->seen == HELPERS ? 0 : 2; /* the successor sees the copy's result */
}

TEST(gpu_task_waits_without_blocking_its_worker) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    ASSERT_OK(st);
    struct waiting w = {0};
    w.k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "wait", .host = wait_for_helpers}, &st);
    w.b = weft_gpu_buffer_create(d, sizeof(int), 1, 0, &st);
    ASSERT_OK(st);
    weft_taskflow *tf = weft_taskflow_create("gpu-wait", &st);
    weft_task g = weft_emplace_gpu(tf, d, record_waiting, &w);
    weft_task after = weft_emplace(tf, after_gpu, &w);
    ASSERT_OK(weft_precede(g, after));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(w.seen, HELPERS);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    weft_gpu_buffer_destroy(w.b);
    weft_gpu_kernel_destroy(w.k);
    weft_gpu_close(d);
}

/* ---- a CPU + GPU graph against a serial oracle ------------------------------------- */

enum { CHUNKS = 8, CHUNK = 4096 };

struct chunk {
    weft_gpu_kernel *scale;
    weft_gpu_buffer *buf;
    float host[CHUNK];
    double sum;
    unsigned index;
};

static int produce(weft_ctx *ctx, void *arg) {
    struct chunk *c = arg;
    for (unsigned i = 0; i < CHUNK; i++) c->host[i] = (float)((c->index * 31 + i) % 97);
    return 0;
}

static int up_scale_down(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    struct chunk *c = arg;
    unsigned n = CHUNK;
    float a = 3.0f;
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(c->buf), WEFT_GPU_ARG_VALUE(a), WEFT_GPU_ARG_VALUE(n)};
    int st = weft_gpu_copy_to_device_async(s, c->buf, 0, c->host, CHUNK);
    if (!st) st = weft_gpu_launch(s, c->scale, &(weft_gpu_range){.global = {CHUNK}}, args, 3);
    if (!st) st = weft_gpu_copy_to_host_async(s, c->buf, 0, c->host, CHUNK);
    return st;
}

static int post(weft_ctx *ctx, void *arg) {
    struct chunk *c = arg;
    double s = 0;
    for (unsigned i = 0; i < CHUNK; i++) s += c->host[i];
    c->sum = s;
    return 0;
}

static double oracle(void) {
    double total = 0;
    for (unsigned k = 0; k < CHUNKS; k++)
        for (unsigned i = 0; i < CHUNK; i++) total += 3.0f * (float)((k * 31 + i) % 97);
    return total;
}

static void check_mixed_graph(weft_gpu_kind kind) {
    weft_gpu_device *d = gpu_test_open(kind);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    weft_gpu_kernel *scale = weft_gpu_kernel_create(d, &gpu_test_scale, &st);
    ASSERT_OK(st);
    static struct chunk chunks[CHUNKS];
    weft_taskflow *tf = weft_taskflow_create("mixed", &st);
    for (unsigned k = 0; k < CHUNKS; k++) {
        struct chunk *c = &chunks[k];
        c->index = k;
        c->scale = scale;
        c->buf = weft_gpu_buffer_create(d, sizeof(float), CHUNK, 0, &st);
        ASSERT_OK(st);
        weft_task t[3] = {weft_emplace(tf, produce, c), weft_emplace_gpu(tf, d, up_scale_down, c),
                          weft_emplace(tf, post, c)};
        ASSERT_FALSE(weft_task_is_null(t[1]));
        ASSERT_OK(weft_linearize(t, 3));
    }
    for (int round = 0; round < 3; round++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        double total = 0;
        for (unsigned k = 0; k < CHUNKS; k++) total += chunks[k].sum;
        ASSERT_TRUE(total == oracle());
    }
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    for (unsigned k = 0; k < CHUNKS; k++) weft_gpu_buffer_destroy(chunks[k].buf);
    weft_gpu_kernel_destroy(scale);
    weft_gpu_close(d);
}
TEST(emu_cpu_gpu_graph_matches_serial_oracle) { check_mixed_graph(WEFT_GPU_EMULATOR); }
TEST(opencl_cpu_gpu_graph_matches_serial_oracle) { check_mixed_graph(WEFT_GPU_OPENCL); }
TEST(cuda_cpu_gpu_graph_matches_serial_oracle) { check_mixed_graph(WEFT_GPU_CUDA); }

/* ---- device errors fail the run ----------------------------------------------------- */

static int fails_host(const weft_gpu_range *r, void *const *a) { return 5; }

static int launch_failing(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    return weft_gpu_launch(s, arg, &(weft_gpu_range){.global = {1}}, NULL, 0);
}

static int record_nothing_and_fail(weft_ctx *ctx, weft_gpu_stream *s, void *arg) { return 33; }

static _Atomic int successor_ran;
static int mark(weft_ctx *ctx, void *arg) {
    atomic_store(&successor_ran, 1);
    return 0;
}

static void run_failing(weft_gpu_device *d, weft_gpu_task_fn fn, void *arg, int want) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    weft_taskflow *tf = weft_taskflow_create("fails", &st);
    weft_task g = weft_emplace_gpu(tf, d, fn, arg);
    ASSERT_OK(weft_precede(g, weft_emplace(tf, mark, NULL)));
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, want);
    ASSERT_EQ(atomic_load(&successor_ran), 0);
    weft_future_destroy(f);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

TEST(failing_kernel_fails_the_run_like_a_failing_task) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "f", .host = fails_host}, &st);
    ASSERT_OK(st);
    run_failing(d, launch_failing, k, WEFT_EDEVICE);
    run_failing(d, record_nothing_and_fail, NULL, 33);
    /* The pool's streams are usable again. */
    ASSERT_OK(weft_gpu_synchronize(d));
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(d);
}

/* Two tasks on one stream (a pool of one): the outer one queues a failing
 * kernel and, before waiting, a nested weft_gpu_call queues a good kernel
 * behind it on the same stream and waits first.  The failure is the outer
 * task's: the nested call, whose wait covers the failed kernel, reports OK. */
struct shared_call {
    weft_gpu_kernel *bad, *good;
    int inner;
};

static int launch_good(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    struct shared_call *c = arg;
    return weft_gpu_launch(s, c->good, &(weft_gpu_range){.global = {1}}, NULL, 0);
}

static int launch_bad_then_call(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    struct shared_call *c = arg;
    int st = weft_gpu_launch(s, c->bad, &(weft_gpu_range){.global = {1}}, NULL, 0);
    c->inner = weft_gpu_call(weft_gpu_stream_device(s), launch_good, c);
    return st;
}

static int good_host(const weft_gpu_range *r, void *const *a) { return 0; }

TEST(emu_kernel_failure_goes_to_the_task_that_launched_it) {
    weft_status st;
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 1}, &st);
    ASSERT_OK(st);
    struct shared_call c = {
        .bad = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "bad", .host = fails_host}, &st),
        .good = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "good", .host = good_host}, &st)};
    ASSERT_OK(st);
    ASSERT_STATUS(weft_gpu_call(d, launch_bad_then_call, &c), WEFT_EDEVICE);
    ASSERT_OK(c.inner);
    /* The same as tasks of a graph on an executor: the outer GPU task fails
     * the run, named as the failed task. */
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    weft_taskflow *tf = weft_taskflow_create("shared", &st);
    weft_task g = weft_emplace_gpu(tf, d, launch_bad_then_call, &c);
    ASSERT_OK(weft_task_set_name(g, "outer"));
    c.inner = -1;
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, WEFT_EDEVICE);
    ASSERT_STREQ(info.failed_task, "outer");
    ASSERT_OK(c.inner);
    /* The failure was the task's to report: no synchronize reports it again. */
    ASSERT_OK(weft_gpu_synchronize(d));
    weft_future_destroy(f);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    weft_gpu_kernel_destroy(c.good);
    weft_gpu_kernel_destroy(c.bad);
    weft_gpu_close(d);
}

/* A GPU task whose kernel fails ends as a failed task for everything that
 * watches: the metrics count it failed, the observer's task_end says FAILED
 * with the code, and the profile marks its span failed.  The kernel takes a
 * few milliseconds, so that the task parks and completes later. */
static _Atomic int end_outcome = -1, end_code = 1;

static void on_task_end(void *user, const weft_task_event *ev) {
    if (ev->name && strcmp(ev->name, "gpu") == 0) {
        atomic_store(&end_code, ev->code);
        atomic_store(&end_outcome, (int)ev->outcome);
    }
}

static int slow_fails_host(const weft_gpu_range *r, void *const *a) {
    struct timespec ts = {0, 5 * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 5;
}

TEST(emu_failed_gpu_task_is_failed_in_metrics_observer_and_profile) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "f", .host = slow_fails_host}, &st);
    ASSERT_OK(st);
    weft_observer obs = {.task_end = on_task_end};
    weft_executor *ex =
        weft_executor_create(&(weft_executor_config){.workers = 2, .metrics = true, .observer = &obs}, &st);
    ASSERT_OK(st);
    ASSERT_OK(weft_profiler_start(ex));
    weft_taskflow *tf = weft_taskflow_create("observed", &st);
    weft_task g = weft_emplace_gpu(tf, d, launch_failing, k);
    ASSERT_OK(weft_task_set_name(g, "gpu"));
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ETASK);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_EQ(m.total.tasks, 1);
    ASSERT_EQ(m.total.failed, 1);
    ASSERT_EQ(m.total.succeeded, 0);
    ASSERT_EQ(atomic_load(&end_outcome), (int)WEFT_TASK_FAILED);
    ASSERT_EQ(atomic_load(&end_code), WEFT_EDEVICE);
    char *json = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&json, &len);
    ASSERT_OK(weft_profiler_write_json(ex, out));
    fclose(out);
    ASSERT_TRUE(strstr(json, "\"failed\"") != NULL);
    free(json);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(d);
}

/* A GPU task's recording (its fn, on a worker) is that worker's busy time,
 * though the task's begin and end are observed at its outcome: metrics skipped
 * it, so a task that spent 30 ms preparing its launch showed busy_ns near 0.
 * The kernel sleeps 5 ms, so the task parks and completes on the watch. */
static int slow_ok_host(const weft_gpu_range *r, void *const *a) {
    (void)r, (void)a;
    struct timespec ts = {0, 5 * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 0;
}

static uint64_t mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int prepare_30ms_then_launch(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    (void)ctx;
    uint64_t until = mono_ns() + 30 * 1000 * 1000;
    while (mono_ns() < until) {
    }
    return weft_gpu_launch(s, arg, &(weft_gpu_range){.global = {1}}, NULL, 0);
}

TEST(emu_a_gpu_tasks_recording_counts_in_busy_ns) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "s", .host = slow_ok_host}, &st);
    ASSERT_OK(st);
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = workers, .metrics = true}, &st);
        ASSERT_OK(st);
        weft_taskflow *tf = weft_taskflow_create("recording", &st);
        ASSERT_FALSE(weft_task_is_null(weft_emplace_gpu(tf, d, prepare_30ms_then_launch, k)));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_executor_wait_all(ex));
        weft_metrics m;
        ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
        ASSERT_EQ(m.total.tasks, 1);
        ASSERT_EQ(m.total.succeeded, 1);
        /* 30 ms of recording at least (a descheduled worker only adds). */
        if (m.total.busy_ns < 29 * 1000 * 1000)
            TEST_FAIL_("busy_ns %llu on %u workers: the 30 ms recording is not in it",
                       (unsigned long long)m.total.busy_ns, workers);
        if (m.total.busy_ns > m.wall_ns * workers)
            TEST_FAIL_("busy_ns %llu over wall %llu x %u workers", (unsigned long long)m.total.busy_ns,
                       (unsigned long long)m.wall_ns, workers);
        weft_taskflow_destroy(tf);
        weft_executor_destroy(ex);
    }
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(d);
}

/* ---- GPU work from an async task ------------------------------------------------------ */

struct async_job {
    weft_gpu_device *dev;
    struct chunk c;
};

static int async_body(weft_ctx *ctx, void *arg) {
    struct async_job *j = arg;
    produce(ctx, &j->c);
    int st = weft_gpu_call(j->dev, up_scale_down, &j->c);
    return st ? st : post(ctx, &j->c);
}

TEST(gpu_call_from_async_tasks) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    weft_gpu_kernel *scale = weft_gpu_kernel_create(d, &gpu_test_scale, &st);
    static struct async_job jobs[CHUNKS];
    weft_future *f[CHUNKS];
    for (unsigned k = 0; k < CHUNKS; k++) {
        jobs[k] = (struct async_job){.dev = d, .c = {.scale = scale, .index = k}};
        jobs[k].c.buf = weft_gpu_buffer_create(d, sizeof(float), CHUNK, 0, &st);
        ASSERT_OK(weft_async(ex, async_body, &jobs[k], &f[k]));
    }
    double total = 0;
    for (unsigned k = 0; k < CHUNKS; k++) {
        ASSERT_OK(weft_future_wait(f[k]));
        weft_future_destroy(f[k]);
        total += jobs[k].c.sum;
        weft_gpu_buffer_destroy(jobs[k].c.buf);
    }
    ASSERT_TRUE(total == oracle());
    /* From a thread that is not a worker, weft_gpu_call blocks instead. */
    jobs[0].c.buf = weft_gpu_buffer_create(d, sizeof(float), CHUNK, 0, &st);
    ASSERT_OK(async_body(NULL, &jobs[0]));
    weft_gpu_buffer_destroy(jobs[0].c.buf);
    weft_executor_destroy(ex);
    weft_gpu_kernel_destroy(scale);
    weft_gpu_close(d);
}
