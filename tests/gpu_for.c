/* Kernels from source at run time (weft_gpu_parallel_for): results against
 * the CPU on the emulator, OpenCL (PoCL) and CUDA (skipped by name without a
 * device); NVRTC's compile checked without a device; bad sources and bad
 * arguments give statuses. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "gpu/backend.h" /* weft__gpu_nvrtc_ptx */
#include "gpu_test.h"

enum { N = 10007 };

static int saxpy_host(const weft_gpu_range *r, void *const *a) {
    float *y = a[0];
    const float *x = a[1];
    float s = *(const float *)a[2];
    for (size_t i = 0; i < r->global[0]; i++) y[i] = s * x[i] + y[i];
    return 0;
}

static const weft_gpu_for_kernel saxpy = {
    .params = "WEFT_GLOBAL float *y, WEFT_GLOBAL const float *x, float a",
    .body = "y[i] = a * x[i] + y[i];",
    .host = saxpy_host,
};

static void check_saxpy(weft_gpu_kind kind) {
    weft_gpu_device *d = gpu_test_open(kind);
    weft_status st;
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    weft_gpu_buffer *x = weft_gpu_buffer_create(d, sizeof(float), N, 0, &st);
    weft_gpu_buffer *y = weft_gpu_buffer_create(d, sizeof(float), N, 0, &st);
    ASSERT_OK(st);
    static float hx[N], hy[N], want[N];
    for (int i = 0; i < N; i++) {
        hx[i] = (float)(i % 101);
        hy[i] = (float)(i % 7);
        want[i] = hy[i];
    }
    ASSERT_OK(weft_gpu_copy_to_device(x, 0, hx, N));
    ASSERT_OK(weft_gpu_copy_to_device(y, 0, hy, N));
    float a = 2.5f;
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(y), WEFT_GPU_ARG_BUFFER(x), WEFT_GPU_ARG_VALUE(a)};
    for (int round = 0; round < 3; round++) { /* built once, then from the cache */
        ASSERT_OK(weft_gpu_parallel_for(s, N, &saxpy, args, 3));
        for (int i = 0; i < N; i++) want[i] = a * hx[i] + want[i];
    }
    ASSERT_OK(weft_gpu_parallel_for(s, 0, &saxpy, args, 3)); /* n 0: nothing */
    ASSERT_OK(weft_gpu_stream_synchronize(s));
    ASSERT_OK(weft_gpu_copy_to_host(y, 0, hy, N));
    for (int i = 0; i < N; i++) ASSERT_TRUE(hy[i] == want[i]);
    weft_gpu_buffer_destroy(x);
    weft_gpu_buffer_destroy(y);
    weft_gpu_stream_destroy(s);
    weft_gpu_close(d);
}
TEST(emu_parallel_for_matches_the_cpu) { check_saxpy(WEFT_GPU_EMULATOR); }
TEST(opencl_parallel_for_matches_the_cpu) { check_saxpy(WEFT_GPU_OPENCL); }
TEST(cuda_parallel_for_matches_the_cpu) { check_saxpy(WEFT_GPU_CUDA); }

static const weft_gpu_for_kernel broken = {.params = "WEFT_GLOBAL float *y", .body = "y[i] = undeclared_thing;"};

TEST(opencl_parallel_for_bad_body_is_edevice_with_the_build_log) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_OPENCL);
    weft_status st;
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    weft_gpu_buffer *y = weft_gpu_buffer_create(d, sizeof(float), 4, 0, &st);
    ASSERT_OK(st);
    weft_gpu_arg a = WEFT_GPU_ARG_BUFFER(y);
    ASSERT_STATUS(weft_gpu_parallel_for(s, 4, &broken, &a, 1), WEFT_EDEVICE);
    printf("build: %s\n", weft_last_error_message());
    ASSERT_TRUE(strstr(weft_last_error_message(), "undeclared_thing") != NULL);
    /* A failed build is not cached: it fails again, the same way. */
    ASSERT_STATUS(weft_gpu_parallel_for(s, 4, &broken, &a, 1), WEFT_EDEVICE);
    weft_gpu_buffer_destroy(y);
    weft_gpu_stream_destroy(s);
    weft_gpu_close(d);
}

/* NVRTC needs no GPU: the CUDA path's compile step runs wherever the library
 * is installed. */
TEST(nvrtc_compiles_a_parallel_for_body_to_ptx) {
    static const char src[] = "#define WEFT_GLOBAL\n"
                              "extern \"C\" __global__ void weft_for(unsigned long long weft_n, float *y, float a) {\n"
                              "    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "    if (i >= weft_n) return;\n"
                              "    { y[i] = a * y[i]; }\n"
                              "}\n";
    char *ptx = NULL;
    size_t bytes = 0;
    int st = weft__gpu_nvrtc_ptx(src, "compute_75", &ptx, &bytes);
    if (st == WEFT_ENOENT) SKIP("no NVRTC (libnvrtc.so not found)");
    ASSERT_OK(st);
    ASSERT_TRUE(strstr(ptx, ".entry weft_for") != NULL);
    weft__free(ptx, bytes);
    st = weft__gpu_nvrtc_ptx("extern \"C\" __global__ void weft_for() { nope; }", "compute_75", &ptx, &bytes);
    ASSERT_STATUS(st, WEFT_EDEVICE);
    printf("nvrtc: %s\n", weft_last_error_message());
    ASSERT_TRUE(strstr(weft_last_error_message(), "nope") != NULL);
}

TEST(parallel_for_bad_arguments_give_statuses) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    ASSERT_OK(st);
    weft_gpu_arg many[WEFT_GPU_MAX_ARGS] = {0};
    ASSERT_STATUS(weft_gpu_parallel_for(NULL, 4, &saxpy, NULL, 0), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_parallel_for(s, 4, NULL, NULL, 0), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_parallel_for(s, 4, &(weft_gpu_for_kernel){.params = "int x"}, NULL, 0), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_parallel_for(s, 4, &saxpy, many, WEFT_GPU_MAX_ARGS), WEFT_EINVAL);
    ASSERT_STATUS(weft_gpu_parallel_for(s, 4, &saxpy, NULL, 3), WEFT_EINVAL);
    /* The emulator has no compiler: without a host function it refuses. */
    ASSERT_STATUS(weft_gpu_parallel_for(s, 4, &broken, NULL, 0), WEFT_ENOENT);
    weft_gpu_stream_destroy(s);
    weft_gpu_close(d);
}
