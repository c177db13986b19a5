// weft-bench's CUDA kernels (bench/gpu_weft.c has the same two in OpenCL C
// and as host functions for the emulator).  cmake/gpu_kernels.cmake compiles
// this file to PTX with nvcc and embeds it as gpu_bench_ptx.h; without nvcc the
// bench uses the copy of that header checked in next to this file.
//
// bump(x): x[0] += 1 (one thread);  scale(x, a, n): x[i] *= a;
// busy(x, cycles): one thread spins `cycles` clock ticks, then x[0] += 1.
extern "C" __global__ void bump(float *x) {
    if (blockIdx.x == 0 && threadIdx.x == 0) x[0] += 1;
}

extern "C" __global__ void scale(float *x, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}

extern "C" __global__ void busy(float *x, unsigned long long cycles) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    long long t0 = clock64();
    while ((unsigned long long)(clock64() - t0) < cycles) {
    }
    x[0] += 1;
}
