# GPU layer: every API on the stub (everywhere) and on OpenCL (PoCL in CI);
# CUDA and HIP tests skip by name without a device.  GPU tasks in graphs, async
# tasks and pipelines; no worker blocked while a GPU task waits.
weft_add_test_program(gpu_tests
  SOURCES gpu_basic.c gpu_graph.c gpu_complete.c gpu_for.c gpu_stage.c
  TIMEOUT 60)
