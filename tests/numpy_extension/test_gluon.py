"""Gluon on mx.np arrays (numpy array semantics): parameters, blocks, hybridize, Trainer, losses,
save/load and export under npx.set_np(), checked against the same computation on mx.nd arrays."""
import json

import numpy as onp
import pytest

import mxc as mx
from mxc import autograd, gluon, npx, util
from mxc.gluon import nn
from mxc.numpy.multiarray import ndarray as np_ndarray, array as np_array


def _mlp(seed):
    mx.random.seed(seed)
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(8, activation="relu"), nn.BatchNorm(), nn.Dropout(0.3), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net


def _train(np_mode, hybrid, X, Y):
    if np_mode:
        util.set_np()
    try:
        net = _mlp(7)
        if hybrid:
            net.hybridize()
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        trainer = gluon.Trainer(net.collect_params(), "sgd",
                                {"learning_rate": 0.1, "momentum": 0.9})
        make = (lambda a: np_array(a)) if np_mode else mx.nd.array
        mx.random.seed(3)                  # same dropout masks in both runs
        for _ in range(4):
            x, y = make(X), make(Y)
            with autograd.record():
                out = net(x)
                loss = loss_fn(out, y)
            loss.backward()
            trainer.step(X.shape[0])
        kind = np_ndarray if np_mode else mx.nd.NDArray
        for v in (out, loss, net[0].weight.data(), net[0].weight.grad(),
                  net[1].running_mean.data()):
            assert type(v) is kind, type(v)
        return net(make(X)).asnumpy(), loss.asnumpy(), net[3].weight.data().asnumpy()
    finally:
        util.reset_np()


@pytest.mark.parametrize("hybrid", [False, True])
def test_mlp_training_on_np_equals_nd(hybrid, rng):
    X = rng.normal(size=(16, 5)).astype("float32")
    Y = rng.integers(0, 3, (16,)).astype("float32")
    got = _train(True, hybrid, X, Y)
    want = _train(False, hybrid, X, Y)
    for g, w in zip(got, want):
        onp.testing.assert_array_equal(g, w)


class _UserBlock(nn.HybridBlock):
    """numpy-style code: F.np / F.npx and broadcasting arithmetic."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.w = self.params.get("w", shape=(4, 3))
            self.b = self.params.get("b", shape=(3,), init="ones")

    def hybrid_forward(self, F, x, w, b):
        h = F.npx.relu(F.np.dot(x, w) + b)
        return h * 2 - F.np.mean(x, axis=1, keepdims=True)


def _ref(xv, wv, bv):
    return onp.maximum(xv @ wv + bv, 0) * 2 - xv.mean(axis=1, keepdims=True)


def test_user_block_imperative_and_hybridized(np_mode, rng):
    blk = _UserBlock()
    blk.initialize()
    xv = rng.normal(size=(5, 4)).astype("float32")
    x = np_array(xv)
    x.attach_grad()
    with autograd.record():
        y1 = blk(x)
    y1.backward()
    assert type(y1) is np_ndarray
    wv, bv = blk.w.data().asnumpy(), blk.b.data().asnumpy()
    onp.testing.assert_allclose(y1.asnumpy(), _ref(xv, wv, bv), rtol=1e-5, atol=1e-6)
    mask = (xv @ wv + bv > 0).astype("float32")
    onp.testing.assert_allclose(blk.w.grad().asnumpy(), xv.T @ (2 * mask), rtol=1e-5,
                                atol=1e-5)
    gx, gw = x.grad.asnumpy().copy(), blk.w.grad().asnumpy().copy()
    blk.hybridize()
    with autograd.record():
        y2 = blk(x)
    y2.backward()
    assert type(y2) is np_ndarray
    onp.testing.assert_array_equal(y2.asnumpy(), y1.asnumpy())
    onp.testing.assert_allclose(x.grad.asnumpy(), gx, rtol=1e-6, atol=1e-6)
    onp.testing.assert_allclose(blk.w.grad().asnumpy(), gw, rtol=1e-6, atol=1e-6)


def test_save_load_export_imports(np_mode, tmp_path, rng):
    blk = _UserBlock()
    blk.initialize()
    blk.hybridize()
    x = np_array(rng.normal(size=(2, 4)).astype("float32"))
    y = blk(x).asnumpy()
    blk.export(str(tmp_path / "m"))
    with open(tmp_path / "m-0000.params", "rb") as f:
        assert f.read()[24:28] == bytes.fromhex("cafa93f9")        # V3 entries, as npx.save
    sb = gluon.SymbolBlock.imports(str(tmp_path / "m-symbol.json"), ["data"],
                                   str(tmp_path / "m-0000.params"))
    out = sb(x)
    assert type(out) is np_ndarray
    onp.testing.assert_allclose(out.asnumpy(), y, rtol=1e-6)
    blk.save_parameters(str(tmp_path / "p.params"))
    blk2 = _UserBlock()
    blk2.load_parameters(str(tmp_path / "p.params"))
    assert type(blk2.w.data()) is np_ndarray
    onp.testing.assert_array_equal(blk2(x).asnumpy(), y)
    back = npx.load(str(tmp_path / "p.params"))
    assert sorted(back) == ["b", "w"]


def test_load_legacy_parameters_in_np_mode(tmp_path):
    net = nn.Dense(3, in_units=4)
    net.initialize()
    net.save_parameters(str(tmp_path / "legacy.params"))
    seq = nn.HybridSequential()
    seq.add(nn.Dense(3, in_units=4))
    seq.initialize()
    seq.save_parameters(str(tmp_path / "legacy_seq.params"))
    util.set_np()
    try:
        net2 = nn.Dense(3, in_units=4)
        net2.load_parameters(str(tmp_path / "legacy.params"))
        seq2 = nn.HybridSequential()
        seq2.add(nn.Dense(3, in_units=4))
        seq2.load_parameters(str(tmp_path / "legacy_seq.params"))
        assert type(net2.weight.data()) is np_ndarray and type(seq2[0].bias.data()) is np_ndarray
    finally:
        util.reset_np()
    onp.testing.assert_array_equal(net2.weight.data().asnumpy(), net.weight.data().asnumpy())
    onp.testing.assert_array_equal(seq2[0].weight.data().asnumpy(),
                                   seq[0].weight.data().asnumpy())


def test_layers_and_losses_on_np(np_mode, rng):
    xv = rng.normal(size=(2, 1, 6, 6)).astype("float32")
    cnn = nn.HybridSequential()
    cnn.add(nn.Conv2D(4, 3, padding=1, activation="relu"), nn.MaxPool2D(), nn.Flatten(),
            nn.Dense(2))
    cnn.initialize()
    out = cnn(np_array(xv))
    assert type(out) is np_ndarray and out.shape == (2, 2)
    with mx.np_array(False):
        with mx.np_shape(False):
            ref = cnn(mx.nd.array(xv)).asnumpy()
    onp.testing.assert_array_equal(out.asnumpy(), ref)
    label = np_array(onp.zeros((2, 2), dtype="float32"))
    o = out.asnumpy()
    for loss, want in [(gluon.loss.L2Loss(), (o ** 2 / 2).mean(axis=1)),
                       (gluon.loss.L1Loss(), onp.abs(o).mean(axis=1))]:
        got = loss(out, label)
        assert type(got) is np_ndarray
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-7)
    lstm = gluon.rnn.LSTM(4)
    lstm.initialize()
    seq = lstm(np_array(rng.normal(size=(3, 2, 5)).astype("float32")))
    assert type(seq) is np_ndarray and seq.shape == (3, 2, 4)
    emb = nn.Embedding(10, 3)
    emb.initialize()
    assert emb(np_array(onp.array([1.0, 2.0]))).shape == (2, 3)


def test_constant_and_grad_stype_in_np_mode(np_mode):
    class WithConst(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.c = self.params.get_constant("c", [[1.0, 2.0], [3.0, 4.0]])

        def hybrid_forward(self, F, x, c):
            return F.np.dot(x, c)

    blk = WithConst()
    blk.initialize()
    assert type(blk.c.data()) is np_ndarray
    out = blk(np_array(onp.ones((1, 2), dtype="float32")))
    onp.testing.assert_array_equal(out.asnumpy(), [[4.0, 6.0]])
    p = gluon.Parameter("w", shape=(2, 2), grad_stype="row_sparse")
    with pytest.raises(ValueError, match="does not support stype"):
        p.initialize()


def test_user_block_inside_sequential_hybridized(np_mode, rng):
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=3), _UserBlock(), nn.Dense(2, in_units=3))
    net.initialize()
    x = np_array(rng.normal(size=(6, 3)).astype("float32"))
    y1 = net(x).asnumpy()
    net.hybridize()
    y2 = net(x)
    assert type(y2) is np_ndarray
    onp.testing.assert_allclose(y2.asnumpy(), y1, rtol=1e-5, atol=1e-6)
    sym = net._cached_graph[1]
    ops = {n["op"] for n in json.loads(sym.tojson())["nodes"]}
    # np-style + in the user block: MXNet's numpy operator, as MXNet's own graphs hold it
    assert "_npi_add" in ops and "FullyConnected" in ops


@pytest.mark.parametrize("dtype", [None, "int32", "float64"])
def test_creation_functions_inside_a_hybridized_block(dtype):
    # F.np.zeros / ones / full / identity while tracing equal numpy's arrays (float32 default)
    class Make(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return (x, F.np.zeros((2, 3), dtype=dtype), F.np.ones((2, 3), dtype),
                    F.np.full((2, 3), 7, dtype=dtype), F.np.identity(3, dtype=dtype))

    util.set_np()
    try:
        for hybrid in (False, True):
            blk = Make()
            if hybrid:
                blk.hybridize()
            got = blk(mx.np.ones((1,)))[1:]
            want = onp.dtype("float32" if dtype is None else dtype)
            refs = [onp.zeros((2, 3)), onp.ones((2, 3)), onp.full((2, 3), 7), onp.identity(3)]
            for g, r in zip(got, refs):
                assert isinstance(g, np_ndarray) and g.dtype == want
                onp.testing.assert_array_equal(g.asnumpy(), r.astype(want))
    finally:
        util.reset_np()


# ---- traced numpy semantics: basic indexing, split, methods, comparisons, mixed outputs -------
def _both_ways(block_cls, inputs, want):
    """The block's result imperatively and hybridized (with gradients reaching the inputs) is
    `want`."""
    for hybrid in (False, True):
        net = block_cls()
        net.initialize()
        if hybrid:
            net.hybridize()
        xs = [np_array(x) for x in inputs]
        for x in xs:
            x.attach_grad()
        with autograd.record():
            out = net(*xs)
        out.backward()
        assert type(out) is np_ndarray
        onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)
        assert xs[0].grad.shape == xs[0].shape


BASIC_KEYS = [(1, slice(None), 2), (slice(3, 0, -1),), (-1, -2, -3), (Ellipsis,),
              (slice(0, 4, 2), None, 1), (slice(2, 2), 0), (), (slice(None), slice(1, -1, 2))]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=str)
def test_basic_indexing_traced_and_imperative(np_mode, key):
    x = onp.arange(4 * 5 * 6, dtype=onp.float32).reshape(4, 5, 6)

    class Index(gluon.HybridBlock):
        def hybrid_forward(self, F, a):
            return a[key] * 2

    _both_ways(Index, [x], x[key] * 2)


def test_split_variants_traced(np_mode):
    x = onp.arange(4 * 6 * 3, dtype=onp.float32).reshape(4, 6, 3)

    class Splits(gluon.HybridBlock):
        def hybrid_forward(self, F, a):
            p = F.np.split(a, 3, axis=1)
            rot = F.np.concatenate(p[1:] + p[:1], axis=1)[1:3]
            mid = F.np.split(a, [1, 3], axis=0)[1]
            one = F.np.split(a, 1)[0][1:3]
            h = F.np.hsplit(a, 2)
            hh = F.np.concatenate([h[1], h[0]], axis=1)[1:3]
            v = F.np.vsplit(a, [1])[1][:2]
            return F.np.concatenate([rot, mid, one, hh, v], axis=2)

    p = onp.split(x, 3, axis=1)
    h = onp.hsplit(x, 2)
    want = onp.concatenate([onp.concatenate(p[1:] + p[:1], axis=1)[1:3],
                            onp.split(x, [1, 3], axis=0)[1], x[1:3],
                            onp.concatenate([h[1], h[0]], axis=1)[1:3], x[1:][:2]], axis=2)
    _both_ways(Splits, [x], want)


def test_methods_and_comparisons_traced(np_mode):
    x = onp.array([[1.0, 2.0, 3.0]], dtype=onp.float32)
    y = onp.array([[2.0], [1.0]], dtype=onp.float32)
    w = onp.arange(6, dtype=onp.float32).reshape(3, 2)

    class Ops(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b, c):
            return a.dot(c).sum(axis=1, keepdims=True) + (a % b) + \
                a.reshape(3, 1).transpose().max()

    want = (x @ w).sum(1, keepdims=True) + x % y + x.max()
    _both_ways(Ops, [x, y, w], want)

    class Compare(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b):
            return a >= b, a == 2, a != b

    net = Compare()
    net.hybridize()
    for got, ref in zip(net(np_array(x), np_array(y)), (x >= y, x == 2, x != y)):
        assert got.dtype == onp.bool_
        onp.testing.assert_array_equal(got.asnumpy(), ref)


def test_deferred_weight_learns_its_shape_through_dot(np_mode):
    class Linear(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(0, 4), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):
            return x.dot(w)

    net = Linear()
    net.initialize()
    net.hybridize()
    assert net(np_array(onp.ones((2, 7), onp.float32))).shape == (2, 4)
    assert net.w.shape == (7, 4)


def test_mixed_np_and_legacy_outputs_refused(np_mode):
    class Mixed(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x.as_nd_ndarray() + x.as_nd_ndarray(), F.np.multiply(x, x)

    for hybrid in (False, True):
        net = Mixed()
        if hybrid:
            net.hybridize()
        with pytest.raises(TypeError, match="mix|must be of type"):
            net(np_array(onp.ones((2, 3), onp.float32)))
