# GPU layer: every API on the stub (everywhere) and on OpenCL (PoCL in CI);
# CUDA and HIP tests skip by name without a device.  GPU tasks in graphs, async
# tasks and pipelines; no worker blocked while a GPU task waits.
weft_add_test_program(gpu_tests
  SOURCES gpu_basic.c gpu_graph.c gpu_complete.c gpu_for.c gpu_stage.c
  TIMEOUT 60)
include(${PROJECT_SOURCE_DIR}/cmake/gpu_kernels.cmake) # the CUDA kernels as PTX: nvcc, or the checked-in copy
weft_gpu_kernels(gpu_tests SOURCE kernels/gpu_test_kernels.cu HEADER gpu_test_ptx.h VAR gpu_test_ptx)
