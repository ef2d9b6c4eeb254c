"""Fuzz one target for as long as asked:

    python -m tests.fuzz --target symbol_json --seconds 60
    python -m tests.fuzz --list

The fuzzer (atheris, libFuzzer underneath; ``pip install atheris``) starts from the target's
seeds and its kept crashes, works on a scratch copy of them, and writes an input that crashed
to tests/fuzz/crashes/<target>/ (keep it: test_fuzz.py replays it from then on). Each input
runs under libFuzzer's limits: 2 GiB of memory, 10 s. It prints libFuzzer's statistics; the
last line says how many inputs ran.
"""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def corpus_dirs(target):
    return [os.path.join(HERE, kind, target) for kind in ("corpus", "crashes")]


def _instrument(atheris, prefixes):
    """Coverage feedback from the functions of the modules under `prefixes` only (instrumenting
    every module of mxc as it is imported costs half a minute of start-up)."""
    import importlib
    import inspect
    for p in prefixes:              # modules mxc imports only when first used (symbol.json)
        importlib.import_module(p)
    names = [m for m in sys.modules if any(m == p or m.startswith(p + ".") for p in prefixes)]
    for name in names:
        mod = sys.modules[name]
        for obj in list(vars(mod).values()):
            if inspect.isfunction(obj) and obj.__module__ == name:
                atheris.instrument_func(obj)
            elif inspect.isclass(obj) and obj.__module__ == name:
                for attr in vars(obj).values():
                    fn = getattr(attr, "__func__", attr)     # static and class methods too
                    if inspect.isfunction(fn):
                        atheris.instrument_func(fn)
                    elif isinstance(attr, property):
                        for f in (attr.fget, attr.fset):
                            if f is not None:
                                atheris.instrument_func(f)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("--target", help="one of --list")
    ap.add_argument("--seconds", type=int, default=10, help="how long to fuzz (default 10)")
    ap.add_argument("--list", action="store_true", help="list the targets")
    ap.add_argument("--crashes", default=None,
                    help="where a crashing input goes (default tests/fuzz/crashes/<target>)")
    args = ap.parse_args(argv)
    try:
        import atheris
    except ImportError:
        print("tests.fuzz: atheris is not installed (pip install atheris)", file=sys.stderr)
        return 2
    from tests.fuzz import targets
    if args.list or not args.target:
        print("\n".join(sorted(targets.TARGETS)))
        return 0 if args.list else 2
    if args.target not in targets.TARGETS:
        ap.error(f"unknown target {args.target!r}; one of {sorted(targets.TARGETS)}")
    import mxc  # noqa: F401
    _instrument(atheris, targets.MODULES[args.target])
    crashes = args.crashes or corpus_dirs(args.target)[1]
    os.makedirs(crashes, exist_ok=True)
    # libFuzzer ends the process itself (no Python cleanup runs): the scratch space is one
    # directory per target, emptied by the next run
    base = os.path.join(tempfile.gettempdir(), f"mxc-fuzz-{args.target}")
    shutil.rmtree(base, ignore_errors=True)
    work = os.path.join(base, "corpus")         # the seeds, and what the fuzzer adds to them
    targets.SCRATCH = os.path.join(base, "scratch")
    os.makedirs(work)
    os.makedirs(targets.SCRATCH)
    for d in corpus_dirs(args.target):
        if os.path.isdir(d):
            for name in os.listdir(d):
                shutil.copy(os.path.join(d, name), os.path.join(work, name))
    target = args.target

    def one_input(data):
        targets.run(target, data)

    libfuzzer = [sys.argv[0], work, f"-max_total_time={args.seconds}", "-rss_limit_mb=2048",
                 "-timeout=10", f"-artifact_prefix={crashes}{os.sep}", "-print_final_stats=1"]
    atheris.Setup(libfuzzer, one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
