"""Writes the expected outcomes of tests/ops/test_bad_args.py from real MXNet 1.9.1.

Run with MXNet's interpreter from the repository root:

    /path/to/mxnet-python tests/data/make_bad_args_cases.py > /tmp/cases.py

It reads the case inputs (id, operator, input shapes, keyword arguments) from the CASES literal
of tests/ops/test_bad_args.py, runs each through ``mx.nd.<op>`` and through ``mx.sym.<op>`` +
``simple_bind`` + ``forward`` in MXNet, and prints the CASES literal again with MXNet's outcome
per path: the output shapes, "error", or "crash" (MXNet's process died there; the cases after it
run in a new process). Paste the printed literal over the test's CASES.
"""
import ast
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TEST = os.path.join(HERE, "..", "ops", "test_bad_args.py")


def read_cases():
    tree = ast.parse(open(TEST).read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "CASES":
            return ast.literal_eval(node.value)
    raise SystemExit("no CASES in " + TEST)


def arrays(mx, shapes):
    return [mx.nd.array(np.arange(int(np.prod(s)), dtype=np.float32).reshape(s) % 7)
            for s in shapes]


def run_nd(mx, op, shapes, kwargs):
    kwargs = dict(kwargs)
    if "out" in kwargs:
        kwargs["out"] = mx.nd.zeros(kwargs["out"])
    res = getattr(mx.nd, op)(*arrays(mx, shapes), **kwargs)
    res = res if isinstance(res, (list, tuple)) else [res]
    for r in res:
        r.wait_to_read()
    return [tuple(r.shape) for r in res]


def run_bind(mx, op, shapes, kwargs):
    names = [f"in{i}" for i in range(len(shapes))]
    sym = getattr(mx.sym, op)(*[mx.sym.Variable(n) for n in names], **kwargs)
    ex = sym.simple_bind(mx.cpu(), grad_req="null", **dict(zip(names, shapes)))
    for n, a in zip(names, arrays(mx, shapes)):
        ex.arg_dict[n][:] = a
    ex.forward(is_train=False)
    for o in ex.outputs:
        o.wait_to_read()
    return [tuple(o.shape) for o in ex.outputs]


def outcome(mx, fn, op, shapes, kwargs):
    try:
        return fn(mx, op, shapes, kwargs)
    except Exception:       # noqa: BLE001  (MXNet's errors are what is recorded)
        return "error"


def child(start):
    """Every case from `start` on, one line each as it is done (the parent sees how far a
    crashing process got)."""
    import mxnet as mx
    for case in read_cases()[start:]:
        cid, op, shapes, kwargs = case[:4]
        shapes = [tuple(s) for s in shapes]
        got = [outcome(mx, run_nd, op, shapes, kwargs), None]
        print(repr(got[0]), flush=True)
        if "out" not in kwargs:
            got[1] = outcome(mx, run_bind, op, shapes, kwargs)
        print(repr(got[1]), flush=True)


def main():
    if len(sys.argv) == 2:
        child(int(sys.argv[1]))
        return
    cases = read_cases()
    results = []                # one entry per path, in order
    while len(results) < 2 * len(cases):
        start = len(results) // 2
        r = subprocess.run([sys.executable, __file__, str(start)], capture_output=True, text=True)
        lines = [ast.literal_eval(x) for x in r.stdout.strip().splitlines() if x.strip()]
        results += lines[:2 * len(cases) - len(results)]
        if r.returncode != 0:   # MXNet died inside the next path: record it, go on after it
            results.append("crash")
            if len(results) % 2:
                results.append("crash")
    print("CASES = [")
    for i, case in enumerate(cases):
        cid, op, shapes, kwargs = case[:4]
        print(f"    ({cid!r}, {op!r}, {shapes!r}, {kwargs!r}, {results[2 * i]!r}, "
              f"{results[2 * i + 1]!r}),")
    print("]")


if __name__ == "__main__":
    main()
