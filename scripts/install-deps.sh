#!/usr/bin/env bash
# Installs the Debian packages weft's build, tests and peer benchmarks use, skipping
# those already present (idempotent).  Required: gcc, g++, cmake, make.  Optional:
# libtbb-dev (oneTBB peer benchmarks), graphviz (renders DOT in docs and tests),
# python3 (JSON checks in tests), libuv1-dev (examples/async_libuv.c), doxygen (the
# API reference: make docs), libhwloc15 + hwloc (the topology layer's hwloc backend,
# loaded with dlopen; lstopo for cross-checks), pocl-opencl-icd + ocl-icd-opencl-dev +
# clinfo (the GPU layer's OpenCL backend, run on the CPU through PoCL), libopenmpi-dev +
# openmpi-bin (the weft::mpi module and its mpirun tests), spin (the protocol models in
# tests/models), libstarpu-dev (StarPU-MPI, the peer of the weft::mpi benchmarks),
# valgrind (bench/tools/icount.py, the instruction-count regression gate in CI), tmux
# (the weft-top test drives the live view in a pane).
# Runs apt-get only when something is missing.
set -eu
want="gcc g++ cmake make libtbb-dev graphviz python3 pkg-config libuv1-dev doxygen
      libhwloc15 hwloc pocl-opencl-icd ocl-icd-opencl-dev clinfo libopenmpi-dev openmpi-bin spin
      libstarpu-dev valgrind tmux"
missing=""
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install-deps: all present ($want)"
  exit 0
fi
echo "install-deps: installing:$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing
