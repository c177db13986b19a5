# include/weft/version.h must carry the version of project() in CMakeLists.txt,
# the one place it is set.  Used at configure time (include + call) and by ctest
# (cmake -DHEADER=... -DVERSION=... -P this file: version.header_matches_project_version).
function(weft_check_version_header header version)
  file(STRINGS "${header}" lines REGEX "^#define WEFT_VERSION_(MAJOR|MINOR|PATCH) ")
  set(found "")
  foreach(part MAJOR MINOR PATCH)
    set(value "")
    foreach(line IN LISTS lines)
      if(line MATCHES "^#define WEFT_VERSION_${part} +([0-9]+)")
        set(value ${CMAKE_MATCH_1})
      endif()
    endforeach()
    list(APPEND found "${value}")
  endforeach()
  list(JOIN found "." found)
  if(NOT found STREQUAL version)
    message(FATAL_ERROR "${header} says version '${found}' but CMakeLists.txt's project() says "
                        "'${version}': change both together (docs/versioning.md)")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND HEADER AND VERSION)
  weft_check_version_header("${HEADER}" "${VERSION}")
  message(STATUS "version.h matches ${VERSION}")
endif()
