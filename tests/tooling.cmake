# Tooling (docs/guide-tooling.md): flame graphs from a profile (folded stacks).
weft_add_test_program(tooling_tests
  SOURCES tooling_flame.c
  TIMEOUT 60)
# bench/tools: the regression gate's rule (icount.py selftest: no valgrind needed)
# and change-point detection on synthetic series (changepoint.py --self-test).
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
endif()
