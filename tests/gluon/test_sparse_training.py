"""Training with row_sparse gradients and weights through Gluon: an Embedding(sparse_grad=True)
trained by gluon.Trainer with lazy SGD and Adam against a numpy implementation of MXNet's lazy
updates (rows a batch does not look up never move), row_sparse Parameters pulled with
row_sparse_data, and the local KVStore's row_sparse_pull."""
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc import gluon

V, D = 40, 5


def _batches(rng, n):
    # each batch looks up a handful of rows (with repeats); rows 30.. are never used
    return [rng.integers(0, 30, size=(4, 3)).astype(np.float32) for _ in range(n)]


def _grad_np(data, coef):
    # d/dW of sum(Embedding(data, W) * coef): coef rows added at the looked-up ids
    g = np.zeros((V, D), np.float32)
    np.add.at(g, data.astype(np.int64).reshape(-1), coef.reshape(-1, D))
    return g, np.unique(data.astype(np.int64))


def _train(opt, opt_args, w0, batches, coefs, sparse_grad=True):
    net = gluon.nn.Embedding(V, D, sparse_grad=sparse_grad)
    net.initialize()
    net.weight.set_data(mx.nd.array(w0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = gluon.Trainer(net.collect_params(), opt, opt_args)
    for data, coef in zip(batches, coefs):
        with mx.autograd.record():
            loss = (net(mx.nd.array(data)) * mx.nd.array(coef)).sum()
        loss.backward()
        if sparse_grad:
            g = net.weight.grad()
            assert g.stype == "row_sparse"
            assert g.indices.asnumpy().tolist() == np.unique(data.astype(int)).tolist()
        tr.step(1)
    return net.weight.data().asnumpy()


def test_embedding_lazy_sgd_matches_reference(rng):
    w0 = rng.standard_normal((V, D)).astype(np.float32)
    batches = _batches(rng, 4)
    coefs = [rng.standard_normal(b.shape + (D,)).astype(np.float32) for b in batches]
    lr, wd, mom = 0.1, 0.05, 0.9
    got = _train("sgd", {"learning_rate": lr, "wd": wd, "momentum": mom}, w0, batches, coefs)
    w, m = w0.astype(np.float64), np.zeros((V, D))
    for data, coef in zip(batches, coefs):
        g, rows = _grad_np(data, coef)
        m[rows] = mom * m[rows] - lr * wd * w[rows] - lr * g[rows]
        w[rows] += m[rows]
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[30:], w0[30:])        # never looked up: bit-identical


def test_embedding_lazy_sgd_equals_dense_training(rng):
    # without weight decay and momentum, lazy and dense SGD agree on every row
    w0 = rng.standard_normal((V, D)).astype(np.float32)
    batches = _batches(rng, 3)
    coefs = [rng.standard_normal(b.shape + (D,)).astype(np.float32) for b in batches]
    sparse = _train("sgd", {"learning_rate": 0.2}, w0, batches, coefs, sparse_grad=True)
    dense = _train("sgd", {"learning_rate": 0.2}, w0, batches, coefs, sparse_grad=False)
    np.testing.assert_allclose(sparse, dense, rtol=1e-6, atol=1e-6)


def test_embedding_lazy_adam_matches_reference(rng):
    w0 = rng.standard_normal((V, D)).astype(np.float32)
    batches = _batches(rng, 4)
    coefs = [rng.standard_normal(b.shape + (D,)).astype(np.float32) for b in batches]
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.999, 1e-8, 0.01
    got = _train("adam", {"learning_rate": lr, "wd": wd}, w0, batches, coefs)
    w, m, v = w0.astype(np.float64), np.zeros((V, D)), np.zeros((V, D))
    for t, (data, coef) in enumerate(zip(batches, coefs), 1):
        g, rows = _grad_np(data, coef)
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        gr = g[rows] + wd * w[rows]
        m[rows] = b1 * m[rows] + (1 - b1) * gr
        v[rows] = b2 * v[rows] + (1 - b2) * gr * gr
        w[rows] -= lr_t * m[rows] / (np.sqrt(v[rows]) + eps)
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[30:], w0[30:])
    # rows used early but not in the last batch were not moved by the last step (lazy), which
    # a dense Adam would do (their moments are non-zero)
    dense = _train("adam", {"learning_rate": lr, "wd": wd, "lazy_update": False}, w0, batches,
                   coefs, sparse_grad=False)
    last = set(np.unique(batches[-1].astype(int)))
    earlier = sorted(set(np.unique(np.concatenate(batches[:-1]).astype(int))) - last)
    assert earlier and not np.allclose(dense[earlier], got[earlier])


def test_row_sparse_parameter_with_trainer():
    p = gluon.Parameter("weight", shape=(10, 3), stype="row_sparse", grad_stype="row_sparse")
    p.initialize(init=mx.init.Constant(1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = gluon.Trainer([p], "sgd", {"learning_rate": 0.5})
    rid = mx.nd.array([1, 3, 3])
    w = p.row_sparse_data(rid)
    assert w.stype == "row_sparse" and w.indices.asnumpy().tolist() == [1, 3]
    with pytest.raises(RuntimeError, match="row_sparse"):
        p.data()
    with mx.autograd.record():
        y = mx.nd.contrib.SparseEmbedding(rid, w, input_dim=10, output_dim=3)
    y.backward()
    assert p.grad().stype == "row_sparse"
    tr.step(1)
    full = p.row_sparse_data(mx.nd.arange(10)).asnumpy()
    ref = np.ones((10, 3), np.float32)
    ref[1] -= 0.5
    ref[3] -= 1.0
    np.testing.assert_array_equal(full, ref)


def test_kvstore_row_sparse_pull():
    kv = mx.kv.create("local")
    vals = np.arange(12, dtype=np.float32).reshape(4, 3)
    kv.init("w", mx.nd.sparse.row_sparse_array((vals, [0, 2, 5, 7]), shape=(8, 3)))
    out = mx.nd.sparse.zeros("row_sparse", (8, 3))
    kv.row_sparse_pull("w", out=out, row_ids=mx.nd.array([7, 2, 2, 4]))
    assert out.indices.asnumpy().tolist() == [2, 4, 7]
    ref = np.zeros((8, 3), np.float32)
    ref[2], ref[7] = vals[1], vals[3]
    np.testing.assert_array_equal(out.asnumpy(), ref)
    with pytest.raises(mx.base.MXNetError, match="row_sparse"):
        kv.row_sparse_pull("w", out=mx.nd.zeros((8, 3)), row_ids=mx.nd.array([1]))
