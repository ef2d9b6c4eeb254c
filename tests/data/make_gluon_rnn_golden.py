"""Golden fixtures for gluon.rnn and the legacy mx.rnn, from real MXNet 1.9.1.

Run with the oracle's interpreter (MXNet 1.9.1, numpy 1.23):
    /work/mxnet-oracle/bin/python tests/data/make_gluon_rnn_golden.py
Writes tests/data/gluon_rnn/:
  <layer>.params        save_parameters() of a fused layer (lstm, gru, rnn_tanh, lstmp)
  golden.npz            "<case>/x", "<case>/h0"..., outputs "<case>/out", "<case>/hN"...,
                        "<case>/dx" (gradient of sum(out * w) wrt x, w = "<case>/w")
  legacy.json.gz        the unrolled legacy mx.rnn graphs' list_arguments/list_outputs and
                        -symbol.json text (built under a fresh NameManager)
"""
import gzip
import json
import os

import numpy as np
import mxnet as mx
from mxnet import gluon, autograd

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gluon_rnn")
os.makedirs(HERE, exist_ok=True)
rng = np.random.RandomState(11)
gold = {}


def run_layer(case, layer, x, states):
    layer.initialize(mx.init.Uniform(0.5))
    xs = mx.nd.array(x)
    xs.attach_grad()
    st = [mx.nd.array(s) for s in states]
    with autograd.record():
        out, hn = layer(xs, st)
        wt = mx.nd.array(rng.uniform(-1, 1, out.shape).astype(np.float32))
        loss = (out * wt).sum()
    loss.backward()
    layer.save_parameters(os.path.join(HERE, case + ".params"))
    gold[case + "/x"] = x
    for i, s in enumerate(states):
        gold["%s/h0_%d" % (case, i)] = s
    gold[case + "/out"] = out.asnumpy()
    for i, s in enumerate(hn):
        gold["%s/hN_%d" % (case, i)] = s.asnumpy()
    gold[case + "/w"] = wt.asnumpy()
    gold[case + "/dx"] = xs.grad.asnumpy()
    for name, p in layer.collect_params().items():
        gold["%s/grad/%s" % (case, name[len(layer.prefix):])] = p.grad().asnumpy()


T, N, I, H = 5, 3, 4, 6
u = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)
run_layer("lstm", gluon.rnn.LSTM(H, num_layers=2, bidirectional=True, layout="NTC",
                                 prefix="lstm0_"), u(N, T, I), [u(4, N, H), u(4, N, H)])
run_layer("gru", gluon.rnn.GRU(H, num_layers=2, prefix="gru0_"), u(T, N, I), [u(2, N, H)])
run_layer("rnn_tanh", gluon.rnn.RNN(H, activation="tanh", bidirectional=True, prefix="rnn0_"),
          u(T, N, I), [u(2, N, H)])
# LSTM with a projection: MXNet's CPU kernel runs it in inference only (no gradient)
lstmp = gluon.rnn.LSTM(H, projection_size=3, prefix="lstmp0_")
lstmp.initialize(mx.init.Uniform(0.5))
x = u(T, N, I)
h0, c0 = u(1, N, 3), u(1, N, H)
try:
    out, (hn, cn) = lstmp(mx.nd.array(x), [mx.nd.array(h0), mx.nd.array(c0)])
    lstmp.save_parameters(os.path.join(HERE, "lstmp.params"))
    gold.update({"lstmp/x": x, "lstmp/h0_0": h0, "lstmp/h0_1": c0, "lstmp/out": out.asnumpy(),
                 "lstmp/hN_0": hn.asnumpy(), "lstmp/hN_1": cn.asnumpy()})
except mx.MXNetError as e:
    print("LSTMP not available on this build:", str(e).splitlines()[0])

# gluon cells unrolled with given weights (weights stored in the npz)
for kind, g in (("lstmcell", 4), ("grucell", 3), ("rnncell", 1)):
    cls = {"lstmcell": gluon.rnn.LSTMCell, "grucell": gluon.rnn.GRUCell,
           "rnncell": gluon.rnn.RNNCell}[kind]
    cell = cls(H, input_size=I, prefix=kind + "_")
    cell.initialize()
    for name, p in cell.collect_params().items():
        v = rng.uniform(-0.5, 0.5, p.shape).astype(np.float32)
        p.set_data(mx.nd.array(v))
        gold["%s/param/%s" % (kind, name)] = v
    x = u(N, T, I)
    out, st = cell.unroll(T, mx.nd.array(x), layout="NTC", merge_outputs=True)
    gold[kind + "/x"] = x
    gold[kind + "/out"] = out.asnumpy()
    for i, s in enumerate(st):
        gold["%s/hN_%d" % (kind, i)] = s.asnumpy()

np.savez_compressed(os.path.join(HERE, "golden.npz"), **gold)


# ---- legacy mx.rnn graphs --------------------------------------------------------------------
def legacy_graphs():
    out = {}

    def record(name, make):
        with mx.name.NameManager():
            outputs, states = make()
            if isinstance(outputs, mx.sym.Symbol):
                outputs = [outputs]
            sym = mx.sym.Group(list(outputs) + [s for s in states if isinstance(s, mx.sym.Symbol)])
            out[name] = {"arguments": sym.list_arguments(), "outputs": sym.list_outputs(),
                         "json": sym.tojson()}

    data3 = lambda: [mx.sym.Variable("t%d_data" % i) for i in range(3)]
    record("lstm", lambda: mx.rnn.LSTMCell(5, prefix="lstm_").unroll(3, data3()))
    record("gru", lambda: mx.rnn.GRUCell(5, prefix="gru_").unroll(3, data3()))
    record("rnn_relu", lambda: mx.rnn.RNNCell(5, activation="relu", prefix="rnn_").unroll(
        3, mx.sym.Variable("data"), layout="TNC", merge_outputs=True))

    def stack():
        s = mx.rnn.SequentialRNNCell()
        s.add(mx.rnn.LSTMCell(5, prefix="l0_"))
        s.add(mx.rnn.DropoutCell(0.5, prefix="d0_"))
        s.add(mx.rnn.ResidualCell(mx.rnn.LSTMCell(5, prefix="l1_")))
        return s.unroll(2, mx.sym.Variable("data"), merge_outputs=True)
    record("stack", stack)
    record("bidir", lambda: mx.rnn.BidirectionalCell(
        mx.rnn.GRUCell(5, prefix="l_"), mx.rnn.GRUCell(5, prefix="r_"),
        output_prefix="bi_").unroll(2, data3()[:2]))
    record("fused", lambda: mx.rnn.FusedRNNCell(5, num_layers=2, mode="lstm", bidirectional=True,
                                                get_next_state=True, prefix="f_").unroll(
        3, mx.sym.Variable("data"), layout="TNC", merge_outputs=True))
    record("unfused", lambda: mx.rnn.FusedRNNCell(5, num_layers=2, mode="gru",
                                                  bidirectional=True, prefix="f_").unfuse()
           .unroll(2, data3()[:2]))
    record("zoneout", lambda: mx.rnn.ZoneoutCell(mx.rnn.RNNCell(5, prefix="z_"), 0.3, 0.2)
           .unroll(3, data3()))
    record("conv_lstm", lambda: mx.rnn.ConvLSTMCell((1, 2, 4, 4), 3, prefix="c_").unroll(
        2, [mx.sym.Variable("t0"), mx.sym.Variable("t1")]))

    # unpack_weights of a FusedRNNCell on a known vector
    cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode="gru", bidirectional=True, prefix="f_")
    n = 2 * 3 * 3 * (2 + 3 + 2) + 2 * 3 * 3 * (6 + 3 + 2)
    vec = mx.nd.arange(n)
    unpacked = cell.unpack_weights({"f_parameters": vec})
    out["unpack"] = {k: [list(v.shape), float(v.asnumpy().ravel()[0])] for k, v in unpacked.items()}
    return out


with gzip.open(os.path.join(HERE, "legacy.json.gz"), "wt") as f:
    json.dump(legacy_graphs(), f, sort_keys=True, separators=(",", ":"))
print("wrote", sorted(os.listdir(HERE)))
