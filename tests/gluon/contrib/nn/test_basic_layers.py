"""gluon.contrib.nn: Concurrent/HybridConcurrent, Identity and PixelShuffle against numpy."""
import numpy as np
import pytest

import mxc as mx
from mxc.gluon import nn
from mxc.gluon.contrib import nn as cnn


def _shuffle_ref(x, factors):
    """out[n, c, d*f1+i, ...] = x[n, c*prod(f) + flat(i, j, ...), d, ...] (channels to space)."""
    n, cf = x.shape[:2]
    sp = x.shape[2:]
    k = len(factors)
    c = cf // int(np.prod(factors))
    y = x.reshape((n, c) + tuple(factors) + sp)
    # (n, c, f1..fk, s1..sk) -> (n, c, s1, f1, s2, f2, ...)
    order = [0, 1] + [a for i in range(k) for a in (2 + k + i, 2 + i)]
    y = y.transpose(order)
    return y.reshape((n, c) + tuple(s * f for s, f in zip(sp, factors)))


@pytest.mark.parametrize("cls,factor,shape", [
    (cnn.PixelShuffle1D, 3, (2, 6, 5)),
    (cnn.PixelShuffle2D, (2, 3), (2, 12, 4, 5)),
    (cnn.PixelShuffle3D, (2, 1, 2), (1, 8, 2, 3, 2)),
])
@pytest.mark.parametrize("hybrid", [False, True])
def test_pixel_shuffle_matches_numpy(cls, factor, shape, hybrid):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    block = cls(factor)
    if hybrid:
        block.hybridize()
    out = block(mx.nd.array(x)).asnumpy()
    factors = (factor,) if isinstance(factor, int) else factor
    np.testing.assert_array_equal(out, _shuffle_ref(x, factors))


def test_pixel_shuffle_rejects_bad_factors():
    with pytest.raises(ValueError, match="PixelShuffle2D"):
        cnn.PixelShuffle2D((2, 0))


@pytest.mark.parametrize("hybrid", [False, True])
def test_concurrent_concatenates_children_outputs(hybrid):
    cls = cnn.HybridConcurrent if hybrid else cnn.Concurrent
    block = cls(axis=1)
    with block.name_scope():
        block.add(nn.Dense(3, in_units=4), cnn.Identity(), nn.Dense(2, in_units=4))
    block.initialize(mx.init.Uniform())
    if hybrid:
        block.hybridize()
    x = mx.nd.array(np.random.default_rng(0).standard_normal((5, 4)))
    out = block(x).asnumpy()
    dense = [c for c in block._children.values() if isinstance(c, nn.Dense)]
    ref = [x.asnumpy() @ d.weight.data().asnumpy().T + d.bias.data().asnumpy() for d in dense]
    np.testing.assert_allclose(out, np.concatenate([ref[0], x.asnumpy(), ref[1]], axis=1),
                               rtol=1e-5, atol=1e-6)


def test_sync_batchnorm_on_one_device_is_batchnorm(rng):
    # forward, running statistics and input gradient equal nn.BatchNorm's on the same batch
    x = mx.nd.array(rng.standard_normal((4, 3, 5)))
    bn = mx.gluon.nn.BatchNorm(in_channels=3)
    sbn = mx.gluon.contrib.nn.SyncBatchNorm(in_channels=3, num_devices=1)
    bn.initialize()
    sbn.initialize()
    outs, grads = [], []
    for net in (bn, sbn):
        xi = x.copy()
        xi.attach_grad()
        with mx.autograd.record():
            y = net(xi)
            (y ** 2).sum().backward()
        outs.append(y.asnumpy())
        grads.append(xi.grad.asnumpy())
    xn = x.asnumpy()
    ref = (xn - xn.mean(axis=(0, 2), keepdims=True)) / np.sqrt(
        xn.var(axis=(0, 2), keepdims=True) + 1e-5)
    np.testing.assert_allclose(outs[1], ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(sbn.running_mean.data().asnumpy(),
                               0.1 * xn.mean(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    assert sbn.collect_params().keys() == {sbn.prefix + n for n in
                                           ("gamma", "beta", "running_mean", "running_var")}


def test_sparse_embedding_row_sparse_weight_and_grad():
    from mxc.gluon.contrib.nn import SparseEmbedding
    layer = SparseEmbedding(10, 4, weight_initializer=mx.init.Uniform(1.0))
    layer.initialize()
    trainer = mx.gluon.Trainer(layer.collect_params(), "sgd", {"learning_rate": 1.0})
    x = mx.nd.array([3, 4, 3, 0])
    before = layer.weight.row_sparse_data(mx.nd.arange(10)).asnumpy()
    with mx.autograd.record():
        y = layer(x)
        (y * 2).backward()
    np.testing.assert_allclose(y.asnumpy(), before[[3, 4, 3, 0]], rtol=1e-6)
    grad = layer.weight.grad()
    assert grad.stype == "row_sparse"
    expect = np.zeros((10, 4), np.float32)
    np.add.at(expect, [3, 4, 3, 0], 2.0)
    np.testing.assert_allclose(grad.asnumpy(), expect)
    trainer.step(1)
    after = layer.weight.row_sparse_data(mx.nd.arange(10)).asnumpy()
    np.testing.assert_allclose(after, before - expect, rtol=1e-5, atol=1e-6)
    assert repr(layer) == "SparseEmbedding(10 -> 4, float32)"
