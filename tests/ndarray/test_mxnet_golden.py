"""mxc evaluates the expressions of golden_exprs.py to what real MXNet 1.9.1 gave
(tests/data/ndarray_golden.npz, made by tests/data/make_ndarray_golden.py): values, dtypes
and shapes of the NDArray front end, indexing, assignment and operators."""
import pathlib

import numpy as np
import pytest

import mxc as mx

from .golden_exprs import EXPRS

GOLDEN = np.load(pathlib.Path(__file__).parent.parent / "data" / "ndarray_golden.npz",
                 allow_pickle=False)


def evaluate(src):
    lines = src.split("\n")
    env = {"mx": mx, "np": np}
    exec("\n".join(lines[:-1]), env)
    return eval(lines[-1], env)


@pytest.mark.parametrize("name", sorted(EXPRS))
def test_matches_mxnet(name):
    if name + "__error" in GOLDEN.files:     # MXNet rejected it: so must mxc
        with pytest.raises(Exception):
            evaluate(EXPRS[name]).asnumpy()
        return
    got = evaluate(EXPRS[name]).asnumpy()
    exp = GOLDEN[name]
    assert got.shape == exp.shape, f"{name}: shape {got.shape}, MXNet {exp.shape}"
    assert got.dtype == exp.dtype, f"{name}: dtype {got.dtype}, MXNet {exp.dtype}"
    if exp.dtype.kind == "f":
        np.testing.assert_allclose(got, exp, rtol=1e-6, atol=1e-6, equal_nan=True, err_msg=name)
    else:
        np.testing.assert_array_equal(got, exp, err_msg=name)
