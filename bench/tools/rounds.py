#!/usr/bin/env python3
"""Paired rounds of weft-bench: a quieter weft-versus-peer ratio on a noisy machine.

    bench/tools/rounds.py [--rounds N] [--bench-bin PATH] -- WEFT-BENCH OPTIONS...

Runs `weft-bench OPTIONS --impl I` once per implementation I (weft first, then
each peer in --impl order), and that whole sequence N times (default 5).  Each
run is its own process, and only one runtime exists at a time, as weft-bench
itself requires.  For every (benchmark, thread count) it prints:

  * each implementation's median over the rounds of its per-run medians;
  * for each peer, the median over rounds of weft's time divided by the peer's
    time in the same round.  The two runs of a round are a few seconds apart,
    so drift of the machine over minutes cancels out of the ratio;
  * weft/best: weft's time over the fastest peer's time in the same round (the
    peers present in that round; not --baseline-bin's "base"), its median and
    range over the rounds, and which peer was fastest most often.

Each run is of a fresh copy of its binary (--same-copy: of the binary itself).
The kernel keeps a binary's code in the same physical pages for as long as it
stays cached, and the same bytes ran a benchmark 1.3x slower from one set of
pages than from most others: without copies, that one placement biases every
round of an A/B alike, and more rounds do not average it out.

The default --impl is weft,tbb,omp,tf,lace: a peer that weft-bench did not
compile (oneTBB or OpenMP not found, TASKFLOW_DIR or LACE_DIR not set) gives no
rows and is left out.  --markdown prints the same as a Markdown table.

With --baseline-bin PATH, weft from another build (an earlier commit) joins
as the peer "base", so weft/base is a paired A/B of two versions of weft:
    bench/tools/rounds.py --rounds 7 --baseline-bin /tmp/old/b/bench/weft-bench \\
        -- --bench fib --threads 1,2 --impl weft --reps 9

With --time-limit S, no round starts after S seconds and the rounds done are
reported (the header says how many of those asked): a run on a lent machine
with a deadline keeps what it measured.

With --ratio A/B (repeatable), it also prints the median over rounds of
bench A's weft time over bench B's at each thread count, both from the same
process of each round (two variants of weft, e.g. run_n_parallel_64/run_n_copies_64);
with --baseline-bin, the same A/B of the baseline build too (e.g. the
profiler's cost, binary_tree_profiled_rerun/binary_tree_rerun, then and now).

Example:
    bench/tools/rounds.py --rounds 7 -- --bench for_each,transform --threads 2 \\
        --impl weft,tbb,omp --reps 15
"""
import argparse
import atexit
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

LINE = re.compile(r"^bench=(\S+) impl=(\S+) threads=(\d+) .*median_ms=([0-9.]+)")


def fresh_copy(binary, tmpdir):
    """A new file with binary's bytes: the kernel reads it into other physical
    pages than the ones every earlier run of binary shared.  The same bytes in
    one set of pages ran binary_tree_profiled_rerun 1.3x slower than in most
    others (bench/README.md, "One binary, two speeds"), and a round-by-round A/B
    cannot see that bias: each round runs the same cached pages again."""
    fd, path = tempfile.mkstemp(prefix=os.path.basename(binary) + ".", dir=tmpdir)
    with os.fdopen(fd, "wb") as dst, open(binary, "rb") as src:
        shutil.copyfileobj(src, dst)
    os.chmod(path, 0o755)
    return path


def run(binary, args, impl, tmpdir=None):
    path = fresh_copy(binary, tmpdir) if tmpdir else binary
    try:
        out = subprocess.run([path] + args + ["--impl", impl], capture_output=True, text=True)
    finally:
        if tmpdir:
            os.unlink(path)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(f"rounds.py: weft-bench --impl {impl} failed (exit {out.returncode})")
    rows = {}
    for line in out.stdout.splitlines():
        m = LINE.match(line)
        if m:
            rows[(m.group(1), int(m.group(3)))] = float(m.group(4))
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_bin = os.path.normpath(os.path.join(here, "..", "..", "build", "bench", "weft-bench"))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--bench-bin", default=default_bin)
    p.add_argument("--baseline-bin", help="another weft-bench whose weft runs as the peer 'base'")
    p.add_argument("--ratio", action="append", default=[], help="A/B: bench A's weft time over bench B's, per round")
    p.add_argument("--markdown", action="store_true", help="print the results as a Markdown table")
    p.add_argument("--same-copy", action="store_true",
                   help="run the binaries where they are (default: a fresh copy of each for every run, so that "
                        "no build keeps one placement of its code in memory over all rounds)")
    p.add_argument("--time-limit", type=float, metavar="S",
                   help="start no new round once S seconds have passed; report the rounds done so far (a run "
                        "that must end by a deadline, such as a lent machine's, still leaves its rounds)")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="-- then weft-bench options, with --impl")
    a = p.parse_args()
    args = a.rest[1:] if a.rest[:1] == ["--"] else a.rest
    impls = ["weft", "tbb", "omp", "tf", "lace"]
    if "--impl" in args:
        i = args.index("--impl")
        impls = args[i + 1].split(",")
        args = args[:i] + args[i + 2:]
    if "weft" not in impls:
        sys.exit("rounds.py: --impl must include weft (ratios are weft over each peer)")
    impls = ["weft"] + [x for x in impls if x != "weft"]
    if a.baseline_bin:
        impls.append("base")

    # In memory (tmpfs) where there is one: a copy on disk is written back
    # while the next runs go, a few seconds later.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    tmpdir = None if a.same_copy else tempfile.mkdtemp(prefix="weft-rounds.", dir=shm)
    if tmpdir:
        atexit.register(shutil.rmtree, tmpdir, True)

    def run_impl(impl):
        if impl == "base":
            return run(a.baseline_bin, args, "weft", tmpdir)
        return run(a.bench_bin, args, impl, tmpdir)

    times = collections.defaultdict(lambda: collections.defaultdict(list))  # case -> impl -> [ms]
    ratios = collections.defaultdict(lambda: collections.defaultdict(list))  # case -> peer -> [x]
    best = collections.defaultdict(list)  # case -> [(weft / fastest peer, that peer)]
    pairs = collections.defaultdict(list)  # (A/B, threads) -> [x]
    started = time.monotonic()
    done = 0
    for r in range(a.rounds):
        if r > 0 and a.time_limit is not None and time.monotonic() - started > a.time_limit:
            print(f"# time limit: {r} of {a.rounds} rounds done", file=sys.stderr)
            break
        got = {impl: run_impl(impl) for impl in impls}
        for ab in a.ratio:
            num, den = ab.split("/")
            # The same A/B of the baseline build, when there is one: e.g. the
            # profiler's cost over the plain run, then and now.
            for impl in ("weft", "base") if "base" in got else ("weft",):
                for (name, threads), ms in got[impl].items():
                    if name == num and (den, threads) in got[impl]:
                        pairs[(ab, threads, impl)].append(ms / got[impl][(den, threads)])
        for case, ms in got["weft"].items():
            times[case]["weft"].append(ms)
            for peer in impls[1:]:
                if case in got[peer]:
                    times[case][peer].append(got[peer][case])
                    ratios[case][peer].append(ms / got[peer][case])
            peers = [(got[p][case], p) for p in impls[1:] if p != "base" and case in got[p]]
            if peers:
                fastest = min(peers)
                best[case].append((ms / fastest[0], fastest[1]))
        done = r + 1
        print(f"# round {r + 1}/{a.rounds} done", file=sys.stderr)

    cut = "" if done == a.rounds else f" (of {a.rounds} asked: --time-limit)"
    print(f"# {done} rounds{cut} of: weft-bench {' '.join(args)} --impl I, for I in {','.join(impls)}")

    def spread(v):
        return f"{statistics.median(v):.3f} (rounds {min(v):.3f}..{max(v):.3f})"

    def best_of(case):
        if not best[case]:
            return None
        v = [x for x, _ in best[case]]
        who = collections.Counter(p for _, p in best[case]).most_common(1)[0][0]
        return v, who

    if a.markdown:
        peers = [p for p in impls[1:] if any(p in times[c] for c in times)]
        head = ["bench", "threads", "weft ms"] + [f"{p} ms" for p in peers] + [f"weft/{p}" for p in peers] + ["weft/best"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for case in sorted(times):
            name, threads = case
            row = [name, str(threads), f"{statistics.median(times[case]['weft']):.3f}"]
            row += [f"{statistics.median(times[case][p]):.3f}" if times[case].get(p) else "—" for p in peers]
            row += [
                f"{statistics.median(ratios[case][p]):.2f} ({min(ratios[case][p]):.2f}–{max(ratios[case][p]):.2f})"
                if ratios[case].get(p) else "—" for p in peers]
            b = best_of(case)
            row.append(f"{statistics.median(b[0]):.2f} ({min(b[0]):.2f}–{max(b[0]):.2f}) {b[1]}" if b else "—")
            print("| " + " | ".join(row) + " |")
    else:
        for case in sorted(times):
            name, threads = case
            meds = "  ".join(f"{impl}={statistics.median(v):.3f}ms" for impl, v in times[case].items())
            rat = "  ".join(f"weft/{peer}={spread(v)}" for peer, v in ratios[case].items())
            b = best_of(case)
            bst = f"  weft/best={spread(b[0])} best={b[1]}" if b else ""
            print(f"bench={name} threads={threads}  {meds}  {rat}{bst}")
    for (ab, threads, impl), v in sorted(pairs.items()):
        print(f"ratio {ab} threads={threads}{'' if impl == 'weft' else ' (baseline build)'}  {spread(v)}")


if __name__ == "__main__":
    main()
