#!/usr/bin/env bash
# Model-checks one Promela model with spin (tests/models.cmake runs it per model
# and per broken variant).
#
#   check.sh CC MODEL.pml pass|fail safety|liveness [SPIN_OPTION...]
#
# safety:   assertions and invalid end states (a deadlock: every process blocked
#           while the model's work is unfinished), exhaustive search.
# liveness: acceptance cycles of the model's ltl formula under weak fairness.
# SPIN_OPTION: -DNAME[=VALUE] for the model's preprocessor (picks a variant).
#
# "pass" needs errors: 0 AND a search that was not cut short by the depth bound
# (then the search was exhaustive).  "fail" needs at least one error: the
# variant is broken on purpose and the check must see it.
# Exit 77 (ctest's skip) when spin or the C compiler is missing.
set -u
cc=$1 model=$2 expect=$3 mode=$4
shift 4
base=${model##*/}
name="${base%.pml}${*:+ $*}"
command -v spin >/dev/null 2>&1 || { echo "SKIP $name: spin is not installed (scripts/install-deps.sh)"; exit 77; }
command -v "$cc" >/dev/null 2>&1 || { echo "SKIP $name: no C compiler '$cc'"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/weft-model.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cp "$model" "$work/model.pml" || exit 1
cd "$work" || exit 1

depth=1000000
spin "$@" -a model.pml >spin.log 2>&1 || { cat spin.log; echo "FAIL $name: spin -a failed"; exit 1; }
if [ "$mode" = safety ]; then
    cflags="-DSAFETY -DNOCLAIM" runflags=""
else
    cflags="-DNFAIR=4" runflags="-a -f"
fi
# -DCOLLAPSE: compressed state storage (the largest model needs ~260 MB without).
"$cc" -O2 -w $cflags -DCOLLAPSE -DMEMLIM=2048 -o pan pan.c >cc.log 2>&1 ||
    { cat cc.log; echo "FAIL $name: compiling the verifier failed"; exit 1; }
# shellcheck disable=SC2086
./pan -m$depth $runflags >pan.log 2>&1
errors=$(sed -nE 's/.*errors: ([0-9]+).*/\1/p' pan.log | tail -n 1)
grep -E 'errors:|states, stored|pan:1:|acceptance cycle|invalid end state \(' pan.log | head -n 6
if [ -z "$errors" ]; then
    cat pan.log
    echo "FAIL $name: the verifier did not finish"
    exit 1
fi
if [ "$expect" = pass ]; then
    if [ "$errors" -ne 0 ]; then
        echo "--- counterexample (spin -t) ---"
        spin -t -p "$@" model.pml 2>&1 | tail -n 60
        echo "FAIL $name: $errors error(s) in a model that must hold"
        exit 1
    fi
    if grep -q 'max search depth too small' pan.log; then
        echo "FAIL $name: search cut at depth $depth, not exhaustive"
        exit 1
    fi
    echo "PASS $name: holds (exhaustive)"
else
    if [ "$errors" -eq 0 ]; then
        echo "FAIL $name: a deliberately broken variant passed: the check does not bite"
        exit 1
    fi
    echo "PASS $name: the broken variant is caught, as it must be"
fi
exit 0
