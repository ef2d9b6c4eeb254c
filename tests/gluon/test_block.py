"""Block / HybridBlock / SymbolBlock against MXNet 1.9.1 fixtures (tests/data/gluon/, made by
tests/data/make_gluon_golden.py) and numpy references."""
import json
import os
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc import autograd, gluon

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "gluon")


# ---- the blocks of make_gluon_golden.py (same names, so the same prefixes) -------------------
class Dense(gluon.HybridBlock):
    def __init__(self, units, in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._units = units
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          allow_deferred_init=True)
            self.bias = self.params.get("bias", shape=(units,), init="zeros",
                                        allow_deferred_init=True)

    def hybrid_forward(self, F, x, weight, bias):
        return F.FullyConnected(x, weight, bias, num_hidden=self._units, name="fwd")


class Seq(gluon.HybridBlock):
    def add(self, *blocks):
        for b in blocks:
            self.register_child(b)

    def hybrid_forward(self, F, x):
        for b in self._children.values():
            x = b(x)
        return x


class TwoLayer(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.d0 = Dense(6)
            self.d1 = Dense(3)

    def hybrid_forward(self, F, x):
        return self.d1(F.relu(self.d0(x)))


class NoScope(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.d0 = Dense(2)
        with self.name_scope():
            self.d1 = Dense(2)

    def hybrid_forward(self, F, x):
        return self.d1(self.d0(x))


class Outer(gluon.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.a = TwoLayer()
            self.b = TwoLayer()
            self.seq = Seq()
            with self.seq.name_scope():
                self.seq.add(Dense(4), Dense(4), TwoLayer())

    def forward(self, x):
        return self.seq(self.b(self.a(x)))


def _structures():
    def s_dense():
        return [Dense(3), Dense(3), Dense(2, prefix="mine_")]

    def s_twolayer():
        return [TwoLayer(), TwoLayer()]

    def s_noscope():
        return [NoScope()]

    def s_outer():
        return [Outer()]

    def s_seq():
        s = Seq()
        with s.name_scope():
            s.add(Dense(3), TwoLayer(), Dense(1))
        return [s]

    def s_shared():
        a = Dense(3)
        b = Dense(3, params=a.collect_params())
        c = TwoLayer(prefix="tl_")
        return [a, b, c]

    def s_empty_prefix():
        return [TwoLayer(prefix=""), Dense(2)]

    return {k: v for k, v in locals().items() if k.startswith("s_")}


def _np_twolayer(x, w0, b0, w1, b1):
    h = np.maximum(x @ w0.T + b0, 0)
    return h @ w1.T + b1


def _set_all(net, rng, scale=0.5):
    for p in net.collect_params().values():
        p.set_data(mx.nd.array(rng.uniform(-scale, scale, p.shape).astype(np.float32)))


# ---- naming ---------------------------------------------------------------------------------
def test_names_match_mxnet():
    with open(os.path.join(HERE, "names.json")) as f:
        golden = json.load(f)
    structs = _structures()
    assert set(golden) == set(structs)
    for key, build in structs.items():
        with mx.name.NameManager():
            blocks = build()
        got = [{"name": b.name, "prefix": b.prefix, "params": list(b.collect_params().keys()),
                "structural": sorted(b._collect_params_with_prefix().keys())} for b in blocks]
        assert got == golden[key], key


def test_symbol_names_inside_name_scope():
    with mx.name.NameManager():
        net = TwoLayer()
    out = net(mx.sym.var("data"))
    assert out.name == "twolayer0_dense1_fwd"
    assert out.list_arguments() == ["data", "twolayer0_dense0_weight", "twolayer0_dense0_bias",
                                    "twolayer0_dense1_weight", "twolayer0_dense1_bias"]


def test_shared_params_are_the_same_objects():
    with mx.name.NameManager():
        a = Dense(3, in_units=2)
        b = Dense(3, in_units=2, params=a.collect_params())
    assert a.weight is b.weight and a.bias is b.bias


# ---- deferred initialization and forward ----------------------------------------------------
def test_deferred_init_imperative_and_values(rng):
    with mx.name.NameManager():
        net = TwoLayer()
    net.initialize()
    w = net.d0.weight
    with pytest.raises(gluon.DeferredInitializationError, match="twolayer0_dense0_weight"):
        w.data()
    x = rng.uniform(-1, 1, (5, 4)).astype(np.float32)
    net(mx.nd.array(x))
    assert w.shape == (6, 4) and net.d1.weight.shape == (3, 6)
    _set_all(net, rng)
    vals = [p.data().asnumpy() for p in net.collect_params().values()]
    y = net(mx.nd.array(x)).asnumpy()
    np.testing.assert_allclose(y, _np_twolayer(x, *vals), rtol=1e-5, atol=1e-6)


def test_not_initialized_error_message():
    net = Dense(2, in_units=3)
    with pytest.raises(RuntimeError, match="has not been initialized"):
        net(mx.nd.ones((1, 3)))


@pytest.mark.parametrize("static", [False, True])
def test_hybridize_matches_imperative(rng, static):
    with mx.name.NameManager():
        net = TwoLayer()
    net.initialize()
    x = mx.nd.array(rng.uniform(-1, 1, (5, 4)).astype(np.float32))
    net(x)
    _set_all(net, rng)
    params = list(net.collect_params().values())

    def run():
        with autograd.record():
            y = net(x)
            loss = (y * y).sum()
        loss.backward()
        return y.asnumpy(), [p.grad().asnumpy().copy() for p in params]

    y0, g0 = run()
    net.hybridize(static_alloc=static, static_shape=static)
    y1, g1 = run()
    assert net._cached_op is not None
    y2, g2 = run()          # second call through the cached op
    np.testing.assert_allclose(y1, y0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y2, y0, rtol=1e-5, atol=1e-6)
    for a, b, c in zip(g0, g1, g2):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(c, a, rtol=1e-5, atol=1e-6)
    # numpy gradient of sum(y^2) w.r.t. the last bias: 2 * sum_rows(y)
    np.testing.assert_allclose(g0[3], 2 * y0.sum(0), rtol=1e-5, atol=1e-5)


def test_hybridize_deferred_init_first_call(rng):
    with mx.name.NameManager():
        net = TwoLayer()
    net.initialize()
    net.hybridize()
    x = rng.uniform(-1, 1, (2, 7)).astype(np.float32)
    y = net(mx.nd.array(x))
    assert y.shape == (2, 3) and net.d0.weight.shape == (6, 7)
    vals = [p.data().asnumpy() for p in net.collect_params().values()]
    np.testing.assert_allclose(y.asnumpy(), _np_twolayer(x, *vals), rtol=1e-5, atol=1e-6)


def test_nested_inputs_and_outputs(rng):
    class Multi(gluon.HybridBlock):
        def hybrid_forward(self, F, x, pair):
            a, b = pair
            return [x + a, (x * b, a - b)]

    m = Multi()
    x, a, b = (mx.nd.array(rng.uniform(-1, 1, (2, 3))) for _ in range(3))
    ref = m(x, [a, b])
    m.hybridize()
    out = m(x, [a, b])
    assert isinstance(out, list) and isinstance(out[1], list) and len(out[1]) == 2
    for r, o in zip([ref[0], ref[1][0], ref[1][1]], [out[0], out[1][0], out[1][1]]):
        np.testing.assert_allclose(o.asnumpy(), r.asnumpy(), rtol=1e-6)
    assert m._in_format == [0, [0, 0]]
    with pytest.raises(ValueError, match="argument structure"):
        m(x, [a, b, a])


def test_hybrid_children_must_be_hybrid():
    class Plain(gluon.Block):
        def forward(self, x):
            return x

    h = Seq()
    with pytest.raises(ValueError, match="Children of HybridBlock must also be HybridBlock"):
        h.add(Plain())


def test_mixed_and_missing_input_types():
    d = Dense(2, in_units=2)
    with pytest.raises(ValueError, match="mixed NDArrays and Symbols"):
        d(mx.nd.ones((1, 2)), mx.sym.var("y"))
    with pytest.raises(ValueError, match="there must be one NDArray or one Symbol"):
        d(None)


# ---- frozen branches ------------------------------------------------------------------------
def test_branch_on_array_value_warns_and_freezes():
    class Branch(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            if x.sum() > 0:
                return x * 2
            return x * 3

    with mx.name.NameManager():
        b = Branch()
    pos, neg = mx.nd.ones((2,)), -mx.nd.ones((2,))
    np.testing.assert_allclose(b(neg).asnumpy(), [-3, -3])     # imperative: real branch
    b.hybridize()
    with pytest.warns(UserWarning, match=r"'branch0'.*bool\(Symbol\).*frozen"):
        np.testing.assert_allclose(b(pos).asnumpy(), [2, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(b(neg).asnumpy(), [-2, -2])   # frozen, no new warning


def test_is_training_in_hybrid_forward_warns():
    class Mode(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x * 2 if autograd.is_training() else x

    with mx.name.NameManager():
        outer = Seq()
        with outer.name_scope():
            outer.add(Mode())
    x = mx.nd.ones((2,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outer(x)                  # imperative: no warning
    outer.hybridize()
    with pytest.warns(UserWarning, match=r"'seq0_mode0' \(inside 'seq0'\).*is_training"):
        outer(x)


def test_pure_symbol_branch_still_raises():
    class Branch(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x if x.sum() > 0 else -x

    with pytest.raises(mx.base.NotImplementedForSymbol):
        Branch()(mx.sym.var("x"))


# ---- infer_shape / infer_type / cast --------------------------------------------------------
def test_infer_shape_and_type():
    with mx.name.NameManager():
        net = TwoLayer()
    net.infer_shape(mx.nd.ones((2, 9)))
    assert [p.shape for p in net.collect_params().values()] == [(6, 9), (6,), (3, 6), (3,)]


def test_infer_type_fills_unknown_dtypes():
    class Untyped(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = self.params.get("w", shape=(2, 3), dtype=None)

        def hybrid_forward(self, F, x, w):
            return F.FullyConnected(x, w, no_bias=True, num_hidden=2)

    blk = Untyped()
    assert blk.w.dtype is None
    blk.infer_type(mx.nd.ones((1, 3), dtype="float64"))
    assert np.dtype(blk.w.dtype) == np.float64


def test_cast(rng):
    net = Dense(3, in_units=2)
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((1, 2)))
    net.cast("float64")
    assert net.weight.data().dtype == np.float64 and net._cached_op is None
    y = net(mx.nd.ones((1, 2), dtype="float64"))
    assert y.dtype == np.float64


# ---- hooks, apply, collect_params, repr, summary --------------------------------------------
def test_forward_hooks_and_detach():
    calls = []
    net = Dense(2, in_units=2)
    net.initialize()
    h1 = net.register_forward_pre_hook(lambda blk, inp: calls.append(("pre", len(inp))))
    h2 = net.register_forward_hook(lambda blk, inp, out: calls.append(("post", out.shape)))
    net(mx.nd.ones((3, 2)))
    assert calls == [("pre", 1), ("post", (3, 2))]
    h1.detach()
    h2.detach()
    net(mx.nd.ones((3, 2)))
    assert len(calls) == 2
    with net.register_forward_hook(lambda *a: calls.append("ctx")):
        net(mx.nd.ones((1, 2)))
    net(mx.nd.ones((1, 2)))
    assert calls[2:] == ["ctx"]


def test_apply_and_collect_params_select():
    with mx.name.NameManager():
        net = Outer()
    seen = []
    assert net.apply(lambda b: seen.append(b.name)) is net
    assert seen[-1] == "outer0" and seen[0] == "outer0_twolayer0_dense0"
    assert len(seen) == 1 + 3 + 3 * 2 + 2 + 1
    sel = net.collect_params(".*seq0.*weight")
    assert list(sel.keys()) == ["outer0_seq0_dense0_weight", "outer0_seq0_dense1_weight",
                                "outer0_seq0_twolayer0_dense0_weight",
                                "outer0_seq0_twolayer0_dense1_weight"]


def test_setattr_registration_rules():
    net = TwoLayer()
    with pytest.raises(TypeError, match="Changing attribute type for d0"):
        net.d0 = 3
    p = gluon.Parameter("free", shape=(1,))
    net.extra = p
    assert net._reg_params["extra"] is p
    with pytest.raises(AssertionError, match="Overriding Parameter attribute extra"):
        net.extra = gluon.Parameter("free2", shape=(1,))


def test_unregistered_container_warns():
    class Holder(gluon.Block):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(2)]

    with pytest.warns(UserWarning, match="unregistered container"):
        Holder().collect_params()


def test_repr_like_mxnet():
    with mx.name.NameManager():
        net = TwoLayer()
    r = repr(net)
    assert r.startswith("TwoLayer(\n  (d0): Dense(\n") and r.endswith("\n)")


def test_summary_prints_parameter_counts(capsys):
    net = TwoLayer()
    net.initialize()
    net.summary(mx.nd.ones((2, 4)))
    out = capsys.readouterr().out
    assert "Total params: " + str(6 * 4 + 6 + 3 * 6 + 3) in out
    assert "(2, 3)" in out
    net.hybridize()
    with pytest.raises(AssertionError, match="must not be hybridized"):
        net.summary(mx.nd.ones((2, 4)))


def test_summary_skips_symbolic_shape_pass(capsys):
    class Act(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.relu(x)

    class DenseAct(Dense):
        def __init__(self, units):
            super().__init__(units)
            with self.name_scope():
                self.act = Act()

        def hybrid_forward(self, F, x, weight, bias):
            return self.act(super().hybrid_forward(F, x, weight, bias))

    net = DenseAct(3)
    net.initialize()
    net.summary(mx.nd.ones((2, 5)))      # deferred init traces Act with Symbols first
    out = capsys.readouterr().out
    assert "<Symbol" not in out          # MXNet 1.9.1 listed that pass as a layer
    assert "Act-1" in out and "DenseAct-2" in out and "Total params: 18" in out


# ---- save / load ----------------------------------------------------------------------------
def _twolayer_from_file(path, **kw):
    with mx.name.NameManager():
        net = TwoLayer()
    net.load_parameters(path, **kw)
    return net


@pytest.mark.parametrize("fname", ["twolayer_new.params", "twolayer_old.params"])
def test_load_mxnet_parameter_files(fname):
    io = np.load(os.path.join(HERE, "twolayer_io.npz"))
    net = _twolayer_from_file(os.path.join(HERE, fname))
    np.testing.assert_allclose(net(mx.nd.array(io["x"])).asnumpy(), io["y"], rtol=1e-5,
                               atol=1e-6)


def test_save_load_roundtrip_and_deprecated_scheme(tmp_path, rng):
    with mx.name.NameManager():
        net = TwoLayer()
    net.initialize()
    net(mx.nd.ones((1, 4)))
    _set_all(net, rng)
    x = mx.nd.array(rng.uniform(-1, 1, (2, 4)))
    ref = net(x).asnumpy()
    net.save_parameters(str(tmp_path / "new.params"))
    assert sorted(mx.nd.load(str(tmp_path / "new.params"))) == ["d0.bias", "d0.weight",
                                                                "d1.bias", "d1.weight"]
    with pytest.warns(UserWarning, match="save_params is deprecated"):
        net.save_params(str(tmp_path / "old.params"))
    assert sorted(mx.nd.load(str(tmp_path / "old.params"))) == [
        "dense0_bias", "dense0_weight", "dense1_bias", "dense1_weight"]
    for f in ("new.params", "old.params"):
        other = _twolayer_from_file(str(tmp_path / f))
        np.testing.assert_allclose(other(x).asnumpy(), ref, rtol=1e-6)


def test_load_parameters_errors(tmp_path):
    path = os.path.join(HERE, "twolayer_new.params")
    with mx.name.NameManager():
        small = Dense(6)
    with pytest.raises(AssertionError, match="Parameter 'weight' is missing in file"):
        small.load_parameters(path)
    with mx.name.NameManager():
        big = Outer()
    with pytest.raises(AssertionError, match="is missing in file"):
        big.a.load_parameters(path, allow_missing=False)   # fine: same structure
        big.load_parameters(path)
    with mx.name.NameManager():
        three = Seq()
        with three.name_scope():
            three.add(TwoLayer())
    mx.nd.save(str(tmp_path / "extra.params"),
               {"0.d0.weight": mx.nd.ones((6, 4)), "0.d0.bias": mx.nd.ones((6,)),
                "0.d1.weight": mx.nd.ones((3, 6)), "0.d1.bias": mx.nd.ones((3,)),
                "0.d2.weight": mx.nd.ones((1,))})
    with pytest.raises(ValueError, match="'0.d2.weight' loaded from file .* is not present"):
        three.load_parameters(str(tmp_path / "extra.params"))
    three.load_parameters(str(tmp_path / "extra.params"), ignore_extra=True)
    np.testing.assert_array_equal(three._children["0"].d1.bias.data().asnumpy(), np.ones(3))


def test_load_parameters_dtype_cast(tmp_path):
    net = Dense(2, in_units=2)
    net.initialize()
    mx.nd.save(str(tmp_path / "f64.params"), {"weight": mx.nd.ones((2, 2), dtype="float64"),
                                              "bias": mx.nd.zeros((2,), dtype="float64")})
    with pytest.raises(AssertionError, match="dtype incompatible"):
        net.load_parameters(str(tmp_path / "f64.params"))
    net.load_parameters(str(tmp_path / "f64.params"), cast_dtype=True)
    assert net.weight.data().dtype == np.float32
    net.load_parameters(str(tmp_path / "f64.params"), cast_dtype=True, dtype_source="saved")
    assert net.weight.data().dtype == np.float64


def test_block_save_load_model(tmp_path, rng):
    with mx.name.NameManager():
        net = TwoLayer()
    net.initialize()
    net.hybridize()
    x = mx.nd.array(rng.uniform(-1, 1, (2, 4)))
    ref = net(x).asnumpy()
    net.save(str(tmp_path / "m"))
    with mx.name.NameManager():
        mx.nd.ones((1,))
        other = TwoLayer(prefix="zzz_")
    other.load(str(tmp_path / "m"))
    np.testing.assert_allclose(other(x).asnumpy(), ref, rtol=1e-6)


# ---- export / SymbolBlock -------------------------------------------------------------------
def test_import_mxnet_exported_conv_bn_dense():
    io = np.load(os.path.join(HERE, "cbd_io.npz"))
    net = gluon.SymbolBlock.imports(os.path.join(HERE, "cbd-symbol.json"), ["data"],
                                    os.path.join(HERE, "cbd-0000.params"))
    assert "cbd_batchnorm0_running_var" in net.collect_params().keys()
    assert net.collect_params()["cbd_batchnorm0_running_var"].grad_req == "null"
    y = net(mx.nd.array(io["x"]))
    np.testing.assert_allclose(y.asnumpy(), io["y"], rtol=1e-4, atol=1e-5)
    net.hybridize()
    np.testing.assert_allclose(net(mx.nd.array(io["x"])).asnumpy(), io["y"], rtol=1e-4,
                               atol=1e-5)


def test_imports_missing_param_file_errors(tmp_path):
    mx.nd.save(str(tmp_path / "p.params"), {"arg:cbd_conv0_weight": mx.nd.ones((4, 2, 3, 3))})
    with pytest.raises(AssertionError, match="is missing in file"):
        gluon.SymbolBlock.imports(os.path.join(HERE, "cbd-symbol.json"), ["data"],
                                  str(tmp_path / "p.params"))


def test_export_then_import_roundtrip(tmp_path, rng):
    with mx.name.NameManager():
        net = TwoLayer()
    net.initialize()
    x = mx.nd.array(rng.uniform(-1, 1, (3, 5)))
    with pytest.raises(RuntimeError, match="first call block.hybridize"):
        net.export(str(tmp_path / "n"))
    net.hybridize()
    ref = net(x).asnumpy()
    net.export(str(tmp_path / "n"), epoch=7)
    saved = mx.nd.load(str(tmp_path / "n-0007.params"))
    assert sorted(saved) == ["arg:twolayer0_dense0_bias", "arg:twolayer0_dense0_weight",
                             "arg:twolayer0_dense1_bias", "arg:twolayer0_dense1_weight"]
    sym = mx.sym.load(str(tmp_path / "n-symbol.json"))
    assert sym.list_arguments()[0] == "data"
    back = gluon.SymbolBlock.imports(str(tmp_path / "n-symbol.json"), "data",
                                     str(tmp_path / "n-0007.params"))
    np.testing.assert_allclose(back(x).asnumpy(), ref, rtol=1e-6)


def test_symbolblock_from_internals_shares_params(rng):
    with mx.name.NameManager():
        net = TwoLayer()
    net.initialize()
    x = mx.nd.array(rng.uniform(-1, 1, (2, 4)))
    net(x)
    data = mx.sym.var("data")
    internals = net(data).get_internals()
    hidden = internals["twolayer0_dense0_fwd_output"]
    feat = gluon.SymbolBlock([hidden, internals["twolayer0_dense1_fwd_output"]], data,
                             params=net.collect_params())
    h, y = feat(x)
    w0, b0 = net.d0.weight.data().asnumpy(), net.d0.bias.data().asnumpy()
    np.testing.assert_allclose(h.asnumpy(), x.asnumpy() @ w0.T + b0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.asnumpy(), net(x).asnumpy(), rtol=1e-6)
    assert feat.collect_params()["twolayer0_dense0_weight"] is net.d0.weight
    s = feat(mx.sym.var("z"))
    assert isinstance(s, list) and s[0].list_arguments()[0] == "z"


def test_symbolblock_gradients(rng):
    data = mx.sym.var("data")
    out = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    blk = gluon.SymbolBlock(out, data)
    blk.initialize()
    x = mx.nd.array(rng.uniform(-1, 1, (3, 4)))
    with autograd.record():
        y = blk(x)
    y.backward()
    assert blk.params["fc_weight"].shape == (2, 4)
    np.testing.assert_allclose(blk.params["fc_weight"].grad().asnumpy(),
                               np.tile(x.asnumpy().sum(0), (2, 1)), rtol=1e-5)
    np.testing.assert_allclose(blk.params["fc_bias"].grad().asnumpy(), [3, 3])


def test_cast_to_bfloat16_trains_and_saves(tmp_path):
    """Block.cast('bfloat16'): parameters, gradients and outputs in bfloat16 (computed in
    float32 on the CPU); the loss falls as float32's does, imperative and hybridized, and the
    parameters save as MXNet's flag-12 entries and load back."""
    import ml_dtypes
    bf = np.dtype(ml_dtypes.bfloat16)
    rng = np.random.RandomState(0)
    xn = rng.uniform(-1, 1, (64, 5)).astype(np.float32)
    y = mx.nd.array((xn[:, 0] + xn[:, 1] > 0).astype(np.float32))
    losses = {}
    for dt in ("float32", "bfloat16"):
        mx.random.seed(1)
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(16, activation="relu", in_units=5), gluon.nn.Dense(2, in_units=16))
        net.initialize(mx.init.Xavier())
        net.cast(dt)
        if dt == "bfloat16":
            assert all(p.data().dtype == bf and p.grad().dtype == bf
                       for p in net.collect_params().values())
            net.hybridize()
        x = mx.nd.array(xn).astype(dt)
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        seen = []
        for _ in range(25):
            with autograd.record():
                out = net(x)
                loss = loss_fn(out, y)
            loss.backward()
            trainer.step(64)
            seen.append(float(loss.mean().astype("float32").asscalar()))
        assert out.dtype == np.dtype(dt)
        losses[dt] = seen
    assert losses["bfloat16"][-1] < 0.5 * losses["bfloat16"][0]
    assert abs(losses["bfloat16"][-1] - losses["float32"][-1]) < 0.05
    f = str(tmp_path / "bf16.params")
    net.save_parameters(f)
    w = net[0].weight.data().asnumpy()
    net[0].weight.set_data(mx.nd.zeros((16, 5), dtype="bfloat16"))
    net.load_parameters(f)
    assert net[0].weight.data().dtype == bf
    np.testing.assert_array_equal(net[0].weight.data().asnumpy().view(np.uint16), w.view(np.uint16))
