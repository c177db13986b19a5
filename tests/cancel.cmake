# Cancellation: tokens and callbacks (stress included), deadlines and the timer
# thread, tokens attached to runs and async tasks, fork-join roots and their
# stolen children, parallel-algorithm calls, signal preemption; the awkward
# paths of the header's contracts (cancel_contract.c).
weft_add_test_program(cancel_tests
  SOURCES cancel_token.c cancel_deadline.c cancel_attach.c cancel_preempt.c cancel_fj.c cancel_algo.c cancel_contract.c
          cancel_hunt35.c cancel_hunt36.c cancel_hunt40.c cancel_hunt45.c
  LIBS Threads::Threads
  TIMEOUT 120)
