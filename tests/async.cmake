# Async tasks: futures, silent and dependent tasks (random dependency sets),
# nested and isolated waits, then-callbacks, the eventfd with epoll, out of memory.
weft_add_test_program(async_tests
  SOURCES async_basic.c async_deps.c async_events.c
  TIMEOUT 120)
