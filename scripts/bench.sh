#!/usr/bin/env bash
# Runs weft-bench from build dir $1, saves its raw lines to $1/bench-results.txt and
# prints, per benchmark and thread count, the median of each implementation and how
# many times faster weft is than each peer (peer median / weft median), then the
# issue's targets.  Extra arguments for weft-bench come from BENCH_ARGS, e.g.
#   BENCH_ARGS="--quick" scripts/bench.sh build
#   BENCH_ARGS="--bench linear_chain,linear_chain_rerun --threads 1" scripts/bench.sh build
# Exit status: weft-bench's (non-zero if any result was wrong or a case failed).
set -u -o pipefail
dir=${1:?usage: scripts/bench.sh BUILD_DIR}
bin=$dir/bench/weft-bench
if [ ! -x "$bin" ]; then
  cmake --build "$dir" --target weft_bench >/dev/null || {
    echo "bench.sh: $bin missing and could not be built (configure with -DWEFT_BUILD_BENCH=ON)" >&2
    exit 2
  }
fi
out=$dir/bench-results.txt

# shellcheck disable=SC2086  # BENCH_ARGS is a list of words on purpose
"$bin" ${BENCH_ARGS:-} | tee "$out"
rc=${PIPESTATUS[0]}

awk '
function field(line, key,    n, i, kv, parts) {
  n = split(line, parts, " ")
  for (i = 1; i <= n; i++) { split(parts[i], kv, "="); if (kv[1] == key) return kv[2] }
  return ""
}
function ratio(peer, w) { return (peer != "" && w != "" && w > 0) ? sprintf("%.2fx", peer / w) : "-" }
function ms(v) { return v == "" ? "-" : v }
/^bench=/ {
  b = field($0, "bench"); t = field($0, "threads") + 0; im = field($0, "impl")
  if (!(b in bseen)) { bseen[b] = 1; border[++nb] = b }
  if (!(t in tseen)) { tseen[t] = 1; torder[++nt] = t }
  med[b, t, im] = field($0, "median_ms"); nspt[b, t, im] = field($0, "ns_per_task")
  size[b] = field($0, "size")
}
END {
  if (nb == 0) { print "bench.sh: no results"; exit }
  # thread counts in ascending order (insertion sort; there are only a few)
  for (i = 2; i <= nt; i++) { v = torder[i]; for (j = i - 1; j >= 1 && torder[j] > v; j--) torder[j + 1] = torder[j]; torder[j + 1] = v }
  printf "\n%-31s %3s %10s %9s %10s %10s %10s %9s %9s\n", "bench", "thr", "weft_ms", "weft_ns/t", "omp_ms", "tbb_ms", "serial_ms", "omp/weft", "tbb/weft"
  for (i = 1; i <= nb; i++) for (k = 1; k <= nt; k++) {
    b = border[i]; t = torder[k]
    w = med[b, t, "weft"]; o = med[b, t, "omp"]; tb = med[b, t, "tbb"]; s = med[b, t, "serial"]
    if (w == "" && o == "" && tb == "" && s == "") continue
    printf "%-31s %3d %10s %9s %10s %10s %10s %9s %9s\n", b, t, ms(w), ms(nspt[b, t, "weft"]), ms(o), ms(tb), ms(s), ratio(o, w), ratio(tb, w)
  }
  print "(peer/weft: how many times faster weft is; >1 means weft wins)"

  # The issue targets, at 1 and 2 threads.  They are stated for the default sizes.
  print "\ntargets (default sizes: 2^20 chain/tree/wavefront, 2^19 traversal):"
  for (k = 1; k <= nt; k++) {
    t = torder[k]; if (t > 2) continue
    target_ns("linear_chain", t, 60)
    target_ns("linear_chain_rerun", t, 12)
    target_ratio("linear_chain", t, "tbb", 2)
    target_ratio("binary_tree", t, "tbb", 2)
    target_ratio("wavefront", t, "tbb", 2)
    target_ratio("graph_traversal", t, "omp", 2)
  }
}
function target_ns(b, t, limit,    v) {
  v = nspt[b, t, "weft"]; if (v == "") return
  printf "  %-4s %-22s thr=%d  weft %8.2f ns/task  <= %d\n", (v + 0 <= limit ? "ok" : "MISS"), b, t, v, limit
}
function target_ratio(b, t, peer, want,    w, p) {
  w = med[b, t, "weft"]; p = med[b, t, peer]; if (w == "" || p == "" || w <= 0) return
  printf "  %-4s %-22s thr=%d  %s/weft %6.2fx      >= %dx\n", (p / w >= want ? "ok" : "MISS"), b, t, peer, p / w, want
}
' "$out"

echo "raw results: $out"
[ "$rc" -eq 0 ] || echo "bench.sh: weft-bench exited with status $rc (see the errors above)" >&2
exit "$rc"
