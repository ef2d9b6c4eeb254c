"""Records one small call of every operator the operator tests make, for the sym-vs-nd sweep.

    cd <repo> && python tests/data/make_sym_sweep_cases.py

Runs tests/ops (and tests/ndarray, which reach more operators) under pytest with a recorder
on the registry's run (every call that is not a C fast path) and on the C fast paths: the first call of each operator (backward
kernels aside) whose inputs are all dense, small (<= 4096 elements each) and float or integer is kept. Writes
tests/data/sym_sweep_cases.json (operator, attribute strings, input dtypes) and
sym_sweep_cases.npz (the inputs). tests/executor/test_sym_sweep.py runs every case through
``mx.nd`` + autograd and through ``mx.sym`` + ``bind`` and compares. Rerun it when operators
are added; nothing of MXNet is involved (the reference is mxc's own imperative path).
"""
import json
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAX_ELEMENTS = 4096


class Recorder:
    def __init__(self):
        self.cases = {}

    def keep(self, op, attrs, inputs):
        from mxc.ops.params import attrs_to_strings
        if op.name in self.cases or not inputs or op.name.startswith("_backward_"):
            return            # backward kernels are reached through their forward's gradient
        if op.name == "Custom":
            return            # runs a Python operator a test registered (tests/ops/test_custom.py)
        arrays = []
        for x in inputs:
            if getattr(x, "_sparse", False) or x.size > MAX_ELEMENTS or x.size == 0:
                return
            if np.dtype(x.dtype).kind not in "fiub":
                return
            arrays.append(x.asnumpy().copy())
        try:
            strings = attrs_to_strings(attrs)
            json.dumps(strings)
        except (TypeError, ValueError):
            return
        # keep calls whose symbolic form takes the same inputs (an operator's forward may call
        # itself internally on part of its inputs)
        import mxc as mx
        names = [f"in{j}" for j in range(len(arrays))]
        try:
            sym = getattr(mx.sym, op.name)(*[mx.sym.var(n) for n in names], **strings)
            if sorted(sym.list_arguments() + sym.list_auxiliary_states()) != sorted(names):
                return
            sym.infer_shape(**{n: a.shape for n, a in zip(names, arrays)})
        except Exception:
            return
        self.cases[op.name] = (strings, arrays)

    def pytest_sessionstart(self, session):
        from mxc.ndarray import register
        from mxc._core import handle
        rec = self
        run = register.run

        def recording_run(op, inputs, attrs, out=None, ctx=None):
            result = run(op, inputs, attrs, out, ctx)
            try:
                rec.keep(op, attrs, inputs)
            except Exception:          # recording never changes what the tests see
                pass
            return result
        register.run = recording_run

        def wrap(name, nin):
            fast = getattr(handle, name)

            def recording(fk, *args):
                r = fast(fk, *args)
                if r is not None and getattr(fk, "op", None) is not None:
                    try:
                        attrs = dict(fk.attrs or {})
                        if name == "fast_scalar":
                            attrs["scalar"] = float(args[1])
                        rec.keep(fk.op, fk.op.parse(attrs), list(args[:nin]))
                    except Exception:
                        pass
                return r
            setattr(handle, name, recording)
        wrap("fast_unary", 1)
        wrap("fast_binary", 2)
        wrap("fast_scalar", 1)


def main():
    sys.path.insert(0, ROOT)
    rec = Recorder()
    pytest.main([os.path.join(ROOT, "tests", "ops"), os.path.join(ROOT, "tests", "ndarray"),
                 os.path.join(ROOT, "tests", "test_operator.py"),
                 "-q", "-p", "no:cacheprovider", "--deselect",
                 "tests/ops/test_shape.py::test_every_registered_op_is_tested"], plugins=[rec])
    meta, arrays = [], {}
    for i, (name, (strings, inputs)) in enumerate(sorted(rec.cases.items())):
        meta.append({"op": name, "attrs": strings,
                     "dtypes": [np.dtype(a.dtype).name for a in inputs]})
        for j, a in enumerate(inputs):
            arrays[f"c{i}_{j}"] = a
    with open(os.path.join(HERE, "sym_sweep_cases.json"), "w") as f:
        json.dump(meta, f, indent=0, sort_keys=True)
    np.savez_compressed(os.path.join(HERE, "sym_sweep_cases.npz"), **arrays)
    print(f"{len(meta)} operators recorded")


if __name__ == "__main__":
    main()
