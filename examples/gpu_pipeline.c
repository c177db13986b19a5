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

/* The same function in CUDA is examples/kernels/gpu_pipeline_work.cu; the
 * build compiles it to PTX with nvcc (cmake/gpu_kernels.cmake) into
 * gpu_pipeline_ptx.h, the string work_ptx, or uses the copy of that header
 * checked in next to the .cu where nvcc is not found.  A program of your own
 * can embed PTX the same way, or load a .ptx file at run time. */
#include "gpu_pipeline_ptx.h"

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
