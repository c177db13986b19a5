# Priorities of parallel algorithm calls and pipelines (issue 18): a prioritised
# loop's jobs and a prioritised pipeline's stage jobs taken in level order
# against queued async tasks, the default path unchanged, inheritance by nested
# calls and emplaced algorithm tasks, bad levels, empty inputs, cancellation.
weft_add_test_program(algo_prio_tests
  SOURCES algo_prio.c pipeline_prio.c
  TIMEOUT 60)
