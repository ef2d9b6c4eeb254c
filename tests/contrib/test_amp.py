"""mxc.contrib.amp: convert_symbol against the graphs MXNet 1.9.1 makes (tests/data/amp/, made by
tests/data/make_amp_golden.py), init()'s float16 wrapping against float32 runs, dynamic loss
scaling with a gluon Trainer, and the op lists."""
import json
import os

import numpy as np
import pytest

import mxc as mx
from mxc.contrib import amp
from mxc.contrib.amp import amp as amp_mod

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "amp", "convert_symbol.json")
CASES = json.load(open(DATA)) if os.path.exists(DATA) else {}


def _nodes(js):
    g = json.loads(js)
    return ([(n["op"], n["name"], n.get("attrs", {}), [tuple(i) for i in n["inputs"]])
             for n in g["nodes"]], g["heads"])


@pytest.fixture
def amp_on():
    amp.init()
    try:
        yield
    finally:
        amp_mod._restore()


@pytest.mark.parametrize("case", sorted(CASES))
def test_convert_matches_mxnet(case):
    c = CASES[case]
    sym = mx.sym.load_json(c["original"])
    if case.startswith("conv_model"):
        arg_shapes, _, aux_shapes = sym.infer_shape(data=(2, 3, 6, 6), skip=(2, 3))
        args = {n: mx.nd.ones(s) for n, s in zip(sym.list_arguments(), arg_shapes)
                if n not in ("data", "skip")}
        aux = {n: mx.nd.ones(s) for n, s in zip(sym.list_auxiliary_states(), aux_shapes)}
        out, cargs, caux = amp.convert_model(sym, args, aux,
                                             cast_optional_params=c["cast_optional_params"])
        assert {k: np.dtype(v.dtype).name for k, v in cargs.items()} == c["arg_dtypes"]
        assert {k: np.dtype(v.dtype).name for k, v in caux.items()} == c["aux_dtypes"]
    else:
        out = amp.convert_symbol(sym, excluded_sym_names=c.get("excluded_sym_names"))
    assert _nodes(out.tojson(remove_amp_cast=False)) == _nodes(c["converted"])
    if "saved" in c:           # the default tojson/save leaves amp_cast/amp_multicast out
        assert _nodes(out.tojson()) == _nodes(c["saved"])
    # the original graph is left as it was
    assert _nodes(sym.tojson()) == _nodes(c["original"])


def test_converted_graph_runs_close_to_float32(rng):
    sym = mx.sym.load_json(CASES["widest"]["original"])
    conv = amp.convert_symbol(sym)
    shapes = dict(a=(2, 5), b=(2, 4))
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    args = {n: mx.nd.array(rng.standard_normal(s) * 0.3) for n, s in
            zip(sym.list_arguments(), arg_shapes)}
    aux = {n: mx.nd.array(rng.random(s) + 0.5) for n, s in
           zip(sym.list_auxiliary_states(), aux_shapes)}
    refs = sym.bind(mx.cpu(), args, aux_states=aux).forward()
    gots = conv.bind(mx.cpu(), args, aux_states=aux).forward()
    for ref, got in zip(refs, gots):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got.asnumpy(), ref.asnumpy(), rtol=2e-2, atol=2e-2)


def test_convert_errors():
    s = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2)
    with pytest.raises(AssertionError, match="Ops cannot be in two or more lists"):
        amp.convert_symbol(s, target_dtype_ops=["FullyConnected"], fp32_ops=["FullyConnected"])
    with pytest.raises(AssertionError, match="in none of them"):
        amp.convert_symbol(s, target_dtype_ops=["no_such_op"])
    with pytest.raises(AssertionError, match="float16 and bfloat16"):
        amp.convert_symbol(s, target_dtype="float64")


def test_lists_are_registered_and_disjoint():
    from mxc.ops import registry
    names = registry.names()
    lp, fp32 = amp.list_lp16_ops("float16"), amp.list_fp32_ops("float16")
    both = amp.list_lp16_fp32_ops("float16")
    assert {"FullyConnected", "Convolution"} <= set(lp)
    assert "softmax" in fp32 and "BatchNorm" in both and "elemwise_add" in amp.list_widest_type_cast("float16")
    for lst in (lp, fp32, both, amp.list_widest_type_cast("float16")):
        assert all(n in names for n in lst)
    assert not (set(lp) & set(fp32)) and not (set(lp) & set(both)) and not (set(fp32) & set(both))
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert "BatchNorm" in amp.list_lp16_use_fp32_params("bfloat16")
    assert ("Activation", "act_type", ["softrelu"]) in amp.list_conditional_fp32_ops("float16")


def test_init_wraps_nd_and_sym(amp_on, rng):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    w = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    y = mx.nd.FullyConnected(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), num_hidden=3)
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.asnumpy().astype(np.float32), x @ w.T + b, rtol=1e-2, atol=1e-2)
    # float32-only operator casts back; widest-type operator takes float32
    s = mx.nd.softmax(y)
    assert s.dtype == np.float32
    z = mx.nd.elemwise_add(y, mx.nd.ones((4, 3)))
    assert z.dtype == np.float32
    # conditional: softrelu runs in float32, relu keeps float16
    assert mx.nd.Activation(y, act_type="softrelu").dtype == np.float32
    assert mx.nd.Activation(y, act_type="relu").dtype == np.float16
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    ops = [n["op"] for n in json.loads(sym.tojson(remove_amp_cast=False))["nodes"]]
    assert ops.count("amp_cast") == 3


def test_init_restore_and_errors():
    with pytest.raises(AssertionError, match="amp.init"):
        amp.init_trainer(None)
    with pytest.raises(AssertionError, match="float16 or bfloat16"):
        amp.init("float64")
    f = mx.nd.FullyConnected
    amp.init()
    try:
        assert mx.nd.FullyConnected is not f
    finally:
        amp_mod._restore()
    assert mx.nd.FullyConnected is f


def test_scale_loss_and_overflow_skip(amp_on, rng):
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(0.5))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with pytest.raises(AssertionError, match="init_trainer"):
        with amp.scale_loss(mx.nd.ones(1), trainer):
            pass
    amp.init_trainer(trainer)
    scaler = trainer._amp_loss_scaler
    assert scaler.loss_scale == 2.0 ** 16
    # 2**16 overflows float16 (max 65504) at once: start lower, as after a few skipped steps
    scaler._loss_scale = scaler._next_loss_scale = 2.0 ** 10
    x = mx.nd.array(rng.standard_normal((4, 3)))
    with mx.autograd.record():
        loss = net(x).astype("float32").sum()
        with amp.scale_loss(loss, trainer) as scaled:
            scaled.backward()
    w0 = net.weight.data().asnumpy().copy()
    g = net.weight.grad().asnumpy() / 2.0 ** 10
    trainer.step(1)
    np.testing.assert_allclose(net.weight.data().asnumpy(), w0 - 0.1 * g, rtol=1e-3, atol=1e-4)
    # an overflowing gradient: the step is skipped and the next scale halved
    w1 = net.weight.data().asnumpy().copy()
    with mx.autograd.record():
        loss = net(x).astype("float32").sum()
        with amp.scale_loss(loss, trainer) as scaled:
            scaled.backward()
    net.weight.grad()[:] = np.inf
    trainer.step(1)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), w1)
    assert scaler._next_loss_scale == 2.0 ** 9


def test_unscale(amp_on):
    net = mx.gluon.nn.Dense(1, in_units=2)
    net.initialize(mx.init.One())
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(trainer)
    trainer._amp_loss_scaler._loss_scale = 256.0
    with mx.autograd.record():
        with amp.scale_loss(net(mx.nd.ones((1, 2))).sum(), trainer) as scaled:
            scaled.backward()
    amp.unscale(trainer)
    np.testing.assert_allclose(net.weight.grad().asnumpy(), [[1.0, 1.0]], rtol=1e-6)
    assert trainer._scale == 1.0


def test_convert_hybrid_block_keeps_the_blocks_context(rng):
    # without ctx= the converted block's parameters stay where the block's are (a block on a
    # GPU stays there; cpu(1) stands in for another device here)
    ctx = mx.cpu(1)
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4), mx.gluon.nn.Dense(3))
    net.initialize(ctx=ctx)
    net.hybridize()
    x = mx.nd.array(rng.standard_normal((2, 5)), ctx=ctx)
    want = net(x).asnumpy()
    lp = amp.convert_hybrid_block(net)
    assert {c for p in lp.collect_params().values() for c in p.list_ctx()} == {ctx}
    got = lp(x)
    assert got.context == ctx
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-2, atol=2e-2)


# ---- bfloat16 ---------------------------------------------------------------------------------
BF16_DATA = os.path.join(os.path.dirname(__file__), "..", "data", "bfloat16", "convert.json")


def _graph_summary(js):
    nodes = json.loads(js)["nodes"]
    keep = ("dtype", "num_outputs", "__dtype__")
    return sorted((n["name"], n["op"],
                   tuple(sorted((k, v) for k, v in n.get("attrs", {}).items() if k in keep)),
                   tuple(nodes[i[0]]["name"] for i in n["inputs"])) for n in nodes)


@pytest.mark.parametrize("case", ["conv", "mlp", "conv_optional"])
def test_convert_symbol_bfloat16_matches_mxnet(case):
    """The amp_cast/amp_multicast nodes MXNet 1.9.1's ReducePrecision inserts for bfloat16
    (tests/data/make_bfloat16_golden.py): same names, ops, dtypes and wiring."""
    with open(BF16_DATA) as f:
        c = json.load(f)[case]
    kw = dict(data_names=["data", "skip"], cast_optional_params=True) \
        if case == "conv_optional" else {}
    got = amp.convert_symbol(mx.sym.load_json(c["original"]), target_dtype="bfloat16", **kw)
    assert _graph_summary(got.tojson(remove_amp_cast=False)) == _graph_summary(c["converted"])


def test_amp_cast_and_multicast_take_bfloat16():
    import ml_dtypes
    bf = np.dtype(ml_dtypes.bfloat16)
    x = mx.nd.array([1.0 + 2 ** -8 + 2 ** -10, -3.0])
    assert mx.nd.amp_cast(x, dtype="bfloat16").dtype == bf
    b = mx.nd.amp_cast(x, dtype="bfloat16")
    np.testing.assert_array_equal(b.asnumpy().view(np.uint16),
                                  x.asnumpy().astype(bf).view(np.uint16))
    assert mx.nd.amp_cast(b, dtype="float32").dtype == np.float32
    i = mx.nd.array([1, 2], dtype="int32")
    assert mx.nd.amp_cast(i, dtype="bfloat16").dtype == np.int32
    wide = mx.nd.amp_multicast(b, x, num_outputs=2)
    assert [w.dtype for w in wide] == [np.float32, np.float32]
    narrow = mx.nd.amp_multicast(b, x, i, num_outputs=3, cast_narrow=True)
    assert [n.dtype for n in narrow] == [bf, bf, np.int32]


def test_init_bfloat16_trains_a_gluon_net():
    """amp.init('bfloat16'): the bfloat16 list's layers (Convolution, FullyConnected) run in
    bfloat16 on the CPU, BatchNorm keeps float32 parameters, float32 operators cast back; the
    loss falls; convert_hybrid_block gives a float32-output block in bfloat16 inside."""
    import ml_dtypes
    bf = np.dtype(ml_dtypes.bfloat16)
    amp.init("bfloat16")
    try:
        mx.random.seed(3)
        net = mx.gluon.nn.HybridSequential()
        net.add(mx.gluon.nn.Conv2D(4, 3, in_channels=1), mx.gluon.nn.BatchNorm(in_channels=4),
                mx.gluon.nn.Activation("relu"), mx.gluon.nn.Flatten(),
                mx.gluon.nn.Dense(2, in_units=4 * 6 * 6))
        net.initialize(mx.init.Xavier())
        rng = np.random.RandomState(0)
        xn = rng.uniform(-1, 1, (32, 1, 8, 8)).astype(np.float32)
        x = mx.nd.array(xn)
        y = mx.nd.array((xn[:, 0, :4].mean(axis=(1, 2)) > 0).astype(np.float32))
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.2})
        amp.init_trainer(trainer)
        loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        seen = []
        for _ in range(20):
            with mx.autograd.record():
                out = net(x)
                loss = loss_fn(out, y)
                with amp.scale_loss(loss, trainer) as scaled:
                    pass
            scaled.backward()
            trainer.step(32)
            seen.append(float(loss.mean().asscalar()))
        assert out.dtype == bf and loss.dtype == np.float32
        assert net[1].gamma.data().dtype == np.float32
        assert seen[-1] < 0.3 * seen[0]
        net.hybridize()
        ref = net(x)
        conv = amp.convert_hybrid_block(net, target_dtype="bfloat16")
    finally:
        amp_mod._restore()
    got = conv(x)
    assert got.dtype == np.float32
    ops = [n["op"] for n in json.loads(conv._cached_graph[1].tojson(remove_amp_cast=False))["nodes"]]
    assert "amp_cast" in ops
    np.testing.assert_allclose(got.asnumpy(), ref.asnumpy().astype(np.float32), rtol=0.05, atol=0.05)
