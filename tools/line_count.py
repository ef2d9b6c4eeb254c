#!/usr/bin/env python3
"""Lines of code per package: each package of mxc/ (its subpackages included), each folder of
csrc/, and tests/ by the part of mxc they test. Printed by CI (.ci/run) so that growth shows up
in every log; no budget is enforced.

"code" counts the lines that are neither blank nor only a comment (`#` in Python and Cython,
`//` and `/* */` in C and CUDA); docstrings count as code. Only the files git tracks are
counted (a build leaves generated .c files and extensions beside the sources), or every source
file when the tree is not a git checkout.

    python tools/line_count.py [--depth 2] [ROOT]
"""
import argparse
import os
import subprocess
import sys

PY = (".py", ".pyx", ".pxd", ".pxi")
C = (".h", ".c", ".cc", ".cu", ".cuh")
AREAS = ("mxc", "csrc", "tests")


def tracked_files(root):
    """Source files under AREAS, relative to root with '/' separators."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", *AREAS],
                             capture_output=True, check=True).stdout
        files = [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for area in AREAS:
            for d, _, names in os.walk(os.path.join(root, area)):
                rel = os.path.relpath(d, root).replace(os.sep, "/")
                files.extend(f"{rel}/{n}" for n in names)
        # a Cython build writes foo.c beside foo.pyx: count the source only
        pyx = {f[:-4] for f in files if f.endswith(".pyx")}
        files = [f for f in files if not (f.endswith(".c") and f[:-2] in pyx)]
    return sorted(f for f in files if f.endswith(PY + C))


def count(text, suffix):
    """(lines, code lines) of one file's text."""
    lines = text.splitlines()
    code = 0
    in_block = False
    for line in lines:
        s = line.strip()
        if suffix in PY:
            code += bool(s) and not s.startswith("#")
            continue
        # C/CUDA: drop /* */ blocks and // comments, count what is left
        rest = ""
        while s:
            if in_block:
                end = s.find("*/")
                if end < 0:
                    s = ""
                    break
                s, in_block = s[end + 2:], False
            else:
                start = s.find("/*")
                line_c = s.find("//")
                if line_c >= 0 and (start < 0 or line_c < start):
                    rest += s[:line_c]
                    break
                if start < 0:
                    rest += s
                    break
                rest += s[:start]
                s, in_block = s[start + 2:], True
        code += bool(rest.strip())
    return len(lines), code


def package_of(path, depth):
    """The package a file counts under: the folders below its area, to `depth` levels (deeper
    folders count with their parent); an area's own top-level files count as "<area>/*"."""
    folders = path.split("/")[:-1]
    if len(folders) == 1:
        return folders[0] + "/*"
    return "/".join(folders[:1 + depth])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--depth", type=int, default=1,
                    help="folder levels below mxc/, csrc/, tests/ to report (default 1)")
    args = ap.parse_args(argv)
    if args.depth < 1:
        ap.error("--depth must be at least 1")
    root = os.path.abspath(args.root)
    totals = {}
    for rel in tracked_files(root):
        suffix = os.path.splitext(rel)[1]
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            n, code = count(f.read(), suffix)
        key = package_of(rel, args.depth)
        files, lines, codes = totals.get(key, (0, 0, 0))
        totals[key] = (files + 1, lines + n, codes + code)
    if not totals:
        print(f"line_count: no source files under {', '.join(AREAS)} in {root}", file=sys.stderr)
        return 1
    width = max(len(k) for k in totals)
    print(f"{'package':<{width}} {'files':>6} {'lines':>8} {'code':>8}")
    for area in AREAS:
        keys = sorted(k for k in totals if k.split("/")[0] == area)
        for k in keys:
            print(f"{k:<{width}} {totals[k][0]:>6} {totals[k][1]:>8} {totals[k][2]:>8}")
        if keys:
            f_, l_, c_ = (sum(totals[k][i] for k in keys) for i in range(3))
            print(f"{area + '/ total':<{width}} {f_:>6} {l_:>8} {c_:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
