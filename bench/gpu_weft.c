/* weft-bench — issue 21: GPU task overhead and stream overlap.
 * SPDX-License-Identifier: MIT
 *
 * gpu_tasks: a chain of n GPU tasks, each launching x[0] += 1, against the n
 * launches by hand on one stream and one synchronize (the serial column).
 * The difference per task is what a GPU task costs over a launch.
 * gpu_busy: the same chain with kernels that run ~BUSY_US each, against the
 * same by hand: the difference per task is the time from a kernel's end to
 * the next one's start, i.e. how soon a GPU task's completion is seen.
 * gpu_overlap_1 / _4: n independent chunks (copy up, scale, copy down) as GPU
 * tasks on a device whose pool has 1 or 4 streams: the ratio is the overlap.
 */
#include "gpu_work.h"
#include "gpu_bench_ptx.h" /* bump and scale for CUDA (kernels/gpu_bench_kernels.cu) */

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <weft.h>
#include <weft/gpu.h>

static int fail(const char *what, int st) {
    fprintf(stderr, "gpu bench: %s: %s %s\n", what, weft_errname(st), weft_last_error_message());
    return -1;
}

/* One device per pool size, opened on first use, closed at exit. */
static weft_gpu_device *devs[2];
static weft_gpu_kernel *bump_k[2], *scale_k[2], *busy_k;

static void close_all(void) {
    for (int i = 0; i < 2; i++) {
        if (i == 0) weft_gpu_kernel_destroy(busy_k);
        weft_gpu_kernel_destroy(bump_k[i]);
        weft_gpu_kernel_destroy(scale_k[i]);
        weft_gpu_close(devs[i]);
    }
}

static int bump_host(const weft_gpu_range *r, void *const *a) {
    (void)r;
    *(float *)a[0] += 1;
    return 0;
}

static int scale_host(const weft_gpu_range *r, void *const *a) {
    float *x = a[0], s = *(const float *)a[1];
    unsigned n = *(const unsigned *)a[2];
    for (size_t i = 0; i < r->global[0] && i < n; i++) x[i] *= s;
    return 0;
}

/* busy's length: the argument is in the device's own unit, ticks of its clock
 * (CUDA: ~2 per ns at 2 GHz), loop turns (OpenCL), microseconds (emulator);
 * each is set for about BUSY_US (busy_arg). */
enum { BUSY_US = 500 };

static int busy_host(const weft_gpu_range *r, void *const *a) {
    (void)r;
    unsigned long long us = *(const unsigned long long *)a[1];
    struct timespec ts = {0, (long)(us * 1000)};
    nanosleep(&ts, NULL);
    *(float *)a[0] += 1;
    return 0;
}

static const char cl_src[] = "__kernel void bump(__global float *x) { x[0] += 1; }\n"
                             "__kernel void scale(__global float *x, float a, uint n) {\n"
                             "    size_t i = get_global_id(0); if (i < n) x[i] = a * x[i]; }\n"
                             "__kernel void busy(__global float *x, ulong turns) {\n"
                             "    float a = x[0]; for (ulong i = 0; i < turns; i++) a = a * 0.999999f + 1e-6f;\n"
                             "    x[0] = a == 12345.5f ? 0 : x[0] + 1; }\n";

static unsigned long long busy_arg(weft_gpu_device *g) {
    switch (weft_gpu_device_kind(g)) {
    case WEFT_GPU_EMULATOR: return BUSY_US;
    case WEFT_GPU_OPENCL: return 400ull * BUSY_US; /* loop turns: a rough guess per us */
    default: return 2000ull * BUSY_US;            /* clock ticks at ~2 GHz */
    }
}

static weft_gpu_device *dev(int four) {
    if (devs[four]) return devs[four];
    weft_status st;
    devs[four] = weft_gpu_open(&(weft_gpu_config){.streams = four ? 4 : 1}, &st);
    if (!devs[four]) return fail("weft_gpu_open", st), NULL;
    bump_k[four] = weft_gpu_kernel_create(devs[four], &(weft_gpu_kernel_source){.name = "bump", .opencl = cl_src, .cuda = gpu_bench_ptx, .host = bump_host}, &st);
    if (st) return fail("bump kernel", st), NULL;
    scale_k[four] = weft_gpu_kernel_create(devs[four], &(weft_gpu_kernel_source){.name = "scale", .opencl = cl_src, .cuda = gpu_bench_ptx, .host = scale_host}, &st);
    if (st) return fail("scale kernel", st), NULL;
    if (!four) {
        busy_k = weft_gpu_kernel_create(devs[0], &(weft_gpu_kernel_source){.name = "busy", .opencl = cl_src, .cuda = gpu_bench_ptx, .host = busy_host}, &st);
        if (st) return fail("busy kernel", st), NULL;
    }
    static bool once;
    if (!once) {
        once = true;
        fprintf(stderr, "gpu bench: device %s (%s)\n", weft_gpu_device_name(devs[four]),
                weft_gpu_kind_name(weft_gpu_device_kind(devs[four])));
        atexit(close_all);
    }
    return devs[four];
}

/* ---- gpu_tasks ---------------------------------------------------------------- */

typedef struct tasks_data {
    size_t n;
    float got;
    bool busy; /* gpu_busy: each kernel runs ~BUSY_US */
} tasks_data;

static size_t same(size_t req) { return req ? req : 1; }
static void *tasks_create(size_t n) {
    tasks_data *d = calloc(1, sizeof *d);
    if (d) d->n = n;
    return d;
}
static void *busy_create(size_t n) {
    tasks_data *d = tasks_create(n);
    if (d) d->busy = true;
    return d;
}
static void tasks_reset(void *data) { ((tasks_data *)data)->got = 0; }
static int tasks_verify(const void *data, char *msg, size_t len) {
    const tasks_data *d = data;
    if (d->got == (float)d->n) return 0;
    snprintf(msg, len, "x[0] = %g, want %zu", d->got, d->n);
    return -1;
}
const bench_work bench_work_gpu_tasks = {same, tasks_create, tasks_reset, tasks_verify, free};
const bench_work bench_work_gpu_busy = {same, busy_create, tasks_reset, tasks_verify, free};

typedef struct chain {
    weft_gpu_device *d;
    weft_gpu_buffer *x;
    weft_taskflow *tf;
    tasks_data *data;
} chain;

/* One link's kernel: bump, or busy for gpu_busy. */
static int launch_link(weft_gpu_stream *s, weft_gpu_buffer *x, bool busy) {
    unsigned long long arg = busy ? busy_arg(dev(0)) : 0;
    weft_gpu_arg a[2] = {WEFT_GPU_ARG_BUFFER(x), WEFT_GPU_ARG_VALUE(arg)};
    return weft_gpu_launch(s, busy ? busy_k : bump_k[0], &(weft_gpu_range){.global = {1}}, a, busy ? 2 : 1);
}

static int bump_task(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    (void)ctx;
    chain *c = arg;
    return launch_link(s, c->x, c->data->busy);
}

static int chain_build(void *env, void *data, void **graph) {
    (void)env;
    tasks_data *d = data;
    chain *c = calloc(1, sizeof *c);
    if (!c || !(c->d = dev(0))) return free(c), -1;
    c->data = d;
    weft_status st;
    c->x = weft_gpu_buffer_create(c->d, sizeof(float), 1, 0, &st);
    c->tf = weft_taskflow_create("gpu-chain", &st);
    weft_task prev = WEFT_TASK_NULL;
    for (size_t i = 0; c->x && c->tf && i < d->n; i++) {
        weft_task t = weft_emplace_gpu(c->tf, c->d, bump_task, c);
        if (i) (void)weft_precede(prev, t);
        prev = t;
    }
    *graph = c;
    return c->x && c->tf ? 0 : fail("building", st);
}

static int chain_run(void *env, void *graph) {
    chain *c = graph;
    float zero = 0;
    int st = weft_gpu_copy_to_device(c->x, 0, &zero, 1);
    if (!st) st = weft_run_and_wait(env, c->tf);
    if (!st) st = weft_gpu_copy_to_host(c->x, 0, &c->data->got, 1);
    return st ? fail("gpu_tasks run", st) : 0;
}

static void chain_destroy(void *env, void *graph) {
    (void)env;
    chain *c = graph;
    (void)weft_taskflow_destroy(c->tf);
    weft_gpu_buffer_destroy(c->x);
    free(c);
}

static int chain_oneshot(void *env, void *data) {
    void *g;
    if (chain_build(env, data, &g)) return -1;
    int rc = chain_run(env, g);
    chain_destroy(env, g);
    return rc;
}
const bench_ops bench_weft_gpu_tasks = {chain_oneshot, chain_build, chain_run, chain_destroy};

/* By hand: n launches on one stream, one synchronize. */
static int by_hand(void *env, void *data) {
    (void)env;
    tasks_data *d = data;
    weft_gpu_device *g = dev(0);
    if (!g) return -1;
    weft_status st;
    weft_gpu_buffer *x = weft_gpu_buffer_create(g, sizeof(float), 1, 0, &st);
    weft_gpu_stream *s = weft_gpu_stream_pool_get(weft_gpu_device_pool(g), 0);
    float zero = 0;
    if (x) st = weft_gpu_copy_to_device(x, 0, &zero, 1);
    for (size_t i = 0; !st && i < d->n; i++) st = launch_link(s, x, d->busy);
    if (!st) st = weft_gpu_stream_synchronize(s);
    if (!st) st = weft_gpu_copy_to_host(x, 0, &d->got, 1);
    weft_gpu_buffer_destroy(x);
    return st ? fail("by hand", st) : 0;
}
const bench_ops bench_serial_gpu_tasks = {by_hand, NULL, NULL, NULL};

/* ---- gpu_overlap ---------------------------------------------------------------- */

enum { CHUNK = 256 * 1024 };

typedef struct overlap_data {
    size_t n;
    float *host; /* n * CHUNK, pinned where the device has pinned memory */
    weft_gpu_device *pinned_on; /* the device host was allocated on; NULL: malloc */
    weft_gpu_buffer **bufs[2];  /* n chunk buffers per pool size, made on first use */
} overlap_data;

/* The chunks live in pinned memory (weft_gpu_host_alloc): on CUDA a copy from
 * pageable memory goes through a staging buffer and does not overlap with
 * anything, so a pool of streams would show nothing.  Both pool sizes' devices
 * share the device's primary context, so memory pinned on one serves both. */
static void *overlap_create(size_t n) {
    overlap_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    weft_status st;
    weft_gpu_device *g = dev(0);
    if (g && (d->host = weft_gpu_host_alloc(g, n * CHUNK * sizeof(float), &st))) d->pinned_on = g;
    else if (!(d->host = malloc(n * CHUNK * sizeof(float)))) d = (free(d), NULL);
    return d;
}
static void overlap_reset(void *data) {
    overlap_data *d = data;
    for (size_t i = 0; i < d->n * CHUNK; i++) d->host[i] = (float)(i % 17);
}
static int overlap_verify(const void *data, char *msg, size_t len) {
    const overlap_data *d = data;
    for (size_t i = 0; i < d->n * CHUNK; i++)
        if (d->host[i] != 2.0f * (float)(i % 17)) return snprintf(msg, len, "element %zu is %g", i, d->host[i]), -1;
    return 0;
}
static void overlap_free(void *data) {
    overlap_data *d = data;
    for (int k = 0; d && k < 2; k++) {
        for (size_t i = 0; d->bufs[k] && i < d->n; i++) weft_gpu_buffer_destroy(d->bufs[k][i]);
        free(d->bufs[k]);
    }
    if (d && d->pinned_on) weft_gpu_host_free(d->pinned_on, d->host);
    else if (d) free(d->host);
    free(d);
}
const bench_work bench_work_gpu_overlap = {same, overlap_create, overlap_reset, overlap_verify, overlap_free};

typedef struct piece {
    float *host;
    weft_gpu_buffer *buf;
    int four;
} piece;

static int up_scale_down(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    (void)ctx;
    piece *p = arg;
    unsigned n = CHUNK;
    float a = 2.0f;
    weft_gpu_arg args[] = {WEFT_GPU_ARG_BUFFER(p->buf), WEFT_GPU_ARG_VALUE(a), WEFT_GPU_ARG_VALUE(n)};
    int st = weft_gpu_copy_to_device_async(s, p->buf, 0, p->host, CHUNK);
    if (!st) st = weft_gpu_launch(s, scale_k[p->four], &(weft_gpu_range){.global = {CHUNK}}, args, 3);
    if (!st) st = weft_gpu_copy_to_host_async(s, p->buf, 0, p->host, CHUNK);
    return st;
}

/* The device buffers are made once per data and pool size (in the first rep,
 * which the median leaves out), as the by-hand ceiling in gpu_cudagraph.cu
 * makes them once: a cuMemAlloc per chunk in every run took longer than the
 * work on the H200. */
static int overlap(void *env, void *data, int four) {
    overlap_data *d = data;
    weft_gpu_device *g = dev(four);
    if (!g) return -1;
    weft_status st = WEFT_OK;
    if (!d->bufs[four]) {
        if (!(d->bufs[four] = calloc(d->n, sizeof *d->bufs[four]))) return fail("gpu_overlap", WEFT_ENOMEM);
        for (size_t i = 0; !st && i < d->n; i++) d->bufs[four][i] = weft_gpu_buffer_create(g, sizeof(float), CHUNK, 0, &st);
        if (st) return fail("gpu_overlap buffers", st);
    }
    piece *p = calloc(d->n, sizeof *p);
    weft_taskflow *tf = weft_taskflow_create("overlap", &st);
    for (size_t i = 0; p && tf && !st && i < d->n; i++) {
        p[i] = (piece){.host = d->host + i * CHUNK, .buf = d->bufs[four][i], .four = four};
        if (weft_task_is_null(weft_emplace_gpu(tf, g, up_scale_down, &p[i]))) st = WEFT_ENOMEM;
    }
    if (!st) st = weft_run_and_wait(env, tf);
    (void)weft_taskflow_destroy(tf);
    free(p);
    return st ? fail("gpu_overlap", st) : 0;
}
static int overlap_1(void *env, void *data) { return overlap(env, data, 0); }
static int overlap_4(void *env, void *data) { return overlap(env, data, 1); }
const bench_ops bench_weft_gpu_overlap_1 = {overlap_1, NULL, NULL, NULL};
const bench_ops bench_weft_gpu_overlap_4 = {overlap_4, NULL, NULL, NULL};
