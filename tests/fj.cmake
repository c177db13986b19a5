# Fork-join: spawn/sync values with 1-8 workers, exactly-once under stealing, deep
# chains, task groups, nested root entry, overflow of the frame stack; typed tasks.
weft_add_test_program(fj_tests
  SOURCES fj_basic.c fj_stress.c fj_typed.c fj_balance.c fj_status.c fj_hunt35.c fj_hunt38.c fj_port40.c fj_hunt40.c fj_frames41.c
  TIMEOUT 120)
# Session 42 (h42-4): oneTBB's examples and test shapes and the Barcelona
# OpenMP Tasks Suite's kernels, written against the C API (loops, reductions,
# scans, spawns, task groups, pipelines, graphs, dependent async tasks), each
# checked exactly against a serial run on 1, 2, 3, 4 and 8 workers.
weft_add_test_program(port_hunt42 SOURCES port_hunt42.c TIMEOUT 120)
# Session 45 (h45-3): the peers' benchmark programs (Taskflow's and Lace's
# benchmarks/) written as a C user would from their definitions: exact results
# on 1, 2 and 4 workers, no hang; PEERS_HUNT_BIG=1 / PEERS_HUNT_PRINT=1 for the
# peers' default sizes and timings.
weft_add_test_program(peers_hunt45 SOURCES peers_hunt45.c TIMEOUT 120 LIBS m)
