"""gluon.contrib.rnn: LSTMPCell against the fused LSTM with a projection, and
VariationalDropoutCell's shared masks."""
import numpy as np
import pytest

import mxc as mx
import mxc.gluon.contrib  # noqa: F401
from mxc import autograd, gluon


@pytest.mark.parametrize("bidir", [False, True])
def test_lstmp_cells_match_fused_layer(rng, bidir):
    H, P, N, T, I, L = 6, 3, 2, 4, 5, 2
    fused = gluon.rnn.LSTM(H, projection_size=P, num_layers=L, bidirectional=bidir,
                           prefix="lstm0_", input_size=I)
    stack = gluon.rnn.HybridSequentialRNNCell(prefix="lstm0_")
    with stack.name_scope():
        for i in range(L):
            ni = I if i == 0 else P * (2 if bidir else 1)
            make = lambda p: gluon.contrib.rnn.LSTMPCell(H, P, input_size=ni, prefix=p)
            stack.add(gluon.rnn.BidirectionalCell(make("l%d_" % i), make("r%d_" % i))
                      if bidir else make("l%d_" % i))
    fused.initialize()
    stack.initialize()
    sp = stack.collect_params()
    assert sorted(sp.keys()) == sorted(fused.collect_params().keys())
    for name, p in fused.collect_params().items():
        v = mx.nd.array(rng.uniform(-.5, .5, p.shape))
        p.set_data(v)
        sp[name].set_data(v)
    x = mx.nd.array(rng.uniform(-1, 1, (T, N, I)))
    out, (h, c) = fused(x, fused.begin_state(N))
    sout, sstates = stack.unroll(T, x, begin_state=stack.begin_state(batch_size=N),
                                 layout="TNC", merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), sout.asnumpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h.asnumpy(), np.stack([s.asnumpy() for s in sstates[0::2]]),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c.asnumpy(), np.stack([s.asnumpy() for s in sstates[1::2]]),
                               rtol=1e-4, atol=1e-5)
    assert repr(stack[0]).startswith(("LSTMPCell(5 -> 24 -> 3)", "BidirectionalCell"))


@pytest.mark.parametrize("drop_states", [0.0, 0.5])
def test_variational_dropout_masks_are_shared_over_time(rng, drop_states):
    base = gluon.rnn.RNNCell(8, input_size=8, activation="relu")
    cell = gluon.contrib.rnn.VariationalDropoutCell(base, drop_inputs=0.5,
                                                    drop_states=drop_states, drop_outputs=0.5)
    cell.initialize()
    for p in cell.collect_params().values():
        p.set_data(mx.nd.ones(p.shape) * 0.1)
    x = mx.nd.ones((4, 5, 8))
    out, _ = cell.unroll(5, x, merge_outputs=True)          # inference: no dropout
    base._modified = False
    ref, _ = base.unroll(5, x, merge_outputs=True)
    base._modified = True
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-6)
    with autograd.record():
        out, _ = cell.unroll(5, x, merge_outputs=True)
    zero = out.asnumpy() == 0
    # the output mask is one per sequence: a unit dropped at one step is dropped at every step
    assert (zero == zero[:, :1]).all()
    assert 0 < zero.mean() < 1
    assert cell.prefix.endswith("vardrop")


def test_variational_dropout_rejects_bidirectional_state_dropout():
    bi = gluon.rnn.BidirectionalCell(gluon.rnn.GRUCell(2), gluon.rnn.GRUCell(2))
    with pytest.raises(AssertionError, match="BidirectionalCell"):
        gluon.contrib.rnn.VariationalDropoutCell(bi, drop_states=0.2)
