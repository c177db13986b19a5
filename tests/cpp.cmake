# The C++ layer (include/weft.hpp): graphs of lambdas, exceptions, async futures,
# fork-join, pipelines and algorithms, compiled as C++17 with the C harness.
# Skipped as a whole where no C++ compiler exists.
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  weft_add_test_program(cpp_tests
    SOURCES cpp_graph.cpp cpp_async.cpp cpp_algo.cpp cpp_forkjoin.cpp cpp_hunt38.cpp doubts_hunt39.cc doubts_hunt41.cc doubts_hunt42.cc
    TIMEOUT 120)
  set_target_properties(cpp_tests PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                             CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Taskflow's own unit tests (unittests/test_*.cpp), their checks ported to
  # weft.hpp (session 39).
  weft_add_test_program(cpp_tfport39 SOURCES cpp_tfport39.cc TIMEOUT 120)
  set_target_properties(cpp_tfport39 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                                CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Taskflow's example programs (examples/*.cpp), ported to weft.hpp with
  # exact checks on 1, 2 and 4 workers (session 40).
  weft_add_test_program(cpp_port40 SOURCES cpp_port40.cpp TIMEOUT 120)
  set_target_properties(cpp_port40 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                              CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Taskflow's unit tests, the cases sessions 39 and 40 did not port, as
  # contracts for weft.hpp on 1, 2, 3, 4 and 8 workers (session 41).
  weft_add_test_program(cpp_tfunit41 SOURCES cpp_tfunit41.cpp TIMEOUT 120)
  set_target_properties(cpp_tfunit41 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                                CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Session 42 (h42-4): oneTBB's examples and test shapes and BOTS kernels,
  # ported to weft.hpp with exact checks on 1, 2, 3, 4 and 8 workers.
  weft_add_test_program(cpp_port42 SOURCES cpp_port42.cpp TIMEOUT 120)
  set_target_properties(cpp_port42 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                              CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Round 41: Taskflow members weft.hpp lacked (task priority, type,
  # remove_successors / remove_predecessors; task_group async,
  # dependent_async, cancel, is_cancelled, size).
  weft_add_test_program(cpp_gaps41 SOURCES cpp_gaps41.cpp TIMEOUT 120)
  set_target_properties(cpp_gaps41 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                              CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Round 40: task::work / task::data (Taskflow's work() and attach_data) and
  # the ownership of the callables work() replaces; subflow join/detach rules.
  weft_add_test_program(cpp_hunt40 SOURCES cpp_hunt40.cpp TIMEOUT 120)
  set_target_properties(cpp_hunt40 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                              CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Round-40 probes of weft.hpp's contracts (h40-9): futures, captures
  # destroyed once, exceptions from every callable, lifetimes.
  weft_add_test_program(cpp_hunt40b SOURCES cpp_hunt40b.cpp TIMEOUT 120)
  set_target_properties(cpp_hunt40b PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                               CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Round-42 probes of weft.hpp (h42-7): callables that throw from their copy
  # or move, non-std exceptions, 4 KiB captures, std::function, member
  # pointers, mutable state; task-group children after a sibling threw;
  # moved-from and self-moved objects; executors destroyed while waited on.
  weft_add_test_program(cpp_hunt42 SOURCES cpp_hunt42.cpp TIMEOUT 120)
  set_target_properties(cpp_hunt42 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                              CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Session 42 (h42-10): weft::subflow::join from a task of its own graph.
  weft_add_test_program(cpp_hunt42b SOURCES cpp_hunt42b.cpp TIMEOUT 60)
  set_target_properties(cpp_hunt42b PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                               CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Session 44 (h44-3): the default executor's handle across fork().
  weft_add_test_program(cpp_life_hunt44 SOURCES cpp_life_hunt44.cpp TIMEOUT 60)
  set_target_properties(cpp_life_hunt44 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                                   CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Session 44 (h44-6): weft.hpp lifetimes and exceptions, pass 3: executors
  # destroyed under live futures, taskflows and pipelines; moves onto running
  # objects; pipeline stage, comparator and multi-condition exceptions.
  weft_add_test_program(cpp_hunt44 SOURCES cpp_hunt44.cpp TIMEOUT 60)
  set_target_properties(cpp_hunt44 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                              CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Session 46 (h46-3): weft.hpp gaps: weft::semaphore, subflow::join and
  # stale exceptions, ~pipeline during a run, exceptions from every callable,
  # moved-from handles, algorithms over move-only types.
  weft_add_test_program(cpp_hunt46 SOURCES cpp_hunt46.cpp TIMEOUT 60)
  set_target_properties(cpp_hunt46 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                              CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Session 47 (h47-4): the code fragments of docs/guide-cpp.md (no int main,
  # so tests/docs_snippets.py does not run them), checked for what the guide says.
  weft_add_test_program(docs_hunt47 SOURCES docs_hunt47.cpp TIMEOUT 60)
  set_target_properties(docs_hunt47 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                               CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Session 47 (h47-4): weft.hpp's newer calls under a failing allocator.
  weft_add_test_program(cpp_hunt47 SOURCES cpp_hunt47.cpp TIMEOUT 120)
  set_target_properties(cpp_hunt47 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                              CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Session 47 (h47-5): ~weft::pipeline while a run that will reach it is queued.
  weft_add_test_program(cpp_hunt47b SOURCES cpp_hunt47b.cpp TIMEOUT 120)
  set_target_properties(cpp_hunt47b PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                               CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # Session 42's review (h42-9): task_group batches after a child threw.
  weft_add_test_program(cpp_review42 SOURCES cpp_review42.cpp TIMEOUT 120)
  set_target_properties(cpp_review42 PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                                CXX_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  # weft.hpp on its own (twice, for its guard), as strict C++17.
  add_test(NAME cpp.weft_hpp_compiles_alone_as_cxx17
    COMMAND sh -c "printf '#include <weft.hpp>\\n#include <weft.hpp>\\nint main(void) { return 0; }\\n' | \"$0\" -std=c++17 -Wall -Wextra -Wshadow -pedantic -Werror -fsyntax-only -I\"$1\" -x c++ -"
            ${CMAKE_CXX_COMPILER} ${PROJECT_SOURCE_DIR}/include)
  # weft.hpp with its templates instantiated (cpp_hunt38_strict.cpp), under the
  # warnings users build with: templates show theirs only when instantiated.
  add_test(NAME cpp.weft_hpp_instantiated_is_warning_free
    COMMAND ${CMAKE_CXX_COMPILER} -std=c++17 -Wall -Wextra -Wshadow -Wconversion -Wsign-conversion
            -Wzero-as-null-pointer-constant -pedantic -Werror -fsyntax-only -I${PROJECT_SOURCE_DIR}/include
            ${CMAKE_CURRENT_SOURCE_DIR}/cpp_hunt38_strict.cpp)
  # The same under C++20, and with the other of g++ / clang++ where this
  # machine has it, in C++17 and C++20: users build with any of the four
  # (session 40).
  set(weft_strict_flags -Wall -Wextra -Wshadow -Wconversion -Wsign-conversion -Wzero-as-null-pointer-constant
                        -Wdeprecated -pedantic -Werror -fsyntax-only -I${PROJECT_SOURCE_DIR}/include
                        ${CMAKE_CURRENT_SOURCE_DIR}/cpp_hunt38_strict.cpp)
  add_test(NAME cpp.weft_hpp_instantiated_is_warning_free_cxx20
    COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 ${weft_strict_flags})
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    find_program(WEFT_OTHER_CXX NAMES g++)
  else()
    find_program(WEFT_OTHER_CXX NAMES clang++)
  endif()
  if(WEFT_OTHER_CXX)
    foreach(std 17 20)
      add_test(NAME cpp.weft_hpp_instantiated_is_warning_free_other_compiler_cxx${std}
        COMMAND ${WEFT_OTHER_CXX} -std=c++${std} ${weft_strict_flags})
    endforeach()
  endif()
  # Callables that are not tasks: the first error is weft's static_assert.
  foreach(bad RANGE 1 21)
    add_test(NAME cpp.wrong_callables_fail_with_a_weft_static_assert_${bad}
      COMMAND sh -c "\"$0\" -std=c++17 -fsyntax-only -DWEFT_BAD_CASE=$2 -I\"$1\" \"$3\" 2>&1 | grep -m1 'error' | grep -Eq 'static.*weft(::[a-z_:]+)?: '"
              ${CMAKE_CXX_COMPILER} ${PROJECT_SOURCE_DIR}/include ${bad} ${CMAKE_CURRENT_SOURCE_DIR}/cpp_hunt38_bad_callables.cpp)
  endforeach()
else()
  add_test(NAME cpp.weft_hpp_compiles_alone_as_cxx17 COMMAND sh -c "echo 'SKIP: no C++ compiler'; exit 77")
  set_tests_properties(cpp.weft_hpp_compiles_alone_as_cxx17 PROPERTIES SKIP_RETURN_CODE 77)
endif()
