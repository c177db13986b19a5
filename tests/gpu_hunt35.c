/* GPU layer, adversarial round 35: how deep cooperative GPU waits nest on a
 * worker that has many GPU calls or GPU tasks ready at once. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "gpu_test.h"

static int nop_host(const weft_gpu_range *r, void *const *a) {
    (void)r;
    (void)a;
    return 0;
}

struct nest {
    weft_gpu_kernel *k;
    weft_gpu_device *dev;
    atomic_int active, most;          /* weft_gpu_calls open on the (one) worker */
    _Atomic uintptr_t sp_lo, sp_hi;   /* the fn's frames seen, lowest and highest */
};

static int launch_nop(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    (void)ctx;
    struct nest *n = arg;
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    uintptr_t v = atomic_load(&n->sp_lo);
    while (sp < v && !atomic_compare_exchange_weak(&n->sp_lo, &v, sp)) {}
    v = atomic_load(&n->sp_hi);
    while (sp > v && !atomic_compare_exchange_weak(&n->sp_hi, &v, sp)) {}
    return weft_gpu_launch(s, n->k, &(weft_gpu_range){.global = {1}}, NULL, 0);
}

static int call_nop(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct nest *n = arg;
    int now = atomic_fetch_add(&n->active, 1) + 1;
    int most = atomic_load(&n->most);
    while (now > most && !atomic_compare_exchange_weak(&n->most, &most, now)) {}
    int st = weft_gpu_call(n->dev, launch_nop, n);
    atomic_fetch_sub(&n->active, 1);
    return st;
}

static void nest_open(struct nest *n) {
    weft_status st;
    *n = (struct nest){.sp_lo = UINTPTR_MAX};
    n->dev = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR}, &st);
    ASSERT_OK(st);
    n->k = weft_gpu_kernel_create(n->dev, &(weft_gpu_kernel_source){.name = "nop", .host = nop_host}, &st);
    ASSERT_OK(st);
}

static void nest_close(struct nest *n) {
    weft_gpu_kernel_destroy(n->k);
    weft_gpu_close(n->dev);
}

/* Each weft_gpu_call's wait runs the next ready async task, whose call waits
 * in turn: without a bound, one level per task, until a stack of 8 MiB
 * overflowed at 20000 tasks.  Past 64 open waits a call blocks instead. */
TEST(gpu_calls_from_many_async_tasks_on_one_worker_nest_a_bounded_depth) {
    enum { N = 1000 };
    struct nest n;
    nest_open(&n);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    ASSERT_OK(st);
    weft_future **fs = calloc(N, sizeof *fs);
    ASSERT_TRUE(fs != NULL);
    for (int i = 0; i < N; i++) ASSERT_OK(weft_async(ex, call_nop, &n, &fs[i]));
    for (int i = 0; i < N; i++) {
        ASSERT_OK(weft_future_wait(fs[i]));
        weft_future_destroy(fs[i]);
    }
    free(fs);
    ASSERT_LE(atomic_load(&n.most), 65); /* 64 cooperative waits, then the one that blocks */
    weft_executor_destroy(ex);
    nest_close(&n);
}

/* A GPU task of a run with a priority waits cooperatively (its node runs
 * through the priority's wrapper, not the parking job), so the same nesting
 * overflowed the stack there: 20000 GPU tasks, one worker. */
TEST(gpu_tasks_of_a_run_with_a_priority_nest_a_bounded_depth) {
    enum { N = 2000 };
    struct nest n;
    nest_open(&n);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    ASSERT_OK(st);
    weft_taskflow *tf = weft_taskflow_create("wide", &st);
    ASSERT_OK(st);
    for (int i = 0; i < N; i++) ASSERT_TRUE(!weft_task_is_null(weft_emplace_gpu(tf, n.dev, launch_nop, &n)));
    weft_future *f = NULL;
    ASSERT_OK(weft_run_with_priority(ex, tf, WEFT_PRIORITY_HIGH, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    /* 64 levels of a few hundred bytes each (more under sanitizers); 2000
     * levels took over 1 MiB. */
    ASSERT_LT(atomic_load(&n.sp_hi) - atomic_load(&n.sp_lo), (uintptr_t)512 * 1024);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    nest_close(&n);
}

/* "WEFT_OK when all work queued so far is done": right after a synchronize
 * nothing is pending, yet the query's new marker waited for the emulator's
 * stream thread to wake, and the query said WEFT_EAGAIN (6 times in 100).
 * An event recorded on a stream with nothing pending is done at once too. */
TEST(emu_stream_query_right_after_a_synchronize_is_ok) {
    struct nest n;
    nest_open(&n);
    weft_status st;
    weft_gpu_stream *s = weft_gpu_stream_create(n.dev, &st);
    ASSERT_OK(st);
    for (int i = 0; i < 200; i++) {
        ASSERT_OK(weft_gpu_launch(s, n.k, &(weft_gpu_range){.global = {1}}, NULL, 0));
        ASSERT_OK(weft_gpu_stream_synchronize(s));
        ASSERT_OK(weft_gpu_stream_query(s));
        weft_gpu_event *e = weft_gpu_event_record(s, &st);
        ASSERT_OK(st);
        ASSERT_OK(weft_gpu_event_query(e));
        weft_gpu_event_destroy(e);
    }
    weft_gpu_stream_destroy(s);
    nest_close(&n);
}
