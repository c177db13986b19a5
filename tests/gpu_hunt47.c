/* GPU, round 47: what belongs to whom at close. */
#include <string.h>

#include "gpu_test.h"
#include "warn_capture.h"

static int record_nothing(weft_ctx *cx, weft_gpu_stream *s, void *arg) {
    (void)cx;
    (void)s;
    ++*(int *)arg;
    return 0;
}

/* gpu.h, weft_gpu_close: "Its buffers, streams, events, kernels and pools
 * must have been destroyed first."  A program that destroyed the device's
 * own pool (weft_gpu_device_pool) as one of "its pools" freed it under the
 * device: the next GPU task used freed streams, and weft_gpu_close freed the
 * pool again (SEGV in weft_gpu_stream_destroy).  The device's pool is the
 * device's: destroying it warns and does nothing, and close frees it. */
TEST(destroying_the_devices_own_stream_pool_warns_and_leaves_it_to_close) {
    weft_gpu_device *dev = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_gpu_stream_pool *own = weft_gpu_device_pool(dev);
    ASSERT_NOT_NULL(own);
    unsigned n = weft_gpu_stream_pool_size(own);
    ASSERT_GT(n, 0);
    capture_log();
    weft_gpu_stream_pool_destroy(own);
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    ASSERT_TRUE(strstr(logged.last, "device's own") != NULL);
    weft_log_set_callback(NULL, NULL);
    /* Still the device's, whole: its GPU tasks run on it. */
    ASSERT_TRUE(weft_gpu_device_pool(dev) == own);
    ASSERT_EQ(weft_gpu_stream_pool_size(own), n);
    int calls = 0;
    ASSERT_OK(weft_gpu_call(dev, record_nothing, &calls));
    ASSERT_EQ(calls, 1);
    /* A pool of the program's own is destroyed as ever, with no warning. */
    weft_status st;
    weft_gpu_stream_pool *mine = weft_gpu_stream_pool_create(dev, 2, &st);
    ASSERT_OK(st);
    capture_log();
    weft_gpu_stream_pool_destroy(mine);
    ASSERT_EQ(atomic_load(&logged.warnings), 0);
    weft_log_set_callback(NULL, NULL);
    weft_gpu_close(dev);
}

static weft_gpu_stream *given;
static int destroy_the_stream_given(weft_ctx *cx, weft_gpu_stream *s, void *arg) {
    (void)cx;
    (void)arg;
    given = s;
    weft_gpu_stream_destroy(s); /* the misuse: it is the pool's */
    return 0;
}

/* The same for a pool's streams: one from weft_gpu_stream_pool_get, or the
 * one a GPU call's fn is given, destroyed by the program was handed out again
 * by the pool (freed memory) and freed again by the pool's destroy. */
TEST(destroying_a_stream_of_a_pool_warns_and_leaves_it_to_the_pool) {
    weft_gpu_device *dev = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_stream_pool *mine = weft_gpu_stream_pool_create(dev, 2, &st);
    ASSERT_OK(st);
    weft_gpu_stream *s0 = weft_gpu_stream_pool_get(mine, 0);
    ASSERT_NOT_NULL(s0);
    capture_log();
    weft_gpu_stream_destroy(s0);
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    ASSERT_TRUE(strstr(logged.last, "stream pool") != NULL);
    /* Still whole: a synchronize and a guard on it work. */
    ASSERT_OK(weft_gpu_stream_synchronize(s0));
    weft_gpu_stream_guard g;
    ASSERT_NOT_NULL(weft_gpu_stream_begin(mine, &g));
    ASSERT_OK(weft_gpu_stream_end(&g));
    /* The device's pool, through a GPU call's fn. */
    ASSERT_OK(weft_gpu_call(dev, destroy_the_stream_given, NULL));
    ASSERT_EQ(atomic_load(&logged.warnings), 2);
    ASSERT_OK(weft_gpu_stream_synchronize(given));
    int calls = 0;
    for (int i = 0; i < 8; i++) ASSERT_OK(weft_gpu_call(dev, record_nothing, &calls));
    ASSERT_EQ(calls, 8);
    /* A stream of the program's own is destroyed as ever, with no warning. */
    weft_gpu_stream *own = weft_gpu_stream_create(dev, &st);
    ASSERT_OK(st);
    weft_gpu_stream_destroy(own);
    ASSERT_EQ(atomic_load(&logged.warnings), 2);
    weft_log_set_callback(NULL, NULL);
    weft_gpu_stream_pool_destroy(mine);
    weft_gpu_close(dev);
}
