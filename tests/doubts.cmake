# Doubts settled by tests (session 39): a wait overlapping its executor's
# destroy, huge deques, priorities after clear or slot reuse, run_until on an
# empty taskflow.
weft_add_test_program(doubts_tests SOURCES doubts_hunt39.c TIMEOUT 60)
# Session 40's open doubts (session 41): modules built in subflows hold their
# body, a busy composition's destroy, deadlines that never fire, the reason a
# set's token gives its members, placeholders in the metrics.
weft_add_test_program(doubts_tests41 SOURCES doubts_hunt41.c TIMEOUT 60)
# Session 41's review of its riskiest changes (h41-9): module holds in subflows,
# composition destroys, placeholders observed, fairness flips, cancel
# callbacks removed from nested runs, GPU stream guards.
weft_add_test_program(review_tests41 SOURCES review_hunt41.c TIMEOUT 60)
# Session 41's open doubts (session 42, h42-1): one section per doubt.
weft_add_test_program(doubts_tests42 SOURCES doubts_hunt42.c TIMEOUT 60)
# Session 42's review of its riskiest concurrent changes (h42-9): submitter
# slots taken over, the injector's spare list, batch steals after single
# steals, semaphore user counts on every run path, ROUND_ROBIN's queuers.
weft_add_test_program(review_tests42 SOURCES review_hunt42.c TIMEOUT 60)
# Session 44's review of its changes (h44-5): futures stored before the
# submission can start (weft_run_many's members).
weft_add_test_program(review_tests44 SOURCES review_hunt44.c TIMEOUT 60)
# Session 45's review of its changes (h45-6): the subflow's lazy nested-run
# record on every failure path, the slab's chunk arithmetic, loop blocks.
weft_add_test_program(review_tests45 SOURCES review_hunt45.c TIMEOUT 60)
