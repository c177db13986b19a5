#!/usr/bin/env python3
"""bench/tools/rounds.py against a fake weft-bench: the paired ratios, the
round count, --time-limit (a run cut short by a deadline still reports the
rounds it did, and says so), and a failing benchmark process named by its
implementation.  No real benchmark runs: the fake prints fixed times."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = os.path.join(HERE, "..", "bench", "tools", "rounds.py")

FAKE = """#!/bin/sh
impl=""
while [ $# -gt 0 ]; do [ "$1" = --impl ] && impl=$2; shift; done
[ -n "$FAKE_FAIL" ] && [ "$impl" = "$FAKE_FAIL" ] && { echo "fake: $impl broke" >&2; exit 3; }
sleep "${FAKE_SLEEP:-0}"
case $impl in weft) ms=2.0;; lace) ms=4.0;; tbb) ms=1.0;; *) ms=8.0;; esac
echo "# weft-bench fake"
echo "bench=fib impl=$impl threads=1 size=10 median_ms=$ms min_ms=$ms ns_per_task=1"
echo "bench=fib impl=$impl threads=2 size=10 median_ms=$ms min_ms=$ms ns_per_task=1"
"""

failures = 0


def check(what, ok, detail=""):
    global failures
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f"\n     {detail}"))
    failures += 0 if ok else 1


def rounds(fake, args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, ROUNDS, "--bench-bin", fake] + args, capture_output=True, text=True,
                          env=e, timeout=120)


def main():
    with tempfile.TemporaryDirectory() as d:
        fake = os.path.join(d, "weft-bench")
        with open(fake, "w") as f:
            f.write(FAKE)
        os.chmod(fake, 0o755)

        r = rounds(fake, ["--rounds", "3", "--", "--bench", "fib", "--threads", "1,2", "--impl", "weft,lace,tbb"])
        out = r.stdout
        check("three rounds run and are reported", r.returncode == 0 and "# 3 rounds of:" in out, r.stdout + r.stderr)
        check("weft over each peer is the ratio of the fake's times",
              "weft/lace=0.500 (rounds 0.500..0.500)" in out and "weft/tbb=2.000" in out, out)
        check("the best peer is the fastest one", "weft/best=2.000 (rounds 2.000..2.000) best=tbb" in out, out)
        check("both thread counts have a row", "threads=1 " in out and "threads=2 " in out, out)

        r = rounds(fake, ["--rounds", "3", "--markdown", "--", "--bench", "fib", "--threads", "1", "--impl", "weft,lace"])
        check("--markdown prints a table with the ratio and its range",
              "| fib | 1 | 2.000 | 4.000 | 0.50 (0.50–0.50) | 0.50 (0.50–0.50) lace |" in r.stdout, r.stdout + r.stderr)

        r = rounds(fake, ["--rounds", "40", "--time-limit", "0.5", "--", "--bench", "fib", "--impl", "weft,lace"],
                   {"FAKE_SLEEP": "0.2"})
        head = [l for l in r.stdout.splitlines() if l.startswith("# ")]
        n = int(head[0].split()[1]) if head else -1
        check("--time-limit stops starting rounds and reports those done",
              r.returncode == 0 and 1 <= n < 40 and "(of 40 asked: --time-limit)" in r.stdout
              and "weft/lace=0.500" in r.stdout, r.stdout + r.stderr)

        r = rounds(fake, ["--rounds", "2", "--time-limit", "0", "--", "--bench", "fib", "--impl", "weft,lace"])
        check("a time limit of 0 still runs one round", "# 1 rounds (of 2 asked" in r.stdout, r.stdout + r.stderr)

        r = rounds(fake, ["--rounds", "2", "--", "--bench", "fib", "--impl", "weft,lace"], {"FAKE_FAIL": "lace"})
        check("a failing benchmark process fails the run, naming its implementation",
              r.returncode != 0 and "--impl lace failed (exit 3)" in r.stderr and "fake: lace broke" in r.stderr,
              r.stdout + r.stderr)

        r = rounds(fake, ["--rounds", "1", "--", "--bench", "fib", "--impl", "lace"])
        check("--impl without weft is refused", r.returncode != 0 and "must include weft" in r.stderr, r.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
