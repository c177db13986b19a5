#!/usr/bin/env bash
# Fails when a file under src/ includes a header of a layer above its own.
#   scripts/check-layers.sh [ROOT]
# The order is ../shared/ARCHITECTURE.md's, bottom first, in LAYERS below (the
# one place it is written down for the check).  A file of layer L may include
# "M/..." only when M is L or below it.  Headers outside src/<layer>/ (weft/...,
# the public API) are not layers.  Known exceptions are listed in EXCEPTIONS,
# each with its reason: an exception that no longer occurs is reported too, so
# the list only ever shrinks.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2

LAYERS="platform core topo cancel sched async graph pipeline algo gpu observe compose mpi"

# file -> included layer, and why it is allowed (none today: the core offers
# hooks that the upper layers register into, core/layer.h and core/obs_hooks.h).
EXCEPTIONS="
"

rank() {
  local i=0
  for l in $LAYERS; do
    [ "$l" = "$1" ] && { echo $i; return; }
    i=$((i + 1))
  done
  echo -1
}

bad=0
seen=""
while IFS= read -r line; do
  file=${line%%:*}
  inc=$(echo "$line" | sed -E 's/.*#include "([a-z_]+)\/.*/\1/')
  layer=$(echo "$file" | cut -d/ -f2)
  r_file=$(rank "$layer"); r_inc=$(rank "$inc")
  [ "$r_inc" -lt 0 ] && continue          # not a layer (e.g. weft/)
  if [ "$r_file" -lt 0 ]; then
    echo "check-layers: $file: folder '$layer' is not in LAYERS"; bad=1; continue
  fi
  [ "$r_inc" -le "$r_file" ] && continue
  if echo "$EXCEPTIONS" | grep -q "^$file $inc "; then
    seen="$seen $file:$inc"
    continue
  fi
  echo "check-layers: $file ($layer) includes a header of $inc, a layer above it"
  bad=1
done < <(grep -rnE '^#include "[a-z_]+/' src)

# Exceptions that no longer occur: take them off the list.
while read -r file inc _; do
  [ -z "$file" ] && continue
  case " $seen " in *" $file:$inc "*) ;; *)
    echo "check-layers: exception '$file -> $inc' no longer occurs: remove it from scripts/check-layers.sh"; bad=1 ;;
  esac
done <<< "$EXCEPTIONS"

[ $bad -eq 0 ] && echo "check-layers: every include runs down the layers ($(echo "$EXCEPTIONS" | grep -c .) named exceptions)"
exit $bad
