# Protocol models checked exhaustively with spin (tests/models/, docs/guide-tooling.md):
# each model must hold, and each deliberately broken variant must FAIL (so the
# check is shown to bite).  The models do not depend on the build, so they run in
# the plain build only, not again under the sanitizers.  Skipped (77) without spin.
if(WEFT_SANITIZE STREQUAL "")
  # weft_add_model(NAME FILE MODE [VARIANT define...]): MODE is safety or liveness.
  function(weft_add_model name file mode)
    set(check ${CMAKE_CURRENT_SOURCE_DIR}/models/check.sh)
    set(pml ${CMAKE_CURRENT_SOURCE_DIR}/models/${file})
    add_test(NAME models.${name}.holds
             COMMAND bash ${check} ${CMAKE_C_COMPILER} ${pml} pass ${mode})
    set_tests_properties(models.${name}.holds PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
    foreach(def IN LISTS ARGN)
      string(TOLOWER ${def} vname)
      add_test(NAME models.${name}.broken_${vname}_is_caught
               COMMAND bash ${check} ${CMAKE_C_COMPILER} ${pml} fail ${mode} -D${def})
      set_tests_properties(models.${name}.broken_${vname}_is_caught PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
    endforeach()
  endfunction()

  # Chase-Lev deque: no task lost (W1), none taken twice (W2), with growth.
  weft_add_model(deque deque.pml safety NO_FENCE NO_LAST_CAS RING_BEFORE_BOTTOM PUSH_OLD_RING)
  # Sleep and wake: no lost wake-up (deadlock-free) and every job runs (ltl, weak fairness).
  weft_add_model(sleep sleep.pml safety LOOK_BEFORE_REGISTER KEY_AT_WAIT NO_NOTIFY_FENCE NO_TOKEN_CLAIM)
  weft_add_model(sleep_progress sleep.pml liveness LOOK_BEFORE_REGISTER NO_NOTIFY_FENCE)
  # wait_all against weft__runs_busy_end: never early, never sleeps through the last end.
  weft_add_model(waitall waitall.pml safety NO_HEAVY_FENCE EPOCH_AFTER_CHECK BEGUN_FIRST SHORTCUT_WITHOUT_FENCE)
endif()
