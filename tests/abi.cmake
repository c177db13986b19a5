# ABI across library versions (docs/abi.md): config structs shorter (an older
# header) or longer (a newer one) than the library's, the default executor's
# size from a pinned thread, the fork-join inline fast path's layout.
weft_add_test_program(abi_tests
  SOURCES abi_config.c abi_affinity.c abi_fj_layout.c
  LIBS Threads::Threads
  TIMEOUT 60)
# Binaries built before the sizes were passed call the names without _sized:
# the shared library exports both for every _sized entry point of the headers.
if(TARGET weft_shared)
  add_test(NAME abi.old_entry_points_stay_exported_beside_the_sized_ones
    COMMAND sh -c "command -v nm >/dev/null || { echo 'SKIP: no nm'; exit 77; }
      syms=$(nm -D --defined-only \"$0\" | awk '{print $3}')
      names=$(grep -ho 'weft_[a-z0-9_]*_sized(' \"$1\"/weft/*.h | sed 's/_sized($//' | sort -u)
      [ -n \"$names\" ] || { echo 'no _sized entry point found'; exit 1; }
      bad=0
      for n in $names; do
        for s in $n $n\\_sized; do
          echo \"$syms\" | grep -qx \"$s\" || { echo \"not exported: $s\"; bad=1; }
        done
      done
      echo \"$(echo $names | wc -w) entry points checked\"; exit $bad"
    $<TARGET_FILE:weft_shared> ${PROJECT_SOURCE_DIR}/include)
  set_tests_properties(abi.old_entry_points_stay_exported_beside_the_sized_ones PROPERTIES SKIP_RETURN_CODE 77)
endif()
