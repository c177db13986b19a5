/* Session 41's hunt in the GPU layer (weft/gpu.h): copies of zero elements
 * and past the end, objects of two devices mixed, a failing kernel in a
 * taskflow re-run many times, GPU tasks cancelled, in subflows, modules,
 * parallel runs and pipelines, stream-count extremes, two executors sharing
 * one device, and the failing allocator. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "gpu_test.h"
#include "weft/flow.h"
#include "weft/pipeline.h"
#include "weft/topology.h"

/* ---- copies ---------------------------------------------------------------- */

static void check_zero_and_past_end_copies(weft_gpu_kind kind) {
    weft_gpu_device *d = gpu_test_open(kind);
    weft_status st;
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, sizeof(int), 8, 0, &st);
    ASSERT_OK(st);
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    ASSERT_OK(st);
    int host[8] = {1, 2, 3, 4, 5, 6, 7, 8}, back[8] = {0};
    ASSERT_OK(weft_gpu_copy_to_device(b, 0, host, 8));
    /* count 0 is a no-op, at any first up to the end, host pointer NULL or not. */
    ASSERT_OK(weft_gpu_copy_to_device(b, 8, NULL, 0));
    ASSERT_OK(weft_gpu_copy_to_device(b, 0, NULL, 0));
    ASSERT_OK(weft_gpu_copy_to_host(b, 8, NULL, 0));
    ASSERT_OK(weft_gpu_copy_to_device_async(s, b, 8, NULL, 0));
    ASSERT_OK(weft_gpu_copy_to_host_async(s, b, 3, back, 0));
    /* Past the end, also where first + count wraps. */
    ASSERT_STATUS(weft_gpu_copy_to_device(b, 9, host, 0), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_device(b, 7, host, 2), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_host(b, SIZE_MAX, back, 2), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_host(b, 1, back, SIZE_MAX), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_host_async(s, b, 2, back, SIZE_MAX - 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_host(b, 0, NULL, 1), WEFT_EINVAL);
    /* Nothing above changed the buffer. */
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    ASSERT_OK(weft_gpu_copy_to_host(b, 0, back, 8));
    for (int i = 0; i < 8; i++) ASSERT_EQ(back[i], host[i]);
    /* A copy inside one buffer's range, overlapping an earlier queued one:
     * stream order decides. */
    int a[4] = {10, 11, 12, 13}, c[4] = {20, 21, 22, 23};
    ASSERT_OK(weft_gpu_copy_to_device_async(s, b, 2, a, 4));
    ASSERT_OK(weft_gpu_copy_to_device_async(s, b, 4, c, 4));
    ASSERT_OK(weft_gpu_copy_to_host_async(s, b, 0, back, 8));
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    int want[8] = {1, 2, 10, 11, 20, 21, 22, 23};
    for (int i = 0; i < 8; i++) ASSERT_EQ(back[i], want[i]);
    weft_gpu_stream_destroy(s);
    weft_gpu_buffer_destroy(b);
    weft_gpu_close(d);
}
TEST(emu_copies_of_zero_elements_are_no_ops_and_past_the_end_is_einval) {
    check_zero_and_past_end_copies(WEFT_GPU_EMULATOR);
}
TEST(opencl_copies_of_zero_elements_are_no_ops_and_past_the_end_is_einval) {
    check_zero_and_past_end_copies(WEFT_GPU_OPENCL);
}

TEST(objects_of_two_devices_mixed_are_einval) {
    weft_gpu_device *d1 = gpu_test_open(WEFT_GPU_EMULATOR), *d2 = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_buffer *b1 = weft_gpu_buffer_create(d1, sizeof(float), 4, 0, &st);
    weft_gpu_stream *s2 = weft_gpu_stream_create(d2, &st);
    weft_gpu_kernel *k1 = weft_gpu_kernel_create(d1, &gpu_test_scale, &st);
    weft_gpu_kernel *k2 = weft_gpu_kernel_create(d2, &gpu_test_scale, &st);
    ASSERT_TRUE(b1 && s2 && k1 && k2);
    float host[4] = {0};
    ASSERT_STATUS(weft_gpu_copy_to_device_async(s2, b1, 0, host, 4), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_host_async(s2, b1, 0, host, 0), WEFT_EINVAL);
    float a = 2;
    unsigned n = 4;
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(b1), WEFT_GPU_ARG_VALUE(a), WEFT_GPU_ARG_VALUE(n)};
    weft_gpu_range r = {.global = {4}};
    ASSERT_STATUS(weft_gpu_launch(s2, k1, &r, args, 3), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_launch(s2, k2, &r, args, 3), WEFT_EINVAL);
    ASSERT_OK(weft_gpu_stream_synchronize(s2));
    weft_gpu_kernel_destroy(k2);
    weft_gpu_kernel_destroy(k1);
    weft_gpu_stream_destroy(s2);
    weft_gpu_buffer_destroy(b1);
    weft_gpu_close(d2);
    weft_gpu_close(d1);
}

/* ---- stream counts ------------------------------------------------------------ */

TEST(stream_counts_at_and_past_the_limit) {
    weft_status st;
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 256}, &st);
    ASSERT_OK(st);
    ASSERT_EQ(weft_gpu_stream_pool_size(weft_gpu_device_pool(d)), 256);
    ASSERT_OK(weft_gpu_synchronize(d));
    weft_gpu_close(d);
    ASSERT_NULL(weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 257}, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = UINT32_MAX}, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 1}, &st);
    ASSERT_OK(st);
    weft_gpu_stream_pool *p = weft_gpu_stream_pool_create(d, 256, &st);
    ASSERT_OK(st);
    ASSERT_EQ(weft_gpu_stream_pool_size(p), 256);
    ASSERT_TRUE(weft_gpu_stream_pool_get(p, UINT32_MAX) == weft_gpu_stream_pool_get(p, UINT32_MAX % 256));
    weft_gpu_stream_pool_destroy(p);
    ASSERT_NULL(weft_gpu_stream_pool_create(d, 257, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_stream_pool_create(d, UINT32_MAX, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    /* One stream, three guards: the later ones share it, each end closes its own. */
    weft_gpu_stream_pool *one = weft_gpu_device_pool(d);
    weft_gpu_stream_guard g1, g2, g3;
    weft_gpu_stream *s1 = weft_gpu_stream_begin(one, &g1);
    weft_gpu_stream *s2 = weft_gpu_stream_begin(one, &g2);
    ASSERT_TRUE(s1 == s2);
    ASSERT_OK(weft_gpu_stream_end(&g1));
    weft_gpu_stream *s3 = weft_gpu_stream_begin(one, &g3);
    ASSERT_TRUE(s3 == s1);
    ASSERT_OK(weft_gpu_stream_end(&g2));
    ASSERT_OK(weft_gpu_stream_end(&g3));
    ASSERT_STATUS(weft_gpu_stream_end(&g3), WEFT_EINVAL);
    /* After all of them ended, the stream is free for a reserving guard again:
     * two begins get it once reserved, once shared. */
    weft_gpu_stream_begin(one, &g1);
    weft_gpu_stream_begin(one, &g2);
    ASSERT_OK(weft_gpu_stream_end(&g2));
    ASSERT_OK(weft_gpu_stream_end(&g1));
    weft_gpu_close(d);
}

/* ---- GPU tasks in taskflows ----------------------------------------------------- */

/* A kernel that adds 1 to x[0] (atomically: tasks on other streams may run
 * it at the same time), or fails when *fail is set. */
static int add_one_host(const weft_gpu_range *r, void *const *a) {
    atomic_int *x = a[0];
    const int *fail = a[1];
    if (*fail) return 5;
    atomic_fetch_add(x, 1);
    return 0;
}
static const weft_gpu_kernel_source add_one_src = {.name = "add_one", .host = add_one_host};

struct counter {
    weft_gpu_kernel *k;
    weft_gpu_buffer *b;
    int fail; /* passed by value at launch */
    atomic_int calls;
};

static int launch_add_one(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    struct counter *c = arg;
    atomic_fetch_add(&c->calls, 1);
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(c->b), WEFT_GPU_ARG_VALUE(c->fail)};
    return weft_gpu_launch(s, c->k, &(weft_gpu_range){.global = {1}}, args, 2);
}

static void counter_open(struct counter *c, weft_gpu_device *d) {
    weft_status st;
    memset(c, 0, sizeof *c);
    c->k = weft_gpu_kernel_create(d, &add_one_src, &st);
    ASSERT_OK(st);
    c->b = weft_gpu_buffer_create(d, sizeof(int), 1, 0, &st);
    ASSERT_OK(st);
    int zero = 0;
    ASSERT_OK(weft_gpu_copy_to_device(c->b, 0, &zero, 1));
}

static int counter_value(struct counter *c) {
    int v = -1;
    ASSERT_OK(weft_gpu_copy_to_host(c->b, 0, &v, 1));
    return v;
}

static void counter_close(struct counter *c) {
    weft_gpu_buffer_destroy(c->b);
    weft_gpu_kernel_destroy(c->k);
}

TEST(a_gpu_taskflow_rerun_100_times_runs_its_kernel_100_times_and_fails_only_when_it_fails) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    struct counter c;
    counter_open(&c, d);
    weft_taskflow *tf = weft_taskflow_create("gpu-rerun", &st);
    weft_task g = weft_emplace_gpu(tf, d, launch_add_one, &c);
    ASSERT_FALSE(weft_task_is_null(g));
    ASSERT_OK(weft_run_n(ex, tf, 100, NULL) == WEFT_OK ? WEFT_OK : WEFT_EINVAL);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(counter_value(&c), 100);
    /* Every other run fails its kernel: exactly those runs fail. */
    for (int i = 0; i < 100; i++) {
        c.fail = i % 2;
        weft_status want = c.fail ? WEFT_ETASK : WEFT_OK;
        ASSERT_STATUS(weft_run_and_wait(ex, tf), want);
    }
    ASSERT_EQ(counter_value(&c), 150);
    ASSERT_EQ(atomic_load(&c.calls), 200);
    /* The failures were the tasks': no synchronize reports them again. */
    ASSERT_OK(weft_gpu_synchronize(d));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    counter_close(&c);
    weft_gpu_close(d);
}

/* A kernel that takes a while: the first task of a chain is still on the
 * device when the run is cancelled. */
static int slow_host(const weft_gpu_range *r, void *const *a) {
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    atomic_fetch_add((atomic_int *)a[0], 1);
    return 0;
}
static const weft_gpu_kernel_source slow_src = {.name = "slow", .host = slow_host};

struct slow {
    weft_gpu_kernel *k;
    weft_gpu_buffer *b; /* managed: holds the kernel count */
    atomic_int recorded;
};

static int launch_slow(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    struct slow *sl = arg;
    atomic_fetch_add(&sl->recorded, 1);
    return weft_gpu_launch(s, sl->k, &(weft_gpu_range){.global = {1}}, &WEFT_GPU_ARG_BUFFER(sl->b), 1);
}

TEST(a_cancelled_run_of_gpu_tasks_ends_and_the_taskflow_runs_whole_again) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    struct slow sl = {0};
    sl.k = weft_gpu_kernel_create(d, &slow_src, &st);
    sl.b = weft_gpu_buffer_create(d, sizeof(atomic_int), 1, WEFT_GPU_MANAGED, &st);
    ASSERT_OK(st);
    atomic_int *kernels = weft_gpu_buffer_host_ptr(sl.b);
    atomic_init(kernels, 0);
    weft_taskflow *tf = weft_taskflow_create("gpu-cancel", &st);
    enum { N = 40 };
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < N; i++) {
        weft_task t = weft_emplace_gpu(tf, d, launch_slow, &sl);
        if (i) ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    for (int round = 0; round < 5; round++) {
        atomic_store(&sl.recorded, 0);
        ASSERT_OK(weft_gpu_synchronize(d));
        atomic_store(kernels, 0);
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        while (atomic_load(&sl.recorded) < 2) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        ASSERT_OK(weft_future_cancel(f));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
        weft_future_destroy(f);
        int rec = atomic_load(&sl.recorded);
        ASSERT_LT(rec, N);
        /* Every kernel a task recorded ran before the run ended (a GPU task
         * completes when its work does). */
        ASSERT_EQ(atomic_load(kernels), rec);
    }
    atomic_store(&sl.recorded, 0);
    atomic_store(kernels, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&sl.recorded), N);
    ASSERT_EQ(atomic_load(kernels), N);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    weft_gpu_buffer_destroy(sl.b);
    weft_gpu_kernel_destroy(sl.k);
    weft_gpu_close(d);
}

/* GPU tasks as children of a subflow, inside a module body used twice, and
 * in a taskflow run n times in parallel. */
struct sub_arg {
    weft_gpu_device *d;
    struct counter *c;
};

static void make_gpu_children(weft_subflow *sf, void *arg) {
    struct sub_arg *sa = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task a = weft_emplace_gpu(g, sa->d, launch_add_one, sa->c);
    weft_task b = weft_emplace_gpu(g, sa->d, launch_add_one, sa->c);
    ASSERT_FALSE(weft_task_is_null(a));
    ASSERT_OK(weft_precede(a, b));
}

static int plain_gpu_children(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    make_gpu_children(sf, arg);
    return 0;
}

static int join_gpu_children(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    make_gpu_children(sf, arg);
    ASSERT_OK(weft_subflow_join(sf));
    return 0;
}

static int detach_gpu_children(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    make_gpu_children(sf, arg);
    ASSERT_OK(weft_subflow_detach(sf));
    return 0;
}

TEST(gpu_tasks_in_subflows_modules_and_parallel_runs_each_run_once) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    struct counter c;
    counter_open(&c, d);
    struct sub_arg sa = {d, &c};
    weft_taskflow *tf = weft_taskflow_create("gpu-sub", &st);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, plain_gpu_children, &sa)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, join_gpu_children, &sa)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, detach_gpu_children, &sa)));
    for (int i = 0; i < 20; i++) ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(counter_value(&c), 20 * 6);
    weft_taskflow_destroy(tf);

    weft_taskflow *body = weft_taskflow_create("gpu-body", &st);
    weft_task a = weft_emplace_gpu(body, d, launch_add_one, &c);
    weft_task b = weft_emplace_gpu(body, d, launch_add_one, &c);
    ASSERT_OK(weft_precede(a, b));
    weft_taskflow *top = weft_taskflow_create("gpu-top", &st);
    weft_task m1 = weft_emplace_module(top, body);
    weft_task m2 = weft_emplace_module(top, body);
    weft_task m3 = weft_emplace_module(top, body);
    ASSERT_OK(weft_precede(m1, m3));
    ASSERT_FALSE(weft_task_is_null(m2));
    for (int i = 0; i < 20; i++) ASSERT_OK(weft_run_and_wait(ex, top));
    ASSERT_EQ(counter_value(&c), 20 * 6 + 20 * 6);
    weft_future *f;
    ASSERT_OK(weft_run_n_parallel(ex, body, 10, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(counter_value(&c), 20 * 6 + 20 * 6 + 20);
    weft_taskflow_destroy(top);
    weft_taskflow_destroy(body);
    weft_executor_destroy(ex);
    counter_close(&c);
    weft_gpu_close(d);
}

/* ---- two executors, one device -------------------------------------------------- */

TEST(two_executors_running_gpu_tasks_on_one_device_lose_none) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *e1 = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    weft_executor *e2 = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    struct counter c1, c2;
    counter_open(&c1, d);
    counter_open(&c2, d);
    weft_taskflow *t1 = weft_taskflow_create("one", &st), *t2 = weft_taskflow_create("two", &st);
    weft_task p1 = WEFT_TASK_NULL, p2 = WEFT_TASK_NULL;
    for (int i = 0; i < 8; i++) {
        weft_task a = weft_emplace_gpu(t1, d, launch_add_one, &c1);
        weft_task b = weft_emplace_gpu(t2, d, launch_add_one, &c2);
        if (i) {
            ASSERT_OK(weft_precede(p1, a));
            ASSERT_OK(weft_precede(p2, b));
        }
        p1 = a;
        p2 = b;
    }
    enum { RUNS = 50 };
    weft_future *f1, *f2;
    ASSERT_OK(weft_run_n(e1, t1, RUNS, &f1));
    ASSERT_OK(weft_run_n(e2, t2, RUNS, &f2));
    /* The same taskflow on both executors at once: its runs queue. */
    weft_future *f3;
    ASSERT_OK(weft_run_n(e2, t1, RUNS, &f3));
    ASSERT_OK(weft_future_wait(f1));
    ASSERT_OK(weft_future_wait(f2));
    ASSERT_OK(weft_future_wait(f3));
    weft_future_destroy(f1);
    weft_future_destroy(f2);
    weft_future_destroy(f3);
    ASSERT_EQ(counter_value(&c1), 2 * RUNS * 8);
    ASSERT_EQ(counter_value(&c2), RUNS * 8);
    weft_taskflow_destroy(t1);
    weft_taskflow_destroy(t2);
    weft_executor_destroy(e1);
    weft_executor_destroy(e2);
    counter_close(&c1);
    counter_close(&c2);
    weft_gpu_close(d);
}

/* ---- out of memory ------------------------------------------------------------ */

#include "counting_alloc.h"

/* One whole life of a device, an executor and a GPU taskflow, with the nth
 * allocation failing: every call fails cleanly (ENOMEM, or a failed run), and
 * everything is given back. */
static void gpu_life(weft_status *first_failure) {
    weft_status st;
    *first_failure = WEFT_OK;
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 2}, &st);
    if (!d) {
        *first_failure = st;
        return;
    }
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    struct counter c = {0};
    c.k = weft_gpu_kernel_create(d, &add_one_src, &st);
    if (!c.k && !*first_failure) *first_failure = st;
    c.b = weft_gpu_buffer_create(d, sizeof(int), 1, 0, &st);
    if (!c.b && !*first_failure) *first_failure = st;
    weft_taskflow *tf = ex && c.k && c.b ? weft_taskflow_create("oom", &st) : NULL;
    if (tf) {
        int zero = 0;
        ASSERT_OK(weft_gpu_copy_to_device(c.b, 0, &zero, 1));
        weft_task prev = WEFT_TASK_NULL;
        bool built = true;
        for (int i = 0; i < 4 && built; i++) {
            weft_task t = weft_emplace_gpu(tf, d, launch_add_one, &c);
            if (weft_task_is_null(t)) {
                ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_ENOMEM);
                built = false;
            } else if (i && weft_precede(prev, t) != WEFT_OK) {
                built = false;
            }
            prev = t;
        }
        if (built) {
            for (int r = 0; r < 3; r++) {
                st = weft_run_and_wait(ex, tf);
                if (st != WEFT_OK) {
                    if (!*first_failure) *first_failure = st;
                    continue;
                }
            }
            int v = counter_value(&c);
            ASSERT_LE(v, 12);
        }
        weft_taskflow_destroy(tf);
    }
    weft_executor_destroy(ex);
    counter_close(&c);
    weft_gpu_close(d);
}

TEST(every_allocation_failing_in_turn_in_a_gpu_taskflow_fails_cleanly_and_leaks_nothing) {
    /* The process's machine, which an executor bound by WEFT_AFFINITY=cpus or
     * WEFT_PLACEMENT detects on first use and keeps until exit: detected
     * before the counting starts (the sweep failed with those set). */
    void *p = NULL;
    if (weft_numa_alloc(NULL, 1, 0, &p, NULL) == WEFT_OK) weft_numa_free(p, 1);
    weft_set_allocator(&counting);
    fail_allocation(0);
    weft_status st;
    gpu_life(&st);
    ASSERT_OK(st);
    long total = atomic_load(&A.calls);
    if (getenv("HUNT_VERBOSE")) fprintf(stderr, "%ld allocations\n", total);
    ASSERT_EQ(atomic_load(&A.outstanding), 0);
    for (long n = 1; n <= total + 5; n++) {
        fail_allocation(n);
        gpu_life(&st);
        fail_allocation(0);
        if (atomic_load(&A.outstanding) != 0)
            TEST_FAIL_("allocation %ld of %ld failing (%s): %lld bytes not given back", n, total, weft_errname(st),
                       (long long)atomic_load(&A.outstanding));
    }
    weft_set_allocator(NULL);
}

/* ---- the task's context, condition loops ---------------------------------------- */

struct seen_ctx {
    struct counter *c;
    weft_task self;
    atomic_int bad;
    uint64_t iterations[8];
    atomic_int calls;
    int loops; /* the condition's count */
};

static int gpu_checks_ctx(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    struct seen_ctx *sc = arg;
    if (!ctx || weft_current_ctx() != ctx || weft_ctx_task(ctx).node_ != sc->self.node_ || weft_ctx_worker_id(ctx) < 0)
        atomic_fetch_add(&sc->bad, 1);
    int k = atomic_fetch_add(&sc->calls, 1);
    if (ctx && k < 8) sc->iterations[k] = weft_ctx_iteration(ctx);
    return launch_add_one(ctx, s, sc->c);
}

static int loop_back(weft_ctx *ctx, void *arg) {
    struct seen_ctx *sc = arg;
    return ++sc->loops < 25 ? 0 : 1; /* successor 0: the GPU task again; 1: none */
}

TEST(a_gpu_tasks_fn_gets_its_own_context_and_runs_again_in_a_condition_loop) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    struct counter c;
    counter_open(&c, d);
    struct seen_ctx sc = {.c = &c};
    weft_taskflow *tf = weft_taskflow_create("gpu-ctx", &st);
    sc.self = weft_emplace_gpu(tf, d, gpu_checks_ctx, &sc);
    ASSERT_OK(weft_run_n(ex, tf, 5, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&sc.bad), 0);
    ASSERT_EQ(atomic_load(&sc.calls), 5);
    for (int i = 0; i < 5; i++) ASSERT_EQ(sc.iterations[i], i);
    ASSERT_EQ(counter_value(&c), 5);
    /* start -> gpu <-> cond: the GPU task runs 25 times in one run. */
    weft_task start = weft_placeholder(tf);
    weft_task cond = weft_emplace_condition(tf, loop_back, &sc);
    ASSERT_OK(weft_precede(start, sc.self));
    ASSERT_OK(weft_precede(sc.self, cond));
    ASSERT_OK(weft_precede(cond, sc.self));
    atomic_store(&sc.calls, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&sc.bad), 0);
    ASSERT_EQ(atomic_load(&sc.calls), 25);
    ASSERT_EQ(counter_value(&c), 30);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    counter_close(&c);
    weft_gpu_close(d);
}

/* ---- pipelines cancelled, executors destroyed with GPU work in flight ----------- */

struct gpipe {
    struct slow *sl;
    atomic_int made, gpu_done, last;
    int stop_at;
};

static int gp_make(weft_pipeflow *pf, void *arg) {
    struct gpipe *g = arg;
    if ((int)weft_pipeflow_token(pf) == g->stop_at) return weft_pipeflow_stop(pf), 0;
    atomic_fetch_add(&g->made, 1);
    return 0;
}

static int gp_gpu(weft_pipeflow *pf, weft_gpu_stream *s, void *arg) {
    struct gpipe *g = arg;
    return weft_gpu_launch(s, g->sl->k, &(weft_gpu_range){.global = {1}}, &WEFT_GPU_ARG_BUFFER(g->sl->b), 1);
}

static int gp_last(weft_pipeflow *pf, void *arg) {
    struct gpipe *g = arg;
    atomic_fetch_add(&g->last, 1);
    return 0;
}

static void check_cancelled_gpu_pipeline(weft_pipeline_scheduling how) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    struct slow sl = {0};
    sl.k = weft_gpu_kernel_create(d, &slow_src, &st);
    sl.b = weft_gpu_buffer_create(d, sizeof(atomic_int), 1, WEFT_GPU_MANAGED, &st);
    ASSERT_OK(st);
    atomic_int *kernels = weft_gpu_buffer_host_ptr(sl.b);
    struct gpipe g = {.sl = &sl, .stop_at = 1000};
    weft_gpu_stage gs = {.dev = d, .ex = ex, .fn = gp_gpu, .arg = &g};
    weft_stage stages[] = {{WEFT_STAGE_SERIAL, gp_make, &g, "make"},
                           {WEFT_STAGE_PARALLEL, weft_gpu_stage_run, &gs, "gpu"},
                           {WEFT_STAGE_SERIAL, gp_last, &g, "last"}};
    weft_pipeline *pl = weft_pipeline_create(3, stages, 3, &st);
    ASSERT_OK(st);
    ASSERT_OK(weft_pipeline_set_scheduling(pl, how));
    weft_taskflow *tf = weft_taskflow_create("gpu-pipe-cancel", &st);
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, pl)));
    atomic_init(kernels, 0);
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    while (atomic_load(kernels) < 3) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    ASSERT_OK(weft_future_cancel(f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    weft_future_destroy(f);
    ASSERT_LT(atomic_load(&g.made), 1000);
    /* No token's GPU work outlives the run. */
    int k = atomic_load(kernels);
    ASSERT_OK(weft_gpu_synchronize(d));
    ASSERT_EQ(atomic_load(kernels), k);
    /* Reset, it runs whole: 12 tokens. */
    atomic_store(&g.made, 0);
    atomic_store(&g.last, 0);
    atomic_store(kernels, 0);
    g.stop_at = 12;
    ASSERT_OK(weft_pipeline_reset(pl));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&g.made), 12);
    ASSERT_EQ(atomic_load(&g.last), 12);
    ASSERT_EQ(atomic_load(kernels), 12);
    /* Run again, and destroy the executor without waiting: the destroy waits. */
    atomic_store(kernels, 0);
    ASSERT_OK(weft_pipeline_reset(pl));
    ASSERT_OK(weft_run(ex, tf, NULL));
    weft_executor_destroy(ex);
    ASSERT_EQ(atomic_load(kernels), 12);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_pipeline_destroy(pl));
    weft_gpu_buffer_destroy(sl.b);
    weft_gpu_kernel_destroy(sl.k);
    weft_gpu_close(d);
}
TEST(a_cancelled_gpu_pipeline_spread_ends_with_its_gpu_work_and_runs_whole_after_a_reset) {
    check_cancelled_gpu_pipeline(WEFT_PIPELINE_SPREAD);
}
TEST(a_cancelled_gpu_pipeline_inline_ends_with_its_gpu_work_and_runs_whole_after_a_reset) {
    check_cancelled_gpu_pipeline(WEFT_PIPELINE_INLINE);
}

TEST(destroying_an_executor_with_gpu_tasks_in_flight_waits_for_them) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    struct slow sl = {0};
    sl.k = weft_gpu_kernel_create(d, &slow_src, &st);
    sl.b = weft_gpu_buffer_create(d, sizeof(atomic_int), 1, WEFT_GPU_MANAGED, &st);
    ASSERT_OK(st);
    atomic_int *kernels = weft_gpu_buffer_host_ptr(sl.b);
    atomic_init(kernels, 0);
    weft_taskflow *tf = weft_taskflow_create("gpu-destroy", &st);
    for (int i = 0; i < 6; i++) ASSERT_FALSE(weft_task_is_null(weft_emplace_gpu(tf, d, launch_slow, &sl)));
    for (int round = 1; round <= 3; round++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = (unsigned)round}, &st);
        ASSERT_OK(st);
        ASSERT_OK(weft_run_n(ex, tf, 2, NULL));
        weft_executor_destroy(ex);
        ASSERT_EQ(atomic_load(kernels), 12 * round);
    }
    weft_taskflow_destroy(tf);
    weft_gpu_buffer_destroy(sl.b);
    weft_gpu_kernel_destroy(sl.k);
    weft_gpu_close(d);
}

/* ---- OpenCL: GPU tasks re-run, refused launches, two executors -------------------- */

struct cl_count {
    weft_gpu_kernel *vadd;
    weft_gpu_buffer *x, *ones;
    int refuse; /* launch with too few arguments: refused, the task fails */
};

static int cl_add_one(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    struct cl_count *c = arg;
    unsigned n = 1;
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(c->x), WEFT_GPU_ARG_BUFFER(c->ones), WEFT_GPU_ARG_BUFFER(c->x),
                           WEFT_GPU_ARG_VALUE(n)};
    return weft_gpu_launch(s, c->vadd, &(weft_gpu_range){.global = {1}}, args, c->refuse ? 3 : 4);
}

TEST(opencl_gpu_tasks_rerun_on_two_executors_count_exactly_and_a_refused_launch_fails_only_its_run) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_OPENCL);
    weft_status st;
    struct cl_count c = {0};
    c.vadd = weft_gpu_kernel_create(d, &gpu_test_vadd, &st);
    ASSERT_OK(st);
    c.x = weft_gpu_buffer_create(d, sizeof(float), 1, 0, &st);
    c.ones = weft_gpu_buffer_create(d, sizeof(float), 1, 0, &st);
    ASSERT_OK(st);
    float zero = 0, one = 1;
    ASSERT_OK(weft_gpu_copy_to_device(c.x, 0, &zero, 1));
    ASSERT_OK(weft_gpu_copy_to_device(c.ones, 0, &one, 1));
    weft_executor *e1 = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    weft_executor *e2 = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    weft_taskflow *tf = weft_taskflow_create("cl-rerun", &st);
    weft_task a = weft_emplace_gpu(tf, d, cl_add_one, &c), b = weft_emplace_gpu(tf, d, cl_add_one, &c);
    ASSERT_OK(weft_precede(a, b)); /* in order: the kernels read and write x */
    weft_future *f1, *f2;
    ASSERT_OK(weft_run_n(e1, tf, 50, &f1));
    ASSERT_OK(weft_run_n(e2, tf, 50, &f2));
    ASSERT_OK(weft_future_wait(f1));
    ASSERT_OK(weft_future_wait(f2));
    weft_future_destroy(f1);
    weft_future_destroy(f2);
    float x = -1;
    ASSERT_OK(weft_gpu_copy_to_host(c.x, 0, &x, 1));
    ASSERT_TRUE(x == 200.0f);
    for (int i = 0; i < 10; i++) {
        c.refuse = i % 2;
        ASSERT_STATUS(weft_run_and_wait(i % 3 ? e1 : e2, tf), c.refuse ? WEFT_ETASK : WEFT_OK);
    }
    ASSERT_OK(weft_gpu_copy_to_host(c.x, 0, &x, 1));
    ASSERT_TRUE(x == 210.0f);
    ASSERT_OK(weft_gpu_synchronize(d));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(e1);
    weft_executor_destroy(e2);
    weft_gpu_buffer_destroy(c.x);
    weft_gpu_buffer_destroy(c.ones);
    weft_gpu_kernel_destroy(c.vadd);
    weft_gpu_close(d);
}

/* docs/errors.md R3: every public call that fails sets the thread's message,
 * ENOMEM from the allocator included.  Each call below runs with each of its
 * allocations failing in turn; a failure must replace a marker message. */
static const char *marker(void) {
    (void)weft_gpu_stream_synchronize(NULL); /* "weft_gpu_stream_synchronize: s is NULL" */
    return weft_last_error_message();
}

static void expect_message(const char *call, long n, int st) {
    if (st == WEFT_OK) return;
    const char *m = weft_last_error_message();
    if (!*m || strstr(m, "weft_gpu_stream_synchronize: s is NULL"))
        TEST_FAIL_("%s with allocation %ld failing: %s and no message of its own (\"%s\")", call, n, weft_errname(st),
                   m);
}

enum { CALLS = 9 };
static int pf_host(const weft_gpu_range *r, void *const *a) { return 0; }
static int one_call(int which, weft_gpu_device *d, weft_gpu_stream *s, weft_gpu_kernel *k, weft_gpu_buffer *b) {
    weft_status st = WEFT_OK;
    switch (which) {
    case 0: {
        weft_gpu_device *x = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 1}, &st);
        weft_gpu_close(x);
        break;
    }
    case 1: weft_gpu_stream_destroy(weft_gpu_stream_create(d, &st)); break;
    case 2: weft_gpu_event_destroy(weft_gpu_event_record(s, &st)); break;
    case 3: weft_gpu_kernel_destroy(weft_gpu_kernel_create(d, &add_one_src, &st)); break;
    case 4: weft_gpu_buffer_destroy(weft_gpu_buffer_create(d, 4, 4, 0, &st)); break;
    case 5: weft_gpu_stream_pool_destroy(weft_gpu_stream_pool_create(d, 2, &st)); break;
    case 6: {
        int fail = 0;
        weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(b), WEFT_GPU_ARG_VALUE(fail)};
        st = weft_gpu_launch(s, k, &(weft_gpu_range){.global = {1}}, args, 2);
        if (st == WEFT_OK) st = weft_gpu_stream_synchronize(s);
        break;
    }
    case 7: {
        int v = 0;
        st = weft_gpu_copy_to_device_async(s, b, 0, &v, 1);
        if (st == WEFT_OK) st = weft_gpu_stream_synchronize(s);
        break;
    }
    case 8: { /* a device of its own: its parallel_for cache is empty */
        weft_gpu_device *x = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 1}, &st);
        if (!x) break;
        static const weft_gpu_for_kernel fk = {.body = "", .host = pf_host};
        st = weft_gpu_parallel_for(weft_gpu_stream_pool_get(weft_gpu_device_pool(x), 0), 4, &fk, NULL, 0);
        weft_gpu_close(x);
        break;
    }
    }
    return st;
}

static const char *const call_names[CALLS] = {"weft_gpu_open", "weft_gpu_stream_create", "weft_gpu_event_record",
                                              "weft_gpu_kernel_create", "weft_gpu_buffer_create",
                                              "weft_gpu_stream_pool_create", "weft_gpu_launch",
                                              "weft_gpu_copy_to_device_async",
                                              "weft_gpu_parallel_for"};

TEST(every_gpu_call_failing_for_lack_of_memory_says_why) {
    weft_set_allocator(&counting);
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &add_one_src, &st);
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, sizeof(int), 1, 0, &st);
    ASSERT_OK(st);
    for (int which = 0; which < CALLS; which++) {
        fail_allocation(0);
        ASSERT_OK(one_call(which, d, s, k, b));
        long total = atomic_load(&A.calls);
        for (long n = 1; n <= total; n++) {
            (void)marker();
            fail_allocation(n);
            int r = one_call(which, d, s, k, b);
            fail_allocation(0);
            ASSERT_TRUE(r == WEFT_OK || r == WEFT_ENOMEM);
            expect_message(call_names[which], n, r);
        }
    }
    weft_gpu_buffer_destroy(b);
    weft_gpu_kernel_destroy(k);
    weft_gpu_stream_destroy(s);
    weft_gpu_close(d);
    weft_set_allocator(NULL);
}

/* core.h's run info for a run whose GPU task fails: the task's name and code
 * (WEFT_EDEVICE from its kernel, or fn's own value), its successors skipped,
 * the iterations completed before it. */
struct fail_on {
    struct counter *c;
    atomic_int runs;
    int fail_run; /* the call (0-based) whose kernel fails */
    int fn_code;  /* non-zero: fn returns this instead of launching on that call */
};

static int maybe_failing(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    struct fail_on *f = arg;
    int k = atomic_fetch_add(&f->runs, 1);
    if (k == f->fail_run && f->fn_code) return f->fn_code;
    int fail = k == f->fail_run;
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(f->c->b), WEFT_GPU_ARG_VALUE(fail)};
    return weft_gpu_launch(s, f->c->k, &(weft_gpu_range){.global = {1}}, args, 2);
}

static int cpu_tick(weft_ctx *ctx, void *arg) {
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

TEST(a_failing_gpu_tasks_run_info_names_it_with_its_code_and_counts_the_rest) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    struct counter c;
    counter_open(&c, d);
    for (int mode = 0; mode < 2; mode++) {
        struct fail_on f = {.c = &c, .fail_run = 2, .fn_code = mode ? 77 : 0};
        atomic_int ticks = 0;
        weft_taskflow *tf = weft_taskflow_create("gpu-info", &st);
        weft_task g = weft_emplace_gpu(tf, d, maybe_failing, &f);
        ASSERT_OK(weft_task_set_name(g, "the-gpu-task"));
        weft_task a = weft_emplace(tf, cpu_tick, &ticks), b = weft_emplace(tf, cpu_tick, &ticks);
        ASSERT_OK(weft_precede(g, a));
        ASSERT_OK(weft_precede(a, b));
        weft_future *fu;
        ASSERT_OK(weft_run_n(ex, tf, 5, &fu));
        ASSERT_STATUS(weft_future_wait(fu), WEFT_ETASK);
        weft_run_info info;
        ASSERT_OK(weft_future_info(fu, &info));
        ASSERT_STATUS(info.status, WEFT_ETASK);
        ASSERT_EQ(info.task_code, mode ? 77 : WEFT_EDEVICE);
        ASSERT_STREQ(info.failed_task, "the-gpu-task");
        ASSERT_EQ(info.iterations, 2);
        ASSERT_EQ(info.skipped, 2);
        ASSERT_EQ(atomic_load(&ticks), 4);
        ASSERT_EQ(atomic_load(&f.runs), 3);
        weft_future_destroy(fu);
        weft_taskflow_destroy(tf);
    }
    ASSERT_OK(weft_gpu_synchronize(d));
    weft_executor_destroy(ex);
    counter_close(&c);
    weft_gpu_close(d);
}

/* gpu.h: weft_gpu_stream_begin reserves a stream no other guard holds, and
 * shares one only when all are held.  A guard sharing a stream kept no claim
 * on it: once the guard that had reserved it ended, the next begin could
 * "reserve" that stream, ordering its work behind the sharer's, while another
 * stream of the pool sat idle. */
TEST(a_guard_never_reserves_a_stream_a_sharing_guard_still_holds_while_another_is_free) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_stream_pool *p = weft_gpu_stream_pool_create(d, 3, &st);
    ASSERT_OK(st);
    for (int round = 0; round < 6; round++) {
        weft_gpu_stream_guard g[3], shared, x, y;
        weft_gpu_stream *s[3];
        for (int i = 0; i < 3; i++) s[i] = weft_gpu_stream_begin(p, &g[i]);
        ASSERT_TRUE(s[0] != s[1] && s[1] != s[2] && s[0] != s[2]);
        weft_gpu_stream *sh = weft_gpu_stream_begin(p, &shared); /* all held: shares */
        int at = sh == s[0] ? 0 : sh == s[1] ? 1 : 2;
        /* Every guard but the sharer's partner and one other ends: one stream
         * is free, the sharer's is not. */
        int other = (at + 1) % 3, keep = (at + 2) % 3;
        ASSERT_OK(weft_gpu_stream_end(&g[at]));
        ASSERT_OK(weft_gpu_stream_end(&g[other]));
        /* The pool's rotation starts each begin one stream further: one
         * begin and end (it takes the free stream, after the sharer's) makes
         * the next begin start at the keeper's, then the sharer's.  It must
         * take the free stream, and the one after it share. */
        weft_gpu_stream_begin(p, &x);
        ASSERT_OK(weft_gpu_stream_end(&x));
        weft_gpu_stream *a = weft_gpu_stream_begin(p, &x);
        ASSERT_TRUE(a != sh);
        ASSERT_TRUE(a == s[other]);
        weft_gpu_stream *b = weft_gpu_stream_begin(p, &y);
        ASSERT_TRUE(b == s[0] || b == s[1] || b == s[2]);
        ASSERT_OK(weft_gpu_stream_end(&y));
        ASSERT_OK(weft_gpu_stream_end(&x));
        ASSERT_OK(weft_gpu_stream_end(&shared));
        ASSERT_OK(weft_gpu_stream_end(&g[keep]));
        /* A begin to shift the rotation for the next round. */
        weft_gpu_stream_begin(p, &x);
        ASSERT_OK(weft_gpu_stream_end(&x));
    }
    weft_gpu_stream_pool_destroy(p);
    weft_gpu_close(d);
}

/* More devices with GPU tasks outstanding on one executor than it has idle
 * pollers for (8): the tasks past them wait cooperatively; none is lost. */
TEST(gpu_tasks_of_more_devices_than_pollers_on_one_executor_all_complete) {
    enum { DEVS = 12, PER = 4 };
    weft_gpu_device *d[DEVS];
    struct slow sl[DEVS];
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    weft_taskflow *tf = weft_taskflow_create("many-devices", &st);
    for (int i = 0; i < DEVS; i++) {
        d[i] = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 2}, &st);
        ASSERT_OK(st);
        memset(&sl[i], 0, sizeof sl[i]);
        sl[i].k = weft_gpu_kernel_create(d[i], &slow_src, &st);
        sl[i].b = weft_gpu_buffer_create(d[i], sizeof(atomic_int), 1, WEFT_GPU_MANAGED, &st);
        ASSERT_OK(st);
        atomic_init((atomic_int *)weft_gpu_buffer_host_ptr(sl[i].b), 0);
        for (int k = 0; k < PER; k++) ASSERT_FALSE(weft_task_is_null(weft_emplace_gpu(tf, d[i], launch_slow, &sl[i])));
    }
    for (int r = 1; r <= 3; r++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        for (int i = 0; i < DEVS; i++) ASSERT_EQ(atomic_load((atomic_int *)weft_gpu_buffer_host_ptr(sl[i].b)), PER * r);
    }
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    for (int i = 0; i < DEVS; i++) {
        weft_gpu_buffer_destroy(sl[i].b);
        weft_gpu_kernel_destroy(sl[i].k);
        weft_gpu_close(d[i]);
    }
}

/* gpu.h: a bad WEFT_GPU value is logged once and ignored (the probe runs);
 * in a child, so that the once is this test's. */
#include <sys/wait.h>
#include <unistd.h>

static atomic_int gpu_env_warns;
static void count_gpu_env(void *user, weft_log_level level, const char *message) {
    if (level == WEFT_LOG_WARN && strstr(message, "WEFT_GPU")) atomic_fetch_add(&gpu_env_warns, 1);
}

TEST(bad_weft_gpu_values_warn_once_and_the_probe_runs) {
#ifdef __SANITIZE_THREAD__ /* gcc's and clang's -fsanitize=thread */
    SKIP("TSan cannot start threads after a multi-threaded fork (PoCL's, when tests share a process)");
#endif
    const char *bad[] = {"", " emulator", "emulator,opencl", "gpu", "emu"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            setenv("WEFT_GPU", bad[i], 1);
            weft_log_set_callback(count_gpu_env, NULL);
            for (int k = 0; k < 3; k++) {
                weft_status st;
                weft_gpu_device *d = weft_gpu_open(NULL, &st);
                if (!d || st != WEFT_OK) _exit(2);
                weft_gpu_close(d);
            }
            _exit(atomic_load(&gpu_env_warns) == 1 ? 0 : 3);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            TEST_FAIL_("WEFT_GPU=\"%s\": child status %d", bad[i], WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
}
