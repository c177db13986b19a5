#!/usr/bin/env python3
"""Doxygen INPUT_FILTER for weft's public headers (docs/reference/Doxyfile).

The headers use plain C comments (docs say so in CONVENTIONS.md), not Doxygen's
/** */.  This filter shows Doxygen the same text as documentation, without
changing a header:
  - the file's first comment (the "SPDX" one) becomes the file's documentation;
  - a comment that starts a line outside a function body or a macro
    documents what follows it;
  - a comment after code on the same line documents that code (/**< */);
  - section banners (/* ---- ... */) and comments inside function bodies and
    #define continuations stay plain comments.
Lines are never added or removed, so Doxygen's line numbers stay right.
"""
import re
import sys

BANNER = re.compile(r"^\s*/\*\s*-{3,}")


def code_part(line):
    """The line without comments and string/char literals (rough, enough here)."""
    return re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'|/\*.*?\*/|//.*$', "", line)


def main(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    first_comment = True
    in_comment = False  # inside a /* */ that spans lines
    in_macro = False    # inside a #define continued with backslashes
    stack = []          # open braces: "fn" for a function body, "blk" otherwise
    prev_code = ""      # the last code seen before an opening brace
    for line in lines:
        stripped = line.strip()
        if in_comment:
            out.append(line)
            if "*/" in line:
                in_comment = False
            continue
        if in_macro or stripped.startswith("#"):
            in_macro = line.rstrip().endswith("\\")
            out.append(line)
            continue
        in_fn = "fn" in stack
        new = line
        m = re.match(r"^(\s*)/\*(?![*!])(.*)$", line)
        if m and first_comment and "SPDX" in line:
            new = m.group(1) + "/** \\file"  # the license line itself is not shown
            if "*/" in line:
                new += " */"
            first_comment = False
        elif m and not in_fn and not BANNER.match(line):
            new = m.group(1) + "/**" + m.group(2)
            first_comment = False
        elif not m and not in_fn and "/*" in line and code_part(line.split("/*")[0]).strip():
            idx = line.index("/*")
            if not line[idx:].startswith(("/**", "/*!")):
                new = line[:idx] + "/**<" + line[idx + 2:]
        elif m:
            first_comment = False
        # Track comments that stay open at the end of this line.
        rest = re.sub(r"/\*.*?\*/", "", line)
        if "/*" in rest:
            in_comment = True
        # Track braces in the code part of the line.
        code = code_part(line)
        for ch in code:
            if ch == "{":
                stack.append("fn" if prev_code.rstrip().endswith(")") else "blk")
                prev_code = ""
            elif ch == "}":
                if stack:
                    stack.pop()
                prev_code = ""
            elif ch == ";":
                prev_code = ""
            else:
                prev_code += ch
        if code.strip():
            prev_code += " "
        out.append(new)
    sys.stdout.write("\n".join(group_runs(out)))


def declarations_in(run):
    """How many top-level declarations a run of lines holds (each ending in ';'
    at brace depth 0, a function body's closing brace, or a one-line #define),
    and the index of the line where the last one ends."""
    depth, count, last = 0, 0, -1
    in_macro = False
    for i, line in enumerate(run):
        if in_macro or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            if not continued and (in_macro or line.lstrip().startswith("#define")):
                count, last = count + 1, i
            in_macro = continued
            continue
        code = code_part(line)
        for pos, ch in enumerate(code):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and not code[pos + 1:].strip():
                    count, last = count + 1, i  # a function body (a struct ends in "} name;")
            elif ch == ";" and depth == 0:
                count, last = count + 1, i
    return count, last


def group_runs(lines):
    """A doc comment followed directly by several declarations (no blank line
    between them) documents all of them, as the headers write it (one comment
    over weft_params_set_int, _float, _string and _bool).  Such a run becomes a
    Doxygen member group; DISTRIBUTE_GROUP_DOC gives each member the comment.
    Markers go on existing lines, so line numbers stay."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"^/\*\*(?!<)", line) and "\\file" not in line:  # file scope only
            j = i
            while "*/" not in lines[j]:
                j += 1
            k = j + 1
            run = []
            while k < len(lines) and lines[k].strip() and not lines[k].lstrip().startswith("/*"):
                run.append(lines[k])
                k += 1
            count, last = declarations_in(run)
            end = j + 1 + last
            if count >= 2 and not lines[end].lstrip().startswith("#"):
                lines[j] += " /**@{*/"
                lines[end] += " /**@}*/"
            elif count >= 2 and end + 1 < len(lines) and not lines[end + 1].strip():
                lines[j] += " /**@{*/"
                lines[end + 1] = "/**@}*/"  # not on a #define line: it would join the macro
            i = k
        else:
            i += 1
    return lines


if __name__ == "__main__":
    main(sys.argv[1])
