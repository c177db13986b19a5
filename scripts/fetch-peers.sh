#!/usr/bin/env bash
# Fetches the optional weft-bench peers Taskflow and Lace at the commits the
# figures in bench/README.md were made with, into DIR (default: ./peers), and
# prints the two export lines that make CMake find them:
#   scripts/fetch-peers.sh /tmp/peers
#   export TASKFLOW_DIR=/tmp/peers/taskflow LACE_DIR=/tmp/peers/lace   # (printed)
#   cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH=ON
# (or pass -DTASKFLOW_DIR=... -DLACE_DIR=... to cmake).  Taskflow is header-only
# (C++20); Lace's src/lace.c is compiled by bench/CMakeLists.txt.  Neither CI
# nor scripts/install-deps.sh runs this: without the variables impl=tf and
# impl=lace are skipped by name.  Needs git and network access to github.com.
# Override the commits with TASKFLOW_COMMIT / LACE_COMMIT.
set -eu -o pipefail
dir=${1:-peers}
taskflow_commit=${TASKFLOW_COMMIT:-83f90a279aaab33fd4ce1deed00ca07819cbc8f8}  # taskflow/taskflow master, 2026-08-06
lace_commit=${LACE_COMMIT:-d4b8c08958e55adcc8378e73b8470a51c550efc4}          # trolando/lace v1.4.2, 2023-11-18

# fetch URL COMMIT DEST: a shallow fetch of one commit, or a full clone where the
# server refuses fetching by commit id.
fetch() {
  local url=$1 commit=$2 dest=$3
  if [ -d "$dest/.git" ] && [ "$(git -C "$dest" rev-parse HEAD)" = "$commit" ]; then
    return 0
  fi
  rm -rf "$dest"
  git init -q "$dest"
  git -C "$dest" remote add origin "$url"
  if ! git -C "$dest" fetch -q --depth 1 origin "$commit"; then
    git -C "$dest" fetch -q origin
  fi
  git -C "$dest" -c advice.detachedHead=false checkout -q "$commit"
}

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
fetch https://github.com/taskflow/taskflow.git "$taskflow_commit" "$dir/taskflow"
fetch https://github.com/trolando/lace.git "$lace_commit" "$dir/lace"
echo "export TASKFLOW_DIR=$dir/taskflow"
echo "export LACE_DIR=$dir/lace"
