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

LAYERS="platform core topo cancel sched fj async graph pipeline algo gpu observe mpi"

# file -> included layer, and why it is allowed for now (issue 16 removes them:
# the core will offer hooks that the upper layers register into).
EXCEPTIONS="
src/core/executor.h fj       fork-join frames live in the worker struct (inline spawn reaches them at offset 0)
src/core/executor.c observe  executor create/destroy call the observer's create/destroy by name
src/core/worker.c observe    the worker loop calls observation hooks (steal, park, busy) by name
src/core/env.c observe       warnings go through observe/log.h, the one logger
src/fj/frames.c observe      stolen frames are observed by name
src/fj/root.c observe        root tasks are observed by name
src/async/async.c observe    async tasks are observed by name
src/async/silent.c observe   silent async tasks are observed by name
src/graph/graph.h observe    task begin/end hooks are inline and called by name
src/graph/run.c observe      run events are observed by name
src/pipeline/run.c observe   pipeline stage calls are observed by name
src/algo/par.c observe       algorithm jobs are observed by name
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
