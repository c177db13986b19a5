#!/usr/bin/env bash
# Install check of weft::mpi, run by ctest (tests/mpi.cmake):
#   mpi_install.sh BUILD_DIR SOURCE_DIR CMAKE CC SANITIZE MPIRUN...
# Installs the build tree into a temporary prefix (cmake --install), then
# builds tests/mpi_consumer against it (a) with find_package(weftMpi) and
# weft::mpi, (b) with `pkg-config --cflags --libs weft-mpi`, and runs each on
# 2 ranks.  Exits 77 after (a) when pkg-config is missing.
set -u
build=$1 source=$2 cmake_bin=$3 cc=$4 sanitize=$5
shift 5
mpirun=("$@")
fail() { echo "FAIL: $*" >&2; exit 1; }
san=""
case $sanitize in thread) san="-fsanitize=thread" ;; address) san="-fsanitize=address,undefined" ;; esac
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
"$cmake_bin" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; }
[ -f "$prefix/lib/cmake/weftMpi/weftMpiConfig.cmake" ] || [ -n "$(ls "$prefix"/lib*/cmake/weftMpi/weftMpiConfig.cmake 2>/dev/null)" ] \
  || fail "no weftMpiConfig.cmake installed"

# (a) CMake package
"$cmake_bin" -S "$source/tests/mpi_consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" >"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "configure with find_package(weftMpi)"; }
"$cmake_bin" --build "$tmp/cm" >>"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "build with weft::mpi"; }
libdir=$(dirname "$(ls "$prefix"/lib*/libweft_mpi.* | head -1)")
out=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "${mpirun[@]}" -x LD_LIBRARY_PATH -np 2 "$tmp/cm/mpi_consumer" 2>&1)
echo "$out" | grep -q PASS || { echo "$out"; fail "find_package consumer did not pass"; }
echo "-- find_package(weftMpi): PASS"

# (b) pkg-config
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config not installed (the CMake package passed)"; exit 77; }
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
flags=$(pkg-config --cflags --libs weft-mpi) || fail "pkg-config weft-mpi"
# shellcheck disable=SC2086
"$cc" -std=c11 $san "$source/tests/mpi_consumer/main.c" $flags -o "$tmp/pc_consumer" -Wl,-rpath,"$libdir" \
  || fail "build with pkg-config weft-mpi"
out=$("${mpirun[@]}" -np 2 "$tmp/pc_consumer" 2>&1)
echo "$out" | grep -q PASS || { echo "$out"; fail "pkg-config consumer did not pass"; }
echo "-- pkg-config weft-mpi: PASS"
