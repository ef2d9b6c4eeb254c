"""mx.rnn's checkpoint helpers: weights unpacked per gate on save, packed again on load."""
import numpy as np
import pytest

import mxc as mx


def test_save_and_load_rnn_checkpoint(tmp_path, rng):
    cell = mx.rnn.LSTMCell(3, prefix="lstm_")
    outs, _ = cell.unroll(2, mx.sym.Variable("data"), merge_outputs=True)
    args = {"lstm_i2h_weight": rng.standard_normal((12, 4)),
            "lstm_h2h_weight": rng.standard_normal((12, 3)),
            "lstm_i2h_bias": rng.standard_normal(12), "lstm_h2h_bias": rng.standard_normal(12)}
    args = {k: mx.nd.array(v) for k, v in args.items()}
    prefix = str(tmp_path / "m")
    mx.rnn.save_rnn_checkpoint(cell, prefix, 3, outs, args, {})
    saved = mx.nd.load(prefix + "-0003.params")
    assert "arg:lstm_i2h_f_weight" in saved and "arg:lstm_i2h_weight" not in saved
    np.testing.assert_allclose(saved["arg:lstm_i2h_o_bias"].asnumpy(),
                               args["lstm_i2h_bias"].asnumpy()[9:])
    sym, arg, aux = mx.rnn.load_rnn_checkpoint([cell], prefix, 3)
    assert sym.list_arguments() == outs.list_arguments()
    assert sorted(arg) == sorted(args) and aux == {}
    for k, v in args.items():
        np.testing.assert_allclose(arg[k].asnumpy(), v.asnumpy())


def test_do_rnn_checkpoint_period(tmp_path):
    cell = mx.rnn.GRUCell(2, prefix="g_")
    outs, _ = cell.unroll(1, mx.sym.Variable("data"), merge_outputs=True)
    args = {"g_i2h_weight": mx.nd.ones((6, 2)), "g_h2h_weight": mx.nd.ones((6, 2)),
            "g_i2h_bias": mx.nd.zeros(6), "g_h2h_bias": mx.nd.zeros(6)}
    cb = mx.rnn.do_rnn_checkpoint(cell, str(tmp_path / "c"), period=2)
    for epoch in range(4):
        cb(epoch, outs, args, {})
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".params") == \
        ["c-0002.params", "c-0004.params"]


def test_rnn_unroll_is_deprecated():
    cell = mx.rnn.RNNCell(2, prefix="r_")
    with pytest.warns(UserWarning, match="deprecated"):
        outs, _ = mx.rnn.rnn_unroll(cell, 2, [mx.sym.Variable("a"), mx.sym.Variable("b")])
    assert len(outs) == 2
