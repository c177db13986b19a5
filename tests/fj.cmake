# Fork-join: spawn/sync values with 1-8 workers, exactly-once under stealing, deep
# chains, task groups, nested root entry, overflow of the frame stack; typed tasks.
weft_add_test_program(fj_tests
  SOURCES fj_basic.c fj_stress.c fj_typed.c fj_balance.c fj_status.c fj_hunt35.c fj_hunt38.c fj_port40.c fj_hunt40.c fj_frames41.c
  TIMEOUT 120)
