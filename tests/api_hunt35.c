/* A sweep of every public call with a careless user's arguments (each pointer
 * NULL in turn, zero and huge sizes, out-of-range values) against
 * docs/errors.md: the status the header documents, and a thread message set
 * by the failing call itself, naming it, never a stale one of an earlier
 * failure (R1, R3).  Each test below pins a shape the sweep found broken. */
#include "harness.h"

#include <weft.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int work(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}
static int cond(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}
static int mcond(weft_ctx *ctx, void *arg, weft_branches *b) {
    (void)ctx, (void)arg, (void)b;
    return 0;
}
static int subflow(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx, (void)sf, (void)arg;
    return 0;
}
static int gpu_work(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    (void)ctx, (void)s, (void)arg;
    return 0;
}
static int stage(weft_pipeflow *pf, void *arg) {
    (void)arg;
    return weft_pipeflow_stop(pf);
}
static void range(size_t lo, size_t hi, void *arg) { (void)lo, (void)hi, (void)arg; }
static void unary(const void *in, void *out, void *arg) { (void)in, (void)out, (void)arg; }
static void combine(void *acc, const void *x, void *arg) { (void)acc, (void)x, (void)arg; }
static void reduce_range(size_t lo, size_t hi, void *acc, void *arg) { (void)lo, (void)hi, (void)acc, (void)arg; }
static void index_fn(size_t i, void *arg) { (void)i, (void)arg; }
static int cmp(const void *a, const void *b, void *arg) {
    (void)arg;
    return memcmp(a, b, 1);
}

/* A message of another call's failure, so that a call which sets none is
 * seen: the check compares against it. */
static char sentinel[256];
static void set_sentinel(void) {
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_semaphore_create(0, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    snprintf(sentinel, sizeof sentinel, "%s", weft_last_error_message());
}
/* The message is the call's own: set since the sentinel, naming `fn` (and
 * `detail`, if given). */
static bool message_is(const char *fn, const char *detail) {
    const char *m = weft_last_error_message();
    bool ok = strcmp(m, sentinel) != 0 && strstr(m, fn) && (!detail || strstr(m, detail));
    if (!ok) fprintf(stderr, "  want \"%s\"%s%s, got \"%s\"\n", fn, detail ? " ... " : "", detail ? detail : "", m);
    return ok;
}

/* ---- the emplace family with tf NULL ---- */

static weft_taskflow *body;   /* a module's body */
static weft_work *shared;     /* for weft_emplace_work */
static weft_gpu_device *dev;  /* the emulator, for weft_emplace_gpu */
static weft_pipeline *pipe_;  /* for weft_pipeline_emplace */
static weft_for_desc for_d = {.first = 0, .last = 4, .step = 1, .body = range};
static int data[4];
static int result;
static weft_transform_desc transform_d = {.in = data, .in_size = 4, .out = data, .out_size = 4, .n = 4, .f = unary};
static weft_reduce_desc reduce_d = {.in = data, .n = 4, .size = 4, .result = &result, .op = combine};
static weft_scan_desc scan_d = {.in = data, .out = data, .n = 4, .size = 4, .op = combine};
static weft_sort_desc sort_d = {.base = data, .n = 4, .size = 4, .cmp = cmp};

static weft_task e_emplace(weft_taskflow *tf) { return weft_emplace(tf, work, NULL); }
static weft_task e_condition(weft_taskflow *tf) { return weft_emplace_condition(tf, cond, NULL); }
static weft_task e_multi_condition(weft_taskflow *tf) { return weft_emplace_multi_condition(tf, mcond, NULL); }
static weft_task e_subflow(weft_taskflow *tf) { return weft_emplace_subflow(tf, subflow, NULL); }
static weft_task e_module(weft_taskflow *tf) { return weft_emplace_module(tf, body); }
static weft_task e_work(weft_taskflow *tf) { return weft_emplace_work(tf, shared); }
static weft_task e_gpu(weft_taskflow *tf) { return weft_emplace_gpu(tf, dev, gpu_work, NULL); }
static weft_task e_pipeline(weft_taskflow *tf) { return weft_pipeline_emplace(tf, pipe_); }
static weft_task e_for(weft_taskflow *tf) { return weft_emplace_for(tf, &for_d); }
static weft_task e_transform(weft_taskflow *tf) { return weft_emplace_transform(tf, &transform_d); }
static weft_task e_reduce(weft_taskflow *tf) { return weft_emplace_reduce(tf, &reduce_d); }
static weft_task e_scan(weft_taskflow *tf) { return weft_emplace_scan(tf, &scan_d); }
static weft_task e_sort(weft_taskflow *tf) { return weft_emplace_sort(tf, &sort_d); }

static const struct {
    const char *fn;
    weft_task (*call)(weft_taskflow *tf);
} emplaces[] = {
    {"weft_emplace", e_emplace},
    {"weft_emplace_condition", e_condition},
    {"weft_emplace_multi_condition", e_multi_condition},
    {"weft_emplace_subflow", e_subflow},
    {"weft_emplace_module", e_module},
    {"weft_emplace_work", e_work},
    {"weft_emplace_gpu", e_gpu},
    {"weft_pipeline_emplace", e_pipeline},
    {"weft_emplace_for", e_for},
    {"weft_emplace_transform", e_transform},
    {"weft_emplace_reduce", e_reduce},
    {"weft_emplace_scan", e_scan},
    {"weft_emplace_sort", e_sort},
};

TEST(every_emplace_call_given_a_null_taskflow_sets_a_message_naming_itself) {
    weft_status st;
    body = weft_taskflow_create("body", &st);
    ASSERT_NOT_NULL(body);
    shared = weft_work_create(work, NULL, NULL, &st);
    ASSERT_NOT_NULL(shared);
    dev = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .emulator_memory = 1 << 20}, &st);
    ASSERT_NOT_NULL(dev);
    pipe_ = weft_pipeline_create(1, (weft_stage[]){{.fn = stage}}, 1, &st);
    ASSERT_NOT_NULL(pipe_);
    /* With a real taskflow each row's arguments are good: the call succeeds. */
    weft_taskflow *tf = weft_taskflow_create("tf", &st);
    ASSERT_NOT_NULL(tf);
    int bad = 0;
    for (size_t i = 0; i < sizeof emplaces / sizeof emplaces[0]; i++) {
        ASSERT_FALSE(weft_task_is_null(emplaces[i].call(tf)));
        set_sentinel();
        /* The null task, and no taskflow to hold the status: the message is
         * all the caller has (R1, R3). */
        bool ok = weft_task_is_null(emplaces[i].call(NULL)) && message_is(emplaces[i].fn, "tf is NULL");
        if (!ok) fprintf(stderr, "row %zu (%s) failed\n", i, emplaces[i].fn), bad++;
    }
    ASSERT_EQ(bad, 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_pipeline_destroy(pipe_));
    weft_gpu_close(dev);
    weft_work_release(shared);
    ASSERT_OK(weft_taskflow_destroy(body));
}

TEST(a_null_algorithm_descriptor_is_named_by_its_emplace_call_not_weft_emplace) {
    weft_status st;
    weft_taskflow *tf = weft_taskflow_create("tf", &st);
    ASSERT_NOT_NULL(tf);
    static const char *const fns[] = {"weft_emplace_for", "weft_emplace_transform", "weft_emplace_reduce",
                                      "weft_emplace_scan", "weft_emplace_sort"};
    for (int i = 0; i < 5; i++) {
        set_sentinel();
        weft_task t = i == 0   ? weft_emplace_for(tf, NULL)
                      : i == 1 ? weft_emplace_transform(tf, NULL)
                      : i == 2 ? weft_emplace_reduce(tf, NULL)
                      : i == 3 ? weft_emplace_scan(tf, NULL)
                               : weft_emplace_sort(tf, NULL);
        ASSERT_TRUE(weft_task_is_null(t));
        ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EINVAL);
        /* It said "weft_emplace: task function is NULL (use weft_placeholder)". */
        ASSERT_TRUE(message_is(fns[i], "descriptor is NULL"));
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(emplace_gpu_with_a_null_device_or_function_is_the_taskflows_last_error) {
    weft_status st;
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .emulator_memory = 1 << 20}, &st);
    ASSERT_NOT_NULL(d);
    weft_taskflow *tf = weft_taskflow_create("tf", &st);
    ASSERT_NOT_NULL(tf);
    for (int i = 0; i < 2; i++) {
        ASSERT_FALSE(weft_task_is_null(weft_emplace(tf, work, NULL))); /* last_error WEFT_OK */
        set_sentinel();
        weft_task t = i == 0 ? weft_emplace_gpu(tf, NULL, gpu_work, NULL) : weft_emplace_gpu(tf, d, NULL, NULL);
        ASSERT_TRUE(weft_task_is_null(t));
        /* gpu.h: "WEFT_EINVAL for NULL tf/dev/fn ... as weft_emplace" (it stayed WEFT_OK). */
        ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EINVAL);
        ASSERT_TRUE(message_is("weft_emplace_gpu", NULL));
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_gpu_close(d);
}

TEST(a_gpu_open_that_finds_a_device_leaves_the_message_alone) {
    /* AUTO probes CUDA, HIP and OpenCL before the emulator; a probe that
     * fails on the way says why, but the call succeeds, and a call that
     * succeeds sets no message (docs/errors.md, R3). */
    set_sentinel();
    weft_status st;
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_AUTO, .emulator_memory = 1 << 20}, &st);
    if (!d) SKIP("no device (WEFT_GPU=none?)");
    ASSERT_STREQ(weft_last_error_message(), sentinel);
    weft_gpu_close(d);
}

TEST(opening_an_emulator_device_that_does_not_exist_says_so) {
    /* WEFT_ENOENT for "no device at that index" is a failure (docs/errors.md,
     * R3): the driver backends said so, the emulator left the message stale. */
    set_sentinel();
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .index = 5}, &st));
    ASSERT_STATUS(st, WEFT_ENOENT);
    ASSERT_TRUE(message_is("emulator", "no device 5"));
}

/* An allocator that has no memory, for the out-of-memory paths. */
static void *no_alloc(void *ctx, size_t size) {
    (void)ctx, (void)size;
    return NULL;
}

TEST(gpu_host_alloc_out_of_memory_sets_a_message_naming_itself) {
    weft_status st;
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .emulator_memory = 1 << 20}, &st);
    ASSERT_NOT_NULL(d);
    set_sentinel();
    weft_set_allocator(&(weft_allocator){.alloc = no_alloc});
    void *p = weft_gpu_host_alloc(d, 64, &st);
    weft_set_allocator(NULL);
    ASSERT_NULL(p);
    ASSERT_STATUS(st, WEFT_ENOMEM);
    ASSERT_TRUE(message_is("weft_gpu_host_alloc", NULL));
    weft_gpu_close(d);
}

TEST(a_reduction_whose_accumulator_size_wraps_is_refused_not_overrun) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    /* Rounded up to 16 bytes, SIZE_MAX - 8 wraps to 0: the slots the chunks
     * write their accumulators to had no room (weft_parallel_reduce with
     * such a size wrote SIZE_MAX - 8 bytes into them and crashed). */
    size_t huge = SIZE_MAX - 8;
    set_sentinel();
    ASSERT_STATUS(weft_parallel_reduce_range(ex, 4, huge, &result, reduce_range, combine, NULL, NULL), WEFT_ENOMEM);
    ASSERT_TRUE(message_is("weft_parallel_reduce", "too large"));
    set_sentinel();
    ASSERT_STATUS(weft_parallel_transform_reduce(ex, data, 4, 4, huge, &result, unary, combine, NULL, NULL),
                  WEFT_ENOMEM);
    ASSERT_TRUE(message_is("weft_parallel_transform_reduce", "too large"));
    weft_executor_destroy(ex);
}

TEST(algorithm_failures_name_the_call_that_was_made) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    /* It said "weft_parallel_for_range: body is NULL or step is 0". */
    set_sentinel();
    ASSERT_STATUS(weft_parallel_for(ex, 0, 4, 0, index_fn, NULL, NULL), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_parallel_for:", "step is 0"));
    /* They said "weft_parallel_sort_ops: size is 0, ops or one of its
     * functions is NULL, ...": a call and an argument the caller never used. */
    set_sentinel();
    ASSERT_STATUS(weft_parallel_sort(ex, NULL, 4, 4, cmp, NULL, NULL), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_parallel_sort:", "base is NULL"));
    set_sentinel();
    ASSERT_STATUS(weft_parallel_stable_sort(ex, data, 4, 0, cmp, NULL, NULL), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_parallel_stable_sort:", "size is 0"));
    set_sentinel();
    ASSERT_STATUS(weft_parallel_sort(ex, data, 4, 4, cmp, NULL, &(weft_algo_config){.partitioner = 9}), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_parallel_sort:", "partitioner 9"));
    weft_executor_destroy(ex);
}

TEST(edge_checks_name_the_precede_call_that_failed) {
    weft_status st;
    weft_taskflow *a = weft_taskflow_create("a", &st), *b = weft_taskflow_create("b", &st);
    ASSERT_NOT_NULL(a);
    ASSERT_NOT_NULL(b);
    weft_task a1 = weft_emplace(a, work, NULL), b1 = weft_emplace(b, work, NULL);
    /* They said only "edge to or from the null task" / "edge between tasks
     * of different taskflows": R3 wants "<function>: <what is wrong>". */
    set_sentinel();
    ASSERT_STATUS(weft_precede(a1, WEFT_TASK_NULL), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_precede:", "null task"));
    set_sentinel();
    ASSERT_STATUS(weft_precede(a1, b1), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_precede:", "different taskflows"));
    set_sentinel();
    ASSERT_STATUS(weft_precede_many(a1, &b1, 1), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_precede_many:", "different taskflows"));
    set_sentinel();
    ASSERT_STATUS(weft_succeed_many(a1, (weft_task[]){WEFT_TASK_NULL}, 1), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_succeed_many:", "null task"));
    ASSERT_OK(weft_taskflow_destroy(a));
    ASSERT_OK(weft_taskflow_destroy(b));
}
