# Pipeline tests: token order in serial stages, the in-flight bound, parallel
# stages overlapping, stop, pipelines inside graphs (run_n, reset), data and
# simple pipelines, type checks, bad arguments, failures and out of memory.
weft_add_test_program(pipe_tests
  SOURCES pipe_token.c pipe_data.c pipe_errors.c pipe_hunt35.c pipe_hunt36.c pipe_hunt38.c pipe_hunt40.c
  TIMEOUT 120)
