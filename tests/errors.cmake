# docs/errors.md, R3: a failing public call sets the thread's message, naming
# itself (~40 calls across the headers, each after a sentinel failure of
# another call), keeps a deeper call's detail, and leaves the message alone
# for normal outcomes (WEFT_ECANCELED of a second cancel, WEFT_ENOENT).
weft_add_test_program(errors_tests
  SOURCES errors_messages.c
  TIMEOUT 60)
