"""gluon.rnn.RNN/LSTM/GRU: layers saved by real MXNet 1.9.1 run here to the same values
(tests/data/make_gluon_rnn_golden.py), the numpy equations, the unfused cells, gradients."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc import autograd, gluon
from tests.gluon.rnn.reference import run_layer

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data", "gluon_rnn")
GOLD = np.load(os.path.join(DATA, "golden.npz"))

MAKE = {
    "lstm": lambda: gluon.rnn.LSTM(6, num_layers=2, bidirectional=True, layout="NTC",
                                   prefix="lstm0_"),
    "gru": lambda: gluon.rnn.GRU(6, num_layers=2, prefix="gru0_"),
    "rnn_tanh": lambda: gluon.rnn.RNN(6, activation="tanh", bidirectional=True, prefix="rnn0_"),
}


def _states(case):
    return [mx.nd.array(GOLD["%s/h0_%d" % (case, i)]) for i in range(2)
            if "%s/h0_%d" % (case, i) in GOLD]


@pytest.mark.parametrize("case", sorted(MAKE))
def test_layer_saved_by_mxnet_runs_to_same_values(case):
    layer = MAKE[case]()
    layer.load_parameters(os.path.join(DATA, case + ".params"))
    x = mx.nd.array(GOLD[case + "/x"])
    x.attach_grad()
    with autograd.record():
        out, hn = layer(x, _states(case))
        loss = (out * mx.nd.array(GOLD[case + "/w"])).sum()
    loss.backward()
    np.testing.assert_allclose(out.asnumpy(), GOLD[case + "/out"], rtol=1e-5, atol=1e-6)
    for i, h in enumerate(hn):
        np.testing.assert_allclose(h.asnumpy(), GOLD["%s/hN_%d" % (case, i)], rtol=1e-5,
                                   atol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), GOLD[case + "/dx"], rtol=1e-4, atol=1e-6)
    for name, p in layer.collect_params().items():
        ref = GOLD["%s/grad/%s" % (case, name[len(layer.prefix):])]
        np.testing.assert_allclose(p.grad().asnumpy(), ref, rtol=1e-4, atol=1e-5,
                                   err_msg=name)


def test_lstm_projection_saved_by_mxnet():
    layer = gluon.rnn.LSTM(6, projection_size=3, prefix="lstmp0_")
    layer.load_parameters(os.path.join(DATA, "lstmp.params"))
    assert layer.l0_h2r_weight.shape == (3, 6) and layer.l0_h2h_weight.shape == (24, 3)
    out, (hn, cn) = layer(mx.nd.array(GOLD["lstmp/x"]), _states("lstmp"))
    np.testing.assert_allclose(out.asnumpy(), GOLD["lstmp/out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hn.asnumpy(), GOLD["lstmp/hN_0"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cn.asnumpy(), GOLD["lstmp/hN_1"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode,layers,bidir,layout", [
    ("lstm", 2, True, "TNC"), ("gru", 1, False, "NTC"), ("rnn_relu", 2, False, "TNC"),
    ("rnn_tanh", 1, True, "NTC")])
def test_layer_computes_the_equations(rng, mode, layers, bidir, layout):
    T, N, I, H = 4, 3, 5, 4
    if mode == "lstm":
        layer = gluon.rnn.LSTM(H, layers, layout=layout, bidirectional=bidir)
    elif mode == "gru":
        layer = gluon.rnn.GRU(H, layers, layout=layout, bidirectional=bidir)
    else:
        layer = gluon.rnn.RNN(H, layers, activation=mode[4:], layout=layout, bidirectional=bidir)
    layer.initialize(mx.init.Uniform(0.5) if hasattr(mx, "init") else None)
    x = rng.uniform(-1, 1, (T, N, I) if layout == "TNC" else (N, T, I)).astype(np.float32)
    states = layer.begin_state(N)
    states = [mx.nd.array(rng.uniform(-1, 1, s.shape)) for s in states]
    out, hn = layer(mx.nd.array(x), states)
    params = {k[len(layer.prefix):]: v.data().asnumpy()
              for k, v in layer.collect_params().items()}
    xt = x if layout == "TNC" else x.transpose(1, 0, 2)
    ref, ref_states = run_layer(mode, xt, [s.asnumpy() for s in states], params, layers, bidir)
    if layout == "NTC":
        ref = ref.transpose(1, 0, 2)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    for a, b in zip(hn, ref_states):
        np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
@pytest.mark.parametrize("bidir", [False, True])
def test_fused_layer_and_unfused_cells_agree(rng, mode, bidir):
    T, N, I, H, L = 3, 2, 4, 5, 2
    cls = {"lstm": gluon.rnn.LSTM, "gru": gluon.rnn.GRU,
           "rnn_tanh": lambda *a, **k: gluon.rnn.RNN(*a, activation="tanh", **k)}[mode]
    layer = cls(H, L, bidirectional=bidir, layout="NTC", input_size=I, prefix="f_")
    layer.initialize()
    for p in layer.collect_params().values():
        p.set_data(mx.nd.array(rng.uniform(-.5, .5, p.shape)))
    stack = layer._unfuse()
    assert sorted(stack.collect_params().keys()) == sorted(layer.collect_params().keys())
    x = mx.nd.array(rng.uniform(-1, 1, (N, T, I)))
    xf, xs = x.copy(), x.copy()
    xf.attach_grad()
    xs.attach_grad()
    w = mx.nd.array(rng.uniform(-1, 1, (N, T, H * (2 if bidir else 1))))
    with autograd.record():
        out_f = layer(xf)
        (out_f * w).sum().backward()
    grads_f = {k: v.grad().asnumpy().copy() for k, v in layer.collect_params().items()}
    layer.collect_params().zero_grad()
    with autograd.record():
        out_s, _ = stack.unroll(T, xs, layout="NTC", merge_outputs=True)
        (out_s * w).sum().backward()
    np.testing.assert_allclose(out_f.asnumpy(), out_s.asnumpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xf.grad.asnumpy(), xs.grad.asnumpy(), rtol=1e-4, atol=1e-5)
    for k, v in layer.collect_params().items():
        np.testing.assert_allclose(grads_f[k], v.grad().asnumpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=k)


def test_gru_gradient_numerically(rng):
    T, N, I, H = 3, 2, 2, 3
    layer = gluon.rnn.GRU(H, bidirectional=True, input_size=I, dtype="float64")
    layer.initialize()
    for p in layer.collect_params().values():
        p.set_data(mx.nd.array(rng.uniform(-.8, .8, p.shape), dtype="float64"))
    x0 = rng.uniform(-1, 1, (T, N, I))
    w = rng.uniform(-1, 1, (T, N, 2 * H))

    def f(xv):
        return float((layer(mx.nd.array(xv, dtype="float64")).asnumpy() * w).sum())

    x = mx.nd.array(x0, dtype="float64")
    x.attach_grad()
    with autograd.record():
        (layer(x) * mx.nd.array(w, dtype="float64")).sum().backward()
    num = np.zeros_like(x0)
    eps = 1e-6
    for idx in np.ndindex(*x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[idx] += eps
        xm[idx] -= eps
        num[idx] = (f(xp) - f(xm)) / (2 * eps)
    np.testing.assert_allclose(x.grad.asnumpy(), num, rtol=1e-5, atol=1e-8)


def test_hybridized_layer_matches_imperative(rng):
    layer = gluon.rnn.LSTM(4, 2, bidirectional=True)
    layer.initialize()
    x = mx.nd.array(rng.uniform(-1, 1, (5, 3, 7)))
    x.attach_grad()
    with autograd.record():
        y = layer(x)
    y.backward()
    g = x.grad.asnumpy().copy()
    assert layer.l0_i2h_weight.shape == (16, 7)     # deferred input size filled
    layer.hybridize()
    with autograd.record():
        y2 = layer(x)
    y2.backward()
    np.testing.assert_allclose(y.asnumpy(), y2.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, x.grad.asnumpy(), rtol=1e-5, atol=1e-6)
    out, states = layer(x, layer.begin_state(3))
    assert out.shape == (5, 3, 8) and [s.shape for s in states] == [(4, 3, 4)] * 2


def test_hybridized_layer_fills_input_size():
    layer = gluon.rnn.GRU(10)
    layer.hybridize()
    layer.initialize()
    out = layer(mx.nd.ones((3, 2, 7)))
    assert out.shape == (3, 2, 10)
    assert layer.l0_i2h_weight.shape == (30, 7)
    assert repr(layer) == "GRU(7 -> 10, TNC)"


def test_parameter_names_and_shapes():
    layer = gluon.rnn.LSTM(5, num_layers=2, bidirectional=True, input_size=3, prefix="m_")
    shapes = {k: v.shape for k, v in layer.collect_params().items()}
    assert shapes["m_l0_i2h_weight"] == (20, 3) and shapes["m_r0_h2h_weight"] == (20, 5)
    assert shapes["m_l1_i2h_weight"] == (20, 10) and shapes["m_r1_h2h_bias"] == (20,)
    assert len(shapes) == 16
    # the save_parameters names of MXNet's old unfused layers
    names = sorted(layer._collect_params_with_prefix())
    assert "_unfused.0.l_cell.i2h_weight" in names and "_unfused.1.r_cell.h2h_bias" in names
    uni = gluon.rnn.GRU(3, input_size=2)
    assert "_unfused.0.i2h_weight" in uni._collect_params_with_prefix()
    proj = gluon.rnn.LSTM(6, projection_size=2, input_size=3, num_layers=2)
    assert proj.l0_h2r_weight.shape == (2, 6) and proj.l1_i2h_weight.shape == (24, 2)
    assert [s["shape"] for s in proj.state_info(4)] == [(2, 4, 2), (2, 4, 6)]


def test_save_load_parameters_roundtrip(tmp_path, rng):
    layer = gluon.rnn.GRU(3, input_size=2, prefix="g_")
    layer.initialize()
    x = mx.nd.array(rng.uniform(-1, 1, (4, 1, 2)))
    ref = layer(x).asnumpy()
    path = str(tmp_path / "g.params")
    layer.save_parameters(path)
    other = gluon.rnn.GRU(3, prefix="g_")
    other.load_parameters(path)
    np.testing.assert_allclose(other(x).asnumpy(), ref, rtol=1e-6)


def test_state_shape_is_checked():
    layer = gluon.rnn.RNN(4, input_size=3)
    layer.initialize()
    with pytest.raises(ValueError, match="Invalid recurrent state shape"):
        layer(mx.nd.ones((2, 5, 3)), mx.nd.ones((1, 4, 4)))
    with pytest.raises(AssertionError, match="Invalid layout"):
        gluon.rnn.LSTM(3, layout="NCT")


def test_dropout_between_layers_only_in_training():
    layer = gluon.rnn.LSTM(8, num_layers=2, dropout=0.5, input_size=4)
    layer.initialize()
    x = mx.nd.ones((3, 2, 4))
    a = layer(x).asnumpy()
    np.testing.assert_allclose(layer(x).asnumpy(), a)     # inference: deterministic
    with autograd.record():
        b = layer(x).asnumpy()
    assert not np.allclose(a, b)


def test_symbolic_call_and_export(tmp_path):
    layer = gluon.rnn.GRU(4, input_size=3, prefix="gru_")
    out = layer(mx.sym.var("data"))
    assert isinstance(out, mx.sym.Symbol)
    args = out.list_arguments()
    assert "gru_l0_i2h_weight" in args and "data" in args
    layer.initialize()
    layer.hybridize()
    x = mx.nd.ones((2, 1, 3))
    ref = layer(x).asnumpy()
    layer.export(str(tmp_path / "gru"))
    # as in MXNet, the begin state the layer made is the graph's second input
    net = gluon.SymbolBlock.imports(str(tmp_path / "gru-symbol.json"), ["data0", "data1"],
                                    str(tmp_path / "gru-0000.params"))
    np.testing.assert_allclose(net(x, mx.nd.zeros((1, 1, 4))).asnumpy(), ref, rtol=1e-6)
