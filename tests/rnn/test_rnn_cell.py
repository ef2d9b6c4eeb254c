"""The legacy symbolic cells (mx.rnn): graphs identical to MXNet 1.9.1's (fixture from
tests/data/make_gluon_rnn_golden.py), values against the numpy equations and gluon's cells."""
import gzip
import json
import os
import warnings

import numpy as np
import pytest

import mxc as mx
from tests.gluon.rnn.reference import run_cell, run_layer

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "gluon_rnn")
with gzip.open(os.path.join(DATA, "legacy.json.gz"), "rt") as _f:
    LEGACY = json.load(_f)


def _data3():
    return [mx.sym.Variable("t%d_data" % i) for i in range(3)]


def _stack():
    s = mx.rnn.SequentialRNNCell()
    s.add(mx.rnn.LSTMCell(5, prefix="l0_"))
    s.add(mx.rnn.DropoutCell(0.5, prefix="d0_"))
    s.add(mx.rnn.ResidualCell(mx.rnn.LSTMCell(5, prefix="l1_")))
    return s.unroll(2, mx.sym.Variable("data"), merge_outputs=True)


GRAPHS = {
    "lstm": lambda: mx.rnn.LSTMCell(5, prefix="lstm_").unroll(3, _data3()),
    "gru": lambda: mx.rnn.GRUCell(5, prefix="gru_").unroll(3, _data3()),
    "rnn_relu": lambda: mx.rnn.RNNCell(5, activation="relu", prefix="rnn_").unroll(
        3, mx.sym.Variable("data"), layout="TNC", merge_outputs=True),
    "stack": _stack,
    "bidir": lambda: mx.rnn.BidirectionalCell(
        mx.rnn.GRUCell(5, prefix="l_"), mx.rnn.GRUCell(5, prefix="r_"),
        output_prefix="bi_").unroll(2, _data3()[:2]),
    "fused": lambda: mx.rnn.FusedRNNCell(5, num_layers=2, mode="lstm", bidirectional=True,
                                         get_next_state=True, prefix="f_").unroll(
        3, mx.sym.Variable("data"), layout="TNC", merge_outputs=True),
    "unfused": lambda: mx.rnn.FusedRNNCell(5, num_layers=2, mode="gru", bidirectional=True,
                                           prefix="f_").unfuse().unroll(2, _data3()[:2]),
    "zoneout": lambda: mx.rnn.ZoneoutCell(mx.rnn.RNNCell(5, prefix="z_"), 0.3, 0.2).unroll(
        3, _data3()),
    "conv_lstm": lambda: mx.rnn.ConvLSTMCell((1, 2, 4, 4), 3, prefix="c_").unroll(
        2, [mx.sym.Variable("t0"), mx.sym.Variable("t1")]),
}


@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_unrolled_graph_is_mxnets(case):
    with mx.name.NameManager():
        outputs, states = GRAPHS[case]()
        if isinstance(outputs, mx.sym.Symbol):
            outputs = [outputs]
        sym = mx.sym.Group(list(outputs) + [s for s in states if isinstance(s, mx.sym.Symbol)])
    ref = LEGACY[case]
    assert sym.list_arguments() == ref["arguments"]
    assert sym.list_outputs() == ref["outputs"]
    assert json.loads(sym.tojson()) == json.loads(ref["json"])
    assert sym.tojson() == ref["json"]


def test_fused_unpack_weights_is_mxnets():
    cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode="gru", bidirectional=True, prefix="f_")
    n = 2 * 3 * 3 * (2 + 3 + 2) + 2 * 3 * 3 * (6 + 3 + 2)
    got = cell.unpack_weights({"f_parameters": mx.nd.arange(n)})
    ref = LEGACY["unpack"]
    assert sorted(got) == sorted(ref)
    for k, (shape, first) in ref.items():
        assert list(got[k].shape) == shape, k
        assert float(got[k].asnumpy().ravel()[0]) == first, k


@pytest.mark.parametrize("mode,bidir,layers", [("lstm", False, 1), ("gru", True, 2),
                                               ("rnn_tanh", True, 1), ("rnn_relu", False, 2)])
def test_fused_pack_unpack_roundtrip(rng, mode, bidir, layers):
    cell = mx.rnn.FusedRNNCell(4, num_layers=layers, mode=mode, bidirectional=bidir, prefix="x_")
    g = {"lstm": 4, "gru": 3}.get(mode, 1)
    d = 2 if bidir else 1
    size = sum(d * (g * 4 * ni + g * 4 * 4 + 2 * g * 4) for ni in [3] + [4 * d] * (layers - 1))
    vec = rng.standard_normal(size).astype(np.float32)
    args = cell.unpack_weights({"x_parameters": mx.nd.array(vec), "other": mx.nd.ones(2)})
    assert "other" in args and "x_parameters" not in args
    assert args["x_l0_i2h%s_weight" % cell._gate_names[0]].shape == (4, 3)
    back = cell.pack_weights(args)
    np.testing.assert_array_equal(back["x_parameters"].asnumpy(), vec)
    assert "other" in back


def test_lstm_pack_unpack_roundtrip(rng):
    cell = mx.rnn.LSTMCell(3, prefix="a_")
    w = {"a_i2h_weight": rng.standard_normal((12, 2)), "a_i2h_bias": rng.standard_normal(12),
         "a_h2h_weight": rng.standard_normal((12, 3)), "a_h2h_bias": rng.standard_normal(12)}
    args = cell.unpack_weights({k: mx.nd.array(v) for k, v in w.items()})
    assert sorted(args) == sorted("a_%s_%s_%s" % (grp, g, t) for grp in ("i2h", "h2h")
                                  for g in "ifco" for t in ("weight", "bias"))
    np.testing.assert_allclose(args["a_i2h_f_weight"].asnumpy(), w["a_i2h_weight"][3:6],
                               rtol=1e-6)
    back = cell.pack_weights(args)
    for k, v in w.items():
        np.testing.assert_allclose(back[k].asnumpy(), v, rtol=1e-6)


def _eval(sym, arrays):
    """Bind `sym` with numpy arrays (name -> array) and run forward."""
    args = {k: mx.nd.array(v) for k, v in arrays.items()}
    ex = sym.bind(mx.cpu(), args)
    return [o.asnumpy() for o in ex.forward()]


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
def test_cell_unroll_computes_the_equations(rng, kind):
    T, N, I, H = 3, 2, 4, 5
    if kind == "lstm":
        cell, g = mx.rnn.LSTMCell(H, prefix="c_"), 4
    elif kind == "gru":
        cell, g = mx.rnn.GRUCell(H, prefix="c_"), 3
    else:
        cell, g = mx.rnn.RNNCell(H, activation=kind[4:], prefix="c_"), 1
    begin = cell.begin_state(func=mx.sym.Variable)
    outs, states = cell.unroll(T, mx.sym.Variable("data"), begin_state=begin, layout="TNC",
                               merge_outputs=True)
    sym = mx.sym.Group([outs] + states)
    w = {"c_i2h_weight": rng.uniform(-.5, .5, (g * H, I)), "c_h2h_weight":
         rng.uniform(-.5, .5, (g * H, H)), "c_i2h_bias": rng.uniform(-.5, .5, g * H),
         "c_h2h_bias": rng.uniform(-.5, .5, g * H)}
    x = rng.uniform(-1, 1, (T, N, I))
    st = [rng.uniform(-1, 1, (N, H)) for _ in begin]
    arrays = dict(w, data=x, **{b.name: s for b, s in zip(begin, st)})
    got = _eval(sym, arrays)
    ref_out, ref_st = run_cell(kind, x, st, w["c_i2h_weight"], w["c_h2h_weight"],
                               w["c_i2h_bias"], w["c_h2h_bias"])
    np.testing.assert_allclose(got[0], ref_out, rtol=1e-4, atol=1e-5)
    for a, b in zip(got[1:], ref_st):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode,bidir", [("lstm", True), ("gru", False), ("rnn_tanh", True)])
def test_fused_cell_matches_equations_and_unfused(rng, mode, bidir):
    T, N, I, H, L = 3, 2, 3, 4, 2
    d = 2 if bidir else 1
    cell = mx.rnn.FusedRNNCell(H, num_layers=L, mode=mode, bidirectional=bidir,
                               get_next_state=True, prefix="f_")
    begin = cell.begin_state(func=mx.sym.Variable)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs, states = cell.unroll(T, mx.sym.Variable("data"), begin_state=begin,
                                   layout="NTC", merge_outputs=True)
    sym = mx.sym.Group([outs] + states)
    shapes = sym.infer_shape(data=(N, T, I))[0]
    psize = dict(zip(sym.list_arguments(), shapes))["f_parameters"][0]
    vec = rng.uniform(-.5, .5, psize)
    x = rng.uniform(-1, 1, (N, T, I))
    st = [rng.uniform(-1, 1, (L * d, N, H)) for _ in begin]
    got = _eval(sym, dict({"data": x, "f_parameters": vec},
                          **{b.name: s for b, s in zip(begin, st)}))
    # the per-gate views unpack_weights gives, stacked again per layer/direction
    per_gate = {k: v.asnumpy() for k, v in
                cell.unpack_weights({"f_parameters": mx.nd.array(vec)}).items()}
    params = {}
    for layer in range(L):
        for dd in ("l", "r")[:d]:
            for grp in ("i2h", "h2h"):
                for t in ("weight", "bias"):
                    params["%s%d_%s_%s" % (dd, layer, grp, t)] = np.concatenate(
                        [per_gate["f_%s%d_%s%s_%s" % (dd, layer, grp, g, t)]
                         for g in cell._gate_names])
    ref_out, ref_st = run_layer(mode, x.transpose(1, 0, 2), st, params, L, bidir)
    np.testing.assert_allclose(got[0], ref_out.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)
    for a, b in zip(got[1:], ref_st):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)

    # the unfused stack of step cells on the unpacked weights computes the same output
    stack = cell.unfuse()
    sbegin = stack.begin_state(func=mx.sym.Variable)
    souts, _ = stack.unroll(T, mx.sym.Variable("data"), begin_state=sbegin, layout="NTC",
                            merge_outputs=True)
    # fused states are (layer*dir) stacked; the stack wants one (N, H) per cell state
    n_per = 2 if mode == "lstm" else 1
    sarr = {}
    for k, b in enumerate(sbegin):
        idx, which = divmod(k, n_per)
        sarr[b.name] = st[which][idx]
    packed = {k: v.asnumpy() for k, v in
              stack.pack_weights({k: mx.nd.array(v) for k, v in per_gate.items()}).items()}
    got2 = _eval(souts, dict(packed, data=x, **sarr))
    np.testing.assert_allclose(got2[0], got[0], rtol=1e-4, atol=1e-5)


def test_residual_and_bidirectional_values(rng):
    T, N, H = 2, 3, 4
    cell = mx.rnn.ResidualCell(mx.rnn.BidirectionalCell(mx.rnn.GRUCell(H // 2, prefix="l_"),
                                                        mx.rnn.GRUCell(H // 2, prefix="r_")))
    begin = cell.begin_state(func=mx.sym.Variable)
    inputs = [mx.sym.Variable("x%d" % t) for t in range(T)]
    outs, _ = cell.unroll(T, inputs, begin_state=begin, merge_outputs=False)
    sym = mx.sym.Group(outs)
    w = {}
    for p in ("l_", "r_"):
        w[p + "i2h_weight"] = rng.uniform(-.5, .5, (3 * H // 2, H))
        w[p + "h2h_weight"] = rng.uniform(-.5, .5, (3 * H // 2, H // 2))
        w[p + "i2h_bias"] = rng.uniform(-.5, .5, 3 * H // 2)
        w[p + "h2h_bias"] = rng.uniform(-.5, .5, 3 * H // 2)
    xs = rng.uniform(-1, 1, (T, N, H))
    zeros = np.zeros((N, H // 2))
    got = _eval(sym, dict(w, **{"x%d" % t: xs[t] for t in range(T)},
                          **{b.name: zeros for b in begin}))
    lo, _ = run_cell("gru", xs, [zeros], *(w["l_" + n] for n in
                                          ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")))
    ro, _ = run_cell("gru", xs[::-1], [zeros], *(w["r_" + n] for n in
                                                ("i2h_weight", "h2h_weight", "i2h_bias",
                                                 "h2h_bias")))
    ref = np.concatenate([lo, ro[::-1]], axis=-1) + xs
    for t in range(T):
        np.testing.assert_allclose(got[t], ref[t], rtol=1e-4, atol=1e-5)


def test_legacy_and_gluon_lstm_cells_agree(rng):
    T, N, I, H = 4, 2, 3, 5
    legacy = mx.rnn.LSTMCell(H, prefix="q_")
    begin = legacy.begin_state(func=mx.sym.Variable)
    outs, _ = legacy.unroll(T, mx.sym.Variable("data"), begin_state=begin, layout="NTC",
                            merge_outputs=True)
    w = {"q_i2h_weight": rng.uniform(-.5, .5, (4 * H, I)), "q_h2h_weight":
         rng.uniform(-.5, .5, (4 * H, H)), "q_i2h_bias": rng.uniform(-.5, .5, 4 * H),
         "q_h2h_bias": rng.uniform(-.5, .5, 4 * H)}
    x = rng.uniform(-1, 1, (N, T, I)).astype(np.float32)
    zeros = np.zeros((N, H))
    got = _eval(outs, dict(w, data=x, **{b.name: zeros for b in begin}))[0]
    cell = mx.gluon.rnn.LSTMCell(H, input_size=I, prefix="q_")
    cell.initialize()
    for k, v in cell.collect_params().items():
        v.set_data(mx.nd.array(w[k]))
    ref, _ = cell.unroll(T, mx.nd.array(x), layout="NTC", merge_outputs=True)
    np.testing.assert_allclose(got, ref.asnumpy(), rtol=1e-5, atol=1e-6)


def test_initializer_attributes():
    cell = mx.rnn.LSTMCell(4, prefix="a_", forget_bias=2.5)
    assert json.loads(cell.params.get("i2h_bias").attr("__init__")) == \
        ["lstmbias", {"forget_bias": 2.5}]
    fused = mx.rnn.FusedRNNCell(4, mode="gru", prefix="b_")
    kind, kw = json.loads(fused.params.get("parameters").attr("__init__"))
    assert kind == "fusedrnn" and kw["mode"] == "gru" and kw["num_hidden"] == 4
    assert fused.state_info == [{"shape": (1, 0, 4), "__layout__": "LNC"}]


def test_params_sharing_between_cells():
    params = mx.rnn.RNNParams("shared_")
    a = mx.rnn.GRUCell(3, prefix="a_", params=params)
    b = mx.rnn.GRUCell(3, prefix="b_", params=params)
    x = mx.sym.Variable("x")
    oa, _ = a.unroll(2, x, merge_outputs=True)
    ob, _ = b.unroll(2, x, merge_outputs=True)
    weights = {n for n in mx.sym.Group([oa, ob]).list_arguments() if "weight" in n}
    assert weights == {"shared_i2h_weight", "shared_h2h_weight"}


def test_errors():
    with pytest.raises(ValueError, match="mode"):
        mx.rnn.FusedRNNCell(4, mode="lstmx")
    with pytest.raises(AssertionError, match="unfuse"):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(4))
    with pytest.raises(NotImplementedError, match="unroll"):
        mx.rnn.BidirectionalCell(mx.rnn.GRUCell(2), mx.rnn.GRUCell(2))(
            mx.sym.Variable("x"), [])
    with pytest.raises(NotImplementedError, match="unroll"):
        mx.rnn.FusedRNNCell(4)(mx.sym.Variable("x"), [])
    base = mx.rnn.RNNCell(3)
    mx.rnn.ResidualCell(base)
    with pytest.raises(AssertionError, match="modifier"):
        base.begin_state()
    with pytest.raises(ValueError, match="inputs=None"):
        mx.rnn.RNNCell(3).unroll(2, None)
    with pytest.raises(ValueError, match="3 input steps"):
        mx.rnn.RNNCell(3).unroll(2, _data3())
    with pytest.raises(AssertionError, match="dropout"):
        mx.rnn.DropoutCell("0.5")
    bad = mx.rnn.FusedRNNCell(2, prefix="f_")
    with pytest.raises(mx.MXNetError, match="packed parameter vector"):
        bad._slice_weights(mx.nd.zeros(7), 1, 2)
