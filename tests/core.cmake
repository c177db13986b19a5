# Core internals: deque, injector, sleep protocol, block cache (tests link the static library
# and include internal headers from src/).
weft_add_test_program(core_tests SOURCES core_deque.c core_injector.c core_sleep.c core_block_cache.c core_layers.c TIMEOUT 120)
