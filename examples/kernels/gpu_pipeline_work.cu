// The CUDA form of examples/gpu_pipeline.c's kernel (the example has the same
// function in OpenCL C and as a host function for the emulator).
// cmake/gpu_kernels.cmake compiles this file to PTX with nvcc and embeds it as
// gpu_pipeline_ptx.h; without nvcc the example uses the copy of that header
// checked in next to this file.
//
// work(x, n, iters): x[i] = iters steps of v * 0.999 + 0.001.
extern "C" __global__ void work(float *x, unsigned n, unsigned iters) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (unsigned k = 0; k < iters; k++) v = v * 0.999f + 0.001f;
    x[i] = v;
}
