"""FullyConnected: forward vs numpy (flatten on/off, bias/no bias, float16/32/64), shape
completion of weight and bias, gradients vs central differences, errors naming the op."""
import numpy as np
import pytest

import mxc as mx
from mxc.ops import registry

from .oputil import check_forward, check_grad
from .test_dot import check_golden, golden_cases


def _ref(x, w, b, flatten):
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    x2 = x64.reshape(x.shape[0], -1) if flatten else x64
    y = x2 @ w64.T
    if b is not None:
        y = y + b.astype(np.float64).reshape(-1)
    return y.astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("flatten", [True, False])
def test_forward(dtype, flatten, rng):
    x = rng.uniform(-1, 1, (4, 3, 5)).astype(dtype)
    k = 15 if flatten else 5
    w = rng.uniform(-1, 1, (7, k)).astype(dtype)
    b = rng.uniform(-1, 1, (7,)).astype(dtype)
    kw = {"num_hidden": 7, "flatten": flatten}
    if dtype == np.float16:
        got = mx.nd.FullyConnected(mx.nd.array(x, dtype=dtype), mx.nd.array(w, dtype=dtype),
                                   mx.nd.array(b, dtype=dtype), **kw).asnumpy()
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float32), _ref(x, w, b, flatten).astype(np.float32),
                                   rtol=1e-2, atol=1e-2)
    else:
        check_forward("FullyConnected", [x, w, b], kw, _ref(x, w, b, flatten))


def test_bias_column_shape_and_1d_data(rng):
    x = rng.standard_normal((6,)).astype(np.float32)          # 1-D data: in_units 1
    w = rng.standard_normal((3, 1)).astype(np.float32)
    b = rng.standard_normal((3, 1)).astype(np.float32)        # (num_hidden, 1) is accepted
    check_forward("FullyConnected", [x, w, b], {"num_hidden": 3},
                  (x.reshape(6, 1) @ w.T + b.reshape(-1)).astype(np.float32))


def test_large_uses_blas(rng):
    x = rng.standard_normal((130, 70)).astype(np.float32)
    w = rng.standard_normal((90, 70)).astype(np.float32)
    b = rng.standard_normal((90,)).astype(np.float32)
    got = mx.nd.FullyConnected(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b),
                               num_hidden=90).asnumpy()
    np.testing.assert_allclose(got, x @ w.T + b, rtol=1e-4, atol=1e-4)


def test_infer_inputs():
    op = registry.get("FullyConnected")
    a = op.parse({"num_hidden": 8})
    assert op.infer_inputs(a, [(2, 3, 4), None, None]) == [(2, 3, 4), (8, 12), (8,)]
    a = op.parse({"num_hidden": 8, "flatten": False})
    assert op.infer_inputs(a, [(2, 3, 4), None, None]) == [(2, 3, 4), (8, 4), (8,)]
    a = op.parse({"num_hidden": 8, "no_bias": True})
    assert op.infer_inputs(a, [(5, 6), None]) == [(5, 6), (8, 6)]
    assert op.infer_inputs(a, [None, None]) == [None, None]


def test_no_bias_infer_and_forward(rng):
    op = registry.get("FullyConnected")
    a = op.parse({"num_hidden": 4, "no_bias": True})
    shapes, dtypes = op.infer(a, [(3, 5), (4, 5)], [np.dtype("float32")] * 2)
    assert shapes == [(3, 4)] and dtypes == [np.dtype("float32")]
    x = mx.nd.array(rng.standard_normal((3, 5)).astype(np.float32))
    w = mx.nd.array(rng.standard_normal((4, 5)).astype(np.float32))
    out = mx.nd.zeros((3, 4))
    op.forward(a, [x, w], [out])
    np.testing.assert_allclose(out.asnumpy(), x.asnumpy() @ w.asnumpy().T, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("flatten", [True, False])
def test_grad(flatten, rng):
    x = rng.standard_normal((3, 2, 4))
    w = rng.standard_normal((5, 8 if flatten else 4))
    b = rng.standard_normal((5,))
    check_grad("FullyConnected", [x, w, b], {"num_hidden": 5, "flatten": flatten}, rng)


def test_grad_no_bias(rng):
    op = registry.get("FullyConnected")
    a = op.parse({"num_hidden": 3, "no_bias": True})
    x = mx.nd.array(rng.standard_normal((4, 5)), dtype=np.float64)
    w = mx.nd.array(rng.standard_normal((3, 5)), dtype=np.float64)
    g = mx.nd.array(rng.standard_normal((4, 3)), dtype=np.float64)
    dx, dw = op.grad(mx.nd, a, [x, w], [None], [g])
    np.testing.assert_allclose(dx.asnumpy(), g.asnumpy() @ w.asnumpy(), rtol=1e-12)
    np.testing.assert_allclose(dw.asnumpy(), g.asnumpy().T @ x.asnumpy(), rtol=1e-12)


@pytest.mark.parametrize("shapes,kw,msg", [
    ([(2, 3), (4, 2), (4,)], {"num_hidden": 4}, "weight has shape"),
    ([(2, 3), (4, 3), (5,)], {"num_hidden": 4}, "bias has shape"),
    ([(2, 3), (4, 3)], {"num_hidden": 4}, "expects 3 inputs"),
    ([(2, 3), (0, 3), (0,)], {"num_hidden": 0}, "num_hidden"),
])
def test_errors(shapes, kw, msg):
    op = registry.get("FullyConnected")
    with pytest.raises(ValueError, match="FullyConnected.*" + msg):
        op.infer(op.parse(kw), shapes, [np.dtype("float32")] * len(shapes))


def test_int_dtype_rejected():
    x = mx.nd.array(np.ones((2, 3)), dtype=np.int32)
    w = mx.nd.array(np.ones((4, 3)), dtype=np.int32)
    b = mx.nd.array(np.ones(4), dtype=np.int32)
    with pytest.raises(ValueError, match="FullyConnected"):
        mx.nd.FullyConnected(x, w, b, num_hidden=4)


@pytest.mark.parametrize("case", golden_cases({"FullyConnected"}), ids=lambda c: c[0])
def test_golden(case):
    """Forward and gradients against MXNet 1.9.1 (tests/data/make_matrix_golden.py)."""
    check_golden(*case)
