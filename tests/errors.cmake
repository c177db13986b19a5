# docs/errors.md, R3: a failing public call sets the thread's message, naming
# itself (~40 calls across the headers, each after a sentinel failure of
# another call), keeps a deeper call's detail, and leaves the message alone
# for normal outcomes (WEFT_ECANCELED of a second cancel, WEFT_ENOENT).
weft_add_test_program(errors_tests
  SOURCES errors_messages.c
  TIMEOUT 60)

# The sweep of every public call with careless arguments (session 35): the
# emplace family with a NULL taskflow, NULL algorithm descriptors, GPU task and
# allocation failures, a GPU probe's message, reductions whose accumulator
# size wraps, and messages naming the call that failed.
weft_add_test_program(api_hunt35_tests
  SOURCES api_hunt35.c
  TIMEOUT 60)
# ASan: the AUTO probe may open OpenCL, whose PoCL allocations live until exit
# (as gpu.cmake says for the GPU tests).
if(WEFT_SANITIZE STREQUAL "address")
  set_tests_properties(api_hunt35_tests.a_gpu_open_that_finds_a_device_leaves_the_message_alone PROPERTIES
    ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/gpu-lsan.supp")
endif()

# Session 41: the contracts of core.h, graph.h, flow.h, async.h and
# forkjoin.h call by call: messages naming the call that failed (getters,
# builders out of memory, erased tasks), the task they failed on, and a
# subflow join's cycle detail kept.
weft_add_test_program(api_hunt41_tests
  SOURCES api_hunt41.c
  TIMEOUT 60)
# Contracts of the C headers, part 2 (session 41): algo.h, pipeline.h,
# sched.h, cancel.h, observe.h, semaphores: a call per documented error and
# per promise, each failing if the promise broke.
weft_add_test_program(api_hunt41b_tests
  SOURCES api_hunt41b.c
  TIMEOUT 60)
# Session 44: header contracts, least-tested calls first: a test per promise
# of a doc comment that no other test checked.
weft_add_test_program(contract_hunt44_tests
  SOURCES contract_hunt44.c
  TIMEOUT 60)
# Session 44: what the guides (README.md, docs/*.md) state, checked by
# running their code blocks: flame stacks name the run's taskflow.
weft_add_test_program(guides_hunt44_tests
  SOURCES guides_hunt44.c
  TIMEOUT 60)
