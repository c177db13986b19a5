/* Shared by the GPU tests: kernels in every backend's form (OpenCL C, PTX,
 * host functions for the stub) and opening a device or skipping by name. */
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

/* The same two kernels as PTX, generated once with CUDA 13.0 from
 *     extern "C" __global__ void vadd(const float *x, const float *y, float *z, unsigned n) {
 *         unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
 *         if (i < n) z[i] = x[i] + y[i];
 *     }
 *     extern "C" __global__ void scale(float *x, float a, unsigned n) {
 *         unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
 *         if (i < n) x[i] = a * x[i];
 *     }
 * by `nvcc -ptx -arch=compute_75 vadd.cu`, then `.version 9.0` lowered to 7.0
 * (PTX ISA of CUDA 11.0) so that drivers older than CUDA 13 load it; checked
 * with `ptxas -arch=sm_90`.  Comments and blank lines trimmed. */
static const char gpu_test_ptx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry vadd(\n"
    " .param .u64 vadd_param_0,\n"
    " .param .u64 vadd_param_1,\n"
    " .param .u64 vadd_param_2,\n"
    " .param .u32 vadd_param_3\n"
    ")\n"
    "{\n"
    " .reg .pred  %p<2>;\n"
    " .reg .f32  %f<4>;\n"
    " .reg .b32  %r<6>;\n"
    " .reg .b64  %rd<11>;\n"
    " ld.param.u64  %rd1, [vadd_param_0];\n"
    " ld.param.u64  %rd2, [vadd_param_1];\n"
    " ld.param.u64  %rd3, [vadd_param_2];\n"
    " ld.param.u32  %r2, [vadd_param_3];\n"
    " mov.u32  %r3, %ctaid.x;\n"
    " mov.u32  %r4, %ntid.x;\n"
    " mov.u32  %r5, %tid.x;\n"
    " mad.lo.s32  %r1, %r3, %r4, %r5;\n"
    " setp.ge.u32  %p1, %r1, %r2;\n"
    " @%p1 bra  $L__BB0_2;\n"
    " cvta.to.global.u64  %rd4, %rd1;\n"
    " mul.wide.u32  %rd5, %r1, 4;\n"
    " add.s64  %rd6, %rd4, %rd5;\n"
    " cvta.to.global.u64  %rd7, %rd2;\n"
    " add.s64  %rd8, %rd7, %rd5;\n"
    " ld.global.f32  %f1, [%rd8];\n"
    " ld.global.f32  %f2, [%rd6];\n"
    " add.f32  %f3, %f2, %f1;\n"
    " cvta.to.global.u64  %rd9, %rd3;\n"
    " add.s64  %rd10, %rd9, %rd5;\n"
    " st.global.f32  [%rd10], %f3;\n"
    "$L__BB0_2:\n"
    " ret;\n"
    "}\n"
    ".visible .entry scale(\n"
    " .param .u64 scale_param_0,\n"
    " .param .f32 scale_param_1,\n"
    " .param .u32 scale_param_2\n"
    ")\n"
    "{\n"
    " .reg .pred  %p<2>;\n"
    " .reg .f32  %f<4>;\n"
    " .reg .b32  %r<6>;\n"
    " .reg .b64  %rd<5>;\n"
    " ld.param.u64  %rd1, [scale_param_0];\n"
    " ld.param.f32  %f1, [scale_param_1];\n"
    " ld.param.u32  %r2, [scale_param_2];\n"
    " mov.u32  %r3, %ctaid.x;\n"
    " mov.u32  %r4, %ntid.x;\n"
    " mov.u32  %r5, %tid.x;\n"
    " mad.lo.s32  %r1, %r3, %r4, %r5;\n"
    " setp.ge.u32  %p1, %r1, %r2;\n"
    " @%p1 bra  $L__BB1_2;\n"
    " cvta.to.global.u64  %rd2, %rd1;\n"
    " mul.wide.u32  %rd3, %r1, 4;\n"
    " add.s64  %rd4, %rd2, %rd3;\n"
    " ld.global.f32  %f2, [%rd4];\n"
    " mul.f32  %f3, %f2, %f1;\n"
    " st.global.f32  [%rd4], %f3;\n"
    "$L__BB1_2:\n"
    " ret;\n"
    "}\n"
    ;

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
