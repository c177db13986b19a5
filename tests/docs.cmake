# The API reference (scripts/docs.sh, `make docs`): Doxygen over the public
# headers with no warning, and no public function without its comment.  Skipped
# (exit 77) where doxygen is not installed (scripts/install-deps.sh installs it).
add_test(NAME docs.reference_builds_without_warnings
  COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/docs.sh ${PROJECT_BINARY_DIR}/docs)
set_tests_properties(docs.reference_builds_without_warnings PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
