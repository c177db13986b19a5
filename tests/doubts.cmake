# Doubts settled by tests (session 39): a wait overlapping its executor's
# destroy, huge deques, priorities after clear or slot reuse, run_until on an
# empty taskflow.
weft_add_test_program(doubts_tests SOURCES doubts_hunt39.c TIMEOUT 60)
