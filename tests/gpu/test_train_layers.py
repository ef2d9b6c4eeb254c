"""A small convolutional network trains on gpu(0) as on the CPU (skipped without a GPU, see
conftest.py): Conv2D, BatchNorm, ReLU, max and average Pooling, Dropout off, Dense and
SoftmaxCrossEntropyLoss, three SGD steps from the same parameters on both devices, then the
losses and every parameter (and BatchNorm's moving statistics) agree."""
import numpy as np

import mxc as mx
from mxc import autograd, gluon


def _net():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(8, 3, padding=1), gluon.nn.BatchNorm(), gluon.nn.Activation("relu"),
            gluon.nn.MaxPool2D(2), gluon.nn.Conv2D(8, 3, padding=1, groups=2),
            gluon.nn.LayerNorm(axis=1), gluon.nn.GlobalAvgPool2D(), gluon.nn.Dense(5))
    return net


def _train(ctx, params, x, y, steps=3):
    net = _net()
    net.initialize(ctx=ctx)
    net(mx.nd.array(x[:1], ctx=ctx))
    for p, v in zip(net.collect_params().values(), params):   # same order in every instance
        p.set_data(mx.nd.array(v, ctx=ctx))
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    d, lab = mx.nd.array(x, ctx=ctx), mx.nd.array(y, ctx=ctx)
    losses = []
    for _ in range(steps):
        with autograd.record():
            L = loss_fn(net(d), lab)
        L.backward()
        tr.step(len(x))
        losses.append(float(L.mean().asscalar()))
    return losses, [v.data().asnumpy() for v in net.collect_params().values()]


def test_a_small_convnet_trains_on_the_gpu_as_on_the_cpu():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 3, 8, 8)).astype(np.float32)
    y = rng.integers(0, 5, 6).astype(np.float32)
    ref = _net()
    ref.initialize(mx.init.Xavier())
    ref(mx.nd.array(x[:1]))
    params = [v.data().asnumpy() for v in ref.collect_params().values()]
    lc, pc = _train(mx.cpu(), params, x, y)
    lg, pg = _train(mx.gpu(0), params, x, y)
    np.testing.assert_allclose(lg, lc, rtol=1e-4, atol=1e-5)
    assert lc[-1] < lc[0]
    for i, (g, c) in enumerate(zip(pg, pc)):
        np.testing.assert_allclose(g, c, rtol=1e-3, atol=1e-4, err_msg=str(i))
