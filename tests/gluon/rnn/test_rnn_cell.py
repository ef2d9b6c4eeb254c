"""gluon.rnn cells: MXNet 1.9.1's values (fixture), names, the numpy equations, unroll
variants (layouts, merge, valid_length), modifiers, hybridization and gradients."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc import autograd, gluon
from tests.gluon.rnn.reference import run_cell

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data", "gluon_rnn")
GOLD = np.load(os.path.join(DATA, "golden.npz"))
T, N, I, H = 5, 3, 4, 6


def _set(cell, values):
    for name, p in cell.collect_params().items():
        p.set_data(mx.nd.array(values[name]))


@pytest.mark.parametrize("kind", ["lstmcell", "grucell", "rnncell"])
def test_cell_matches_mxnet(kind):
    cls = {"lstmcell": gluon.rnn.LSTMCell, "grucell": gluon.rnn.GRUCell,
           "rnncell": gluon.rnn.RNNCell}[kind]
    cell = cls(H, input_size=I, prefix=kind + "_")
    cell.initialize()
    pre = kind + "/param/"
    _set(cell, {k[len(pre):]: GOLD[k] for k in GOLD.files if k.startswith(pre)})
    out, states = cell.unroll(T, mx.nd.array(GOLD[kind + "/x"]), layout="NTC",
                              merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), GOLD[kind + "/out"], rtol=1e-5, atol=1e-6)
    for i, s in enumerate(states):
        np.testing.assert_allclose(s.asnumpy(), GOLD["%s/hN_%d" % (kind, i)], rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("cls,nstates", [(gluon.rnn.RNNCell, 1), (gluon.rnn.LSTMCell, 2),
                                         (gluon.rnn.GRUCell, 1)])
def test_symbolic_unroll_names(cls, nstates):
    cell = cls(100, prefix="rnn_")
    inputs = [mx.sym.Variable("rnn_t%d_data" % i) for i in range(3)]
    outputs, states = cell.unroll(3, inputs)
    assert len(states) == nstates
    outputs = mx.sym.Group(outputs)
    assert sorted(cell.collect_params().keys()) == ["rnn_h2h_bias", "rnn_h2h_weight",
                                                    "rnn_i2h_bias", "rnn_i2h_weight"]
    assert outputs.list_outputs() == ["rnn_t0_out_output", "rnn_t1_out_output",
                                      "rnn_t2_out_output"]
    _, outs, _ = outputs.infer_shape(rnn_t0_data=(10, 50), rnn_t1_data=(10, 50),
                                     rnn_t2_data=(10, 50))
    assert outs == [(10, 100)] * 3


def test_default_prefixes_and_repr():
    with mx.name.NameManager():
        pass
    c = gluon.rnn.LSTMCell(4)
    assert c.prefix.startswith("lstm") and c.i2h_weight.name == c.prefix + "i2h_weight"
    assert gluon.rnn.GRUCell(3).prefix.startswith("gru")
    assert gluon.rnn.RNNCell(3).prefix.startswith("rnn")
    assert gluon.rnn.DropoutCell(0.1).prefix.startswith("dropout")
    assert repr(gluon.rnn.LSTMCell(4, input_size=3)) == "LSTMCell(3 -> 16)"
    assert repr(gluon.rnn.RNNCell(4)) == "RNNCell(None -> 4, tanh)"
    z = gluon.rnn.ZoneoutCell(gluon.rnn.GRUCell(2, prefix="g_"), 0.1, 0.2)
    assert z.prefix == "g_zoneout" and z.params is z.base_cell.params


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_relu"])
@pytest.mark.parametrize("layout", ["NTC", "TNC"])
def test_unroll_computes_equations_with_begin_state(rng, kind, layout):
    if kind == "lstm":
        cell, g = gluon.rnn.LSTMCell(H, input_size=I), 4
    elif kind == "gru":
        cell, g = gluon.rnn.GRUCell(H, input_size=I), 3
    else:
        cell, g = gluon.rnn.RNNCell(H, activation="relu", input_size=I), 1
    cell.initialize()
    w = {"i2h_weight": rng.uniform(-.5, .5, (g * H, I)), "h2h_weight":
         rng.uniform(-.5, .5, (g * H, H)), "i2h_bias": rng.uniform(-.5, .5, g * H),
         "h2h_bias": rng.uniform(-.5, .5, g * H)}
    _set(cell, {cell.prefix + k: v for k, v in w.items()})
    x = rng.uniform(-1, 1, (T, N, I))
    begin = [rng.uniform(-1, 1, (N, H)) for _ in cell.state_info()]
    xin = x if layout == "TNC" else x.transpose(1, 0, 2)
    out, states = cell.unroll(T, mx.nd.array(xin), begin_state=[mx.nd.array(b) for b in begin],
                              layout=layout, merge_outputs=True)
    ref, ref_states = run_cell(kind, x, begin, w["i2h_weight"], w["h2h_weight"],
                               w["i2h_bias"], w["h2h_bias"])
    if layout == "NTC":
        ref = ref.transpose(1, 0, 2)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    for a, b in zip(states, ref_states):
        np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-4, atol=1e-5)
    # list outputs, list inputs
    outs, _ = cell.unroll(T, [mx.nd.array(x[t]) for t in range(T)],
                          begin_state=[mx.nd.array(b) for b in begin], merge_outputs=False)
    assert len(outs) == T
    np.testing.assert_allclose(outs[-1].asnumpy(), ref_states[0], rtol=1e-4, atol=1e-5)


def test_hybridized_cell_matches_imperative_with_gradients(rng):
    for cell in (gluon.rnn.LSTMCell(5, input_size=3), gluon.rnn.GRUCell(5, input_size=3)):
        cell.initialize()
        x = mx.nd.array(rng.uniform(-1, 1, (2, 4, 3)))
        x.attach_grad()
        with autograd.record():
            out = cell.unroll(4, x, merge_outputs=True)[0]
        out.backward()
        ref, gref = out.asnumpy(), x.grad.asnumpy().copy()
        cell.hybridize()
        with autograd.record():
            out2 = cell.unroll(4, x, merge_outputs=True)[0]
        out2.backward()
        np.testing.assert_allclose(out2.asnumpy(), ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(x.grad.asnumpy(), gref, rtol=1e-5, atol=1e-6)


def test_deferred_input_size():
    cell = gluon.rnn.LSTMCell(10)
    cell.initialize()
    out, _ = cell.unroll(3, mx.nd.ones((2, 3, 7)), merge_outputs=True)
    assert out.shape == (2, 3, 10) and cell.i2h_weight.shape == (40, 7)


def test_lstm_gradient_numerically(rng):
    cell = gluon.rnn.LSTMCell(3, input_size=2)
    cell.initialize()
    cell.cast("float64")
    for p in cell.collect_params().values():
        p.set_data(mx.nd.array(rng.uniform(-.8, .8, p.shape), dtype="float64"))
    x0 = rng.uniform(-1, 1, (2, 3, 2))
    w = rng.uniform(-1, 1, (2, 3, 3))

    def f(xv):
        out = cell.unroll(3, mx.nd.array(xv, dtype="float64"), merge_outputs=True)[0]
        return float((out.asnumpy() * w).sum())

    x = mx.nd.array(x0, dtype="float64")
    x.attach_grad()
    with autograd.record():
        out = cell.unroll(3, x, merge_outputs=True)[0]
        (out * mx.nd.array(w, dtype="float64")).sum().backward()
    num = np.zeros_like(x0)
    for idx in np.ndindex(*x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[idx] += 1e-6
        xm[idx] -= 1e-6
        num[idx] = (f(xp) - f(xm)) / 2e-6
    np.testing.assert_allclose(x.grad.asnumpy(), num, rtol=1e-5, atol=1e-8)


def test_stack_residual_dropout_and_indexing(rng):
    for stack in (gluon.rnn.SequentialRNNCell(), gluon.rnn.HybridSequentialRNNCell()):
        with stack.name_scope():
            stack.add(gluon.rnn.LSTMCell(4, input_size=4))
            stack.add(gluon.rnn.DropoutCell(0.5))
            stack.add(gluon.rnn.ResidualCell(gluon.rnn.GRUCell(4, input_size=4)))
        stack.initialize()
        assert len(stack) == 3 and isinstance(stack[2], gluon.rnn.ResidualCell)
        assert len(stack.state_info(2)) == 3
        x = rng.uniform(-1, 1, (2, 3, 4))
        out, states = stack.unroll(3, mx.nd.array(x), merge_outputs=True)
        assert out.shape == (2, 3, 4) and len(states) == 3
        # inference: dropout is the identity; compute the stack by hand
        lstm, res = stack[0], stack[2]
        h1, _ = lstm.unroll(3, mx.nd.array(x), merge_outputs=True)
        res.base_cell._modified = False
        h2, _ = res.base_cell.unroll(3, h1, merge_outputs=True)
        res.base_cell._modified = True
        np.testing.assert_allclose(out.asnumpy(), (h2 + h1).asnumpy(), rtol=1e-5, atol=1e-6)
        # stepping through the stack gives the same last output
        st = stack.begin_state(batch_size=2)
        for t in range(3):
            o, st = stack(mx.nd.array(x[:, t]), st)
        np.testing.assert_allclose(o.asnumpy(), out.asnumpy()[:, -1], rtol=1e-5, atol=1e-6)


def test_bidirectional_cell(rng):
    bi = gluon.rnn.BidirectionalCell(gluon.rnn.GRUCell(3, input_size=2, prefix="l_"),
                                     gluon.rnn.GRUCell(3, input_size=2, prefix="r_"))
    bi.initialize()
    x = rng.uniform(-1, 1, (4, 2, 2))
    out, states = bi.unroll(4, mx.nd.array(x), layout="TNC", merge_outputs=True)
    assert out.shape == (4, 2, 6) and len(states) == 2
    p = {k: v.data().asnumpy() for k, v in bi.collect_params().items()}
    zeros = np.zeros((2, 3))
    lo, ls = run_cell("gru", x, [zeros], p["l_i2h_weight"], p["l_h2h_weight"],
                      p["l_i2h_bias"], p["l_h2h_bias"])
    ro, rs = run_cell("gru", x[::-1], [zeros], p["r_i2h_weight"], p["r_h2h_weight"],
                      p["r_i2h_bias"], p["r_h2h_bias"])
    np.testing.assert_allclose(out.asnumpy(), np.concatenate([lo, ro[::-1]], -1), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(states[1].asnumpy(), rs[0], rtol=1e-4, atol=1e-5)
    outs, _ = bi.unroll(4, mx.nd.array(x), layout="TNC", merge_outputs=False)
    assert len(outs) == 4 and outs[0].shape == (2, 6)
    with pytest.raises(NotImplementedError, match="unroll"):
        bi(mx.nd.ones((2, 2)), [])
    sym_outs, _ = gluon.rnn.BidirectionalCell(gluon.rnn.LSTMCell(5, prefix="a_"),
                                              gluon.rnn.LSTMCell(5, prefix="b_"),
                                              output_prefix="bi_").unroll(
        2, [mx.sym.var("x0"), mx.sym.var("x1")])
    assert mx.sym.Group(sym_outs).list_outputs() == ["bi_t0_output", "bi_t1_output"]


@pytest.mark.parametrize("make", [
    lambda: gluon.rnn.RNNCell(4, input_size=3),
    lambda: gluon.rnn.LSTMCell(4, input_size=3),
    lambda: gluon.rnn.BidirectionalCell(gluon.rnn.GRUCell(4, input_size=3),
                                        gluon.rnn.GRUCell(4, input_size=3)),
])
def test_unroll_valid_length(rng, make):
    cell = make()
    cell.initialize()
    lengths = [2, 5, 3]
    x = mx.nd.array(rng.standard_normal((3, 5, 3)))
    outs, states = cell.unroll(5, x, valid_length=mx.nd.array(lengths), merge_outputs=True,
                               layout="NTC")
    for i, n in enumerate(lengths):
        ref, ref_states = cell.unroll(n, x[i:i + 1, :n], merge_outputs=True, layout="NTC")
        np.testing.assert_allclose(outs[i:i + 1, :n].asnumpy(), ref.asnumpy(), rtol=1e-4,
                                   atol=1e-5)
        assert (outs[i, n:].asnumpy() == 0).all()
        for s, r in zip(states, ref_states):
            np.testing.assert_allclose(s[i:i + 1].asnumpy(), r.asnumpy(), rtol=1e-4, atol=1e-5)


def test_zoneout_and_dropout_cells(rng):
    base = gluon.rnn.RNNCell(6, input_size=4)
    cell = gluon.rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5)
    cell.initialize()
    x = mx.nd.array(rng.uniform(-1, 1, (3, 4, 4)))
    # inference: zoneout keeps nothing, the output is the base cell's
    out, _ = cell.unroll(4, x, merge_outputs=True)
    base._modified = False
    ref, _ = base.unroll(4, x, merge_outputs=True)
    base._modified = True
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-6)
    # training: every output unit is either the new value or the previous output
    with autograd.record():
        outs, _ = cell.unroll(4, x, merge_outputs=False)
    o = [v.asnumpy() for v in outs]
    assert not np.allclose(o[1], ref.asnumpy()[:, 1])
    assert (np.isin(o[0], [0.0]) | np.isclose(o[0], ref.asnumpy()[:, 0])).all()
    with pytest.raises(AssertionError, match="modifier"):
        base.begin_state()
    with pytest.raises(AssertionError, match="already modified"):
        gluon.rnn.ResidualCell(base)
    drop = gluon.rnn.DropoutCell(0.5)
    y, st = drop.unroll(4, x, merge_outputs=True)
    assert st == [] and (y.asnumpy() == x.asnumpy()).all()
    with autograd.record():
        y, _ = drop.unroll(4, x, merge_outputs=True)
    kept = y.asnumpy() != 0
    np.testing.assert_allclose(y.asnumpy()[kept], 2 * x.asnumpy()[kept], rtol=1e-6)
    assert 0 < kept.mean() < 1
    with pytest.raises(AssertionError, match="number"):
        gluon.rnn.DropoutCell("0.5")


def test_unroll_input_errors():
    cell = gluon.rnn.GRUCell(3, input_size=2)
    cell.initialize()
    with pytest.raises(ValueError, match="inputs=None"):
        cell.unroll(2, None)
    with pytest.raises(ValueError, match="2 input steps"):
        cell.unroll(3, [mx.nd.ones((1, 2))] * 2)
    with pytest.raises(ValueError, match="4 steps"):
        cell.unroll(3, mx.nd.ones((1, 4, 2)))


def test_begin_state_functions():
    cell = gluon.rnn.LSTMCell(3, prefix="c_")
    zs = cell.begin_state(batch_size=2)
    assert [z.shape for z in zs] == [(2, 3), (2, 3)] and not zs[0].asnumpy().any()
    ones = cell.begin_state(batch_size=2, func=mx.nd.ones)
    assert ones[1].asnumpy().all()
    syms = cell.begin_state(func=mx.sym.var)
    # the counter runs on until the next unroll resets it, as in MXNet
    assert [s.name for s in syms] == ["c_begin_state_4", "c_begin_state_5"]
    assert syms[0].attr("__layout__") == "NC"
    layer = gluon.rnn.GRU(4, num_layers=2, prefix="g_")
    assert [s.name for s in layer.begin_state(func=mx.sym.var)] == ["g_h0_0"]
    assert layer.begin_state(5)[0].shape == (2, 5, 4)


def test_hybrid_block_holding_cells(rng):
    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.cell = gluon.rnn.GRUCell(4, input_size=3)

        def hybrid_forward(self, F, x, h):
            out, _ = self.cell.unroll(2, x, begin_state=[h], merge_outputs=True)
            return out

    net = Net()
    net.initialize()
    x = mx.nd.array(rng.uniform(-1, 1, (5, 2, 3)))
    h = mx.nd.zeros((5, 4))
    ref = net(x, h).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x, h).asnumpy(), ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("length", [1, 3])
def test_hybridized_bidirectional_with_valid_length(rng, length):
    class BiLSTM(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.bi = gluon.rnn.BidirectionalCell(
                    gluon.rnn.LSTMCell(4, input_size=3, prefix="l0_"),
                    gluon.rnn.LSTMCell(4, input_size=3, prefix="r0_"), output_prefix="bi_")

        def hybrid_forward(self, F, x, valid, *states):
            return self.bi.unroll(length, x, begin_state=list(states), valid_length=valid,
                                  layout="NTC", merge_outputs=True)

    net = BiLSTM()
    net.initialize()
    x = mx.nd.array(rng.uniform(-1, 1, (5, length, 3)))
    valid = mx.nd.array([length, 1, length, 1, 1])
    states = [mx.nd.zeros((5, 4)) for _ in range(4)]
    out, st = net(x, valid, *states)
    net.hybridize()
    out2, st2 = net(x, valid, *states)
    assert out2.shape == (5, length, 8) and len(st2) == 4
    np.testing.assert_allclose(out2.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(st, st2):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    if length > 1:
        assert (out2.asnumpy()[1, 1:] == 0).all()
