"""CUDA graphs on a real GPU (skipped without one, see conftest.py): an MLP hybridized with
static_alloc and static_shape trains under MXNET_ENABLE_CUDA_GRAPHS=1 exactly as without (same
losses and parameters after several SGD steps: a replay runs the same kernels on the same
arrays), and its forward and backward did run as graphs (tests/executor/test_cuda_graphs.py
checks capture and replay on the fake driver)."""
import numpy as np

import mxc as mx
from mxc import autograd, gluon


def _train(graphs, monkeypatch, steps=5):
    monkeypatch.setenv("MXNET_ENABLE_CUDA_GRAPHS", "1" if graphs else "0")
    ctx = mx.gpu(0)
    mx.random.seed(3)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(64, activation="relu"), gluon.nn.Dense(32, activation="tanh"),
            gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier(), ctx=ctx)
    net.hybridize(static_alloc=True, static_shape=True)
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(steps):
        x = mx.nd.array(rng.standard_normal((16, 20)).astype(np.float32), ctx=ctx)
        y = mx.nd.array(rng.integers(0, 10, 16).astype(np.float32), ctx=ctx)
        with autograd.record():
            L = loss_fn(net(x), y)
        L.backward()
        tr.step(16)
        losses.append(float(L.mean().asscalar()))
    graphed = [st for st in net._cached_op._statics.values()
               if st.fwd.graphs is not None and st.fwd.graphs.segs]
    return losses, [p.data().asnumpy() for p in net.collect_params().values()], graphed


def test_an_mlp_trains_the_same_with_cuda_graphs(monkeypatch):
    l0, p0, g0 = _train(False, monkeypatch)
    l1, p1, g1 = _train(True, monkeypatch)
    assert not g0 and g1, "the forward did not run as a CUDA graph"
    assert g1[0].bwd is not None and g1[0].bwd.graphs.segs, "the backward did not"
    np.testing.assert_allclose(l1, l0, rtol=1e-5, atol=1e-6)
    for a, b in zip(p1, p0):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
