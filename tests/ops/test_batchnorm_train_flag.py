"""BatchNorm's backward follows the forward's training flag: a forward recorded with
record(train_mode=False) differentiates the inference formula (moving statistics) and leaves
the moving statistics alone, whatever backward's train_mode; against numerical gradients and
MXNet 1.9.1 (tests/data/amp/batchnorm_backward.npz, made by tests/data/make_amp_golden.py)."""
import os

import numpy as np
import pytest

import mxc as mx

FIX = os.path.join(os.path.dirname(__file__), "..", "data", "amp", "batchnorm_backward.npz")
Z = np.load(FIX) if os.path.exists(FIX) else None


def _run(z, rec_train, bw_train, dtype="float32", hybrid=False):
    xs = [mx.nd.array(z[k], dtype=dtype) for k in ("x", "gamma", "beta")]
    for v in xs:
        v.attach_grad()
    mm, mv = mx.nd.array(z["mm"], dtype=dtype), mx.nd.array(z["mv"], dtype=dtype)
    with mx.autograd.record(train_mode=rec_train):
        y = mx.nd.BatchNorm(*xs, mm, mv, fix_gamma=False, eps=1e-3, momentum=0.9)
    y.backward(mx.nd.array(z["dy"], dtype=dtype), train_mode=bw_train)
    return y, [v.grad.asnumpy() for v in xs], mm.asnumpy(), mv.asnumpy()


@pytest.mark.skipif(Z is None, reason="batchnorm_backward.npz missing")
@pytest.mark.parametrize("bw_train", [True, False])
def test_inference_forward_gives_inference_gradient(bw_train):
    y, (dx, dg, db), mm, mv = _run(Z, False, bw_train)
    np.testing.assert_allclose(y.asnumpy(), Z["infer_y"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dx, Z["infer_dx"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dg, Z["infer_dgamma"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db, Z["infer_dbeta"], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mm, Z["mm"])
    np.testing.assert_array_equal(mv, Z["mv"])


@pytest.mark.skipif(Z is None, reason="batchnorm_backward.npz missing")
def test_training_forward_matches_mxnet():
    y, (dx, dg, db), mm, mv = _run(Z, True, True)
    np.testing.assert_allclose(dx, Z["train_dx"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dg, Z["train_dgamma"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db, Z["train_dbeta"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mm, Z["train_mm"], rtol=1e-6)
    np.testing.assert_allclose(mv, Z["train_mv"], rtol=1e-6)


def test_inference_gradient_vs_numerical(rng):
    z = {"x": rng.standard_normal((3, 2, 4)), "gamma": rng.random(2) + 0.5,
         "beta": rng.random(2), "mm": rng.random(2), "mv": rng.random(2) + 0.5,
         "dy": rng.standard_normal((3, 2, 4))}
    _, grads, mm, mv = _run(z, False, True, dtype="float64")
    eps = float(np.float32(1e-3))

    def f(x, g, b):
        xh = (x - z["mm"][None, :, None]) / np.sqrt(z["mv"][None, :, None] + eps)
        return np.sum((xh * g[None, :, None] + b[None, :, None]) * z["dy"])
    base = [z["x"], z["gamma"], z["beta"]]
    for k, grad in enumerate(grads):
        num = np.zeros_like(base[k])
        for i in np.ndindex(base[k].shape):
            hi = [a.copy() for a in base]
            lo = [a.copy() for a in base]
            hi[k][i] += 1e-6
            lo[k][i] -= 1e-6
            num[i] = (f(*hi) - f(*lo)) / 2e-6
        np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(mm, z["mm"])
    np.testing.assert_array_equal(mv, z["mv"])


def test_hybridized_block_in_predict_mode(rng):
    net = mx.gluon.nn.BatchNorm(in_channels=2)
    net.initialize()
    net.hybridize()
    x = mx.nd.array(rng.standard_normal((4, 2, 3)))
    x.attach_grad()
    net(x)      # build the graph
    mm0 = net.running_mean.data().asnumpy().copy()
    with mx.autograd.record(train_mode=False):
        y = net(x)
    y.backward()
    inv = 1 / np.sqrt(net.running_var.data().asnumpy() + 1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), np.broadcast_to(inv[None, :, None], (4, 2, 3)),
                               rtol=1e-5)
    np.testing.assert_array_equal(net.running_mean.data().asnumpy(), mm0)
