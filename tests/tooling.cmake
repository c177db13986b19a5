# Tooling (docs/guide-tooling.md): flame graphs from a profile (folded stacks).
weft_add_test_program(tooling_tests
  SOURCES tooling_flame.c
  TIMEOUT 60)
# Live statistics (weft_stats_start, WEFT_STATS): the block's layout, the textfile.
weft_add_test_program(tooling_live_tests
  SOURCES tooling_live.c
  TIMEOUT 60)
# Profile data as structs (weft_profile_get), the standalone SVG timeline.
weft_add_test_program(tooling_profile_tests
  SOURCES tooling_profile.c
  TIMEOUT 60)
# Structured logging: entries with their context, the JSON-lines sink.
weft_add_test_program(tooling_log_tests
  SOURCES tooling_log.c
  TIMEOUT 60)
# bench/tools: the regression gate's rule (icount.py selftest: no valgrind needed)
# and change-point detection on synthetic series (changepoint.py --self-test).
# rounds.py's reporting is checked against a fake weft-bench (tests/bench_rounds_check.py).
# Plain build only: they do not depend on the sanitizers.
if(WEFT_SANITIZE STREQUAL "")
  find_program(WEFT_PYTHON3 python3)
  foreach(t "icount_rule_fails_a_rise_over_its_threshold;icount.py;selftest"
            "changepoint_finds_steps_in_synthetic_series;changepoint.py;--self-test")
    list(GET t 0 name)
    list(GET t 1 script)
    list(GET t 2 arg)
    if(WEFT_PYTHON3)
      add_test(NAME bench_tools.${name} COMMAND ${WEFT_PYTHON3} ${PROJECT_SOURCE_DIR}/bench/tools/${script} ${arg})
    else()
      add_test(NAME bench_tools.${name} COMMAND sh -c "echo 'SKIP: python3 not installed'; exit 77")
    endif()
    set_tests_properties(bench_tools.${name} PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
  endforeach()
  # rounds.py against a fake weft-bench: ratios, round counts, --time-limit.
  if(WEFT_PYTHON3)
    add_test(NAME bench_tools.rounds_reports_paired_ratios_and_the_rounds_a_time_limit_left
             COMMAND ${WEFT_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/bench_rounds_check.py)
    set_tests_properties(bench_tools.rounds_reports_paired_ratios_and_the_rounds_a_time_limit_left
                         PROPERTIES TIMEOUT 120)
  endif()
endif()
# weft-top against examples/live_view: under tmux (skipped without it), on a
# pipe, and on a file a killed process left.  Plain build with the examples.
if(WEFT_SANITIZE STREQUAL "" AND WEFT_BUILD_EXAMPLES)
  foreach(mode "tmux;weft_top_figures_move_under_tmux" "plain;weft_top_frames_on_a_pipe_show_rates"
               "stale;weft_top_flags_the_file_of_a_dead_process")
    list(GET mode 0 m)
    list(GET mode 1 name)
    add_test(NAME tooling_top.${name}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tooling_top.sh ${m} $<TARGET_FILE:weft-top>
                     $<TARGET_FILE:example_live_view>)
    set_tests_properties(tooling_top.${name} PROPERTIES TIMEOUT 30 SKIP_RETURN_CODE 77)
  endforeach()
endif()
