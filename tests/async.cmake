# Async tasks: futures, silent and dependent tasks (random dependency sets),
# nested and isolated waits, then-callbacks, the eventfd with epoll, out of memory,
# submitting from threads that are not workers (submitter slots).
weft_add_test_program(async_tests
  SOURCES async_basic.c async_deps.c async_events.c async_submit.c async_wait_deadlock.c
          async_hunt38.c async_hunt40.c async_hunt46.c async_hunt47.c
  TIMEOUT 120)
