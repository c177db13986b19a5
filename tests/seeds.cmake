# Programs written from the seed documents (../shared/seeds/) against the public
# headers, as a checker reading them would: wake-ups by every path under every
# policy, the injector from many threads, dependencies at scale, token reuse,
# environment variables, the topology queries.
weft_add_test_program(seeds_tests
  SOURCES seeds_hunt39.c seeds_hunt41.c seeds_hunt42.c
  TIMEOUT 180)
