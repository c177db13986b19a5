# Tooling (docs/guide-tooling.md): flame graphs from a profile (folded stacks).
weft_add_test_program(tooling_tests
  SOURCES tooling_flame.c
  TIMEOUT 60)
