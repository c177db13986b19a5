# Objects used across executors and across runs (session 39): futures,
# semaphores, tokens, a GPU device, profilers and taskflows shared by two
# executors or used after theirs is gone.
weft_add_test_program(cross_tests SOURCES cross_hunt39.c TIMEOUT 60)
# Session 43: combinations of features, and the metrics of every kind of work.
weft_add_test_program(cross43_tests SOURCES cross_hunt43.c TIMEOUT 60)
