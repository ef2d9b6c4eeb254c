"""softmax, log_softmax, softmin, SoftmaxActivation, SoftmaxOutput/Softmax: forward against numpy
(every float dtype, every axis, temperature, length masking, dtype override), gradients against
central differences, SoftmaxOutput's loss-layer gradient against MXNet's formula, and MXNet
1.9.1 goldens."""
import numpy as np
import pytest

import mxc as mx
from mxc.ops import registry

from .oputil import check_forward, check_grad
from .test_activation import check_golden, golden_cases

FLOATS = [np.float16, np.float32, np.float64]


def ref_softmax(x, axis=-1, t=1.0, log=False, neg=False, length=None):
    x = np.asarray(x, np.float64)
    v = (-x if neg else x) / t
    if length is not None:
        ax = axis % x.ndim
        idx = np.arange(x.shape[ax]).reshape([-1 if i == ax else 1 for i in range(x.ndim)])
        mask = idx < np.expand_dims(length, ax)
        v = np.where(mask, v, -np.inf)
    m = np.max(v, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(v - m)
    s = e.sum(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):      # fully masked rows
        out = (v - m) - np.log(s) if log else e / s
    if length is not None:
        out = np.where(mask, out, 0.0)
    return out


_OPS = {"softmax": {}, "log_softmax": {"log": True}, "softmin": {"neg": True}}


@pytest.mark.parametrize("name", sorted(_OPS))
@pytest.mark.parametrize("dtype", FLOATS)
def test_forward_axes(name, dtype, rng):
    x = rng.uniform(-4, 4, size=(3, 4, 5)).astype(dtype)
    for axis in (-1, 0, 1, 2):
        for t in (None, 2.0):
            kw = {"axis": axis} if t is None else {"axis": axis, "temperature": t}
            exp = ref_softmax(x, axis, t or 1.0, **_OPS[name]).astype(dtype)
            check_forward(name, [x], kw, exp)


@pytest.mark.parametrize("name", sorted(_OPS))
def test_grad(name, rng):
    x = rng.uniform(-2, 2, size=(2, 3, 4))
    check_grad(name, [x], {"axis": 1}, rng)
    check_grad(name, [x[0]], {"temperature": 0.7}, rng)


@pytest.mark.parametrize("src,dst", [(np.float16, "float32"), (np.float32, "float64"),
                                     (np.float64, "float16")])
def test_dtype_override(src, dst, rng):
    x = rng.uniform(-3, 3, size=(4, 6)).astype(src)
    check_forward("softmax", [x], {"dtype": dst}, ref_softmax(x).astype(dst))
    check_forward("log_softmax", [x], {"dtype": dst}, ref_softmax(x, log=True).astype(dst))
    check_grad("softmax", [x.astype(np.float64)], {"dtype": "float64"}, rng)


@pytest.mark.parametrize("ldtype", [np.int32, np.int64])
def test_length(ldtype, rng):
    x = rng.uniform(-3, 3, size=(3, 4, 5)).astype(np.float32)
    length = np.array([[1, 5, 0, 3], [5, 2, 4, 1], [0, 0, 5, 5]], ldtype)
    check_forward("softmax", [x, length], {"use_length": True},
                  ref_softmax(x, length=length).astype(np.float32))
    l1 = np.array([[2, 0, 3, 1, 2], [3, 3, 1, 0, 2], [1, 2, 3, 3, 3]], ldtype)
    check_forward("softmax", [x, l1], {"use_length": True, "axis": 1},
                  ref_softmax(x, axis=1, length=l1).astype(np.float32))
    # keyword form, as MXNet's softmax(data, length=...)
    y = mx.nd.softmax(mx.nd.array(x), length=mx.nd.array(length, dtype=ldtype), use_length=True)
    np.testing.assert_allclose(y.asnumpy(), ref_softmax(x, length=length), rtol=1e-5, atol=1e-7)
    check_grad("softmax", [x.astype(np.float64), length], {"use_length": True}, rng, wrt=[0])
    check_grad("softmax", [x.astype(np.float64), l1], {"use_length": True, "axis": 1,
                                                      "temperature": 1.5}, rng, wrt=[0])


def test_length_gradient_is_zero(rng):
    op = registry.get("softmax")
    x = mx.nd.array(rng.standard_normal((2, 3)))
    ln = mx.nd.array([1, 3], dtype=np.int32)
    y = mx.nd.softmax(x, ln, use_length=True)
    gx, gl = op.grad(mx.nd, op.parse({"use_length": True}), [x, ln], [y], [mx.nd.ones((2, 3))])
    assert gl.asnumpy().tolist() == [0, 0] and gl.dtype == np.int32


def test_large_rows_and_columns(rng):
    x = rng.standard_normal((64, 3000)).astype(np.float32)
    check_forward("softmax", [x], {}, ref_softmax(x).astype(np.float32))
    x = rng.standard_normal((8, 300, 50)).astype(np.float32)
    check_forward("log_softmax", [x], {"axis": 1}, ref_softmax(x, 1, log=True).astype(np.float32))


def test_extremes():
    x = np.array([[0.0, 1000.0, -1000.0], [-np.inf, 0.0, 1.0]], np.float32)
    check_forward("softmax", [x], {}, ref_softmax(x).astype(np.float32))
    assert mx.nd.softmax(mx.nd.zeros((2, 0))).shape == (2, 0)


def test_errors():
    x = mx.nd.ones((2, 3))
    with pytest.raises(ValueError, match="softmax.*axis"):
        mx.nd.softmax(x, axis=2)
    with pytest.raises(ValueError, match="softmax.*length"):
        mx.nd.softmax(x, use_length=True)
    with pytest.raises(ValueError, match="softmax.*int32 or int64"):
        mx.nd.softmax(x, mx.nd.ones((2,)), use_length=True)
    with pytest.raises(ValueError, match="softmax.*length has shape"):
        mx.nd.softmax(x, mx.nd.ones((3,), dtype="int32"), use_length=True)
    with pytest.raises(ValueError, match="log_softmax.*use_length"):
        mx.nd.log_softmax(x, use_length=True)
    with pytest.raises(ValueError, match="softmax.*float"):
        mx.nd.softmax(mx.nd.ones((2, 3), dtype="int32"))
    with pytest.raises(ValueError, match="softmax.*dtype"):
        mx.nd.softmax(x, dtype="int32")


# ---- SoftmaxActivation -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_activation(dtype, rng):
    x = rng.uniform(-3, 3, size=(2, 3, 4)).astype(dtype)
    check_forward("SoftmaxActivation", [x], {}, ref_softmax(x, -1).astype(dtype))
    check_forward("SoftmaxActivation", [x], {"mode": "channel"}, ref_softmax(x, 1).astype(dtype))
    check_grad("SoftmaxActivation", [rng.standard_normal((2, 3, 2))], {"mode": "channel"}, rng)
    check_grad("SoftmaxActivation", [rng.standard_normal((3, 4))], {}, rng)
    with pytest.raises(ValueError, match="SoftmaxActivation.*3 dimensions"):
        mx.nd.SoftmaxActivation(mx.nd.ones((2, 3)), mode="channel")


# ---- SoftmaxOutput ---------------------------------------------------------------------------
def _so_grad(x, label, **kw):
    op = registry.get("SoftmaxOutput")
    nd_x, nd_l = mx.nd.array(x), mx.nd.array(label)
    y = mx.nd.SoftmaxOutput(nd_x, nd_l, **kw)
    g = op.grad(mx.nd, op.parse(kw), [nd_x, nd_l], [y], [mx.nd.ones(y.shape) * 7])
    return y.asnumpy(), g[0].asnumpy(), g[1].asnumpy()


def test_softmax_output_forward_views(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    flat = ref_softmax(x.reshape(2, 12)).reshape(2, 3, 4)
    check_forward("SoftmaxOutput", [x, np.zeros((2, 3), np.float32)], {}, flat.astype(np.float32))
    check_forward("Softmax", [x, np.zeros((2, 3), np.float32)], {"preserve_shape": True},
                  ref_softmax(x).astype(np.float32))
    check_forward("SoftmaxOutput", [x, np.zeros((2, 4), np.float32)], {"multi_output": True},
                  ref_softmax(x, 1).astype(np.float32))


def test_softmax_output_grad_rules(rng):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    lab = np.array([1, 0, 1, 3, 2], np.float32)
    p = ref_softmax(x)
    onehot = np.eye(4)[lab.astype(int)]
    _, g, gl = _so_grad(x, lab)                  # the head gradient (7) is ignored
    np.testing.assert_allclose(g, p - onehot, rtol=1e-5, atol=1e-6)
    assert not gl.any()
    _, g, _ = _so_grad(x, lab, use_ignore=True, ignore_label=1, normalization="valid",
                       grad_scale=3.0)
    exp = (p - onehot) * 3.0 / 3
    exp[lab == 1] = 0
    np.testing.assert_allclose(g, exp, rtol=1e-5, atol=1e-6)
    _, g, _ = _so_grad(x, lab, smooth_alpha=0.3, normalization="batch")
    sm = np.where(onehot > 0, 1 - 0.3, 0.3 / 3)
    np.testing.assert_allclose(g, (p - sm) / 5, rtol=1e-5, atol=1e-6)
    _, g, _ = _so_grad(x, lab, out_grad=True)     # MXNet multiplies by the output itself
    np.testing.assert_allclose(g, (p - onehot) * p, rtol=1e-5, atol=1e-6)


def test_softmax_output_multi_grad(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    lab = rng.integers(0, 3, size=(2, 4)).astype(np.float32)
    p = ref_softmax(x, 1)
    onehot = np.eye(3)[lab.astype(int)].transpose(0, 2, 1)
    _, g, _ = _so_grad(x, lab, multi_output=True)
    np.testing.assert_allclose(g, (p - onehot) / 4, rtol=1e-5, atol=1e-6)   # / spatial size


def test_softmax_output_errors():
    x = mx.nd.ones((2, 3))
    with pytest.raises(ValueError, match="SoftmaxOutput.*label shape"):
        mx.nd.SoftmaxOutput(x, mx.nd.ones((3,)))
    with pytest.raises(ValueError, match="SoftmaxOutput.*label dtype"):
        mx.nd.SoftmaxOutput(x, mx.nd.ones((2,), dtype="int32"))
    with pytest.raises(ValueError, match="SoftmaxOutput.*normalization"):
        mx.nd.SoftmaxOutput(x, mx.nd.ones((2,)), normalization="mean")


def test_backward_ops_direct(rng):
    y = mx.nd.softmax(mx.nd.array(rng.standard_normal((2, 3))))
    g = mx.nd.ones((2, 3))
    assert np.abs(mx.nd._backward_softmax(g, y).asnumpy()).max() < 1e-6
    assert mx.nd._backward_log_softmax(g, mx.nd.log(y)).shape == (2, 3)
    assert mx.nd._backward_softmin(g, y).shape == (2, 3)
    assert mx.nd._backward_SoftmaxActivation(g, y).shape == (2, 3)
    d = mx.nd._backward_SoftmaxOutput(y, mx.nd.array([0, 2]))
    assert d.shape == (2, 3)


@pytest.mark.parametrize("name", golden_cases({"softmax", "log_softmax", "softmin",
                                               "SoftmaxActivation", "SoftmaxOutput", "Softmax"}))
def test_golden(name):
    check_golden(name)


def test_softmax_length_dtype_checked_when_run():
    """Shape and type inference accept any length dtype (as MXNet); running with a float length
    raises MXNetError; an int32 length works through bind."""
    s = mx.sym.softmax(mx.sym.var("d"), mx.sym.var("l"), use_length=True, axis=1)
    assert s.infer_shape(d=(2, 3, 4), l=(2, 4))[1] == [(2, 3, 4)]
    x = np.random.rand(2, 3, 4).astype(np.float32)
    ln = np.array([[1, 2, 3, 3], [3, 1, 2, 2]], np.int32)
    ex = s.bind(mx.current_context(),
                {"d": mx.nd.array(x), "l": mx.nd.array(ln, dtype="int32")})
    out = ex.forward()[0].asnumpy()
    for i in range(2):
        for j in range(4):
            n = ln[i, j]
            e = np.exp(x[i, :n, j] - x[i, :n, j].max())
            np.testing.assert_allclose(out[i, :n, j], e / e.sum(), rtol=1e-5)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.softmax(mx.nd.array(x), mx.nd.array(ln), use_length=True, axis=1)
