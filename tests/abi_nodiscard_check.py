#!/usr/bin/env python3
"""A NODISCARD call stays NODISCARD through its sized-form wrapper.

Most config-taking calls are, in a program, a macro naming a static inline
function that passes the header's struct size (docs/abi.md):
    #define weft_executor_create weft__executor_create_inline
The compiler warns of an ignored result only when the function actually called
(the inline one) carries WEFT_NODISCARD; the exported declaration's attribute
does not reach it.  So every wrapper of a WEFT_NODISCARD call must carry it too.
Then, with a C compiler, ignoring weft_executor_create's result must warn.

usage: abi_nodiscard_check.py INCLUDE_DIR [CC]
"""
import glob
import os
import re
import subprocess
import sys
import tempfile


def main():
    inc = sys.argv[1]
    bad = []
    checked = 0
    for path in sorted(glob.glob(os.path.join(inc, 'weft', '*.h'))):
        text = open(path, encoding='utf-8').read()
        code = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
        for public, inline in re.findall(r'#\s*define\s+(weft_\w+)\s+(weft__\w+_inline)\b', code):
            if not re.search(r'WEFT_NODISCARD[^;{}]*?\b%s\s*\(' % public, code):
                continue
            checked += 1
            m = re.search(r'([^;{}#]*?)\b%s\s*\(' % inline, code)
            if not m or 'WEFT_NODISCARD' not in m.group(1):
                bad.append('%s: %s is WEFT_NODISCARD but its wrapper %s is not: '
                           'an ignored result gives no warning' % (os.path.basename(path), public, inline))
    for b in bad:
        print('FAIL', b)
    print('%d NODISCARD wrappers checked' % checked)
    if len(sys.argv) > 2 and sys.argv[2]:
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, 'probe.c')
            with open(src, 'w') as f:
                f.write('#include <weft.h>\nvoid probe(void) { weft_executor_create(NULL, NULL); }\n')
            r = subprocess.run([sys.argv[2], '-std=c11', '-Wall', '-Werror=unused-result', '-c', '-o', os.path.join(tmp, 'probe.o'),
                                '-I', inc, src], capture_output=True, text=True)
            if r.returncode == 0:
                print('FAIL ignoring weft_executor_create(NULL, NULL) compiles without a warning')
                bad.append('probe')
            elif 'unused' not in r.stderr and 'warn_unused_result' not in r.stderr:
                print('FAIL the probe failed for another reason:\n' + r.stderr)
                bad.append('probe')
            else:
                print('ok   ignoring weft_executor_create(...) warns')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
