# Install tests (plain add_test, not weft_add_test_program: they are scripts).
#   install.consumer_builds_against_installed_tree  cmake --install into a temporary
#       prefix, then build tests/consumer against it with find_package(weft) and with
#       pkg-config, and run both.
#   install.every_header_compiles_alone_as_c11_and_cxx  each public header, included
#       on its own, compiles as C11 (-Wall -Wextra -pedantic -Werror) and as C++.
set(_weft_install_script ${CMAKE_CURRENT_SOURCE_DIR}/scripts/install_consumer.sh)
set(_weft_install_args
  --build=${PROJECT_BINARY_DIR} --source=${PROJECT_SOURCE_DIR} --cmake=${CMAKE_COMMAND}
  --cc=${CMAKE_C_COMPILER} --sanitize=${WEFT_SANITIZE})

add_test(NAME install.consumer_builds_against_installed_tree
  COMMAND bash ${_weft_install_script} consumer ${_weft_install_args})
add_test(NAME install.every_header_compiles_alone_as_c11_and_cxx
  COMMAND bash ${_weft_install_script} headers ${_weft_install_args})
set_tests_properties(install.consumer_builds_against_installed_tree
                     install.every_header_compiles_alone_as_c11_and_cxx
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
