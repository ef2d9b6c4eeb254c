"""Reductions: forward vs numpy over every axis combination and dtype, gradients vs central
differences, MXNet's shape rules (a full reduction has shape (1,))."""
import itertools

import numpy as np
import pytest

import mxc as mx

from .oputil import check_forward, check_grad

REF = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
       "nansum": np.nansum, "nanprod": np.nanprod}
AXES = [None, (0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2), (-1,)]


def _expected(name, x, axis, keepdims, dtype):
    r = REF[name](x.astype(np.float64), axis=axis, keepdims=keepdims)
    r = np.asarray(r).astype(dtype)
    return r.reshape((1,)) if r.ndim == 0 else r


@pytest.mark.parametrize("name", sorted(REF))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
def test_reduce_forward(name, dtype, rng):
    x = rng.uniform(0.5, 1.5, size=(2, 3, 4)).astype(dtype) if dtype != np.int32 else \
        rng.integers(-3, 4, size=(2, 3, 4)).astype(dtype)
    if name.startswith("nan") and np.dtype(dtype).kind == "f":
        x[0, 1, 2] = np.nan
    for axis, keep in itertools.product(AXES, [False, True]):
        kw = {"keepdims": keep} if axis is None else {"axis": axis, "keepdims": keep}
        if name == "mean" and np.dtype(dtype).kind == "i":
            continue
        check_forward(name, [x], kw, _expected(name, x, axis, keep, dtype))


def test_exclude(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    check_forward("sum", [x], {"axis": 1, "exclude": True}, x.sum(axis=(0, 2)))


@pytest.mark.parametrize("name", sorted(REF))
def test_reduce_grad(name, rng):
    x = rng.uniform(0.5, 1.5, size=(2, 3))
    for kw in [{}, {"axis": 1}, {"axis": 0, "keepdims": True}]:
        check_grad(name, [x], kw, rng)


@pytest.mark.parametrize("ord_", [1, 2])
def test_norm(ord_, rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    ref = np.abs(x).sum(axis=1) if ord_ == 1 else np.sqrt((x.astype(np.float64) ** 2).sum(axis=1))
    check_forward("norm", [x], {"ord": ord_, "axis": 1}, ref.astype(np.float32))
    full = np.abs(x).sum() if ord_ == 1 else np.sqrt((x.astype(np.float64) ** 2).sum())
    check_forward("norm", [x], {"ord": ord_}, np.array([full], np.float32))
    check_grad("norm", [rng.standard_normal((2, 3))], {"ord": ord_, "axis": 1}, rng)


@pytest.mark.parametrize("name,ref", [("argmax", np.argmax), ("argmin", np.argmin)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_arg(name, ref, dtype, rng):
    x = rng.permutation(24).reshape(2, 3, 4).astype(dtype)
    for axis in (0, 1, 2):
        # MXNet 1.9.1: argmax returns indices in the input's dtype
        check_forward(name, [x], {"axis": axis}, ref(x, axis=axis).astype(dtype))
    check_forward(name, [x], {}, np.array([ref(x)], dtype))


def test_method_forms(rng):
    # multiples of 1/8 below 8: every partial sum is exact in float32, so the sums equal
    # numpy's in any summation order (random normals made a row sum near 0 compare its
    # rounding error against rtol alone); the mean is that exact sum divided once (or times
    # 1/12): within 2 ulp of numpy's, or 0 exactly
    a = (rng.integers(-64, 64, (3, 4)) / 8).astype(np.float32)
    x = mx.nd.array(a)
    np.testing.assert_array_equal(x.sum(axis=1).asnumpy(), a.sum(axis=1))
    np.testing.assert_allclose(x.mean().asnumpy(), [a.mean()], rtol=3e-7, atol=0)
    assert x.max(axis=0).shape == (4,)


def test_large_sum_uses_threads(rng):
    a = rng.standard_normal(1 << 20).astype(np.float32)
    # the sum (~N(0, 1024)) can fall near 0, where rtol alone compared the float32 rounding
    # (1e-5 median, 6e-5 max over 40 seeds) against nearly nothing; the rounding scales with
    # sum |a| (~8.4e5), so atol is 1e-8 of it (8.4e-3, 140x the largest error seen)
    np.testing.assert_allclose(mx.nd.sum(mx.nd.array(a)).asscalar(), a.astype(np.float64).sum(),
                               rtol=1e-5, atol=1e-8 * np.abs(a).astype(np.float64).sum())


def test_norm_out_dtype(rng):
    """norm's out_dtype (MXNet 1.9.1): the result in that dtype, the data's gradient in the
    data's dtype."""
    x = rng.standard_normal((3, 4)).astype(np.float16)
    a = mx.nd.array(x, dtype="float16")
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.norm(a, axis=1, keepdims=True, out_dtype="float32")
    y.backward()
    assert y.dtype == np.float32 and a.grad.dtype == np.float16
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(y.asnumpy(), np.linalg.norm(x32, axis=1, keepdims=True),
                               rtol=1e-5)
    np.testing.assert_allclose(a.grad.asnumpy().astype(np.float32),
                               x32 / np.linalg.norm(x32, axis=1, keepdims=True), rtol=5e-3,
                               atol=1e-3)
    s = mx.sym.norm(mx.sym.var("d"), ord=1, out_dtype="float64")
    assert s.infer_type(d=np.float32)[1] == [np.float64]
