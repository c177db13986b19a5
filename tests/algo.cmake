# Parallel algorithms: loops, reductions, scans, sorts, errors and graph tasks,
# checked against serial results on sizes 0, 1, 2, primes and 10^7.
weft_add_test_program(algo_tests
  SOURCES algo_loops.c algo_reduce.c algo_scan.c algo_sort.c algo_errors.c algo_cmp.c
          algo_empty.c algo_hunt38.c algo_hunt40.c algo_hunt40b.c tfport_hunt44.c algo_batch46.c
          algo_hunt47.c
  TIMEOUT 120)
# algo_typed.h's macros expanded in a user file, under -Wall -Wextra -Werror with
# the C compiler and with clang (which warns of unused static functions there).
find_program(WEFT_CLANG_FOR_TESTS NAMES clang)
set(weft_typed_ccnames "")
foreach(cc IN ITEMS "${CMAKE_C_COMPILER}" "${WEFT_CLANG_FOR_TESTS}")
  if(cc)
    get_filename_component(ccname "${cc}" NAME)
  endif()
  if(cc AND NOT ccname IN_LIST weft_typed_ccnames)
    list(APPEND weft_typed_ccnames ${ccname})
    add_test(NAME algo.typed_macros_expanded_in_a_user_file_are_warning_free_${ccname}
      COMMAND ${cc} -std=c11 -Wall -Wextra -Wshadow -Wconversion -Wsign-conversion -Wcast-qual -pedantic -Werror
              -fsyntax-only -I${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR}/algo_hunt40_typed.c)
  endif()
endforeach()
