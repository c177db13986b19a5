# Executor tests: creation and worker counts, worker ids, destroy / wait_all,
# exactly-once at several worker counts, lost wake-ups, idle CPU.
weft_add_test_program(exec_tests
  SOURCES exec_basic.c exec_stress.c exec_env.c exec_hunt35.c exec_hunt40.c exec_hunt46.c config_hunt42.c config_hunt42b.c fork_hunt42.c stress_hunt42.c life_hunt44.c
  TIMEOUT 60)

# Scale and limits (session 43): big graphs, deep nestings, huge counts.
weft_add_test_program(scale_tests
  SOURCES scale_hunt43.c
  TIMEOUT 60)
