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
  install(TARGETS weft_mpi
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  file(RELATIVE_PATH WEFT_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
  # MPI's own flags come from its pkg-config module (ompi-c for Open MPI,
  # mpich for MPICH) or its compiler wrapper (mpicc); weft-mpi names the first.
  if(MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI")
    set(WEFT_MPI_PC_REQUIRES "ompi-c")
  else()
    set(WEFT_MPI_PC_REQUIRES "mpich")
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
Libs: -L\${libdir} -lweft_mpi
Cflags: -I\${includedir}
")
  configure_file(${PROJECT_BINARY_DIR}/weft-mpi.pc.in ${PROJECT_BINARY_DIR}/weft-mpi.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/weft-mpi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
