// The GPU tests' CUDA kernels (tests/gpu_test.h has the same two in OpenCL C
// and as host functions for the emulator).  cmake/gpu_kernels.cmake compiles this
// file to PTX with nvcc and embeds it as gpu_test_ptx.h; without nvcc the
// tests use the copy of that header checked in next to this file.
//
// vadd(x, y, z, n): z[i] = x[i] + y[i];  scale(x, a, n): x[i] *= a.
extern "C" __global__ void vadd(const float *x, const float *y, float *z, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}

extern "C" __global__ void scale(float *x, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}
