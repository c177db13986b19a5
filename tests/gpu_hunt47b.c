/* GPU, round 47 (b): weft_gpu_close with the program's objects still alive.
 * gpu.h: "The buffers, streams, events, kernels and pools made on it must
 * have been destroyed first."  Nothing checked it: close freed the device
 * under them, and their next use (a copy, a launch, their own destroy) read
 * the freed device (ASan: heap-use-after-free in weft_gpu_copy_to_device).
 * Close is now WEFT_EBUSY, frees nothing, warns, and names what is left. */
#include <string.h>

#include "gpu_test.h"
#include "warn_capture.h"

static bool says(const char *text, const char *what) { return strstr(text, what) != NULL; }

/* Every kind of object at once: close refuses, names each, and the objects
 * (and the device) still work; each destroy takes one name off; the last
 * close frees the device. */
TEST(gpu_close_with_live_objects_is_ebusy_names_them_and_frees_nothing) {
    weft_gpu_device *dev = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    enum { N = 64 };
    weft_gpu_buffer *b1 = weft_gpu_buffer_create(dev, sizeof(float), N, 0, &st);
    ASSERT_OK(st);
    weft_gpu_buffer *b2 = weft_gpu_buffer_create(dev, sizeof(float), N, 0, &st);
    ASSERT_OK(st);
    weft_gpu_stream *s = weft_gpu_stream_create(dev, &st);
    ASSERT_OK(st);
    weft_gpu_stream_pool *pool = weft_gpu_stream_pool_create(dev, 2, &st);
    ASSERT_OK(st);
    weft_gpu_kernel *k = weft_gpu_kernel_create(dev, &gpu_test_scale, &st);
    ASSERT_OK(st);
    weft_gpu_event *e = weft_gpu_event_record(s, &st);
    ASSERT_OK(st);

    capture_log();
    ASSERT_STATUS(weft_gpu_close(dev), WEFT_EBUSY);
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    ASSERT_TRUE(says(logged.last, "nothing closed"));
    const char *m = weft_last_error_message();
    ASSERT_TRUE(says(m, "weft_gpu_close"));
    ASSERT_TRUE(says(m, "2 buffers"));
    ASSERT_TRUE(says(m, "1 stream,")); /* the program's stream, not the pools' */
    ASSERT_TRUE(says(m, "1 stream pool")); /* the program's pool, not the device's own */
    ASSERT_TRUE(says(m, "1 event"));
    ASSERT_TRUE(says(m, "1 kernel"));
    ASSERT_FALSE(says(m, "open guard"));
    weft_log_set_callback(NULL, NULL);

    /* Nothing was freed: the device and every object still work. */
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (float)i;
    ASSERT_OK(weft_gpu_copy_to_device(b1, 0, x, N));
    float a = 2.0f;
    unsigned n = N;
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(b1), WEFT_GPU_ARG_VALUE(a), WEFT_GPU_ARG_VALUE(n)};
    ASSERT_OK(weft_gpu_launch(s, k, &(weft_gpu_range){.global = {N}}, args, 3));
    ASSERT_OK(weft_gpu_launch(weft_gpu_stream_pool_get(pool, 1), k, &(weft_gpu_range){.global = {N}},
                              (weft_gpu_arg[]){WEFT_GPU_ARG_BUFFER(b2), WEFT_GPU_ARG_VALUE(a), WEFT_GPU_ARG_VALUE(n)},
                              3));
    ASSERT_OK(weft_gpu_synchronize(dev));
    ASSERT_OK(weft_gpu_event_wait(e));
    ASSERT_OK(weft_gpu_copy_to_host(b1, 0, y, N));
    for (int i = 0; i < N; i++) ASSERT_EQ(y[i], 2.0f * (float)i);

    /* Each destroy takes its object off the list. */
    capture_log();
    weft_gpu_event_destroy(e);
    ASSERT_STATUS(weft_gpu_close(dev), WEFT_EBUSY);
    ASSERT_FALSE(says(weft_last_error_message(), "event"));
    weft_gpu_kernel_destroy(k);
    ASSERT_STATUS(weft_gpu_close(dev), WEFT_EBUSY);
    ASSERT_FALSE(says(weft_last_error_message(), "kernel"));
    weft_gpu_stream_pool_destroy(pool);
    ASSERT_STATUS(weft_gpu_close(dev), WEFT_EBUSY);
    ASSERT_FALSE(says(weft_last_error_message(), "pool"));
    ASSERT_TRUE(says(weft_last_error_message(), "1 stream"));
    weft_gpu_stream_destroy(s);
    ASSERT_STATUS(weft_gpu_close(dev), WEFT_EBUSY);
    ASSERT_FALSE(says(weft_last_error_message(), "stream"));
    ASSERT_TRUE(says(weft_last_error_message(), "2 buffers"));
    weft_gpu_buffer_destroy(b1);
    ASSERT_STATUS(weft_gpu_close(dev), WEFT_EBUSY);
    ASSERT_TRUE(says(weft_last_error_message(), "1 buffer ("));
    ASSERT_EQ(atomic_load(&logged.warnings), 5);
    weft_gpu_buffer_destroy(b2);
    ASSERT_OK(weft_gpu_close(dev));
    ASSERT_EQ(atomic_load(&logged.warnings), 5);
    weft_log_set_callback(NULL, NULL);
}

/* The misuse gpu.h names, written as a program would (close's result not
 * looked at): the buffer is used after the close.  The device must still be
 * there for it (before the fix: a read of the freed device, which ASan
 * reports and a Release build may crash on). */
TEST(gpu_a_buffer_used_after_a_refused_close_still_works) {
    weft_gpu_device *dev = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_buffer *b = weft_gpu_buffer_create(dev, sizeof(int), 16, 0, &st);
    ASSERT_OK(st);
    weft_log_set_level(WEFT_LOG_OFF);
    (void)weft_gpu_close(dev); /* refused: the buffer is alive */
    weft_log_set_level(WEFT_LOG_WARN);
    int in[16], out[16] = {0};
    for (int i = 0; i < 16; i++) in[i] = i * 3;
    ASSERT_OK(weft_gpu_copy_to_device(b, 0, in, 16));
    ASSERT_OK(weft_gpu_copy_to_host(b, 0, out, 16));
    ASSERT_EQ(memcmp(in, out, sizeof in), 0);
    /* The copies succeeded: they left close's message (docs/errors.md, R3). */
    ASSERT_TRUE(says(weft_last_error_message(), "1 buffer"));
    weft_gpu_buffer_destroy(b);
    ASSERT_OK(weft_gpu_close(dev));
}

/* A guard holding a stream of the device's own pool (weft_gpu_stream_begin
 * without its end, as a GPU task or weft_gpu_call holds one while it runs):
 * its end would use the freed pool. */
TEST(gpu_close_with_an_open_guard_on_the_devices_pool_is_ebusy) {
    weft_gpu_device *dev = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_gpu_stream_guard g;
    ASSERT_NOT_NULL(weft_gpu_stream_begin(weft_gpu_device_pool(dev), &g));
    weft_log_set_level(WEFT_LOG_OFF);
    ASSERT_STATUS(weft_gpu_close(dev), WEFT_EBUSY);
    weft_log_set_level(WEFT_LOG_WARN);
    ASSERT_TRUE(says(weft_last_error_message(), "1 open guard"));
    ASSERT_OK(weft_gpu_stream_end(&g));
    ASSERT_OK(weft_gpu_close(dev));
}

static int scale_host(const weft_gpu_range *r, void *const *args) {
    int *x = args[0];
    for (size_t i = 0; i < r->global[0]; i++) x[i] *= 2;
    return 0;
}

static int record_nothing(weft_ctx *cx, weft_gpu_stream *s, void *arg) {
    (void)cx;
    (void)s;
    ++*(int *)arg;
    return 0;
}

/* What is not the program's does not count: the device's own pool and its
 * streams, the streams of a destroyed pool, parallel_for's cached kernels,
 * finished GPU calls, a pool stream's refused destroy.  Close is WEFT_OK with
 * no warning. */
TEST(gpu_close_after_everything_is_destroyed_is_ok_and_silent) {
    weft_gpu_device *dev = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_stream *s = weft_gpu_stream_create(dev, &st);
    ASSERT_OK(st);
    weft_gpu_buffer *b = weft_gpu_buffer_create(dev, sizeof(int), 8, 0, &st);
    ASSERT_OK(st);
    int x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ASSERT_OK(weft_gpu_copy_to_device(b, 0, x, 8));
    static const weft_gpu_for_kernel twice = {.params = "WEFT_GLOBAL int *x", .body = "x[i] *= 2;", .host = scale_host};
    ASSERT_OK(weft_gpu_parallel_for(s, 8, &twice, (weft_gpu_arg[]){WEFT_GPU_ARG_BUFFER(b)}, 1));
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    ASSERT_OK(weft_gpu_copy_to_host(b, 0, x, 8));
    ASSERT_EQ(x[7], 16);
    weft_gpu_stream_pool *pool = weft_gpu_stream_pool_create(dev, 3, &st);
    ASSERT_OK(st);
    weft_log_set_level(WEFT_LOG_OFF);
    weft_gpu_stream_destroy(weft_gpu_stream_pool_get(pool, 0)); /* refused: the pool's */
    weft_gpu_stream_destroy(weft_gpu_stream_pool_get(weft_gpu_device_pool(dev), 0));
    weft_log_set_level(WEFT_LOG_WARN);
    int calls = 0;
    for (int i = 0; i < 4; i++) ASSERT_OK(weft_gpu_call(dev, record_nothing, &calls));
    ASSERT_EQ(calls, 4);
    weft_gpu_stream_pool_destroy(pool);
    weft_gpu_buffer_destroy(b);
    weft_gpu_stream_destroy(s);
    capture_log();
    ASSERT_OK(weft_gpu_close(dev));
    ASSERT_EQ(atomic_load(&logged.warnings), 0);
    weft_log_set_callback(NULL, NULL);
    ASSERT_OK(weft_gpu_close(NULL));
}
