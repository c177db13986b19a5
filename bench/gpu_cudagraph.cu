// weft-bench's GPU peer for gpu_tasks (issue 21): the same chain of n tiny
// kernels (x[0] += 1) as a CUDA graph (the driver launches the whole chain,
// no host round trip per kernel), and by hand on one stream.  Taskflow's
// tf::cudaGraph is a thin wrapper over this API (cudaGraphAddKernelNode,
// cudaGraphInstantiate, cudaGraphLaunch); its own headers at the pinned commit
// do not compile with nvcc 13 and g++ 12 or clang 15 (iterator.hpp's
// IndexRanges, cuda_graph_exec.hpp's fill/zero), so the graph is built here
// with the runtime API directly, node by node as tf::cudaGraph::kernel does.
// Built by bench/CMakeLists.txt where nvcc is found (binary: cudagraph-bench);
// prints weft-bench's line format.
//
//   cudagraph-bench [n=2000] [reps=7]
//
// Rows:  gpu_tasks       impl=cuda_graph  build + instantiate + launch + sync + destroy
//        gpu_tasks_rerun impl=cuda_graph  launch the instantiated graph + sync
//        gpu_tasks       impl=by_hand     n launches on one stream + one sync
//        gpu_overlap_1/4 impl=by_hand     16 chunks of 256 K floats from pinned memory: copy
//                                         up, scale, copy down, round-robin on 1 or 4 streams
//                                         (what weft's gpu_overlap rows do, without tasks)
// SPDX-License-Identifier: MIT
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

__global__ void bump(float *x) {
    if (blockIdx.x == 0 && threadIdx.x == 0) x[0] += 1;
}

__global__ void scale(float *x, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}

static double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Runs body reps times after one warm-up; checks x[0] == n after each; prints the line.
static int measure(const char *bench, const char *impl, size_t n, int reps, float *dx,
                   const std::function<void()> &body) {
    std::vector<double> t;
    for (int r = 0; r <= reps; r++) {
        float zero = 0, got = -1;
        cudaMemcpy(dx, &zero, sizeof zero, cudaMemcpyHostToDevice);
        auto t0 = std::chrono::steady_clock::now();
        body();
        double ms = ms_since(t0);
        cudaMemcpy(&got, dx, sizeof got, cudaMemcpyDeviceToHost);
        if (got != (float)n) {
            std::fprintf(stderr, "%s %s: x[0] = %g, want %zu\n", bench, impl, got, n);
            return 1;
        }
        if (r) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    double med = t[t.size() / 2];
    std::printf("bench=%s impl=%s threads=1 size=%zu median_ms=%.3f min_ms=%.3f ns_per_task=%.2f\n", bench, impl, n,
                med, t[0], med * 1e6 / (double)n);
    return 0;
}

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));             \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

// A chain of n bump nodes, each depending on the one before.
static cudaGraph_t build(size_t n, float *dx) {
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    void *args[] = {&dx};
    cudaKernelNodeParams p = {};
    p.func = (void *)bump;
    p.gridDim = dim3(1);
    p.blockDim = dim3(1);
    p.kernelParams = args;
    cudaGraphNode_t prev = nullptr, node;
    for (size_t i = 0; i < n; i++) {
        CHECK(cudaGraphAddKernelNode(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
        prev = node;
    }
    return g;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 2000;
    int reps = argc > 2 ? std::atoi(argv[2]) : 7;
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        std::printf("cudagraph-bench: skipped (no CUDA device)\n");
        return 0;
    }
    std::fprintf(stderr, "cudagraph-bench: device %s\n", prop.name);
    float *dx = nullptr;
    CHECK(cudaMalloc(&dx, sizeof(float)));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int rc = 0;
    rc |= measure("gpu_tasks", "cuda_graph", n, reps, dx, [&] {
        cudaGraph_t g = build(n, dx);
        cudaGraphExec_t e;
        CHECK(cudaGraphInstantiate(&e, g, 0));
        CHECK(cudaGraphLaunch(e, s));
        CHECK(cudaStreamSynchronize(s));
        CHECK(cudaGraphExecDestroy(e));
        CHECK(cudaGraphDestroy(g));
    });
    cudaGraph_t g = build(n, dx);
    cudaGraphExec_t e;
    CHECK(cudaGraphInstantiate(&e, g, 0));
    rc |= measure("gpu_tasks_rerun", "cuda_graph", n, reps, dx, [&] {
        CHECK(cudaGraphLaunch(e, s));
        CHECK(cudaStreamSynchronize(s));
    });
    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(g));
    rc |= measure("gpu_tasks", "by_hand", n, reps, dx, [&] {
        for (size_t i = 0; i < n; i++) bump<<<1, 1, 0, s>>>(dx);
        CHECK(cudaStreamSynchronize(s));
    });
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(dx));

    // Overlap by hand: the ceiling for weft's gpu_overlap rows on this machine.
    const unsigned chunk = 256 * 1024, chunks = 16;
    float *host = nullptr, *dev = nullptr;
    CHECK(cudaMallocHost(&host, sizeof(float) * chunk * chunks));
    CHECK(cudaMalloc(&dev, sizeof(float) * chunk * chunks));
    cudaStream_t ss[4];
    for (auto &q : ss) CHECK(cudaStreamCreateWithFlags(&q, cudaStreamNonBlocking));
    for (unsigned streams : {1u, 4u}) {
        std::vector<double> t;
        for (int r = 0; r <= reps; r++) {
            for (size_t i = 0; i < (size_t)chunk * chunks; i++) host[i] = (float)(i % 17);
            auto t0 = std::chrono::steady_clock::now();
            for (unsigned c = 0; c < chunks; c++) {
                cudaStream_t q = ss[c % streams];
                float *h = host + (size_t)c * chunk, *d = dev + (size_t)c * chunk;
                CHECK(cudaMemcpyAsync(d, h, sizeof(float) * chunk, cudaMemcpyHostToDevice, q));
                scale<<<(chunk + 255) / 256, 256, 0, q>>>(d, 2.0f, chunk);
                CHECK(cudaMemcpyAsync(h, d, sizeof(float) * chunk, cudaMemcpyDeviceToHost, q));
            }
            for (unsigned k = 0; k < streams; k++) CHECK(cudaStreamSynchronize(ss[k]));
            double ms = ms_since(t0);
            for (size_t i = 0; i < (size_t)chunk * chunks; i++)
                if (host[i] != 2.0f * (float)(i % 17)) {
                    std::fprintf(stderr, "overlap: element %zu is %g\n", i, host[i]);
                    return 1;
                }
            if (r) t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        std::printf("bench=gpu_overlap_%u impl=by_hand threads=1 size=%u median_ms=%.3f min_ms=%.3f ns_per_task=%.2f\n",
                    streams, chunks, t[t.size() / 2], t[0], t[t.size() / 2] * 1e6 / chunks);
    }
    for (auto &q : ss) CHECK(cudaStreamDestroy(q));
    CHECK(cudaFreeHost(host));
    CHECK(cudaFree(dev));
    return rc;
}
