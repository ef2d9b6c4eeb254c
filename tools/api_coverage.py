"""How much of MXNet 1.9.1's public API mxc has: per user-facing module (mx, mx.nd, mx.gluon.nn,
mx.np, mx.contrib.text, ...), the share of MXNet's public names that mxc's module of the same
path also has.

    python tools/api_coverage.py                 # per module and overall
    python tools/api_coverage.py --missing mx.np # the names mxc lacks (any module prefix)
    python tools/api_coverage.py --write-floor   # record today's counts as the floor

The names are data (tools/api_names_mxnet191.json, written by tools/make_api_names.py with real
MXNet 1.9.1); the floor (tools/api_coverage_floor.json: names present per module) is what
tests/tools/test_api_coverage.py holds mxc to, so the coverage never falls.
"""
import argparse
import importlib
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = os.path.join(HERE, "api_names_mxnet191.json")
FLOOR = os.path.join(HERE, "api_coverage_floor.json")

# the path components MXNet users write, and mxc's package names for them
_CANONICAL = {"mx": "mxc", "nd": "ndarray", "sym": "symbol", "np": "numpy",
              "npx": "numpy_extension"}


def load_names(path=NAMES):
    with open(path) as f:
        return json.load(f)["modules"]


def resolve(path):
    """mxc's module for MXNet's `path` (e.g. 'mx.gluon.contrib.rnn'), or None if it has none:
    attribute by attribute from mxc (aliases such as mx.nd), importing what is not loaded."""
    import mxc
    mod = mxc
    parts = path.split(".")[1:]
    for i, part in enumerate(parts):
        nxt = getattr(mod, part, None)
        if not isinstance(nxt, types.ModuleType):
            name = ".".join(["mxc"] + [_CANONICAL.get(p, p) for p in parts[:i + 1]])
            try:
                nxt = importlib.import_module(name)
            except ImportError:
                return None
        mod = nxt
    return mod


def coverage(names=None):
    """{module path: (present names, missing names)} for every module in the name lists."""
    names = load_names() if names is None else names
    result = {}
    for path, wanted in names.items():
        mod = resolve(path)
        present = [n for n in wanted if mod is not None and hasattr(mod, n)]
        have = set(present)
        result[path] = (present, [n for n in wanted if n not in have])
    return result


def totals(result):
    present = sum(len(p) for p, _ in result.values())
    return present, present + sum(len(m) for _, m in result.values())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--missing", metavar="PREFIX", nargs="?", const="mx",
                    help="list the missing names of the modules under PREFIX")
    ap.add_argument("--write-floor", action="store_true",
                    help="write today's present counts to %s" % os.path.relpath(FLOOR))
    args = ap.parse_args(argv)
    result = coverage()
    if args.missing:
        for path, (_, missing) in result.items():
            if missing and (path == args.missing or path.startswith(args.missing + ".")):
                print("%s (%d): %s" % (path, len(missing), " ".join(missing)))
        return 0
    width = max(len(p) for p in result)
    for path, (present, missing) in result.items():
        n = len(present) + len(missing)
        share = 100.0 * len(present) / n if n else 100.0
        print("%-*s %4d / %-4d %6.1f%%" % (width, path, len(present), n, share))
    present, total = totals(result)
    print("%-*s %4d / %-4d %6.1f%%" % (width, "overall", present, total,
                                       100.0 * present / total))
    if args.write_floor:
        floor = {path: len(p) for path, (p, _) in result.items()}
        tmp = FLOOR + ".tmp"
        with open(tmp, "w") as f:
            json.dump(floor, f, indent=0, sort_keys=True)
            f.write("\n")
        os.replace(tmp, FLOOR)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(HERE))      # the repository's mxc when run from a checkout
    sys.exit(main())
