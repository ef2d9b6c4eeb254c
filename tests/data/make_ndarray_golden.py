"""Evaluate tests/ndarray/golden_exprs.py with real MXNet 1.9.1 and store the results.

Run from the repository root with the oracle's interpreter:
    /path/to/mxnet-oracle/bin/python tests/data/make_ndarray_golden.py
Writes tests/data/ndarray_golden.npz: for each expression name, the values (as numpy, with
MXNet's dtype and shape). An expression MXNet rejects is stored as the string of its error type.
"""
import os
import sys

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ndarray"))
from golden_exprs import EXPRS  # noqa: E402


def evaluate(src):
    lines = src.split("\n")
    env = {"mx": mx, "np": np}
    exec("\n".join(lines[:-1]), env)
    return eval(lines[-1], env)


out = {}
for name, src in EXPRS.items():
    try:
        out[name] = evaluate(src).asnumpy()
    except Exception as e:  # recorded so the test checks mxc rejects it too
        out[name + "__error"] = np.array(type(e).__name__)
np.savez(os.path.join(HERE, "ndarray_golden.npz"), **out)
print(f"{len(out)} results written")
