#!/usr/bin/env bash
# Paired runs of the distributed tiled Cholesky, weft::mpi against StarPU-MPI.
#   bench/mpi/run.sh BUILD_DIR [pairs] [reps] [tile sizes...]
# For 1, 2 and 4 ranks and each tile size: `pairs` rounds, each running both
# programs back to back (the order alternates), each program timing `reps`
# repetitions and printing their median.  Prints every line, then per case
# the median over the rounds of each program's median.  On a machine with
# fewer cores than ranks x (workers + 1) these are overhead figures, not
# scaling: see bench/mpi/README.md.
set -u
build=${1:?build dir}; pairs=${2:-3}; reps=${3:-5}; shift 3 2>/dev/null || shift $#
sizes=${*:-32 64}
tiles=${WEFT_BENCH_TILES:-8}; workers=${WEFT_BENCH_WORKERS:-2}
mpirun=(mpirun --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none
        -x STARPU_SILENT=1 -x STARPU_WORKERS_NOBIND=1 -x STARPU_MPI_NOBIND=1)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
weft=$build/bench/bench_mpi_cholesky_weft; starpu=$build/bench/bench_mpi_cholesky_starpu
[ -x "$starpu" ] || { echo "no $starpu (StarPU-MPI not found at configure time): weft only"; starpu=""; }
out=$(mktemp)
for np in 1 2 4; do
  for b in $sizes; do
    for ((r = 0; r < pairs; r++)); do
      progs=("$weft" $starpu); ((r % 2)) && [ -n "$starpu" ] && progs=("$starpu" "$weft")
      for p in "${progs[@]}"; do
        timeout 600 "${mpirun[@]}" -np "$np" "$p" "$tiles" "$b" "$workers" "$reps" 2>/dev/null | grep '^impl=' | tee -a "$out"
      done
    done
  done
done
echo "== medians over $pairs paired rounds (ms; weft full = build + run, rerun = run of a built flow)"
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
       k = v["ranks"] " " v["b"]; impls[k] = 1
       if (v["impl"] == "weft") { wf[k] = wf[k] " " v["median_ms"]; wr[k] = wr[k] " " v["rerun_median_ms"]; msg[k] = v["messages"] }
       else sp[k] = sp[k] " " v["median_ms"] }
     function med(s,   a, n, i, j, t) { n = split(s, a, " "); if (!n) return "-"
       for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
       return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
     END { printf "%-6s %-5s %-12s %-12s %-12s %-9s\n", "ranks", "b", "weft_full", "weft_rerun", "starpu", "messages"
           for (k in impls) { split(k, kk, " "); printf "%-6s %-5s %-12s %-12s %-12s %-9s\n", kk[1], kk[2], med(wf[k]), med(wr[k]), med(sp[k]), msg[k] } }' "$out" | sort -n
rm -f "$out"
