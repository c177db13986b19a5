/* Shared by the GPU tests: kernels in every backend's form (OpenCL C, PTX,
 * host functions for the emulator) and opening a device or skipping by name. */
#ifndef WEFT_TEST_GPU_H
#define WEFT_TEST_GPU_H

#include "harness.h"
#include "weft.h"
#include "weft/gpu.h"

/* vadd(x, y, z, n): z[i] = x[i] + y[i];  scale(x, a, n): x[i] *= a. */
static const char gpu_test_opencl[] =
    "__kernel void vadd(__global const float *x, __global const float *y, __global float *z, uint n) {\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) z[i] = x[i] + y[i];\n"
    "}\n"
    "__kernel void scale(__global float *x, float a, uint n) {\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) x[i] = a * x[i];\n"
    "}\n";

/* The same two kernels as PTX: gpu_test_ptx, from tests/kernels/gpu_test_kernels.cu.
 * cmake/gpu_kernels.cmake compiles that file with nvcc into the build's own
 * gpu_test_ptx.h, or, without nvcc, points the include path at the copy
 * checked in as tests/kernels/gpu_test_ptx.h. */
#include "gpu_test_ptx.h"

static int gpu_test_vadd_host(const weft_gpu_range *r, void *const *a) {
    const float *x = a[0], *y = a[1];
    float *z = a[2];
    unsigned n = *(const unsigned *)a[3];
    for (size_t i = 0; i < r->global[0] && i < n; i++) z[i] = x[i] + y[i];
    return 0;
}

static int gpu_test_scale_host(const weft_gpu_range *r, void *const *a) {
    float *x = a[0], s = *(const float *)a[1];
    unsigned n = *(const unsigned *)a[2];
    for (size_t i = 0; i < r->global[0] && i < n; i++) x[i] *= s;
    return 0;
}

static const weft_gpu_kernel_source gpu_test_vadd = {
    .name = "vadd", .opencl = gpu_test_opencl, .cuda = gpu_test_ptx, .host = gpu_test_vadd_host};
static const weft_gpu_kernel_source gpu_test_scale = {
    .name = "scale", .opencl = gpu_test_opencl, .cuda = gpu_test_ptx, .host = gpu_test_scale_host};

/* Opens a device of `kind` or skips the test, naming the backend and why. */
static inline weft_gpu_device *gpu_test_open(weft_gpu_kind kind) {
    weft_status st;
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = kind}, &st);
    if (!d) {
        char why[300];
        snprintf(why, sizeof why, "no %s device (%s: %s)", weft_gpu_kind_name(kind), weft_errname(st),
                 weft_last_error_message());
        SKIP(why);
    }
    return d;
}

#endif
