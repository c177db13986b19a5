# ABI across library versions (docs/abi.md): config structs shorter (an older
# header) or longer (a newer one) than the library's, the default executor's
# size from a pinned thread, the fork-join inline fast path's layout.
weft_add_test_program(abi_tests
  SOURCES abi_config.c abi_affinity.c abi_fj_layout.c
  LIBS Threads::Threads
  TIMEOUT 60)
