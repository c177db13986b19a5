# ABI across library versions (docs/abi.md): config structs shorter (an older
# header) or longer (a newer one) than the library's, the default executor's
# size from a pinned thread, the fork-join inline fast path's layout.
weft_add_test_program(abi_tests
  SOURCES abi_config.c abi_affinity.c abi_fj_layout.c
  LIBS Threads::Threads
  TIMEOUT 60)
# Every call taking a config struct by pointer has a _sized form, and the
# shared library exports the _sized symbols and, for binaries built before the
# sizes were passed, the old names (tests/abi_sized_check.py).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND AND TARGET weft_shared)
  add_test(NAME abi.config_calls_have_sized_forms_and_old_names_stay_exported
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/abi_sized_check.py
            ${PROJECT_SOURCE_DIR}/include $<TARGET_FILE:weft_shared>)
  set_tests_properties(abi.config_calls_have_sized_forms_and_old_names_stay_exported
    PROPERTIES SKIP_RETURN_CODE 77)
elseif(Python3_FOUND)
  add_test(NAME abi.config_calls_have_sized_forms_and_old_names_stay_exported
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/abi_sized_check.py
            ${PROJECT_SOURCE_DIR}/include)
else()
  add_test(NAME abi.config_calls_have_sized_forms_and_old_names_stay_exported
    COMMAND sh -c "echo 'SKIP: no python3'; exit 77")
  set_tests_properties(abi.config_calls_have_sized_forms_and_old_names_stay_exported
    PROPERTIES SKIP_RETURN_CODE 77)
endif()

# A WEFT_NODISCARD call keeps its warning through the macro that makes it pass
# its struct size (weft_executor_create -> weft__executor_create_inline): the
# compiler only warns for the function a program actually calls.
if(Python3_FOUND)
  add_test(NAME abi.nodiscard_calls_still_warn_through_their_sized_wrappers
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/abi_nodiscard_check.py
            ${PROJECT_SOURCE_DIR}/include ${CMAKE_C_COMPILER})
else()
  add_test(NAME abi.nodiscard_calls_still_warn_through_their_sized_wrappers
    COMMAND sh -c "echo 'SKIP: no python3'; exit 77")
  set_tests_properties(abi.nodiscard_calls_still_warn_through_their_sized_wrappers
    PROPERTIES SKIP_RETURN_CODE 77)
endif()
