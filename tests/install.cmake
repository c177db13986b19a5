# Install tests (plain add_test, not weft_add_test_program: they are scripts).
#   install.consumer_builds_against_installed_tree  cmake --install into a temporary
#       prefix, then build tests/consumer against it with find_package(weft) and with
#       pkg-config, and run both.
#   install.pkg_config_static_link_needs_no_libweft_so  the same install, then a program
#       linked with `pkg-config --static --libs weft` (-Wl,-Bstatic, and cc -static)
#       that readelf shows does not need libweft.so.
#   install.subproject_builds_only_the_library  a host project takes weft in with
#       add_subdirectory (built and run) and FetchContent: only the library, the
#       host's CMAKE_BUILD_TYPE untouched, weft::weft there; WEFT_BUILD_TESTS=ON
#       brings the tests.
#   install.every_header_compiles_alone_as_c11_and_cxx  each public header, included
#       on its own, compiles as C11 (-Wall -Wextra -pedantic -Werror) and as C++.
set(_weft_install_script ${CMAKE_CURRENT_SOURCE_DIR}/scripts/install_consumer.sh)
set(_weft_install_args
  --build=${PROJECT_BINARY_DIR} --source=${PROJECT_SOURCE_DIR} --cmake=${CMAKE_COMMAND}
  --cc=${CMAKE_C_COMPILER} --sanitize=${WEFT_SANITIZE})

add_test(NAME install.consumer_builds_against_installed_tree
  COMMAND bash ${_weft_install_script} consumer ${_weft_install_args})
add_test(NAME install.pkg_config_static_link_needs_no_libweft_so
  COMMAND bash ${_weft_install_script} static ${_weft_install_args})
add_test(NAME install.subproject_builds_only_the_library
  COMMAND bash ${_weft_install_script} subproject ${_weft_install_args})
add_test(NAME install.every_header_compiles_alone_as_c11_and_cxx
  COMMAND bash ${_weft_install_script} headers ${_weft_install_args})
# include/weft/version.h against project(VERSION) (also checked at configure time).
add_test(NAME install.version_header_matches_project_version
  COMMAND ${CMAKE_COMMAND} -DHEADER=${PROJECT_SOURCE_DIR}/include/weft/version.h
          -DVERSION=${PROJECT_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/weft_version_check.cmake)
set_tests_properties(install.consumer_builds_against_installed_tree
                     install.pkg_config_static_link_needs_no_libweft_so
                     install.subproject_builds_only_the_library
                     install.every_header_compiles_alone_as_c11_and_cxx
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# Both install into the build tree's install manifest: one at a time.
set_tests_properties(install.consumer_builds_against_installed_tree
                     install.pkg_config_static_link_needs_no_libweft_so
  PROPERTIES RESOURCE_LOCK weft_install)
