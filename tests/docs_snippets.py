#!/usr/bin/env python3
"""Keeps the documentation's complete programs honest.

Extracts every ```c / ```cpp block that holds `int main` from README.md and
docs/*.md, compiles it against the build (include/ and libweft.a, C11 or C++17,
with the warnings that catch a name that does not exist, a wrong argument type
or an ignored NODISCARD status made errors), runs it, and reports each block by
file and line.  A block whose text says what it prints in a `/* prints: ... */`
or `// prints: ...` comment has its output checked for that text.

usage: docs_snippets.py SOURCE_DIR LIBWEFT_OR_BUILD_DIR [LIBWEFT_MPI | none]
(a build directory: libweft.a and libweft_mpi.a are looked for under it;
none: no MPI library, MPI programs skipped).  Environment: CC, CXX, and
WEFT_DOCS_FLAGS, flags added to every compile and link (a sanitizer's).
Exit 0: all passed; 1: some failed; 77: no C compiler (skipped).
Blocks that include <mpi.h> are compiled only when mpicc is found (and run
on two ranks when mpirun is found too); blocks in C++ only when a C++
compiler is found.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

FENCE = re.compile(r'^\s*```\s*([A-Za-z+]*)\s*$')
C_FLAGS = ['-std=c11', '-Wall', '-Werror=implicit-function-declaration',
           '-Werror=incompatible-pointer-types', '-Werror=int-conversion',
           '-Werror=unused-result', '-Werror=return-type',
           '-Werror=discarded-qualifiers']
CXX_FLAGS = ['-std=c++17', '-Wall', '-Werror=unused-result',
             '-Werror=return-type']
LIBS = ['-lpthread', '-lm', '-ldl']
# A sanitizer build's library needs its programs built the same way
# (tests/docs.cmake sets WEFT_DOCS_FLAGS=-fsanitize=... there).
EXTRA_FLAGS = os.environ.get('WEFT_DOCS_FLAGS', '').split()
RUN_TIMEOUT = 20


def OPEN_MPI_FLAGS(mpirun):
    """Open MPI's mpirun as tests/mpi.cmake runs it: two ranks on one machine
    (shared memory, no CMA, which containers often forbid), as root if need be."""
    try:
        ver = subprocess.run([mpirun, '--version'], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    if 'Open MPI' not in ver and 'OpenRTE' not in ver:
        return []
    flags = ['--oversubscribe', '--mca', 'btl', 'self,vader',
             '--mca', 'btl_vader_single_copy_mechanism', 'none']
    if hasattr(os, 'geteuid') and os.geteuid() == 0:
        flags.append('--allow-run-as-root')
    return flags


def blocks(path):
    """Yields (line, lang, text) of each fenced block holding `int main`."""
    lines = open(path, encoding='utf-8').read().split('\n')
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1).lower(), i + 1
        j = start
        while j < len(lines) and not FENCE.match(lines[j]):
            j += 1
        text = '\n'.join(lines[start:j]) + '\n'
        if lang in ('c', 'cpp', 'c++') and re.search(r'\bint\s+main\s*\(', text):
            yield start, ('c' if lang == 'c' else 'cpp'), text
        i = j + 1


def find_lib(build, names):
    if os.path.isfile(build):
        return build
    for name in names:
        for cand in glob.glob(os.path.join(build, '**', name), recursive=True):
            return cand
    return None


def check(job):
    src, lib, mpi_lib, tools, where, lang, text = job
    cc, cxx, mpicc, mpirun = tools
    is_mpi = '<mpi.h>' in text
    if lang == 'cpp' and not cxx:
        return where, 'skip', 'no C++ compiler'
    if is_mpi and not mpicc:
        return where, 'skip', 'no mpicc'
    if is_mpi and not mpi_lib:
        return where, 'skip', 'no weft_mpi library (not built, or a sanitizer build)'
    with tempfile.TemporaryDirectory(prefix='weft-doc-') as tmp:
        ext = '.cpp' if lang == 'cpp' else '.c'
        path = os.path.join(tmp, 'snippet' + ext)
        exe = os.path.join(tmp, 'snippet')
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        comp = mpicc if is_mpi else (cxx if lang == 'cpp' else cc)
        flags = (CXX_FLAGS if lang == 'cpp' else C_FLAGS) + EXTRA_FLAGS
        libs = ([mpi_lib] if is_mpi else []) + [lib] + LIBS
        cmd = [comp] + flags + ['-I', os.path.join(src, 'include'), path,
                                '-o', exe] + libs
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return where, 'FAIL', 'does not compile:\n' + r.stdout + r.stderr
        run = [exe]
        if is_mpi:
            if not mpirun:
                return where, 'ok', 'compiled (no mpirun to run it)'
            run = [mpirun, '-n', '2'] + OPEN_MPI_FLAGS(mpirun) + [exe]
        env = dict(os.environ)
        env.setdefault('WEFT_WORKERS', '2')
        try:
            r = subprocess.run(run, capture_output=True, text=True,
                               timeout=RUN_TIMEOUT, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            return where, 'FAIL', 'hung (over %d s)' % RUN_TIMEOUT
        if r.returncode != 0:
            return where, 'FAIL', 'exit %d:\n%s%s' % (r.returncode, r.stdout, r.stderr)
        for want in re.findall(r'(?:/\*|//)\s*prints:\s*(.*?)\s*(?:\*/|$)',
                               text, re.M):
            if want not in r.stdout:
                return where, 'FAIL', 'prints %r, the text says %r' % (r.stdout, want)
        return where, 'ok', ''


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if sys.argv[3:] == ['none']:
        mpi_lib = None
    elif len(sys.argv) == 4:
        mpi_lib = find_lib(os.path.abspath(sys.argv[3]), ('libweft_mpi.a',))
    else:
        mpi_lib = find_lib(build if os.path.isdir(build) else os.path.dirname(build),
                           ('libweft_mpi.a',))
    cc = shutil.which(os.environ.get('CC', 'cc')) or shutil.which('gcc') or shutil.which('clang')
    if not cc:
        print('SKIP: no C compiler')
        return 77
    cxx = shutil.which(os.environ.get('CXX', 'c++')) or shutil.which('g++') or shutil.which('clang++')
    tools = (cc, cxx, shutil.which('mpicc'), shutil.which('mpirun'))
    lib = find_lib(build, ('libweft.a',))
    if not lib:
        print('SKIP: no libweft.a under %s (build weft_static)' % build)
        return 77
    files = [os.path.join(src, 'README.md')] + sorted(glob.glob(os.path.join(src, 'docs', '*.md')))
    jobs = []
    for f in files:
        for line, lang, text in blocks(f):
            where = '%s:%d' % (os.path.relpath(f, src), line)
            jobs.append((src, lib, mpi_lib, tools, where, lang, text))
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(check, jobs))
    failed = 0
    for where, verdict, detail in results:
        print('%-4s %s%s' % (verdict, where, (' ' + detail) if detail else ''))
        failed += verdict == 'FAIL'
    print('%d programs, %d failed' % (len(results), failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
