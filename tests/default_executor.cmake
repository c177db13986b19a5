# The process-wide default executor (weft_default_executor): sharing through
# NULL, concurrent first use, use from its own tasks, destroy refused, exit and
# fork() (tests/exec_default.c).
weft_add_test_program(default_executor_tests
  SOURCES exec_default.c
  TIMEOUT 60)
