"""Loss and output operators: regression outputs, smooth_l1, softmax_cross_entropy, BlockGrad,
make_loss, MakeLoss, L2Normalization, LRN -- forward against numpy, gradients against central
differences (or MXNet's loss-layer rule), MXNet 1.9.1 goldens."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ops import registry

from .oputil import check_forward, check_grad
from .test_activation import check_golden, golden_cases

FLOATS = [np.float16, np.float32, np.float64]


def _grad(opname, inputs, kw, head=None):
    op = registry.get(opname)
    nd = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    res = getattr(mx.nd, opname)(*nd, **kw)
    outs = res if isinstance(res, list) else [res]
    heads = [mx.nd.array(head if head is not None else np.full(o.shape, 5.0), dtype=o.dtype)
             for o in outs]
    return outs, op.grad(mx.nd, op.parse(kw), nd, outs, heads)


@pytest.mark.parametrize("dtype", FLOATS)
def test_regression_outputs(dtype, rng):
    x = rng.standard_normal((4, 3)).astype(dtype)
    lab = rng.standard_normal((4, 3)).astype(dtype)
    check_forward("LinearRegressionOutput", [x, lab], {}, x)
    check_forward("MAERegressionOutput", [x, lab], {}, x)
    check_forward("LogisticRegressionOutput", [x, lab], {},
                  (1 / (1 + np.exp(-x.astype(np.float64)))).astype(dtype))
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-6)
    (y,), (g, gl) = _grad("LinearRegressionOutput", [x, lab], {"grad_scale": 3.0})
    np.testing.assert_allclose(g.asnumpy(), (x - lab) * 3.0 / 3, **tol)   # head ignored, / m
    assert not gl.asnumpy().any()
    (y,), (g, _) = _grad("MAERegressionOutput", [x, lab], {})
    np.testing.assert_allclose(g.asnumpy(), np.sign(x - lab) / 3, **tol)
    (y,), (g, _) = _grad("LogisticRegressionOutput", [x, lab], {})
    np.testing.assert_allclose(g.asnumpy(), (y.asnumpy() - lab) / 3, **tol)


def test_regression_label_shapes():
    x = mx.nd.ones((4, 1))
    assert mx.nd.LinearRegressionOutput(x, mx.nd.ones((4,))).shape == (4, 1)
    with pytest.raises(ValueError, match="LinearRegressionOutput.*label shape"):
        mx.nd.LinearRegressionOutput(mx.nd.ones((4, 3)), mx.nd.ones((3, 4)))
    with pytest.raises(ValueError, match="LogisticRegressionOutput.*dtype"):
        mx.nd.LogisticRegressionOutput(mx.nd.ones((4, 3)), mx.nd.ones((4, 3), dtype="float64"))


def _sl1(x, s):
    b = s * s
    return np.where(x > 1 / b, x - 0.5 / b, np.where(x < -1 / b, -x - 0.5 / b, 0.5 * b * x * x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_smooth_l1(dtype, rng):
    x = rng.uniform(-3, 3, size=(3, 7)).astype(dtype)
    for s in (1.0, 2.0, 0.5):
        check_forward("smooth_l1", [x], {"scalar": s}, _sl1(x.astype(np.float64), s).astype(dtype))
    xg = rng.uniform(-3, 3, size=(2, 5))
    xg[np.abs(np.abs(xg) - 0.25) < 0.02] = 0.1
    check_grad("smooth_l1", [xg], {"scalar": 2.0}, rng)


def test_softmax_cross_entropy(rng):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    lab = np.array([0, 4, 2, 2], np.float32)
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    check_forward("softmax_cross_entropy", [x, lab], {},
                  np.array([-np.log(p[np.arange(4), lab.astype(int)]).sum()], np.float32))
    check_grad("softmax_cross_entropy", [rng.standard_normal((3, 4)), np.array([1., 0., 3.])], {},
               rng, wrt=[0])
    with pytest.raises(MXNetError, match="softmax_cross_entropy.*label"):
        mx.nd.softmax_cross_entropy(mx.nd.array(x), mx.nd.array([0, 5, 1, 1])).asnumpy()
    with pytest.raises(ValueError, match="softmax_cross_entropy.*2-D"):
        mx.nd.softmax_cross_entropy(mx.nd.ones((2, 3, 4)), mx.nd.ones((2,)))


@pytest.mark.parametrize("name", ["BlockGrad", "stop_gradient", "make_loss", "MakeLoss"])
def test_identity_losses(name, rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    check_forward(name, [x], {}, x)
    _, (g,) = _grad(name, [x], {})
    want = 0.0 if name in ("BlockGrad", "stop_gradient") else 1.0
    np.testing.assert_array_equal(g.asnumpy(), np.full(x.shape, want, np.float32))


def test_makeloss_normalization(rng):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    _, (g,) = _grad("MakeLoss", [x], {"grad_scale": 2.0, "normalization": "batch"})
    np.testing.assert_allclose(g.asnumpy(), np.full(x.shape, 0.5), rtol=1e-6)
    _, (g,) = _grad("MakeLoss", [x], {"normalization": "valid", "valid_thresh": 0.2})
    np.testing.assert_allclose(g.asnumpy(), np.full(x.shape, 1.0 / max(1, (x > 0.2).sum())),
                               rtol=1e-6)
    _, (g,) = _grad("MakeLoss", [-np.abs(x)], {"normalization": "valid"})
    np.testing.assert_allclose(g.asnumpy(), np.ones(x.shape), rtol=1e-6)


def _l2(x, mode, eps):
    axes = {"instance": tuple(range(1, x.ndim)), "channel": (1,),
            "spatial": tuple(range(2, x.ndim))}[mode]
    return x / np.sqrt((x.astype(np.float64) ** 2).sum(axis=axes, keepdims=True) + eps)


@pytest.mark.parametrize("mode", ["instance", "channel", "spatial"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_l2_normalization(mode, dtype, rng):
    x = rng.standard_normal((2, 3, 2, 2)).astype(dtype)
    check_forward("L2Normalization", [x], {"mode": mode, "eps": 1e-3},
                  _l2(x, mode, np.float32(1e-3)).astype(dtype))
    check_grad("L2Normalization", [rng.standard_normal((2, 3, 2))], {"mode": mode}, rng)
    if mode != "instance":
        with pytest.raises(ValueError, match="L2Normalization.*3 dimensions"):
            mx.nd.L2Normalization(mx.nd.ones((2, 3)), mode=mode)


def _lrn(x, nsize, alpha=1e-4, beta=0.75, knorm=2.0):
    # MXNet's LRN parameters are float32
    alpha, beta, knorm = (float(np.float32(v)) for v in (alpha, beta, knorm))
    x = x.astype(np.float64)
    h = nsize // 2
    sq = x ** 2
    n = np.zeros_like(x)
    for c in range(x.shape[1]):
        n[:, c] = sq[:, max(0, c - h):c + h + 1].sum(axis=1)
    return x * (knorm + alpha / nsize * n) ** -beta


@pytest.mark.parametrize("dtype", FLOATS)
def test_lrn(dtype, rng):
    x = rng.standard_normal((2, 6, 3, 3)).astype(dtype)
    for nsize in (1, 3, 5):
        check_forward("LRN", [x], {"nsize": nsize, "alpha": 0.05, "beta": 0.6, "knorm": 1.2},
                      _lrn(x, nsize, 0.05, 0.6, 1.2).astype(dtype))
    check_grad("LRN", [rng.standard_normal((2, 5, 3))], {"nsize": 3, "alpha": 0.5}, rng)
    with pytest.raises(ValueError, match="LRN.*nsize"):
        mx.nd.LRN(mx.nd.ones((1, 3, 2, 2)), nsize=2)
    with pytest.raises(ValueError, match="LRN.*nsize"):
        mx.nd.LRN(mx.nd.ones((1, 3, 2, 2)))


def test_lrn_large_parallel(rng):
    x = rng.standard_normal((4, 32, 20, 20)).astype(np.float32)
    np.testing.assert_allclose(mx.nd.LRN(mx.nd.array(x), nsize=5).asnumpy(), _lrn(x, 5),
                               rtol=1e-5, atol=1e-6)
    g = rng.standard_normal(x.shape).astype(np.float32)
    d = mx.nd._backward_LRN(mx.nd.array(g), mx.nd.array(x), nsize=5).asnumpy()
    d1 = mx.nd._backward_LRN(mx.nd.array(g[:1]), mx.nd.array(x[:1]), nsize=5).asnumpy()
    np.testing.assert_allclose(d[:1], d1, rtol=1e-6)
    assert mx.nd._backward_smooth_l1(mx.nd.array(g), mx.nd.array(x)).shape == x.shape


@pytest.mark.parametrize("name", golden_cases({
    "LinearRegressionOutput", "MAERegressionOutput", "LogisticRegressionOutput", "smooth_l1",
    "softmax_cross_entropy", "BlockGrad", "stop_gradient", "make_loss", "MakeLoss",
    "L2Normalization", "LRN"}))
def test_golden(name):
    check_golden(name)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_softmax_ce_rows(dtype, rng):
    """Gluon's fused SoftmaxCrossEntropyLoss: -log_softmax per row at the clipped label, and
    out_grad * (softmax - onehot)."""
    x = rng.standard_normal((6, 5)).astype(dtype)
    lab = np.array([0, 4, 2, 7, -1, 3.7], dtype)           # 7 and -1 clip, 3.7 truncates
    k = np.clip(np.trunc(lab.astype(np.float64)).astype(int), 0, 4)
    x64 = x.astype(np.float64)
    logp = x64 - x64.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    tol = 2e-3 if dtype == np.float16 else 1e-6
    got = mx.nd._softmax_ce_rows(mx.nd.array(x, dtype=dtype), mx.nd.array(lab, dtype=dtype))
    assert got.shape == (6,) and got.dtype == dtype
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), -logp[np.arange(6), k],
                               rtol=tol, atol=tol)
    g = rng.standard_normal(6).astype(dtype)
    dx = mx.nd._backward_softmax_ce_rows(mx.nd.array(g, dtype=dtype), mx.nd.array(x, dtype=dtype),
                                         mx.nd.array(lab, dtype=dtype))
    want = np.exp(logp)
    want[np.arange(6), k] -= 1
    want *= g.astype(np.float64)[:, None]
    np.testing.assert_allclose(dx.asnumpy().astype(np.float64), want, rtol=tol, atol=tol)
    if dtype == np.float64:
        check_grad("_softmax_ce_rows", [rng.standard_normal((3, 4)), np.array([1., 0., 3.])], {},
                   rng, wrt=[0])


def test_softmax_ce_rows_errors():
    with pytest.raises(ValueError, match="_softmax_ce_rows.*2-D"):
        mx.nd._softmax_ce_rows(mx.nd.ones((2, 3, 4)), mx.nd.ones((2,)))
    with pytest.raises(ValueError, match="_softmax_ce_rows.*one class per row"):
        mx.nd._softmax_ce_rows(mx.nd.ones((2, 3)), mx.nd.ones((3,)))
    with pytest.raises(ValueError, match="_softmax_ce_rows.*dtype"):
        mx.nd._softmax_ce_rows(mx.nd.ones((2, 3)), mx.nd.ones((2,), dtype="float64"))
