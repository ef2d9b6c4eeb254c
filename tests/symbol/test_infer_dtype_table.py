"""Output dtypes of ``Symbol.infer_type`` for a table of operators, against MXNet 1.9.1's
(tests/data/infer_dtype/golden.json, made by make_golden.py there with real MXNet)."""
import json
import os

import numpy as np
import pytest

import mxc as mx

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                      "infer_dtype", "golden.json")
with open(GOLDEN) as _f:
    CASES = json.load(_f)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['expr']}-{'-'.join(c['dtypes'].values())}"
                                             for c in CASES])
def test_output_dtypes_match_mxnet(case):
    a, b, c = (mx.sym.Variable(n) for n in "abc")
    sym = eval(case["expr"], {"mx": mx, "a": a, "b": b, "c": c})   # noqa: S307 (fixture)
    given = {k: np.dtype(v) for k, v in case["dtypes"].items() if k in sym.list_arguments()}
    _, outs, _ = sym.infer_type(**given)
    assert [np.dtype(t).name for t in outs] == case["outputs"]
