# The API reference (scripts/docs.sh, `make docs`): Doxygen over the public
# headers with no warning, and no public function without its comment.  Skipped
# (exit 77) where doxygen is not installed (scripts/install-deps.sh installs it).
add_test(NAME docs.reference_builds_without_warnings
  COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/docs.sh ${PROJECT_BINARY_DIR}/docs)
set_tests_properties(docs.reference_builds_without_warnings PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)

# The documentation's complete programs (```c / ```cpp blocks with `int main` in
# README.md and docs/*.md) compile against the build with the warnings for an
# undeclared name, a wrong argument type and an ignored NODISCARD status made
# errors, run, and print what a `prints:` comment says; each reported by file and
# line.  Skipped (77) with no C compiler or no python3; an MPI program needs
# mpicc (and is run on two ranks when mpirun is found).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND AND TARGET weft_static)
  set(WEFT_DOCS_MPI_LIB none)
  # Under a sanitizer the programs are built with it (the library needs its
  # runtime); MPI programs are left out there, as Open MPI is not built with it.
  set(WEFT_DOCS_FLAGS "")
  if(WEFT_SANITIZE STREQUAL "thread")
    set(WEFT_DOCS_FLAGS "-fsanitize=thread")
  elseif(WEFT_SANITIZE STREQUAL "address")
    set(WEFT_DOCS_FLAGS "-fsanitize=address,undefined")
  endif()
  if(TARGET weft_mpi AND WEFT_SANITIZE STREQUAL "")
    set(WEFT_DOCS_MPI_LIB $<TARGET_FILE:weft_mpi>)
  endif()
  add_test(NAME docs.snippets_with_main_compile_and_run
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/docs_snippets.py
            ${PROJECT_SOURCE_DIR} $<TARGET_FILE:weft_static> ${WEFT_DOCS_MPI_LIB})
else()
  add_test(NAME docs.snippets_with_main_compile_and_run
    COMMAND sh -c "echo 'SKIP: no python3 or no static library'; exit 77")
endif()
set_tests_properties(docs.snippets_with_main_compile_and_run
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
  ENVIRONMENT "CC=${CMAKE_C_COMPILER};CXX=${CMAKE_CXX_COMPILER};WEFT_DOCS_FLAGS=${WEFT_DOCS_FLAGS}")
