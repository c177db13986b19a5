/* GPU pipeline: read a chunk, copy it up, run a kernel, copy it back, and
 * post-process it on the CPU, for many chunks at once, as one taskflow of
 * CPU and GPU tasks.  The GPU tasks take streams from the device's pool, so
 * copies and kernels of different chunks overlap each other and the CPU work;
 * the program times the same graph with a pool of one stream (everything on
 * the device serialized) and of four.
 *
 * Runs on whatever weft_gpu_open finds (WEFT_GPU=cuda|hip|opencl|stub picks
 * one): a GPU, OpenCL on the CPU through PoCL, or the stub.  Build: part of
 * the examples (examples/CMakeLists.txt); no GPU library is linked. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "weft.h"

enum { CHUNKS = 16, CHUNK = 1 << 18, ITERS = 64 };

/* The kernel in every backend's form: x[i] = ITERS steps of v * 0.999 + 0.001. */
static const char work_opencl[] =
    "__kernel void work(__global float *x, uint n, uint iters) {\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    float v = x[i];\n"
    "    for (uint k = 0; k < iters; k++) v = v * 0.999f + 0.001f;\n"
    "    x[i] = v;\n"
    "}\n";

/* From the same function in CUDA (extern "C" __global__ void work(float *x,
 * unsigned n, unsigned iters)) by `nvcc -ptx -arch=compute_75`, with
 * `.version 9.0` lowered to 7.0 so that older drivers load it. */
static const char work_ptx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry work(\n"
    " .param .u64 work_param_0,\n"
    " .param .u32 work_param_1,\n"
    " .param .u32 work_param_2\n"
    ")\n"
    "{\n"
    " .reg .pred  %p<7>;\n"
    " .reg .f32  %f<18>;\n"
    " .reg .b32  %r<16>;\n"
    " .reg .b64  %rd<5>;\n"
    " ld.param.u64  %rd2, [work_param_0];\n"
    " ld.param.u32  %r9, [work_param_1];\n"
    " ld.param.u32  %r8, [work_param_2];\n"
    " mov.u32  %r10, %ctaid.x;\n"
    " mov.u32  %r11, %ntid.x;\n"
    " mov.u32  %r12, %tid.x;\n"
    " mad.lo.s32  %r1, %r10, %r11, %r12;\n"
    " setp.ge.u32  %p1, %r1, %r9;\n"
    " @%p1 bra  $L__BB0_8;\n"
    " cvta.to.global.u64  %rd3, %rd2;\n"
    " mul.wide.u32  %rd4, %r1, 4;\n"
    " add.s64  %rd1, %rd3, %rd4;\n"
    " ld.global.f32  %f17, [%rd1];\n"
    " setp.eq.s32  %p2, %r8, 0;\n"
    " @%p2 bra  $L__BB0_7;\n"
    " add.s32  %r13, %r8, -1;\n"
    " and.b32   %r15, %r8, 3;\n"
    " setp.lt.u32  %p3, %r13, 3;\n"
    " @%p3 bra  $L__BB0_5;\n"
    " sub.s32  %r14, %r8, %r15;\n"
    "$L__BB0_4:\n"
    " fma.rn.f32  %f10, %f17, 0f3F7FBE77, 0f3A83126F;\n"
    " fma.rn.f32  %f11, %f10, 0f3F7FBE77, 0f3A83126F;\n"
    " fma.rn.f32  %f12, %f11, 0f3F7FBE77, 0f3A83126F;\n"
    " fma.rn.f32  %f17, %f12, 0f3F7FBE77, 0f3A83126F;\n"
    " add.s32  %r14, %r14, -4;\n"
    " setp.ne.s32  %p4, %r14, 0;\n"
    " @%p4 bra  $L__BB0_4;\n"
    "$L__BB0_5:\n"
    " setp.eq.s32  %p5, %r15, 0;\n"
    " @%p5 bra  $L__BB0_7;\n"
    "$L__BB0_6:\n"
    " .pragma \"nounroll\";\n"
    " fma.rn.f32  %f17, %f17, 0f3F7FBE77, 0f3A83126F;\n"
    " add.s32  %r15, %r15, -1;\n"
    " setp.ne.s32  %p6, %r15, 0;\n"
    " @%p6 bra  $L__BB0_6;\n"
    "$L__BB0_7:\n"
    " st.global.f32  [%rd1], %f17;\n"
    "$L__BB0_8:\n"
    " ret;\n"
    "}\n"
    ;

static int work_host(const weft_gpu_range *r, void *const *a) {
    float *x = a[0];
    unsigned n = *(const unsigned *)a[1], iters = *(const unsigned *)a[2];
    for (size_t i = 0; i < r->global[0] && i < n; i++) {
        float v = x[i];
        for (unsigned k = 0; k < iters; k++) v = v * 0.999f + 0.001f;
        x[i] = v;
    }
    return 0;
}

static const weft_gpu_kernel_source work_kernel = {
    .name = "work", .opencl = work_opencl, .cuda = work_ptx, .host = work_host};

struct chunk {
    unsigned index;
    weft_gpu_kernel *kernel;
    weft_gpu_buffer *dev;
    float *host; /* pinned */
    double sum;
};

/* CPU: "read" the chunk (a file's block in a real program). */
static int read_chunk(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct chunk *c = arg;
    for (unsigned i = 0; i < CHUNK; i++) c->host[i] = (float)((c->index + i) % 100) / 100.0f;
    return 0;
}

/* GPU: up, kernel, down, recorded on the stream the task was given. */
static int on_gpu(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    (void)ctx;
    struct chunk *c = arg;
    unsigned n = CHUNK, iters = ITERS;
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(c->dev), WEFT_GPU_ARG_VALUE(n), WEFT_GPU_ARG_VALUE(iters)};
    int st = weft_gpu_copy_to_device_async(s, c->dev, 0, c->host, CHUNK);
    if (!st) st = weft_gpu_launch(s, c->kernel, &(weft_gpu_range){.global = {CHUNK}}, args, 3);
    if (!st) st = weft_gpu_copy_to_host_async(s, c->dev, 0, c->host, CHUNK);
    return st;
}

/* CPU: post-process the result. */
static int post(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct chunk *c = arg;
    double s = 0;
    for (unsigned i = 0; i < CHUNK; i++) s += c->host[i];
    c->sum = s;
    return 0;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Builds and runs the graph on a device with `streams` streams; the best of
 * three runs in ms, and the checksum. */
static int run(weft_executor *ex, unsigned streams, double *ms, double *sum) {
    weft_status st;
    weft_gpu_device *dev = weft_gpu_open(&(weft_gpu_config){.streams = streams}, &st);
    if (!dev) return fprintf(stderr, "no GPU device: %s\n", weft_last_error_message()), 1;
    if (streams == 1) printf("device: %s (%s)\n", weft_gpu_device_name(dev), weft_gpu_kind_name(weft_gpu_device_kind(dev)));
    weft_gpu_kernel *k = weft_gpu_kernel_create(dev, &work_kernel, &st);
    weft_taskflow *tf = weft_taskflow_create("gpu-pipeline", NULL);
    static struct chunk chunks[CHUNKS];
    for (unsigned i = 0; i < CHUNKS && k && tf && !st; i++) {
        chunks[i] = (struct chunk){.index = i, .kernel = k};
        chunks[i].dev = weft_gpu_buffer_create(dev, sizeof(float), CHUNK, 0, &st);
        chunks[i].host = st ? NULL : weft_gpu_host_alloc(dev, sizeof(float) * CHUNK, &st);
        weft_task t[3] = {weft_emplace(tf, read_chunk, &chunks[i]), weft_emplace_gpu(tf, dev, on_gpu, &chunks[i]),
                          weft_emplace(tf, post, &chunks[i])};
        if (!st) st = weft_linearize(t, 3);
    }
    *ms = 1e30;
    for (int rep = 0; rep < 3 && !st; rep++) {
        double t0 = now_ms();
        st = weft_run_and_wait(ex, tf);
        double t = now_ms() - t0;
        if (t < *ms) *ms = t;
    }
    *sum = 0;
    for (unsigned i = 0; i < CHUNKS; i++) *sum += chunks[i].sum;
    if (st) fprintf(stderr, "failed: %s: %s\n", weft_strerror(st), weft_last_error_message());
    weft_taskflow_destroy(tf);
    for (unsigned i = 0; i < CHUNKS; i++) {
        weft_gpu_buffer_destroy(chunks[i].dev);
        weft_gpu_host_free(dev, chunks[i].host);
    }
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(dev);
    return st != 0;
}

int main(void) {
    weft_executor *ex = weft_executor_create(NULL, NULL);
    if (!ex) return 1;
    double one_ms, one_sum, four_ms, four_sum;
    int bad = run(ex, 1, &one_ms, &one_sum) || run(ex, 4, &four_ms, &four_sum);
    weft_executor_destroy(ex);
    if (bad) return 1;
    printf("%d chunks of %d floats: 1 stream %.1f ms, 4 streams %.1f ms (%.2fx)\n", CHUNKS, CHUNK, one_ms, four_ms,
           one_ms / four_ms);
    printf("checksum %.3f %s\n", four_sum, one_sum == four_sum ? "(same with 1 stream)" : "(DIFFERS)");
    return one_sum == four_sum ? 0 : 1;
}
