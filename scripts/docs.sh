#!/usr/bin/env bash
# Builds the API reference with Doxygen (docs/reference/Doxyfile) into OUT/html
# and fails when Doxygen warned (every warning is in OUT/warnings.log and is
# printed).  Exits 77 (skipped) when doxygen or python3 is not installed
# (scripts/install-deps.sh installs both).
#   scripts/docs.sh [OUT]     (default: build/docs; `make docs`)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/docs}
for tool in doxygen python3; do
  command -v $tool >/dev/null 2>&1 || { echo "docs: $tool not found (scripts/install-deps.sh): skipped"; exit 77; }
done
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
version=$(sed -n 's/^project(weft VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
doxy() { # output dir, WARN_IF_UNDOCUMENTED
  rm -f "$1/warnings.log"
  WEFT_SOURCE=$root WEFT_DOCS_OUT=$1 WEFT_VERSION=$version WEFT_WARN_UNDOCUMENTED=$2 \
    doxygen "$root/docs/reference/Doxyfile" || { echo "docs: doxygen failed"; exit 1; }
}
# The reference: no warning of any kind.
doxy "$out" NO
if [ -s "$out/warnings.log" ]; then
  cat "$out/warnings.log"
  echo "docs: $(grep -c 'warning:' "$out/warnings.log") doxygen warning(s): fix the header comments above"
  exit 1
fi
# Every public function has its contract: none undocumented.
mkdir -p "$out/undocumented"
doxy "$out/undocumented" YES
if grep '(function).* is not documented' "$out/undocumented/warnings.log"; then
  echo "docs: the functions above have no comment in their header"
  exit 1
fi
echo "docs: $out/html/index.html (no warnings; every function documented)"
