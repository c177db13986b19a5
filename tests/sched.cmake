# Scheduling: priorities (exact order under one worker), handles, snapshot,
# inheritance, escalation; policies (every kind of work under each, garbage
# policies caught); races of re-prioritise/remove with execution; graph tasks'
# and whole runs' priorities.
weft_add_test_program(sched_tests
  SOURCES sched_order.c sched_policy.c sched_stress.c sched_graph.c sched_lanes.c sched_fair.c
          sched_hunt35.c sched_hunt38.c sched_hunt40.c
  TIMEOUT 120)
# Taskflow's unit tests ported (session 39): the defects the C++ port
# (cpp_tfport39.cc) found, in C.
weft_add_test_program(tfport39_tests SOURCES tfport39.c TIMEOUT 60)
# Hunt 42 (h42-11): sources with priorities under a policy, fork-join
# statuses past the frame stack out of memory (a failing allocator: its own
# program), error messages naming the call.
weft_add_test_program(sched_hunt42_tests SOURCES sched_hunt42.c TIMEOUT 60)
# Hunt 45 (h45-2): scheduling policies and handles, pass 2.
weft_add_test_program(sched_hunt45_tests SOURCES sched_hunt45.c TIMEOUT 60)
