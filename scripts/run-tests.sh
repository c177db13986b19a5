#!/usr/bin/env bash
# Runs ctest in build dir $1 and closes with "LABEL: N passed, N failed, N skipped".
# Skipped tests are listed by name.  Exit status: non-zero if any test failed.
set -u
dir=${1:?build dir}
label=${2:-tests}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest --test-dir "$dir" -j "$jobs" --output-on-failure ${CTEST_ARGS:-} 2>&1 | tee "$log"
passed=$(grep -cE 'Test +#[0-9]+: .* +Passed' "$log")
skipped=$(grep -cE 'Test +#[0-9]+: .*\*\*\*Skipped|Test +#[0-9]+: .*Not Run' "$log")
total=$(grep -cE 'Test +#[0-9]+: ' "$log")
failed=$((total - passed - skipped))
if [ "$skipped" -gt 0 ]; then
  echo "skipped tests:"
  grep -E 'Test +#[0-9]+: .*(\*\*\*Skipped|Not Run)' "$log" | sed -E 's/.*Test +#[0-9]+: ([^ ]+).*/  \1/'
fi
# A run where ctest itself failed to find tests counts as a failure.
if [ "$total" -eq 0 ]; then failed=1; fi
echo "${label}: ${passed} passed, ${failed} failed, ${skipped} skipped"
[ "$failed" -eq 0 ]
