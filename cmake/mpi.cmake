# weft::mpi: distributed flows over MPI (src/mpi/, include/weft/mpi.h), its own
# library so that the core never depends on MPI.  Built when CMake finds MPI's
# C bindings; otherwise skipped with a status line (tests/mpi.cmake then skips
# the MPI tests by name, and examples/mpi_*.c are not built).
# Included once from the top CMakeLists.txt, after the core library targets.
find_package(MPI COMPONENTS C QUIET)
if(NOT MPI_C_FOUND)
  message(STATUS "weft: MPI not found: weft::mpi, its tests and examples are skipped")
  set(WEFT_HAVE_MPI OFF)
  return()
endif()
set(WEFT_HAVE_MPI ON)
message(STATUS "weft: MPI ${MPI_C_VERSION} found: building weft::mpi")

file(GLOB WEFT_MPI_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/mpi/*.c)
# Static (like weft_static) unless the host builds shared libraries; it links
# weft::weft, whatever that is, and uses only weft's public API.
add_library(weft_mpi ${WEFT_MPI_SOURCES})
add_library(weft::mpi ALIAS weft_mpi)
target_include_directories(weft_mpi
  PUBLIC  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
          $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(weft_mpi PRIVATE WEFT_BUILDING _GNU_SOURCE)
target_compile_options(weft_mpi PRIVATE ${WEFT_WARNINGS})
target_link_libraries(weft_mpi PUBLIC weft::weft MPI::MPI_C)
set_target_properties(weft_mpi PROPERTIES OUTPUT_NAME weft_mpi EXPORT_NAME mpi)

# examples/mpi_*.c (listed in WEFT_EXAMPLES_OPTIONAL there): built here, into
# <build>/examples/ like the others.
if(WEFT_BUILD_EXAMPLES)
  file(GLOB _weft_mpi_examples CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/examples/mpi_*.c)
  foreach(src IN LISTS _weft_mpi_examples)
    get_filename_component(name ${src} NAME_WE)
    add_executable(example_${name} ${src})
    target_link_libraries(example_${name} PRIVATE weft::mpi m)
    target_compile_options(example_${name} PRIVATE -Wall -Wextra)
    set_target_properties(example_${name} PROPERTIES OUTPUT_NAME ${name}
                          RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/examples)
  endforeach()
endif()

if(WEFT_INSTALL)
  include(CMakePackageConfigHelpers)
  install(TARGETS weft_mpi EXPORT weftMpiTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  # The CMake package weftMpi: find_package(weftMpi) gives weft::mpi, finding
  # weft (this very version, beside it) and MPI's C bindings first.  Its link
  # to weft::weft refers to the weft package's target (another export set).
  install(EXPORT weftMpiTargets NAMESPACE weft:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weftMpi)
  file(WRITE ${PROJECT_BINARY_DIR}/weftMpiConfig.cmake.in
"@PACKAGE_INIT@
include(CMakeFindDependencyMacro)
if(NOT weft_DIR AND EXISTS \"\${CMAKE_CURRENT_LIST_DIR}/../weft/weftConfig.cmake\")
  set(weft_DIR \"\${CMAKE_CURRENT_LIST_DIR}/../weft\")
endif()
find_dependency(weft @PROJECT_VERSION@ EXACT CONFIG)
find_dependency(MPI COMPONENTS C)
include(\"\${CMAKE_CURRENT_LIST_DIR}/weftMpiTargets.cmake\")
check_required_components(weftMpi)
")
  configure_package_config_file(${PROJECT_BINARY_DIR}/weftMpiConfig.cmake.in
    ${PROJECT_BINARY_DIR}/weftMpiConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weftMpi)
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/weftMpiConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY ExactVersion)
  install(FILES ${PROJECT_BINARY_DIR}/weftMpiConfig.cmake ${PROJECT_BINARY_DIR}/weftMpiConfigVersion.cmake
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weftMpi)
  file(RELATIVE_PATH WEFT_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
  # MPI's own flags come from its pkg-config module: weft-mpi requires the
  # first this machine has (ompi-c for Open MPI, mpich, or the generic mpi);
  # with none, it carries the include directories and libraries CMake found.
  # (MPI_C_LIBRARY_VERSION_STRING, tried first, is often unset: it needs a
  # test run, so it named mpich on an Open MPI machine.)
  find_package(PkgConfig QUIET)
  set(WEFT_MPI_PC_REQUIRES "")
  set(WEFT_MPI_PC_LIBS "")
  set(WEFT_MPI_PC_CFLAGS "")
  if(PKG_CONFIG_FOUND)
    foreach(_mod ompi-c mpich mpi)
      pkg_check_modules(_weft_pc_${_mod} QUIET ${_mod})
      if(_weft_pc_${_mod}_FOUND)
        set(WEFT_MPI_PC_REQUIRES ${_mod})
        break()
      endif()
    endforeach()
  endif()
  if(NOT WEFT_MPI_PC_REQUIRES)
    foreach(_dir IN LISTS MPI_C_INCLUDE_DIRS)
      string(APPEND WEFT_MPI_PC_CFLAGS " -I${_dir}")
    endforeach()
    foreach(_lib IN LISTS MPI_C_LIBRARIES)
      string(APPEND WEFT_MPI_PC_LIBS " ${_lib}")
    endforeach()
  endif()
  file(WRITE ${PROJECT_BINARY_DIR}/weft-mpi.pc.in
"prefix=\${pcfiledir}/@WEFT_PC_TO_PREFIX@
exec_prefix=\${prefix}
libdir=\${prefix}/@CMAKE_INSTALL_LIBDIR@
includedir=\${prefix}/@CMAKE_INSTALL_INCLUDEDIR@

Name: weft-mpi
Description: weft's distributed task graphs over MPI
Version: @PROJECT_VERSION@
Requires: weft @WEFT_MPI_PC_REQUIRES@
Libs: -L\${libdir} -lweft_mpi@WEFT_MPI_PC_LIBS@
Cflags: -I\${includedir}@WEFT_MPI_PC_CFLAGS@
")
  configure_file(${PROJECT_BINARY_DIR}/weft-mpi.pc.in ${PROJECT_BINARY_DIR}/weft-mpi.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/weft-mpi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

# bench/mpi/: tiled Cholesky on weft::mpi and, when pkg-config finds
# StarPU-MPI 1.3 (libstarpu-dev), the same on StarPU-MPI (bench/mpi/run.sh runs
# them paired), and weft::mpi's METG.  Built into <build>/bench/.
if(WEFT_BUILD_BENCH)
  foreach(name cholesky_weft metg_weft)
    add_executable(bench_mpi_${name} ${PROJECT_SOURCE_DIR}/bench/mpi/${name}.c)
    target_link_libraries(bench_mpi_${name} PRIVATE weft::mpi m)
    target_compile_options(bench_mpi_${name} PRIVATE -Wall -Wextra)
    set_target_properties(bench_mpi_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
  endforeach()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(WEFT_STARPUMPI QUIET IMPORTED_TARGET starpumpi-1.3)
  endif()
  if(WEFT_STARPUMPI_FOUND)
    add_executable(bench_mpi_cholesky_starpu ${PROJECT_SOURCE_DIR}/bench/mpi/cholesky_starpu.c)
    target_link_libraries(bench_mpi_cholesky_starpu PRIVATE PkgConfig::WEFT_STARPUMPI MPI::MPI_C m)
    target_compile_options(bench_mpi_cholesky_starpu PRIVATE -Wall -Wextra)
    target_compile_definitions(bench_mpi_cholesky_starpu PRIVATE _GNU_SOURCE) # StarPU uses pthread rwlocks, barriers
    set_target_properties(bench_mpi_cholesky_starpu PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
  else()
    message(STATUS "weft: StarPU-MPI (starpumpi-1.3) not found: bench_mpi_cholesky_starpu skipped")
  endif()
endif()
