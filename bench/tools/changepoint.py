#!/usr/bin/env python3
"""Change points in a history of weft-bench results.

    bench/tools/changepoint.py [options] RESULTS...
    bench/tools/changepoint.py --self-test

RESULTS are weft-bench outputs (the lines "bench=NAME impl=I threads=N ...
median_ms=X", e.g. scripts/bench.sh's bench-results.txt), oldest first; each
file is one point of history, labelled by its file name (name them by date or
commit).  For every series (benchmark, implementation, thread count) the script
finds the points where the level moved, and prints each with its size:

    bench=linear_chain impl=weft threads=2: +12.4% at 2026-11-20-abc123 (26.70 -> 30.01 ms, score 9.3)

Method: binary segmentation with a CUSUM-type statistic.  s is a robust noise
scale from successive differences (median |x[i] - x[i-1]| / 0.954, which a
level shift barely moves); each point is first pulled to within 4 s of the
running median of its five neighbours (a lone outlier is tamed, a level shift
kept).  For a candidate split k of a segment, the score is
|mean(left) - mean(right)| / (s sqrt(1/nl + 1/nr)).  The
best split counts when its score exceeds --min-score (default 5: a false alarm
on 40 points of pure noise is rare, see the self-test) AND the level moved by
at least --min-change (default 3%, below which timings on a shared VM say
nothing).  Each side is then searched again.  Segments shorter than
--min-size points (default 3) are not split, so one outlier is never a change.

--fail-on-slowdown: exit 1 if a series' last change point is a slowdown (for a
nightly job over the stored history).
"""
import argparse
import collections
import math
import os
import random
import re
import statistics
import sys

LINE = re.compile(r"^bench=(\S+) impl=(\S+) threads=(\d+) .*median_ms=([0-9.]+)")


def noise_scale(x):
    """Robust sigma from successive differences (level shifts barely move it)."""
    d = [abs(b - a) for a, b in zip(x, x[1:])]
    if not d:
        return 0.0
    # For Gaussian noise, |x[i]-x[i-1]| has median 0.6745 * sqrt(2) * sigma.
    return statistics.median(d) / (0.6745 * math.sqrt(2))


def clip_outliers(x, sigma, width=4.0):
    """Each point pulled to within width * sigma of the median of the five
    points around it: a lone outlier is tamed, a level shift (which the
    running median follows within two points) is kept."""
    out = []
    for i in range(len(x)):
        m = statistics.median(x[max(0, i - 2):i + 3])
        out.append(min(max(x[i], m - width * sigma), m + width * sigma))
    return out


def split_score(y, lo, k, hi, sigma):
    """Score of splitting y[lo:hi] at k: the means' difference over its standard error."""
    ml, mr = statistics.fmean(y[lo:k]), statistics.fmean(y[k:hi])
    return abs(ml - mr) / (sigma * math.sqrt(1.0 / (k - lo) + 1.0 / (hi - k)))


def best_split(y, lo, hi, min_size, sigma):
    """(score, k) of the best split of y[lo:hi] into y[lo:k], y[k:hi]."""
    best = (0.0, None)
    if hi - lo < 2 * min_size or sigma <= 0:
        return best
    for k in range(lo + min_size, hi - min_size + 1):
        score = split_score(y, lo, k, hi, sigma)
        if score > best[0]:
            best = (score, k)
    return best


def change_points(x, min_score=5.0, min_change=0.03, min_size=3):
    """Sorted [(index, before, after, score)]: the level moved at index; before
    and after are the medians of the neighbouring segments."""
    sigma = noise_scale(x)
    if sigma == 0.0 and len(set(x)) > 1:
        sigma = 1e-12 * max(abs(v) for v in x)  # noise-free steps
    y = clip_outliers(x, sigma)
    found = []

    def search(lo, hi):
        score, k = best_split(y, lo, hi, min_size, sigma)
        if k is None or score < min_score:
            return
        before, after = statistics.median(x[lo:k]), statistics.median(x[k:hi])
        if before == 0 or abs(after / before - 1.0) < min_change:
            return
        found.append(k)
        search(lo, k)
        search(k, hi)

    search(0, len(x))
    found.sort()
    # Report each change against its neighbouring segments, not the search's.
    bounds = [0] + found + [len(x)]
    return [(k, statistics.median(x[bounds[i]:k]), statistics.median(x[k:bounds[i + 2]]),
             split_score(y, bounds[i], k, bounds[i + 2], sigma)) for i, k in enumerate(found)]


def read_history(paths):
    """{(bench, impl, threads): [(label, ms)]} in the order of paths."""
    series = collections.OrderedDict()
    for p in paths:
        label = os.path.basename(p)
        with open(p) as f:
            for line in f:
                m = LINE.match(line)
                if m:
                    key = (m.group(1), m.group(2), int(m.group(3)))
                    series.setdefault(key, []).append((label, float(m.group(4))))
    return series


def self_test():
    """Synthetic series: pure noise, steps, two steps, an outlier."""
    failures = 0

    def expect(what, cond):
        nonlocal failures
        print(("ok   " if cond else "FAIL ") + what)
        failures += not cond

    false_alarms = 0
    for seed in range(200):  # 200 series of 40 points of 5% Gaussian noise
        r = random.Random(seed)
        false_alarms += len(change_points([100 * (1 + r.gauss(0, 0.05)) for _ in range(40)]))
    expect(f"pure noise: {false_alarms} false alarms in 200 series (at most 2)", false_alarms <= 2)

    hits = 0
    for seed in range(50):  # +10% at 25, 3% noise
        r = random.Random(1000 + seed)
        x = [100 * (1 + r.gauss(0, 0.03)) * (1.10 if i >= 25 else 1.0) for i in range(40)]
        cp = change_points(x)
        hits += len(cp) == 1 and abs(cp[0][0] - 25) <= 1 and cp[0][2] > cp[0][1]
    expect(f"a +10% step in 3% noise: found alone within one point {hits}/50 times (at least 45)", hits >= 45)

    r = random.Random(7)
    x = [50 * (1 + r.gauss(0, 0.02)) * (0.8 if 10 <= i < 30 else 1.0) for i in range(45)]
    cp = [k for k, _, _, _ in change_points(x)]
    expect(f"a -20% dip from 10 to 30: change points {cp} (expected near 10 and 30)",
           len(cp) == 2 and abs(cp[0] - 10) <= 1 and abs(cp[1] - 30) <= 1)

    r = random.Random(8)
    x = [100 * (1 + r.gauss(0, 0.02)) for _ in range(30)]
    x[15] *= 2.0
    expect("one outlier (2x) is not a change point", change_points(x) == [])

    x = [100.0] * 10 + [101.0] * 10
    expect("a 1% step is under --min-change", change_points(x) == [])
    expect("a noise-free 10% step is found", [k for k, _, _, _ in change_points([100.0] * 10 + [110.0] * 10)] == [10])
    print(f"changepoint self-test: {6 - failures} passed, {failures} failed")
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", nargs="*")
    p.add_argument("--min-score", type=float, default=5.0)
    p.add_argument("--min-change", type=float, default=0.03)
    p.add_argument("--min-size", type=int, default=3)
    p.add_argument("--fail-on-slowdown", action="store_true")
    p.add_argument("--self-test", action="store_true")
    a = p.parse_args()
    if a.self_test:
        return self_test()
    if not a.results:
        p.error("no results files")
    slow = 0
    for (bench, impl, threads), pts in read_history(a.results).items():
        x = [ms for _, ms in pts]
        cps = change_points(x, a.min_score, a.min_change, a.min_size)
        for k, before, after, score in cps:
            print(f"bench={bench} impl={impl} threads={threads}: {after / before - 1:+.1%} at {pts[k][0]} "
                  f"({before:.2f} -> {after:.2f} ms, score {score:.1f})")
        if cps and cps[-1][2] > cps[-1][1]:
            slow += 1
    if a.fail_on_slowdown and slow:
        print(f"{slow} series end slower than they were")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
