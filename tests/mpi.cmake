# Distributed flows (weft::mpi): every test runs under mpirun, with 2 and with
# 4 ranks (some with 1 and 3 as well), oversubscribed (this machine may have
# fewer cores than ranks).  Without MPI each is skipped by name.
set(WEFT_MPI_TEST_SOURCES mpi_basic.c mpi_stencil.c mpi_progress.c mpi_taskflow.c mpi_pool.c mpi_alloc.c
    mpi_hunt35.c mpi_hunt39.c mpi_hunt41.c mpi_hunt42.c mpi_hunt47.c)
# Tests that also run on 1 and 3 ranks.
set(WEFT_MPI_TESTS_ALL_SIZES random_graphs_match_the_serial_run
    an_ordinary_taskflow_runs_across_ranks_as_in_one_process
    a_taskflow_with_an_erased_task_is_distributed_like_any_other
    mpi_memory_comes_from_the_allocator_hook_and_returns_with_its_size
    mpi_calls_report_out_of_memory_when_the_allocator_fails)

set(_mpi_tests "")
foreach(src IN LISTS WEFT_MPI_TEST_SOURCES)
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/${src} lines REGEX "^TEST\\(([A-Za-z0-9_]+)\\)")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^TEST\\(([A-Za-z0-9_]+)\\).*" "\\1" tname "${line}")
    list(APPEND _mpi_tests ${tname})
  endforeach()
endforeach()

if(NOT WEFT_HAVE_MPI)
  foreach(tname IN LISTS _mpi_tests)
    add_test(NAME mpi_tests.${tname} COMMAND sh -c "echo 'SKIP: MPI not found'; exit 77")
    set_tests_properties(mpi_tests.${tname} PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
  return()
endif()

add_executable(mpi_tests ${WEFT_MPI_TEST_SOURCES})
target_link_libraries(mpi_tests PRIVATE weft_test_main weft::mpi)
target_include_directories(mpi_tests PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(mpi_tests PRIVATE -Wall -Wextra -Wno-unused-parameter)

# mpirun refuses root without --allow-run-as-root; the shared-memory transport's
# single-copy mechanism (CMA) needs ptrace rights containers often lack; one
# machine needs only the shared-memory transport (vader) and self.
set(WEFT_MPIRUN ${MPIEXEC_EXECUTABLE} --oversubscribe --mca btl self,vader
    --mca btl_vader_single_copy_mechanism none)
execute_process(COMMAND id -u OUTPUT_VARIABLE _weft_uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_weft_uid STREQUAL "0")
  list(APPEND WEFT_MPIRUN --allow-run-as-root)
endif()
set(WEFT_MPIRUN ${WEFT_MPIRUN} PARENT_SCOPE)

# Open MPI itself is not built with the sanitizers: what they report inside it
# is suppressed (tests/mpi-tsan.supp, tests/mpi-lsan.supp), never weft's code.
# No OMPI_MCA_mpi_yield_when_idle: weft's progress thread yields and sleeps
# by itself (src/mpi/run.c, "Sleeping"), and the tests run as users run.
set(_mpi_env "")
if(WEFT_SANITIZE STREQUAL "thread")
  list(APPEND _mpi_env "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1 suppressions=${CMAKE_CURRENT_SOURCE_DIR}/mpi-tsan.supp")
elseif(WEFT_SANITIZE STREQUAL "address")
  # Open MPI unloads its components at MPI_Finalize, leaving their leaks as
  # "<unknown module>" that no suppression can name: keep them loaded; and
  # Open MPI has no frame pointers: unwind slowly, or stacks stop inside it.
  list(APPEND _mpi_env "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/mpi-lsan.supp:fast_unwind_on_malloc=0"
                       "OMPI_MCA_mca_base_component_disable_dlclose=1")
endif()

math(EXPR _mpi_timeout "30 * ${WEFT_TEST_TIMEOUT_MULT}")
foreach(tname IN LISTS _mpi_tests)
  set(sizes 2 4)
  if(tname IN_LIST WEFT_MPI_TESTS_ALL_SIZES)
    set(sizes 1 2 3 4)
  endif()
  foreach(np IN LISTS sizes)
    add_test(NAME mpi_tests.np${np}.${tname}
             COMMAND ${WEFT_MPIRUN} -np ${np} $<TARGET_FILE:mpi_tests> ${tname})
    set_tests_properties(mpi_tests.np${np}.${tname} PROPERTIES TIMEOUT ${_mpi_timeout}
                         SKIP_RETURN_CODE 77 LABELS mpi ENVIRONMENT "${_mpi_env}")
  endforeach()
endforeach()

# The examples (cmake/mpi.cmake builds them), with their serial checks.
if(TARGET example_mpi_cholesky)
  foreach(np 1 2 4)
    add_test(NAME examples.mpi_cholesky.np${np} COMMAND ${WEFT_MPIRUN} -np ${np} $<TARGET_FILE:example_mpi_cholesky> 6 16)
    set_tests_properties(examples.mpi_cholesky.np${np} PROPERTIES TIMEOUT ${_mpi_timeout}
                         LABELS "examples;mpi" ENVIRONMENT "${_mpi_env}" PASS_REGULAR_EXPRESSION "PASS")
  endforeach()
endif()
foreach(ex wavefront pool)
  if(TARGET example_mpi_${ex})
    foreach(np 1 2 4)
      set(_args 6 16)
      if(ex STREQUAL "pool")
        set(_args 200 500) # 200 tasks of 500 us (asleep), all on rank 0
      endif()
      add_test(NAME examples.mpi_${ex}.np${np} COMMAND ${WEFT_MPIRUN} -np ${np} $<TARGET_FILE:example_mpi_${ex}> ${_args})
      set_tests_properties(examples.mpi_${ex}.np${np} PROPERTIES TIMEOUT ${_mpi_timeout}
                           LABELS "examples;mpi" ENVIRONMENT "${_mpi_env}" PASS_REGULAR_EXPRESSION "PASS")
    endforeach()
  endif()
endforeach()

# weft::mpi installed: the CMake package weftMpi and weft-mpi.pc each build a
# program that runs on 2 ranks (tests/mpi_install.sh).  It installs the build
# tree (its install manifest): one install test at a time.
if(WEFT_INSTALL)
  add_test(NAME mpi_install.package_and_pkg_config_build_a_consumer
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi_install.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                   ${CMAKE_COMMAND} ${CMAKE_C_COMPILER} "${WEFT_SANITIZE}" ${WEFT_MPIRUN})
  set_tests_properties(mpi_install.package_and_pkg_config_build_a_consumer PROPERTIES
                       SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS mpi RESOURCE_LOCK weft_install ENVIRONMENT "${_mpi_env}")
endif()
