/* GPU layer, one backend at a time: copies, streams, events, kernels, pools
 * and guards, checked against the CPU; every error path gives a status.
 * Each check runs on the emulator (everywhere), OpenCL (PoCL in CI) and CUDA
 * (skipped by name without a device). */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"

enum { N = 1000 };

static void fill(float *x, float *y) {
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = (float)(2 * i + 1);
    }
}

static void check_round_trip(weft_gpu_kind kind) {
    weft_gpu_device *d = gpu_test_open(kind);
    ASSERT_EQ(weft_gpu_device_kind(d), kind);
    ASSERT_TRUE(weft_gpu_device_name(d)[0] != '\0');
    weft_status st;
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, sizeof(int), N, 0, &st);
    ASSERT_OK(st);
    ASSERT_EQ(weft_gpu_buffer_count(b), N);
    ASSERT_EQ(weft_gpu_buffer_bytes(b), N * sizeof(int));
    int in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = i * 7 - 3;
    ASSERT_OK(weft_gpu_copy_to_device(b, 0, in, N));
    memset(out, 0, sizeof out);
    ASSERT_OK(weft_gpu_copy_to_host(b, 0, out, N));
    ASSERT_EQ(memcmp(in, out, sizeof in), 0);
    /* A part, at an offset. */
    int part[10] = {0};
    ASSERT_OK(weft_gpu_copy_to_host(b, 990, part, 10));
    ASSERT_EQ(part[9], in[999]);
    ASSERT_STATUS(weft_gpu_copy_to_host(b, 991, part, 10), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_device(b, N + 1, in, 0), WEFT_EINVAL);
    ASSERT_OK(weft_gpu_copy_to_device(b, N, in, 0));
    weft_gpu_buffer_destroy(b);
    weft_gpu_close(d);
}
TEST(emu_copies_round_trip) { check_round_trip(WEFT_GPU_EMULATOR); }

/* "WEFT_OK when all work queued so far is done": a stream that never had
 * work.  Before, the first query recorded a marker the emulator's stream
 * thread had not reached yet and said WEFT_EAGAIN (found by a sweep). */
TEST(emu_query_of_a_stream_that_never_had_work_is_ok_at_once) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    for (int i = 0; i < 50; i++) {
        weft_status st;
        weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
        ASSERT_OK(st);
        ASSERT_OK(weft_gpu_stream_query(s));
        weft_gpu_stream_destroy(s);
    }
    weft_gpu_close(d);
}
TEST(opencl_copies_round_trip) { check_round_trip(WEFT_GPU_OPENCL); }
TEST(cuda_copies_round_trip) { check_round_trip(WEFT_GPU_CUDA); }

/* Upload, vadd, scale, download on one stream: the CPU's answer. */
static void check_kernels(weft_gpu_kind kind) {
    weft_gpu_device *d = gpu_test_open(kind);
    weft_status st;
    weft_gpu_kernel *vadd = weft_gpu_kernel_create(d, &gpu_test_vadd, &st);
    ASSERT_OK(st);
    weft_gpu_kernel *scale = weft_gpu_kernel_create(d, &gpu_test_scale, &st);
    ASSERT_OK(st);
    weft_gpu_buffer *bx = weft_gpu_buffer_create(d, sizeof(float), N, 0, &st);
    weft_gpu_buffer *by = weft_gpu_buffer_create(d, sizeof(float), N, 0, &st);
    weft_gpu_buffer *bz = weft_gpu_buffer_create(d, sizeof(float), N, 0, &st);
    ASSERT_OK(st);
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    ASSERT_OK(st);
    float *x = weft_gpu_host_alloc(d, sizeof(float) * N, &st);
    float *y = weft_gpu_host_alloc(d, sizeof(float) * N, &st);
    float *z = weft_gpu_host_alloc(d, sizeof(float) * N, &st);
    ASSERT_OK(st);
    fill(x, y);
    unsigned n = N;
    float a = 0.5f;
    ASSERT_OK(weft_gpu_copy_to_device_async(s, bx, 0, x, N));
    ASSERT_OK(weft_gpu_copy_to_device_async(s, by, 0, y, N));
    weft_gpu_arg va[] = {WEFT_GPU_ARG_BUFFER(bx), WEFT_GPU_ARG_BUFFER(by), WEFT_GPU_ARG_BUFFER(bz),
                         WEFT_GPU_ARG_VALUE(n)};
    ASSERT_OK(weft_gpu_launch(s, vadd, &(weft_gpu_range){.global = {N}}, va, 4));
    weft_gpu_arg sa[] = {WEFT_GPU_ARG_BUFFER(bz), WEFT_GPU_ARG_VALUE(a), WEFT_GPU_ARG_VALUE(n)};
    ASSERT_OK(weft_gpu_launch(s, scale, &(weft_gpu_range){.global = {N}}, sa, 3));
    ASSERT_OK(weft_gpu_copy_to_host_async(s, bz, 0, z, N));
    weft_gpu_event *e = weft_gpu_event_record(s, &st);
    ASSERT_OK(st);
    ASSERT_OK(weft_gpu_event_wait(e));
    ASSERT_OK(weft_gpu_event_query(e));
    weft_gpu_event_destroy(e);
    /* The query's own marker may be pending a moment (OpenCL). */
    for (int tries = 0; (st = weft_gpu_stream_query(s)) == WEFT_EAGAIN && tries < 1000000; tries++) {
    }
    ASSERT_OK(st);
    for (int i = 0; i < N; i++) ASSERT_TRUE(z[i] == 0.5f * (x[i] + y[i]));
    weft_gpu_host_free(d, x);
    weft_gpu_host_free(d, y);
    weft_gpu_host_free(d, z);
    weft_gpu_stream_destroy(s);
    weft_gpu_buffer_destroy(bx);
    weft_gpu_buffer_destroy(by);
    weft_gpu_buffer_destroy(bz);
    weft_gpu_kernel_destroy(vadd);
    weft_gpu_kernel_destroy(scale);
    weft_gpu_close(d);
}
TEST(emu_kernels_match_the_cpu) { check_kernels(WEFT_GPU_EMULATOR); }
TEST(opencl_kernels_match_the_cpu) { check_kernels(WEFT_GPU_OPENCL); }
TEST(cuda_kernels_match_the_cpu) { check_kernels(WEFT_GPU_CUDA); }

/* More than the device has is WEFT_ENOMEM, and the device stays usable. */
static void check_out_of_memory(weft_gpu_kind kind) {
    weft_gpu_device *d = gpu_test_open(kind);
    size_t free_b = 0, total = 0;
    ASSERT_OK(weft_gpu_mem_info(d, &free_b, &total));
    ASSERT_GT(total, 0);
    ASSERT_LE(free_b, total);
    weft_status st;
    ASSERT_NULL(weft_gpu_buffer_create(d, 1, total + ((size_t)1 << 30), 0, &st));
    ASSERT_STATUS(st, WEFT_ENOMEM);
    ASSERT_TRUE(strlen(weft_last_error_message()) > 0);
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, 1, 4096, 0, &st);
    ASSERT_OK(st);
    weft_gpu_buffer_destroy(b);
    weft_gpu_close(d);
}
TEST(emu_more_than_device_memory_is_enomem) { check_out_of_memory(WEFT_GPU_EMULATOR); }
TEST(opencl_more_than_device_memory_is_enomem) { check_out_of_memory(WEFT_GPU_OPENCL); }
TEST(cuda_more_than_device_memory_is_enomem) { check_out_of_memory(WEFT_GPU_CUDA); }

/* Sizes near SIZE_MAX are WEFT_ENOMEM: the alignment slack added to them used
 * to wrap around, so a "successful" allocation was a few bytes long and the
 * first write past them corrupted the heap. */
TEST(emu_sizes_near_size_max_are_enomem_not_a_tiny_block) {
    weft_status st;
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .emulator_memory = SIZE_MAX}, &st);
    ASSERT_NOT_NULL(d);
    for (size_t slack = 1; slack <= 4096; slack *= 8) {
        ASSERT_NULL(weft_gpu_host_alloc(d, SIZE_MAX - slack, &st));
        ASSERT_STATUS(st, WEFT_ENOMEM);
        ASSERT_NULL(weft_gpu_buffer_create(d, 1, SIZE_MAX - slack, WEFT_GPU_MANAGED, &st));
        ASSERT_STATUS(st, WEFT_ENOMEM);
        ASSERT_NULL(weft_gpu_buffer_create(d, 1, SIZE_MAX - slack, 0, &st));
        ASSERT_STATUS(st, WEFT_ENOMEM);
    }
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, 1, 4096, WEFT_GPU_MANAGED, &st); /* still usable */
    ASSERT_OK(st);
    weft_gpu_buffer_destroy(b);
    weft_gpu_close(d);
}

/* A launch the device refuses (a group far too large) is WEFT_EDEVICE with
 * the backend's message; the stream goes on working. */
static void check_launch_refused(weft_gpu_kind kind) {
    weft_gpu_device *d = gpu_test_open(kind);
    weft_status st;
    weft_gpu_kernel *scale = weft_gpu_kernel_create(d, &gpu_test_scale, &st);
    ASSERT_OK(st);
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, sizeof(float), N, 0, &st);
    ASSERT_OK(st);
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    ASSERT_OK(st);
    unsigned n = N;
    float a = 2.0f, x[N], y[N];
    fill(x, y);
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(b), WEFT_GPU_ARG_VALUE(a), WEFT_GPU_ARG_VALUE(n)};
    weft_gpu_range huge = {.global = {(size_t)1 << 21}, .local = {(size_t)1 << 20}};
    ASSERT_STATUS(weft_gpu_launch(s, scale, &huge, args, 3), WEFT_EDEVICE);
    printf("refused: %s\n", weft_last_error_message());
    ASSERT_TRUE(strlen(weft_last_error_message()) > 0);
    ASSERT_OK(weft_gpu_copy_to_device_async(s, b, 0, x, N));
    ASSERT_OK(weft_gpu_launch(s, scale, &(weft_gpu_range){.global = {N}}, args, 3));
    ASSERT_OK(weft_gpu_copy_to_host_async(s, b, 0, y, N));
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    for (int i = 0; i < N; i++) ASSERT_TRUE(y[i] == 2.0f * x[i]);
    weft_gpu_stream_destroy(s);
    weft_gpu_buffer_destroy(b);
    weft_gpu_kernel_destroy(scale);
    weft_gpu_close(d);
}
TEST(emu_refused_launch_is_edevice) { check_launch_refused(WEFT_GPU_EMULATOR); }
TEST(opencl_refused_launch_is_edevice) { check_launch_refused(WEFT_GPU_OPENCL); }
TEST(cuda_refused_launch_is_edevice) { check_launch_refused(WEFT_GPU_CUDA); }

TEST(opencl_bad_kernel_source_is_edevice_with_the_build_log) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_OPENCL);
    weft_status st;
    weft_gpu_kernel_source bad = {.name = "broken", .opencl = "__kernel void broken(__global float *x) { x[0] = y; }"};
    ASSERT_NULL(weft_gpu_kernel_create(d, &bad, &st));
    ASSERT_STATUS(st, WEFT_EDEVICE);
    printf("build: %s\n", weft_last_error_message());
    ASSERT_TRUE(strstr(weft_last_error_message(), "build failed") != NULL);
    weft_gpu_kernel_source missing = {.name = "nope", .opencl = gpu_test_opencl};
    ASSERT_NULL(weft_gpu_kernel_create(d, &missing, &st));
    ASSERT_STATUS(st, WEFT_ENOENT);
    weft_gpu_kernel_source no_form = {.name = "vadd", .cuda = gpu_test_ptx};
    ASSERT_NULL(weft_gpu_kernel_create(d, &no_form, &st));
    ASSERT_STATUS(st, WEFT_ENOENT);
    weft_gpu_close(d);
}

TEST(cuda_missing_entry_point_is_enoent) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_CUDA);
    weft_status st;
    weft_gpu_kernel_source missing = {.name = "nope", .cuda = gpu_test_ptx};
    ASSERT_NULL(weft_gpu_kernel_create(d, &missing, &st));
    ASSERT_STATUS(st, WEFT_ENOENT);
    weft_gpu_kernel_source bad = {.name = "vadd", .cuda = ".version 7.0\n.target sm_75\nthis is not ptx\n"};
    ASSERT_NULL(weft_gpu_kernel_create(d, &bad, &st));
    ASSERT_STATUS(st, WEFT_EDEVICE);
    printf("load: %s\n", weft_last_error_message());
    weft_gpu_close(d);
}

/* An emulator kernel that fails reports WEFT_EDEVICE at the stream's next wait,
 * once; the stream then works again. */
static int failing_host(const weft_gpu_range *r, void *const *a) { return 7; }

TEST(emu_failing_kernel_is_reported_by_the_stream) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "fails", .host = failing_host}, &st);
    ASSERT_OK(st);
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    ASSERT_OK(weft_gpu_launch(s, k, &(weft_gpu_range){.global = {1}}, NULL, 0));
    ASSERT_STATUS(weft_gpu_stream_synchronize(s), WEFT_EDEVICE);
    ASSERT_TRUE(strstr(weft_last_error_message(), "fails") != NULL);
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    weft_gpu_stream_destroy(s);
    weft_gpu_kernel_destroy(k);
    ASSERT_NULL(weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "x", .opencl = "..."}, &st));
    ASSERT_STATUS(st, WEFT_ENOENT);
    weft_gpu_close(d);
}

/* Work that fails after the stream was asked for it: a kernel that spins
 * until `late_gate` is set, then fails. */
static _Atomic int late_gate;
static int late_failing_host(const weft_gpu_range *r, void *const *a) {
    while (!atomic_load(&late_gate)) {
    }
    return 9;
}
static int ok_host(const weft_gpu_range *r, void *const *a) { return 0; }

/* An event reports exactly the failures of the work queued before it: the
 * same answer however often it is asked and whatever a synchronize of the
 * stream reported meanwhile, and nothing of work queued after it. */
TEST(emu_event_reports_exactly_the_failures_before_it) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_kernel *bad = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "bad", .host = failing_host}, &st);
    weft_gpu_kernel *good = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "good", .host = ok_host}, &st);
    weft_gpu_kernel *late =
        weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "late", .host = late_failing_host}, &st);
    ASSERT_OK(st);
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    const weft_gpu_range one = {.global = {1}};
    ASSERT_OK(weft_gpu_launch(s, good, &one, NULL, 0));
    weft_gpu_event *before = weft_gpu_event_record(s, &st);
    ASSERT_OK(st);
    ASSERT_OK(weft_gpu_launch(s, bad, &one, NULL, 0));
    weft_gpu_event *after = weft_gpu_event_record(s, &st);
    ASSERT_OK(st);
    ASSERT_STATUS(weft_gpu_stream_synchronize(s), WEFT_EDEVICE);
    /* The synchronize reported the failure; the event still does, every time. */
    ASSERT_STATUS(weft_gpu_event_query(after), WEFT_EDEVICE);
    ASSERT_TRUE(strstr(weft_last_error_message(), "bad") != NULL);
    ASSERT_STATUS(weft_gpu_event_wait(after), WEFT_EDEVICE);
    ASSERT_OK(weft_gpu_event_query(before));
    /* A failure after `before`, whether or not a query asks first, is not its. */
    atomic_store(&late_gate, 0);
    ASSERT_OK(weft_gpu_launch(s, late, &one, NULL, 0));
    ASSERT_OK(weft_gpu_event_query(before));
    atomic_store(&late_gate, 1);
    ASSERT_STATUS(weft_gpu_stream_synchronize(s), WEFT_EDEVICE);
    ASSERT_OK(weft_gpu_event_query(before));
    ASSERT_OK(weft_gpu_event_wait(before));
    weft_gpu_event_destroy(before);
    weft_gpu_event_destroy(after);
    weft_gpu_stream_destroy(s);
    weft_gpu_kernel_destroy(late);
    weft_gpu_kernel_destroy(good);
    weft_gpu_kernel_destroy(bad);
    weft_gpu_close(d);
}

/* Each failure is reported by exactly one synchronize of its stream (stream
 * synchronize, wait, a guard's end, or the device's synchronize): the first
 * that covers it.  A stream query says what a synchronize would, and leaves
 * the failure to it; an event in between takes nothing either. */
TEST(emu_each_failure_is_reported_by_one_synchronize) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_kernel *bad = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "bad", .host = failing_host}, &st);
    ASSERT_OK(st);
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    const weft_gpu_range one = {.global = {1}};
    /* Stream query, then an event, then the stream's wait. */
    ASSERT_OK(weft_gpu_launch(s, bad, &one, NULL, 0));
    while ((st = weft_gpu_stream_query(s)) == WEFT_EAGAIN) {
    }
    ASSERT_STATUS(st, WEFT_EDEVICE);
    ASSERT_STATUS(weft_gpu_stream_query(s), WEFT_EDEVICE);
    weft_gpu_event *e = weft_gpu_event_record(s, &st);
    ASSERT_STATUS(weft_gpu_event_wait(e), WEFT_EDEVICE);
    weft_gpu_event_destroy(e);
    ASSERT_STATUS(weft_gpu_stream_wait(s), WEFT_EDEVICE);
    ASSERT_OK(weft_gpu_stream_query(s));
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    /* The device's synchronize reports it once, for that stream. */
    ASSERT_OK(weft_gpu_launch(s, bad, &one, NULL, 0));
    ASSERT_STATUS(weft_gpu_synchronize(d), WEFT_EDEVICE);
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    ASSERT_OK(weft_gpu_synchronize(d));
    /* A guard's end is a synchronize of its stream too. */
    weft_gpu_stream_guard g;
    weft_gpu_stream *gs = weft_gpu_stream_begin(weft_gpu_device_pool(d), &g);
    ASSERT_OK(weft_gpu_launch(gs, bad, &one, NULL, 0));
    ASSERT_STATUS(weft_gpu_stream_end(&g), WEFT_EDEVICE);
    ASSERT_OK(weft_gpu_synchronize(d));
    weft_gpu_stream_destroy(s);
    weft_gpu_kernel_destroy(bad);
    weft_gpu_close(d);
}

/* Emulator streams are really asynchronous and ordered: a kernel that waits for
 * a flag holds back the copy queued after it, and the host sees the copy's
 * data only after the stream says it is done. */
static _Atomic int gate;
static int gated_host(const weft_gpu_range *r, void *const *a) {
    while (!atomic_load(&gate)) {
    }
    *(int *)a[0] = 42;
    return 0;
}

TEST(emu_streams_are_asynchronous_and_ordered) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "gated", .host = gated_host}, &st);
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, sizeof(int), 1, 0, &st);
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    ASSERT_OK(st);
    int out = 0;
    weft_gpu_arg arg = WEFT_GPU_ARG_BUFFER(b);
    ASSERT_OK(weft_gpu_launch(s, k, &(weft_gpu_range){.global = {1}}, &arg, 1));
    ASSERT_OK(weft_gpu_copy_to_host_async(s, b, 0, &out, 1));
    ASSERT_STATUS(weft_gpu_stream_query(s), WEFT_EAGAIN);
    ASSERT_EQ(out, 0);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    ASSERT_EQ(out, 42);
    weft_gpu_stream_destroy(s);
    weft_gpu_buffer_destroy(b);
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(d);
}

static int add_one_host(const weft_gpu_range *r, void *const *a) {
    (void)r;
    *(int *)a[0] += 1;
    return 0;
}

/* "Frees a kernel; queued launches of it still run": a kernel destroyed while
 * its launch waits behind a gated one still runs, by its own code.  The
 * emulator's launch used to keep a pointer to the freed kernel (ASan:
 * heap-use-after-free when the stream reached it). */
TEST(emu_a_kernel_destroyed_with_launches_queued_still_runs_them) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    atomic_store(&gate, 0);
    weft_gpu_kernel *g = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "gated", .host = gated_host}, &st);
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "add1", .host = add_one_host}, &st);
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, sizeof(int), 1, 0, &st);
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    ASSERT_OK(st);
    weft_gpu_arg arg = WEFT_GPU_ARG_BUFFER(b);
    ASSERT_OK(weft_gpu_launch(s, g, &(weft_gpu_range){.global = {1}}, &arg, 1)); /* writes 42 once let go */
    for (int i = 0; i < 3; i++) ASSERT_OK(weft_gpu_launch(s, k, &(weft_gpu_range){.global = {1}}, &arg, 1));
    weft_gpu_kernel_destroy(k);
    /* Reuse the freed memory, so a launch reading the old kernel finds junk. */
    void *junk[8];
    for (int i = 0; i < 8; i++) memset(junk[i] = malloc(80), 0xA5, 80);
    int out = 0;
    ASSERT_OK(weft_gpu_copy_to_host_async(s, b, 0, &out, 1));
    atomic_store(&gate, 1);
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    ASSERT_EQ(out, 45);
    for (int i = 0; i < 8; i++) free(junk[i]);
    weft_gpu_stream_destroy(s);
    weft_gpu_buffer_destroy(b);
    weft_gpu_kernel_destroy(g);
    weft_gpu_close(d);
}

static void check_pool_and_guard(weft_gpu_kind kind) {
    weft_gpu_device *d = gpu_test_open(kind);
    weft_status st;
    weft_gpu_stream_pool *p = weft_gpu_stream_pool_create(d, 3, &st);
    ASSERT_OK(st);
    ASSERT_EQ(weft_gpu_stream_pool_size(p), 3);
    ASSERT_TRUE(weft_gpu_stream_pool_get(p, 1) == weft_gpu_stream_pool_get(p, 4));
    weft_gpu_stream_guard g[4];
    weft_gpu_stream *s[4];
    for (int i = 0; i < 4; i++) s[i] = weft_gpu_stream_begin(p, &g[i]);
    /* Three distinct reservations; the fourth shares one. */
    ASSERT_TRUE(s[0] != s[1] && s[1] != s[2] && s[0] != s[2]);
    ASSERT_TRUE(s[3] == s[0] || s[3] == s[1] || s[3] == s[2]);
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, sizeof(int), 4, 0, &st);
    int in[4] = {1, 2, 3, 4}, out[4] = {0};
    ASSERT_OK(weft_gpu_copy_to_device_async(s[2], b, 0, in, 4));
    ASSERT_OK(weft_gpu_copy_to_host_async(s[2], b, 0, out, 4));
    for (int i = 3; i >= 0; i--) ASSERT_OK(weft_gpu_stream_end(&g[i]));
    ASSERT_EQ(out[3], 4);
    ASSERT_STATUS(weft_gpu_stream_end(&g[0]), WEFT_EINVAL); /* closed */
    ASSERT_OK(weft_gpu_synchronize(d));
    weft_gpu_buffer_destroy(b);
    weft_gpu_stream_pool_destroy(p);
    ASSERT_EQ(weft_gpu_stream_pool_size(weft_gpu_device_pool(d)), 4);
    weft_gpu_close(d);
}
TEST(emu_pool_guards_reserve_distinct_streams) { check_pool_and_guard(WEFT_GPU_EMULATOR); }
TEST(opencl_pool_guards_reserve_distinct_streams) { check_pool_and_guard(WEFT_GPU_OPENCL); }

TEST(managed_buffers_where_the_backend_has_them) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, sizeof(int), 8, WEFT_GPU_MANAGED, &st);
    ASSERT_OK(st);
    int *h = weft_gpu_buffer_host_ptr(b);
    ASSERT_NOT_NULL(h);
    h[3] = 9;
    int out[8];
    ASSERT_OK(weft_gpu_copy_to_host(b, 0, out, 8));
    ASSERT_EQ(out[3], 9);
    weft_gpu_buffer_destroy(b);
    weft_gpu_close(d);
    weft_gpu_device *cl = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_OPENCL}, &st);
    if (cl) {
        ASSERT_NULL(weft_gpu_buffer_create(cl, 4, 8, WEFT_GPU_MANAGED, &st));
        ASSERT_STATUS(st, WEFT_ENOENT);
        weft_gpu_close(cl);
    }
}

TEST(null_and_bad_arguments_give_einval) {
    weft_status st;
    ASSERT_NULL(weft_gpu_open(&(weft_gpu_config){.kind = 99}, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    ASSERT_NULL(weft_gpu_buffer_create(NULL, 4, 4, 0, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_buffer_create(d, 0, 4, 0, &st));
    ASSERT_NULL(weft_gpu_buffer_create(d, 4, 0, 0, &st));
    ASSERT_NULL(weft_gpu_buffer_create(d, SIZE_MAX / 2, 4, 0, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_buffer_create(d, 4, 4, 0x80, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_device(NULL, 0, &st, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_host(NULL, 0, &st, 1), WEFT_EINVAL);
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, 4, 4, 0, &st);
    ASSERT_STATUS(weft_gpu_copy_to_device(b, 0, NULL, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_device_async(NULL, b, 0, &st, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_copy_to_host_async(NULL, b, 0, &st, 1), WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_stream_create(NULL, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_stream_synchronize(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_stream_wait(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_stream_query(NULL), WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_event_record(NULL, &st));
    ASSERT_STATUS(weft_gpu_event_query(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_event_wait(NULL), WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_kernel_create(d, NULL, &st));
    ASSERT_NULL(weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.opencl = "x"}, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_stream_pool_create(d, 1000, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_gpu_stream_begin(NULL, NULL));
    ASSERT_STATUS(weft_gpu_stream_end(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_mem_info(NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_synchronize(NULL), WEFT_EINVAL);
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &gpu_test_scale, &st);
    weft_gpu_stream *s = weft_gpu_stream_pool_get(weft_gpu_device_pool(d), 0);
    weft_gpu_range r = {.global = {4}};
    ASSERT_STATUS(weft_gpu_launch(NULL, k, &r, NULL, 0), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_launch(s, NULL, &r, NULL, 0), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_launch(s, k, NULL, NULL, 0), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_launch(s, k, &r, NULL, 1), WEFT_EINVAL);
    weft_gpu_arg empty = {0};
    ASSERT_STATUS(weft_gpu_launch(s, k, &r, &empty, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_launch(s, k, &r, &empty, WEFT_GPU_MAX_ARGS + 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_call(NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_TRUE(weft_task_is_null(weft_emplace_gpu(NULL, d, NULL, NULL)));
    ASSERT_EQ(weft_gpu_device_kind(NULL), WEFT_GPU_AUTO);
    ASSERT_STREQ(weft_gpu_device_name(NULL), "");
    ASSERT_STREQ(weft_gpu_kind_name(WEFT_GPU_OPENCL), "opencl");
    ASSERT_STREQ(weft_gpu_kind_name((weft_gpu_kind)77), "?");
    ASSERT_STREQ(weft_errname(WEFT_EDEVICE), "WEFT_EDEVICE");
    weft_gpu_buffer_destroy(NULL);
    weft_gpu_stream_destroy(NULL);
    weft_gpu_event_destroy(NULL);
    weft_gpu_kernel_destroy(NULL);
    weft_gpu_stream_pool_destroy(NULL);
    weft_gpu_host_free(d, NULL);
    weft_gpu_close(NULL);
    weft_gpu_kernel_destroy(k);
    weft_gpu_buffer_destroy(b);
    weft_gpu_close(d);
}

/* WEFT_GPU picks the backend of an automatic open; none gives no device; a
 * bad value is ignored (warned about once). */
TEST(weft_gpu_environment_picks_the_backend) {
    weft_status st;
    setenv("WEFT_GPU", "emulator", 1);
    weft_gpu_device *d = weft_gpu_open(NULL, &st);
    ASSERT_OK(st);
    ASSERT_EQ(weft_gpu_device_kind(d), WEFT_GPU_EMULATOR);
    weft_gpu_close(d);
    setenv("WEFT_GPU", "NONE", 1);
    ASSERT_NULL(weft_gpu_open(NULL, &st));
    ASSERT_STATUS(st, WEFT_ENOENT);
    /* A kind named in the config ignores WEFT_GPU. */
    d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR}, &st);
    ASSERT_OK(st);
    weft_gpu_close(d);
    setenv("WEFT_GPU", "quantum", 1);
    d = weft_gpu_open(NULL, &st);
    ASSERT_OK(st); /* the probe: at least the emulator */
    printf("auto: %s (%s)\n", weft_gpu_kind_name(weft_gpu_device_kind(d)), weft_gpu_device_name(d));
    weft_gpu_close(d);
    unsetenv("WEFT_GPU");
}

TEST(hip_opens_or_skips_by_name) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_HIP);
    ASSERT_EQ(weft_gpu_device_kind(d), WEFT_GPU_HIP);
    weft_gpu_close(d);
}
