# Observability tests: observer, metrics, profiler (JSON checked with python3,
# DOT with graphviz, HTML rendered by headless Chromium where installed), logging
# and the state dump.
weft_add_test_program(obs_tests
  SOURCES obs_observer.c obs_profile.c obs_misc.c obs_batch.c obs_work.c obs_export.c
          obs_hunt38.c obs_hunt39.c obs_hunt40.c obs_hunt41.c obs_hunt46.c
  TIMEOUT 120)
