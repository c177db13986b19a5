#!/usr/bin/env python3
"""Rewrites a weft trace (Chrome Trace Event JSON) for speedscope.

    scripts/trace-for-speedscope.py trace.json trace-speedscope.json

Perfetto and chrome://tracing read weft's trace as written.  speedscope
computes each complete event's end as ts + dur in binary floating point, so a
task that starts exactly where the previous one ended (the same printed number
in weft's file) can look one rounding step too late, and speedscope then draws
it nested in the previous one (jlfwong/speedscope#487).  This copy turns every
complete event ("ph":"X") into a begin/end pair whose end is computed in whole
nanoseconds, so touching tasks share the very same time.  Names, arguments and
times are unchanged.
"""
import json
import re
import sys
from decimal import Decimal


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    with open(sys.argv[1]) as f:
        d = json.load(f, parse_float=Decimal)
    out = []
    for e in d["traceEvents"]:
        if e.get("ph") != "X":
            out.append(e)
            continue
        begin = int(Decimal(e["ts"]) * 1000)  # ns: weft prints ns digits
        end = begin + int(Decimal(e["dur"]) * 1000)
        rest = {k: v for k, v in e.items() if k not in ("ph", "ts", "dur")}
        out.append(dict(rest, ph="B", ts=Decimal(begin) / 1000))
        out.append(dict(rest, ph="E", ts=Decimal(end) / 1000))
    d["traceEvents"] = out
    # Decimals go out verbatim (no round trip through a binary float).
    text = json.dumps(d, default=lambda o: "__D__%s__" % format(o, "f"))
    with open(sys.argv[2], "w") as f:
        f.write(re.sub(r'"__D__([0-9.\-]+)__"', r"\1", text))


if __name__ == "__main__":
    main()
