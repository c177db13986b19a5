# GPU layer: every API on the emulator (everywhere) and on OpenCL (PoCL in CI);
# CUDA and HIP tests skip by name without a device.  GPU tasks in graphs, async
# tasks and pipelines; no worker blocked while a GPU task waits.
weft_add_test_program(gpu_tests
  SOURCES gpu_basic.c gpu_graph.c gpu_complete.c gpu_for.c gpu_stage.c gpu_hunt35.c gpu_hunt36.c gpu_hunt41.c gpu_record41.c gpu_hunt46.c gpu_hunt47.c gpu_hunt47b.c
  TIMEOUT 60)
include(${PROJECT_SOURCE_DIR}/cmake/gpu_kernels.cmake) # the CUDA kernels as PTX: nvcc, or the checked-in copy
weft_gpu_kernels(gpu_tests SOURCE kernels/gpu_test_kernels.cu HEADER gpu_test_ptx.h VAR gpu_test_ptx)

# ASan: PoCL's own allocations live until exit (tests/gpu-lsan.supp); slow
# unwinding, as PoCL has no frame pointers and stacks would stop inside it.
if(WEFT_SANITIZE STREQUAL "address")
  get_property(_gpu_tests DIRECTORY PROPERTY TESTS)
  list(FILTER _gpu_tests INCLUDE REGEX "^gpu_tests\\.")
  set_tests_properties(${_gpu_tests} PROPERTIES ENVIRONMENT
    "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/gpu-lsan.supp")
  # After PoCL fails a build (the test's bad source), LeakSanitizer's own tracer
  # crashes while it stops PoCL's compiler threads ("Tracer caught signal 11"),
  # in PoCL/LLVM code; the test runs with ASan but without the leak check.
  set_tests_properties(gpu_tests.opencl_bad_kernel_source_is_edevice_with_the_build_log PROPERTIES ENVIRONMENT
    "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
endif()
