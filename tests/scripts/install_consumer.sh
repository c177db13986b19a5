#!/usr/bin/env bash
# Install checks, run by ctest (see tests/install.cmake).
#
#   install_consumer.sh consumer --build=DIR --source=DIR --cmake=CMAKE --cc=CC [--sanitize=KIND]
#       Installs the build tree DIR into a temporary prefix with `cmake --install`,
#       then builds tests/consumer against that prefix two ways and runs the results:
#         (a) a CMake project: find_package(weft CONFIG REQUIRED) + weft::weft
#             (plus weft::weft_static, plus a C++ program when a C++ compiler exists);
#         (b) cc $(pkg-config --cflags --libs weft) with PKG_CONFIG_PATH=<prefix>/...
#       Exits 77 (skipped) after (a) passes when pkg-config is not installed.
#
#   install_consumer.sh static --build=DIR --source=DIR --cmake=CMAKE --cc=CC [--sanitize=KIND]
#       Installs as above, then links tests/consumer/consumer.c three ways and
#       checks with readelf that the programs do not need libweft.so:
#       `pkg-config --static --libs weft-static` (names libweft.a by its path),
#       and `pkg-config --static --libs weft` with -Wl,-Bstatic ... -Wl,-Bdynamic
#       and with cc -static (not with a sanitizer).
#       Exits 77 when pkg-config or readelf is missing.
#
#   install_consumer.sh subproject --source=DIR --cmake=CMAKE --cc=CC
#       Builds tests/consumer/subproject, a host project that takes weft in with
#       add_subdirectory, and runs its consumer; configures it again with
#       FetchContent, and with -DWEFT_BUILD_TESTS=ON.  The host's CMakeLists
#       fails when weft sets its CMAKE_BUILD_TYPE or adds tests, benchmarks or
#       examples it did not ask for.
#
#   install_consumer.sh headers --source=DIR --cc=CC ...
#       Compiles every public header on its own (included twice, to check its guard)
#       as C11 with -Wall -Wextra -pedantic -Werror, and as C++11/C++17 when a C++
#       compiler exists.
#
# KIND is the WEFT_SANITIZE value of the build ('', thread, address): a sanitizer
# build's library needs the same -fsanitize flags to link a program.
set -u

mode=${1:?usage: install_consumer.sh consumer|headers --build=... --source=...}
shift
build="" source="" cmake_bin=cmake cc=cc sanitize=""
for arg in "$@"; do
  case $arg in
    --build=*) build=${arg#*=} ;;
    --source=*) source=${arg#*=} ;;
    --cmake=*) cmake_bin=${arg#*=} ;;
    --cc=*) cc=${arg#*=} ;;
    --sanitize=*) sanitize=${arg#*=} ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
[ -n "$source" ] || { echo "--source is required" >&2; exit 2; }

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "-- $*"; }

san_flags=""
case $sanitize in
  "") ;;
  thread) san_flags="-fsanitize=thread" ;;
  address) san_flags="-fsanitize=address,undefined" ;;
  *) fail "unknown sanitizer '$sanitize'" ;;
esac

# A C++ compiler from the same family as the C compiler.
find_cxx() {
  local base; base=$(basename "$cc")
  local cands
  case $base in
    *clang*) cands="${cc/clang/clang++} clang++ c++ g++" ;;
    *gcc*) cands="${cc/gcc/g++} g++ c++ clang++" ;;
    *) cands="c++ g++ clang++" ;;
  esac
  for c in $cands; do
    if command -v "$c" >/dev/null 2>&1; then command -v "$c"; return 0; fi
  done
  return 1
}
cxx=$(find_cxx || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/weft-install-XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# ---- headers --------------------------------------------------------------------
check_headers() {
  local inc=$source/include
  local headers
  headers=$(cd "$inc" && ls weft.h weft/*.h) || fail "no headers under $inc"
  local n=0
  # weft/mpi.h needs MPI's own header (weft::mpi is built only where MPI is).
  local mpi_flags
  mpi_flags=$(mpicc --showme:compile 2>/dev/null || true)
  for h in $headers; do
    local extra=""
    if [ "$h" = weft/mpi.h ]; then
      if [ -z "$mpi_flags" ]; then note "weft/mpi.h skipped: no mpicc"; continue; fi
      extra="$(echo "$mpi_flags" | sed "s/-I/-isystem /g") -DOMPI_SKIP_MPICXX"
    fi
    n=$((n + 1))
    local src=$tmp/h_$n.c
    printf '#include <%s>\n#include <%s>\nint weft_header_check_%d;\n' "$h" "$h" "$n" >"$src"
    for cstd in c99 c11; do
      if ! "$cc" -std=$cstd -Wall -Wextra -pedantic -Wstrict-prototypes -Wshadow -Werror \
           -I"$inc" $extra -c "$src" -o "$tmp/h_$n.o"; then
        fail "$h does not compile on its own as $cstd"
      fi
    done
    if [ -n "$cxx" ]; then
      cp "$src" "$tmp/h_$n.cpp"
      for std in c++11 c++17; do
        if ! "$cxx" -std=$std -Wall -Wextra -pedantic -Werror -I"$inc" $extra \
             -c "$tmp/h_$n.cpp" -o "$tmp/h_$n.cxx.o"; then
          fail "$h does not compile on its own as $std"
        fi
      done
    fi
  done
  note "$n headers compile alone as C99 and C11${cxx:+ and as C++11/C++17 ($cxx)}"
  [ -n "$cxx" ] || note "no C++ compiler found: C++ check skipped"
}

if [ "$mode" = headers ]; then
  check_headers
  echo "headers ok"
  exit 0
fi

# ---- subproject -------------------------------------------------------------------
# The weft build inside the host is a plain one (the host's flags, no sanitizer):
# what is checked is how weft's CMakeLists behaves there.
if [ "$mode" = subproject ]; then
  host=$source/tests/consumer/subproject
  configure_host() { # build dir, extra options...
    local dir=$1; shift
    "$cmake_bin" -S "$host" -B "$dir" -DWEFT_SOURCE="$source" -DCMAKE_C_COMPILER="$cc" "$@" \
      >"$dir.log" 2>&1 || { cat "$dir.log"; fail "configuring the host project ($*) failed"; }
    grep -q "subproject checks passed" "$dir.log" || { cat "$dir.log"; fail "the host's checks did not run"; }
  }
  configure_host "$tmp/sub"
  "$cmake_bin" --build "$tmp/sub" -j 2 >"$tmp/sub-build.log" 2>&1 ||
    { cat "$tmp/sub-build.log"; fail "building the host project with weft as a subdirectory failed"; }
  [ ! -e "$tmp/sub/weft-build/tests" ] || fail "weft built its tests inside the host project"
  out=$("$tmp/sub/consumer" 2>&1) || { echo "$out"; fail "the subproject consumer failed"; }
  note "add_subdirectory: $out"
  configure_host "$tmp/fetch" -DCONSUMER_FETCH=ON
  note "FetchContent: configured, weft adds only its library"
  configure_host "$tmp/with-tests" -DWEFT_BUILD_TESTS=ON -DEXPECT_WEFT_TESTS=ON
  note "-DWEFT_BUILD_TESTS=ON brings the tests back"
  echo "subproject ok"
  exit 0
fi

[ "$mode" = consumer ] || [ "$mode" = static ] || fail "unknown mode '$mode'"
[ -n "$build" ] || fail "--build is required"

# ---- install ----------------------------------------------------------------------
prefix=$tmp/prefix
note "installing $build into $prefix"
"$cmake_bin" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install failed"; }

[ -f "$prefix/include/weft.h" ] || fail "weft.h not installed under $prefix/include"
# Every public header of the source tree is installed.
for h in $(cd "$source/include" && ls weft.h weft.hpp weft/*.h); do
  [ -f "$prefix/include/$h" ] || fail "$h is not installed"
done
# Internal headers are not.
if ls "$prefix/include" | grep -qv '^weft\(\.h\|\.hpp\)\?$'; then
  fail "unexpected files under include/: $(ls "$prefix/include")"
fi
cfg=$(find "$prefix" -name weftConfig.cmake | head -n 1)
[ -n "$cfg" ] || fail "weftConfig.cmake not installed"
pc=$(find "$prefix" -name weft.pc | head -n 1)
[ -n "$pc" ] || fail "weft.pc not installed"
libdir=$(dirname "$(find "$prefix" -name 'libweft.a' | head -n 1)")
[ -f "$libdir/libweft.a" ] || fail "libweft.a not installed"
shared=""
ls "$libdir"/libweft.so* >/dev/null 2>&1 && shared=yes
note "libdir $libdir, shared library: ${shared:-no}"

run_bin() { # name, binary
  local out
  out=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$2" 2>&1) ||
    { echo "$out"; fail "$1 failed"; }
  echo "$out" | grep -q "ok" || { echo "$out"; fail "$1 printed no 'ok'"; }
  note "$1: $out"
}

# ---- static: pkg-config --static really links weft statically ------------------------
if [ "$mode" = static ]; then
  command -v pkg-config >/dev/null 2>&1 || { note "pkg-config not found: skipped"; exit 77; }
  command -v readelf >/dev/null 2>&1 || { note "readelf not found: skipped"; exit 77; }
  export PKG_CONFIG_PATH
  PKG_CONFIG_PATH=$(dirname "$pc")
  static_libs=$(pkg-config --static --libs weft) || fail "pkg-config --static --libs weft failed"
  cflags=$(pkg-config --cflags weft)
  needs_libweft() { readelf -d "$1" 2>/dev/null | grep NEEDED | grep -q 'libweft'; }
  # weft-static.pc names libweft.a by its path: static with no linker flags.
  # shellcheck disable=SC2046,SC2086
  "$cc" -std=c11 $san_flags "$source/tests/consumer/consumer.c" -o "$tmp/consumer_pcstatic" \
      $(pkg-config --static --cflags --libs weft-static) >"$tmp/pcstatic.log" 2>&1 ||
    { cat "$tmp/pcstatic.log"; fail "cc ... \$(pkg-config --static --cflags --libs weft-static) failed"; }
  needs_libweft "$tmp/consumer_pcstatic" && fail "the weft-static.pc program still needs libweft.so"
  run_bin "pkg-config --static weft-static" "$tmp/consumer_pcstatic"
  # Weft alone static, the C library still shared: what most programs want.
  # shellcheck disable=SC2086
  "$cc" -std=c11 $san_flags $cflags "$source/tests/consumer/consumer.c" -o "$tmp/consumer_bstatic" \
      -Wl,-Bstatic $static_libs -Wl,-Bdynamic >"$tmp/bstatic.log" 2>&1 ||
    { cat "$tmp/bstatic.log"; fail "cc ... -Wl,-Bstatic \$(pkg-config --static --libs weft) -Wl,-Bdynamic failed"; }
  needs_libweft "$tmp/consumer_bstatic" && fail "the -Bstatic program still needs libweft.so"
  run_bin "pkg-config --static, weft static" "$tmp/consumer_bstatic"
  # Fully static (no sanitizer runtime links that way).
  if [ -z "$san_flags" ]; then
    # shellcheck disable=SC2086
    if "$cc" -std=c11 -static $cflags "$source/tests/consumer/consumer.c" -o "$tmp/consumer_static" \
         $static_libs >"$tmp/static.log" 2>&1; then
      needs_libweft "$tmp/consumer_static" && fail "the -static program still needs libweft.so"
      readelf -d "$tmp/consumer_static" 2>/dev/null | grep -q NEEDED &&
        fail "the -static program needs shared libraries: $(readelf -d "$tmp/consumer_static" | grep NEEDED)"
      run_bin "pkg-config --static, cc -static" "$tmp/consumer_static"
    else
      note "cc -static failed (no static C library installed?): $(tail -n 1 "$tmp/static.log")"
    fi
  fi
  echo "static ok"
  exit 0
fi

# ---- (a) CMake package -------------------------------------------------------------
cxx_opt="-DCONSUMER_CXX=ON"
[ -n "$cxx" ] && cxx_opt="$cxx_opt -DCMAKE_CXX_COMPILER=$cxx"
[ -n "$cxx" ] || note "no C++ compiler found: C++ consumer skipped"
# shellcheck disable=SC2086
"$cmake_bin" -S "$source/tests/consumer" -B "$tmp/consumer-build" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" $cxx_opt \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS="$san_flags" -DCMAKE_CXX_FLAGS="$san_flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$san_flags" >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; fail "configuring the consumer with find_package(weft) failed"; }
"$cmake_bin" --build "$tmp/consumer-build" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; fail "building the consumer against weft::weft failed"; }

bins=$tmp/consumer-build
run_bin "cmake consumer (weft::weft)" "$bins/consumer"
if [ -n "$shared" ]; then
  # weft::weft is the shared library: the program must load the installed one.
  if command -v ldd >/dev/null 2>&1; then
    lib=$(LD_LIBRARY_PATH="$libdir" ldd "$bins/consumer" | grep 'libweft' || true)
    [ -n "$lib" ] || fail "consumer does not link libweft.so dynamically"
    echo "$lib" | grep -q "$prefix" || fail "consumer loads $lib, not the installed library"
  fi
fi
[ -x "$bins/consumer_static" ] || fail "weft::weft_static is not exported"
run_bin "cmake consumer (weft::weft_static)" "$bins/consumer_static"
if [ -n "$cxx" ]; then
  [ -x "$bins/consumer_cxx" ] || fail "the C++ consumer was not built"
  run_bin "cmake consumer (C++)" "$bins/consumer_cxx"
fi

# ---- (b) pkg-config ---------------------------------------------------------------
if ! command -v pkg-config >/dev/null 2>&1; then
  note "pkg-config not found: pkg-config consumer skipped"
  exit 77
fi
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
pkg-config --exists weft || fail "pkg-config cannot find weft in $PKG_CONFIG_PATH"
pc_inc=$(pkg-config --variable=includedir weft)
if [ ! -f "$pc_inc/weft.h" ]; then
  fail "weft.pc gives includedir '$pc_inc', which has no weft.h; the package was installed " \
       "under $prefix (weft.pc fixes the prefix at configure time instead of deriving it " \
       "from its own location, e.g. prefix=\${pcfiledir}/../..)"
fi
static_opt=""
[ -n "$shared" ] || static_opt="--static"
# shellcheck disable=SC2086,SC2046
"$cc" -std=c11 -Wall -Wextra -Werror $san_flags "$source/tests/consumer/consumer.c" \
    -o "$tmp/consumer_pc" $(pkg-config --cflags --libs $static_opt weft) \
    >"$tmp/pc.log" 2>&1 ||
  { cat "$tmp/pc.log"; fail "cc \$(pkg-config --cflags --libs weft) failed"; }
run_bin "pkg-config consumer" "$tmp/consumer_pc"

echo "install ok"
exit 0
