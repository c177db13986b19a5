# Taskflow tests: building, running, errors, failures and cancellation, out of
# memory at every allocation, seeded random DAGs.
weft_add_test_program(graph_tests
  SOURCES graph_build.c graph_run.c graph_errors.c graph_fail.c graph_oom.c graph_random.c graph_sources.c
    graph_executors.c graph_run_and_wait_own.c graph_hunt35.c graph_hunt37.c graph_ctx37.c graph_hunt46.c graph_hunt47.c
  TIMEOUT 60)
# Out of memory at each allocation of one program per area (hunt 42).
weft_add_test_program(oom_hunt42_tests SOURCES oom_hunt42.c TIMEOUT 120)
weft_add_test_program(oom_hunt46_tests SOURCES oom_hunt46.c TIMEOUT 60)
# Slow paths: operations whose cost grew quadratically (hunt 43).
weft_add_test_program(slow_hunt43_tests SOURCES slow_hunt43.c TIMEOUT 60)
