/* GPU pipeline: read a chunk, copy it up, run a kernel, copy it back, and
 * post-process it on the CPU, for many chunks at once, as one taskflow of
 * CPU and GPU tasks.  The GPU tasks take streams from the device's pool, so
 * copies and kernels of different chunks overlap each other and the CPU work;
 * the program times the same graph with a pool of one stream (everything on
 * the device serialized) and of four.  `gpu_pipeline trace.svg` also draws
 * the last run with four streams: what each worker ran when, and when each
 * stream's copies and kernel ran (the picture in docs/guide-gpu.md).
 *
 * Runs on whatever weft_gpu_open finds (WEFT_GPU=cuda|hip|opencl|emulator picks
 * one): a GPU, OpenCL on the CPU through PoCL, or the emulator.  Build: part of
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
    /* For the trace: when read, the GPU task (recording) and post ran, on
     * which worker, and which stream of the pool the GPU work went to. */
    double t[3][2];
    int worker[3];
    unsigned stream;
};

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* CPU: "read" the chunk (a file's block in a real program). */
static int read_chunk(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct chunk *c = arg;
    c->t[0][0] = now_ms();
    for (unsigned i = 0; i < CHUNK; i++) c->host[i] = (float)((c->index + i) % 100) / 100.0f;
    c->worker[0] = weft_ctx_worker_id(ctx);
    c->t[0][1] = now_ms();
    return 0;
}

/* GPU: up, kernel, down, recorded on the stream the task was given. */
static int on_gpu(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    (void)ctx;
    struct chunk *c = arg;
    c->t[1][0] = now_ms();
    unsigned n = CHUNK, iters = ITERS;
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(c->dev), WEFT_GPU_ARG_VALUE(n), WEFT_GPU_ARG_VALUE(iters)};
    int st = weft_gpu_copy_to_device_async(s, c->dev, 0, c->host, CHUNK);
    if (!st) st = weft_gpu_launch(s, c->kernel, &(weft_gpu_range){.global = {CHUNK}}, args, 3);
    if (!st) st = weft_gpu_copy_to_host_async(s, c->dev, 0, c->host, CHUNK);
    weft_gpu_stream_pool *pool = weft_gpu_device_pool(weft_gpu_stream_device(s));
    for (unsigned i = 0; i < weft_gpu_stream_pool_size(pool); i++)
        if (weft_gpu_stream_pool_get(pool, i) == s) c->stream = i;
    c->worker[1] = weft_ctx_worker_id(ctx);
    c->t[1][1] = now_ms();
    return st;
}

/* CPU: post-process the result. */
static int post(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct chunk *c = arg;
    c->t[2][0] = now_ms();
    double s = 0;
    for (unsigned i = 0; i < CHUNK; i++) s += c->host[i];
    c->sum = s;
    c->worker[2] = weft_ctx_worker_id(ctx);
    c->t[2][1] = now_ms();
    return 0;
}

/* Draws one run, which started at t0 ms, as an SVG timeline: a row per worker
 * (read, GPU task recording, post) and per stream.  A stream's bar for a
 * chunk is its copy up, kernel and copy down: from when they were recorded
 * (or the stream's previous chunk was done) to when post started, which is
 * when weft saw them complete (up to one poll nap, <= 1 ms, late). */
static int write_trace(const char *path, const struct chunk *chunks, double t0, unsigned workers, unsigned streams) {
    FILE *f = fopen(path, "w");
    if (!f) return fprintf(stderr, "cannot write %s\n", path), 1;
    double end = 0, busy[16] = {0};
    for (unsigned i = 0; i < CHUNKS; i++)
        if (chunks[i].t[2][1] - t0 > end) end = chunks[i].t[2][1] - t0;
    const double left = 70, width = 1000, row = 24, scale = width / end;
    const unsigned rows = workers + streams;
    const char *color[] = {"#6a9fd8", "#e8a33d", "#6cbf6c", "#c86dd7"}; /* read, gpu, post, device */
    const char *what[] = {"read", "gpu task", "post", "up+kernel+down"};
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
            left + width + 10, row * rows + 40);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    for (unsigned r = 0; r < rows; r++)
        fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"%s\"/><text x=\"4\" y=\"%.0f\">%s %u</text>\n",
                left, r * row, width, row, r % 2 ? "#f4f4f4" : "#e8e8e8", r * row + 16, r < workers ? "worker" : "stream",
                r < workers ? r : r - workers);
    unsigned order[CHUNKS]; /* chunks in the order their GPU work was recorded */
    for (unsigned i = 0, j; i < CHUNKS; order[j] = i++)
        for (j = i; j > 0 && chunks[order[j - 1]].t[1][0] > chunks[i].t[1][0]; j--) order[j] = order[j - 1];
    for (unsigned k = 0; k < CHUNKS; k++) {
        unsigned i = order[k];
        const struct chunk *c = &chunks[i];
        double bar[4][2] = {{c->t[0][0], c->t[0][1]}, {c->t[1][0], c->t[1][1]}, {c->t[2][0], c->t[2][1]}, {0, c->t[2][0]}};
        unsigned lane[4] = {c->worker[0], c->worker[1], c->worker[2], workers + c->stream};
        bar[3][0] = c->t[1][1] > busy[c->stream] ? c->t[1][1] : busy[c->stream];
        busy[c->stream] = c->t[2][0];
        for (int b = 0; b < 4; b++) {
            double x = left + (bar[b][0] - t0) * scale, w = (bar[b][1] - bar[b][0]) * scale;
            fprintf(f, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\" stroke=\"white\" stroke-width=\"0.5\">"
                       "<title>%s %u: %.2f ms</title></rect>\n",
                    x, lane[b] * row + 3, w < 1 ? 1 : w, row - 6, color[b], what[b],
                    i, bar[b][1] - bar[b][0]);
            if (w > 14) fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%u</text>\n", x + w / 2, lane[b] * row + 16, i);
        }
    }
    for (double ms = 0; ms <= end; ms += end > 100 ? 20 : 10)
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"%.0f\" stroke=\"#999\" stroke-width=\"0.5\"/><text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.0f ms</text>\n",
                left + ms * scale, left + ms * scale, row * rows + 4, left + ms * scale, row * rows + 16, ms);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\"><tspan fill=\"%s\">&#9632; read (CPU)</tspan>  <tspan fill=\"%s\">&#9632; GPU task recording</tspan>  "
               "<tspan fill=\"%s\">&#9632; post (CPU)</tspan>  <tspan fill=\"%s\">&#9632; copy up, kernel, copy down on the stream</tspan></text>\n</svg>\n",
            left, row * rows + 34, color[0], color[1], color[2], color[3]);
    return fclose(f) != 0;
}

/* Builds and runs the graph on a device with `streams` streams; the best of
 * three runs in ms, and the checksum; with `svg`, the trace of the last run. */
static int run(weft_executor *ex, unsigned streams, const char *svg, double *ms, double *sum) {
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
    double t0 = 0;
    for (int rep = 0; rep < 3 && !st; rep++) {
        t0 = now_ms();
        st = weft_run_and_wait(ex, tf);
        double t = now_ms() - t0;
        if (t < *ms) *ms = t;
    }
    *sum = 0;
    for (unsigned i = 0; i < CHUNKS; i++) *sum += chunks[i].sum;
    if (st) fprintf(stderr, "failed: %s: %s\n", weft_strerror(st), weft_last_error_message());
    if (!st && svg && (st = write_trace(svg, chunks, t0, weft_executor_workers(ex), streams)) == 0)
        printf("trace of a run with %u streams: %s\n", streams, svg);
    weft_taskflow_destroy(tf);
    for (unsigned i = 0; i < CHUNKS; i++) {
        weft_gpu_buffer_destroy(chunks[i].dev);
        weft_gpu_host_free(dev, chunks[i].host);
    }
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(dev);
    return st != 0;
}

int main(int argc, char **argv) {
    weft_executor *ex = weft_executor_create(NULL, NULL);
    if (!ex) return 1;
    double one_ms, one_sum, four_ms, four_sum;
    int bad = run(ex, 1, NULL, &one_ms, &one_sum) || run(ex, 4, argc > 1 ? argv[1] : NULL, &four_ms, &four_sum);
    weft_executor_destroy(ex);
    if (bad) return 1;
    printf("%d chunks of %d floats: 1 stream %.1f ms, 4 streams %.1f ms (%.2fx)\n", CHUNKS, CHUNK, one_ms, four_ms,
           one_ms / four_ms);
    printf("checksum %.3f %s\n", four_sum, one_sum == four_sum ? "(same with 1 stream)" : "(DIFFERS)");
    return one_sum == four_sum ? 0 : 1;
}
