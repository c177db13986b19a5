/* GPU layer, adversarial round 36: an event that outlives its stream, a guard
 * of a failed begin, configs and launch arguments out of range. */
#include <stdint.h>
#include <string.h>

#include "gpu_test.h"

static int nop_host(const weft_gpu_range *r, void *const *a) {
    (void)r;
    (void)a;
    return 0;
}

/* Events are destroyed on their own (gpu.h asks only that they go before the
 * device), so one may be asked after its stream is gone, as CUDA and OpenCL
 * allow.  The emulator's query read the freed stream's `completed` count: a
 * use after free, which said WEFT_EAGAIN for good once a new stream took the
 * memory. */
TEST(emu_an_event_outlives_its_stream) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, sizeof(int), 64, 0, &st);
    ASSERT_OK(st);
    int host[64] = {0};
    for (int round = 0; round < 20; round++) {
        weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
        ASSERT_OK(st);
        ASSERT_OK(weft_gpu_copy_to_device_async(s, b, 0, host, 64));
        weft_gpu_event *e = weft_gpu_event_record(s, &st);
        ASSERT_OK(st);
        weft_gpu_stream_destroy(s); /* runs its queue to the end: the event is done */
        weft_gpu_stream *reuse = weft_gpu_stream_create(d, &st); /* takes the freed memory back */
        ASSERT_OK(st);
        ASSERT_OK(weft_gpu_event_query(e));
        ASSERT_OK(weft_gpu_event_wait(e));
        weft_gpu_event_destroy(e);
        weft_gpu_stream_destroy(reuse);
    }
    weft_gpu_buffer_destroy(b);
    weft_gpu_close(d);
}

/* "WEFT_EINVAL for NULL or a guard that is not open": the guard of a begin
 * that failed (no pool) is not open.  Begin left it as the caller had it, so
 * the usual begin ... end with no check between read garbage and crashed. */
TEST(a_guard_whose_begin_failed_ends_with_einval) {
    weft_gpu_stream_guard g;
    memset(&g, 0xab, sizeof g); /* whatever the stack held */
    ASSERT_NULL(weft_gpu_stream_begin(NULL, &g));
    ASSERT_STATUS(weft_gpu_stream_end(&g), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_stream_end(&g), WEFT_EINVAL);
}

/* A kind out of range is "kind unknown", WEFT_EINVAL, whichever side of the
 * enum it falls; a negative one was taken for WEFT_GPU=none (WEFT_ENOENT,
 * with a message naming a variable that was not set). */
TEST(gpu_open_with_a_negative_kind_is_einval) {
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_gpu_open(&(weft_gpu_config){.kind = (weft_gpu_kind)-1}, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "WEFT_GPU") == NULL);
    ASSERT_NULL(weft_gpu_open(&(weft_gpu_config){.kind = (weft_gpu_kind)(WEFT_GPU_EMULATOR + 1)}, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
}

/* A value argument's size near SIZE_MAX: the emulator summed the rounded
 * sizes, which wrapped to a few bytes, and copied SIZE_MAX - 7 bytes into
 * them (heap overrun).  Now WEFT_ENOMEM, with a message (docs/errors.md R3).
 * And a group whose sizes multiply past SIZE_MAX to a small number is refused
 * like any group over the limit.  The stream works on after both. */
TEST(emu_launch_sizes_that_wrap_are_refused_not_overrun) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "nop", .host = nop_host}, &st);
    ASSERT_OK(st);
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    ASSERT_OK(st);
    const weft_gpu_range one = {.global = {1}};
    int v = 1;
    weft_gpu_arg wraps[2] = {WEFT_GPU_ARG_VALUE(v), {.value = &v, .size = SIZE_MAX - 7}};
    ASSERT_STATUS(weft_gpu_launch(s, k, &one, wraps, 2), WEFT_ENOMEM);
    ASSERT_TRUE(strstr(weft_last_error_message(), "emulator") != NULL);
    weft_gpu_range wide = {.global = {1}, .local = {(size_t)1 << 32, (size_t)1 << 32, 1}}; /* product 2^64: 0 */
    ASSERT_STATUS(weft_gpu_launch(s, k, &wide, NULL, 0), WEFT_EDEVICE);
    ASSERT_OK(weft_gpu_launch(s, k, &one, wraps, 1));
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    weft_gpu_stream_destroy(s);
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(d);
}

/* "at most WEFT_GPU_MAX_ARGS - 1" arguments: the check added one to nargs,
 * which a nargs of SIZE_MAX (a count of 0 less one) wrapped to 0, and the
 * OpenCL and CUDA paths then copied SIZE_MAX arguments (a crash). */
static void check_parallel_for_nargs(weft_gpu_kind kind) {
    weft_gpu_device *d = gpu_test_open(kind);
    weft_status st;
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    ASSERT_OK(st);
    int v = 1;
    weft_gpu_arg args[1] = {WEFT_GPU_ARG_VALUE(v)};
    const weft_gpu_for_kernel fk = {.params = "int a", .body = "(void)a;", .host = nop_host};
    ASSERT_STATUS(weft_gpu_parallel_for(s, 4, &fk, args, SIZE_MAX), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_parallel_for(s, 4, &fk, args, WEFT_GPU_MAX_ARGS), WEFT_EINVAL);
    ASSERT_OK(weft_gpu_parallel_for(s, 4, &fk, args, 1));
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    weft_gpu_stream_destroy(s);
    weft_gpu_close(d);
}
TEST(emu_parallel_for_with_nargs_that_wraps_is_einval) { check_parallel_for_nargs(WEFT_GPU_EMULATOR); }
TEST(opencl_parallel_for_with_nargs_that_wraps_is_einval) { check_parallel_for_nargs(WEFT_GPU_OPENCL); }

/* An OpenCL kernel keeps the arguments of its last launch: a launch given
 * fewer than the kernel takes was refused the first time (by the driver,
 * CL_INVALID_KERNEL_ARGS) and then, after one complete launch, ran with that
 * launch's values for the missing ones and said WEFT_OK.  Refused every time
 * now, with the counts in the message; the data is left alone. */
TEST(opencl_a_launch_with_too_few_arguments_is_refused_every_time) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_OPENCL);
    weft_status st;
    weft_gpu_kernel *scale = weft_gpu_kernel_create(d, &gpu_test_scale, &st); /* scale(x, a, n) */
    ASSERT_OK(st);
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, sizeof(float), 4, 0, &st);
    ASSERT_OK(st);
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    ASSERT_OK(st);
    float x[4] = {1, 2, 3, 4};
    ASSERT_OK(weft_gpu_copy_to_device(b, 0, x, 4));
    float a = 2.0f;
    unsigned n = 4;
    weft_gpu_arg args[3] = {WEFT_GPU_ARG_BUFFER(b), WEFT_GPU_ARG_VALUE(a), WEFT_GPU_ARG_VALUE(n)};
    const weft_gpu_range r = {.global = {4}};
    ASSERT_STATUS(weft_gpu_launch(s, scale, &r, args, 2), WEFT_EDEVICE);
    ASSERT_OK(weft_gpu_launch(s, scale, &r, args, 3)); /* x * 2 */
    ASSERT_STATUS(weft_gpu_launch(s, scale, &r, args, 2), WEFT_EDEVICE);
    ASSERT_TRUE(strstr(weft_last_error_message(), "3 arguments, 2 given") != NULL);
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    ASSERT_OK(weft_gpu_copy_to_host(b, 0, x, 4));
    ASSERT_TRUE(x[0] == 2.0f && x[3] == 8.0f); /* scaled once */
    weft_gpu_stream_destroy(s);
    weft_gpu_buffer_destroy(b);
    weft_gpu_kernel_destroy(scale);
    weft_gpu_close(d);
}
