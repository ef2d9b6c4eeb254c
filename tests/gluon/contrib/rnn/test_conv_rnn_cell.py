"""gluon.contrib.rnn's convolutional cells and dynamic_unroll against real MXNet 1.9.1
(tests/data/make_gluon_contrib_golden.py): outputs, final states and input gradients."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc import autograd, gluon
from mxc.gluon import contrib

GOLD = np.load(os.path.join(os.path.dirname(__file__), "..", "..", "..", "data",
                            "gluon_contrib", "golden.npz"))

CASES = {
    "rnn1d": (contrib.rnn.Conv1DRNNCell, (3, 7), 4, 3, 3, {"i2h_pad": 1}),
    "lstm2d": (contrib.rnn.Conv2DLSTMCell, (2, 5, 6), 3, (3, 2), (3, 1), {}),
    "gru1d": (contrib.rnn.Conv1DGRUCell, (2, 8), 3, 2, 5, {"i2h_dilate": 2, "h2h_dilate": 2}),
    "gru3d": (contrib.rnn.Conv3DGRUCell, (2, 3, 4, 4), 2, 2, 3, {"activation": "relu"}),
}


def _load_params(block, case, prefix):
    for name, p in block.collect_params().items():
        p.set_data(mx.nd.array(GOLD["%s/param/%s" % (case, name[len(prefix):])]))


def _check_run(case, out, states, x):
    np.testing.assert_allclose(out.asnumpy(), GOLD[case + "/out"], rtol=1e-4, atol=1e-5)
    for i, s in enumerate(states):
        np.testing.assert_allclose(s.asnumpy(), GOLD["%s/state%d" % (case, i)], rtol=1e-4,
                                   atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), GOLD[case + "/dx"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("hybrid", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_conv_cells_match_mxnet(case, hybrid):
    cls, in_shape, hidden, k_i, k_h, kw = CASES[case]
    cell = cls(in_shape, hidden, k_i, k_h, prefix="c_", **kw)
    cell.initialize()
    if hybrid:
        cell.hybridize()
    x = GOLD[case + "/x"]
    n, t = x.shape[:2]
    states = [mx.nd.array(GOLD["%s/s%d" % (case, i)]) for i in range(len(cell.state_info()))]
    cell(mx.nd.array(x[:, 0]), states)        # settles deferred shapes
    _load_params(cell, case, "c_")
    xs = mx.nd.array(x)
    xs.attach_grad()
    with autograd.record():
        out, st = cell.unroll(t, xs, states, layout="NTC", merge_outputs=True)
        (out * mx.nd.array(GOLD[case + "/w"])).sum().backward()
    _check_run(case, out, st, xs)


def test_conv_cell_shapes_and_names():
    cell = contrib.rnn.Conv2DLSTMCell((10, 20, 50), 100, 3, 3, prefix="rnn_")
    assert cell.i2h_weight.shape == (400, 10, 3, 3)
    assert cell.h2h_weight.shape == (400, 100, 3, 3)
    assert cell.state_info(2) == [{"shape": (2, 100, 18, 48), "__layout__": "NCHW"}] * 2
    outs, _ = cell.unroll(2, [mx.sym.var("a"), mx.sym.var("b")])
    group = mx.sym.Group(outs)
    assert group.list_outputs() == ["rnn_t0_out_output", "rnn_t1_out_output"]
    _, out_shapes, _ = group.infer_shape(a=(1, 10, 20, 50), b=(1, 10, 20, 50))
    assert out_shapes == [(1, 100, 18, 48)] * 2
    # channels-last layout keeps channels last in weights and state
    nwc = contrib.rnn.Conv1DGRUCell((7, 5), 4, 3, 3, conv_layout="NWC")
    assert nwc.i2h_weight.shape == (12, 3, 5) and nwc.state_info(1)[0]["shape"] == (1, 5, 4)


def test_conv_cell_fills_unknown_channels():
    cell = contrib.rnn.Conv1DLSTMCell((0, 7), 10, (3,), (3,))
    cell.hybridize()
    cell.initialize()
    cell.unroll(3, mx.nd.ones((8, 3, 5, 7)), merge_outputs=True)
    assert cell.i2h_weight.shape == (40, 5, 3)


@pytest.mark.parametrize("bad, match", [
    (dict(h2h_kernel=2), "odd"),
    (dict(i2h_kernel=(3, 3)), "length 1"),
    (dict(input_shape=(3, 4, 5)), "input_shape"),
    (dict(conv_layout="NCHW"), "layout"),
])
def test_conv_cell_bad_arguments(bad, match):
    args = dict(input_shape=(3, 7), hidden_channels=4, i2h_kernel=3, h2h_kernel=3)
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        contrib.rnn.Conv1DRNNCell(**args)


@pytest.mark.parametrize("case, cls, layout", [
    ("unroll_lstm_ntc", gluon.rnn.LSTMCell, "NTC"),
    ("unroll_gru_tnc", gluon.rnn.GRUCell, "TNC"),
])
def test_dynamic_unroll_matches_mxnet(case, cls, layout):
    cell = cls(6, input_size=3, prefix="u_")
    cell.initialize()
    nstates = len(cell.state_info())
    cell(mx.nd.zeros((4, 3)), [mx.nd.zeros((4, 6))] * nstates)
    _load_params(cell, case, "u_")
    xs = mx.nd.array(GOLD[case + "/x"])
    xs.attach_grad()
    states = [mx.nd.array(GOLD["%s/s%d" % (case, i)]) for i in range(nstates)]
    with autograd.record():
        out, st = contrib.rnn.rnn_cell.dynamic_unroll(
            cell, xs, states, layout=layout, valid_length=mx.nd.array(GOLD[case + "/valid"]))
        (out * mx.nd.array(GOLD[case + "/w"])).sum().backward()
    _check_run(case, out, st, xs)
