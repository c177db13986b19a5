#!/usr/bin/env python3
"""Every public call taking a config struct by pointer has a _sized form
(docs/abi.md), so that a new call cannot slip in without one; with a shared
library, it exports every _sized symbol the headers declare, and beside each
the name without _sized where the headers still declare that as a function
(binaries built before the sizes were passed call it; a call new since then,
whose name is only the header's inline function, has no such symbol).

    tests/abi_sized_check.py INCLUDE_DIR [LIBWEFT_SO]

A config struct is a weft_*_config or weft_*_options type.  weft/mpi.h is left
out: its weft_mpi_pool_create has no _sized form yet (docs/abi.md)."""
import glob
import os
import re
import subprocess
import sys

SKIP = {"mpi.h"}


def main(include, lib=None):
    missing, checked, declared = [], 0, set()
    for path in sorted(glob.glob(os.path.join(include, "weft", "*.h"))):
        if os.path.basename(path) in SKIP:
            continue
        text = open(path, encoding="utf-8").read()
        decls = [" ".join(m.group(0).split()) for m in re.finditer(r"WEFT_API[^;{]*?;", text, re.S)]
        names = {m.group(1) for d in decls for m in [re.search(r"(\w+)\(", d)] if m}
        declared |= names
        for d in decls:
            m = re.search(r"(\w+)\((.*)\);$", d)
            if not m or m.group(1).endswith("_sized"):
                continue
            if re.search(r"const weft_\w+_(config|options) \*", m.group(2)):
                checked += 1
                if m.group(1) + "_sized" not in names:
                    missing.append(f"{os.path.basename(path)}: {m.group(1)} has no {m.group(1)}_sized")
    print(f"{checked} calls taking a config struct, {len(missing)} without a _sized form")
    if lib:
        try:
            out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
        except OSError:
            print("SKIP: no nm to list the library's symbols")
            return 77
        exported = {line.split()[-1] for line in out.stdout.splitlines() if line.strip()}
        sized = sorted(n for n in declared if n.endswith("_sized"))
        for n in sized:
            for sym in (n, n[: -len("_sized")]):
                if (sym == n or sym in declared) and sym not in exported:
                    missing.append(f"{os.path.basename(lib)}: {sym} is not exported")
        print(f"{len(sized)} _sized entry points: exports checked")
    for line in missing:
        print(line)
    return 1 if missing or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
