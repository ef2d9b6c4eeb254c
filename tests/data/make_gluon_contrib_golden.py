"""Golden fixtures for gluon.contrib's convolutional RNN cells, dynamic_unroll,
DeformableConvolution, ModulatedDeformableConvolution (block and operator, forward) and
WikiText2, from real MXNet 1.9.1.

Run with the oracle's interpreter (MXNet 1.9.1, numpy 1.23):
    /work/mxnet-oracle/bin/python tests/data/make_gluon_contrib_golden.py
Writes tests/data/gluon_contrib/golden.npz:
  "<case>/param/<name>"   parameter values set before the run (names without the prefix)
  "<case>/x", "<case>/s<i>"  inputs and begin states
  "<case>/out", "<case>/state<i>", "<case>/dx"  outputs, final states, d sum(out * w)/dx with
                          w = "<case>/w"
and tests/data/gluon_contrib/wiki.test.tokens, a 6-line WikiText-style file, with
"wiki/vocab" (idx_to_token joined by newlines), "wiki/data", "wiki/label" for seq_len 4.
"""
import os

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon
from mxnet.gluon import contrib

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gluon_contrib")
os.makedirs(HERE, exist_ok=True)
rng = np.random.RandomState(5)
gold = {}


def set_params(case, block, prefix, *first_args):
    # deferred shapes are settled by one forward before the values are set
    block.initialize()
    block(*first_args)
    for name, p in block.collect_params().items():
        value = rng.uniform(-0.4, 0.4, p.shape).astype(np.float32)
        p.set_data(mx.nd.array(value))
        gold["%s/param/%s" % (case, name[len(prefix):])] = value


def conv_cell(case, cls, input_shape, hidden, i2h_kernel, h2h_kernel, T=3, N=2, **kw):
    cell = cls(input_shape, hidden, i2h_kernel, h2h_kernel, prefix="c_", **kw)
    x = rng.uniform(-1, 1, (N, T) + tuple(input_shape)).astype(np.float32)
    states = [rng.uniform(-1, 1, s["shape"][:0] + (N,) + s["shape"][1:]).astype(np.float32)
              for s in cell.state_info(N)]
    # parameters must exist before set_data: one forward step initialises the deferred shapes
    cell.initialize()
    cell(mx.nd.array(x[:, 0]), [mx.nd.array(s) for s in states])
    for name, p in cell.collect_params().items():
        value = rng.uniform(-0.3, 0.3, p.shape).astype(np.float32)
        p.set_data(mx.nd.array(value))
        gold["%s/param/%s" % (case, name[2:])] = value
    xs = mx.nd.array(x)
    xs.attach_grad()
    with autograd.record():
        out, st = cell.unroll(T, xs, [mx.nd.array(s) for s in states], layout="NTC",
                              merge_outputs=True)
        w = rng.uniform(-1, 1, out.shape).astype(np.float32)
        (out * mx.nd.array(w)).sum().backward()
    gold[case + "/x"] = x
    for i, s in enumerate(states):
        gold["%s/s%d" % (case, i)] = s
    gold[case + "/out"] = out.asnumpy()
    for i, s in enumerate(st):
        gold["%s/state%d" % (case, i)] = s.asnumpy()
    gold[case + "/w"] = w
    gold[case + "/dx"] = xs.grad.asnumpy()


conv_cell("rnn1d", contrib.rnn.Conv1DRNNCell, (3, 7), 4, 3, 3, i2h_pad=1)
conv_cell("lstm2d", contrib.rnn.Conv2DLSTMCell, (2, 5, 6), 3, (3, 2), (3, 1))
conv_cell("gru1d", contrib.rnn.Conv1DGRUCell, (2, 8), 3, 2, 5, i2h_dilate=2, h2h_dilate=2)
conv_cell("gru3d", contrib.rnn.Conv3DGRUCell, (2, 3, 4, 4), 2, 2, 3, activation="relu")


def unroll_case(case, cell_cls, nstates, layout):
    T, N, I, H = 5, 4, 3, 6
    cell = cell_cls(H, input_size=I, prefix="u_")
    shape = (T, N, I) if layout == "TNC" else (N, T, I)
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    states = [rng.uniform(-1, 1, (N, H)).astype(np.float32) for _ in range(nstates)]
    set_params(case, cell, "u_", mx.nd.zeros((N, I)), [mx.nd.zeros((N, H))] * nstates)
    valid = np.array([5, 2, 1, 4], dtype=np.float32)
    xs = mx.nd.array(x)
    xs.attach_grad()
    with autograd.record():
        out, st = contrib.rnn.rnn_cell.dynamic_unroll(
            cell, xs, [mx.nd.array(s) for s in states], layout=layout,
            valid_length=mx.nd.array(valid))
        w = rng.uniform(-1, 1, out.shape).astype(np.float32)
        (out * mx.nd.array(w)).sum().backward()
    gold[case + "/x"] = x
    gold[case + "/valid"] = valid
    for i, s in enumerate(states):
        gold["%s/s%d" % (case, i)] = s
    gold[case + "/out"] = out.asnumpy()
    for i, s in enumerate(st):
        gold["%s/state%d" % (case, i)] = s.asnumpy()
    gold[case + "/w"] = w
    gold[case + "/dx"] = xs.grad.asnumpy()


unroll_case("unroll_lstm_ntc", gluon.rnn.LSTMCell, 2, "NTC")
unroll_case("unroll_gru_tnc", gluon.rnn.GRUCell, 1, "TNC")

# DeformableConvolution with non-zero offsets (random offset weights)
dc = contrib.cnn.DeformableConvolution(4, kernel_size=(3, 2), padding=(1, 0), in_channels=3,
                                       num_deformable_group=1, activation="relu",
                                       prefix="d_")
x = rng.uniform(-1, 1, (2, 3, 6, 5)).astype(np.float32)
set_params("deform", dc, "d_", mx.nd.array(x))
xs = mx.nd.array(x)
xs.attach_grad()
with autograd.record():
    out = dc(xs)
    w = rng.uniform(-1, 1, out.shape).astype(np.float32)
    (out * mx.nd.array(w)).sum().backward()
gold.update({"deform/x": x, "deform/out": out.asnumpy(), "deform/w": w,
             "deform/dx": xs.grad.asnumpy()})

# the ModulatedDeformableConvolution operator (DCNv2 sampling): taps pushed past the borders
x = rng.uniform(-1, 1, (2, 4, 6, 7)).astype(np.float32)
off = (rng.uniform(-2.5, 2.5, (2, 2 * 2 * 9, 6, 3))).astype(np.float32)
mask = rng.uniform(0, 1, (2, 2 * 9, 6, 3)).astype(np.float32)
wt = rng.uniform(-0.5, 0.5, (6, 2, 3, 3)).astype(np.float32)
bias = rng.uniform(-0.5, 0.5, (6,)).astype(np.float32)
args = [mx.nd.array(v) for v in (x, off, mask, wt, bias)]
# forward only: MXNet 1.9.1's CPU backward of the offsets and mask is "only implemented in GPU"
out = mx.nd.contrib.ModulatedDeformableConvolution(
    *args, kernel=(3, 3), pad=(1, 0), dilate=(1, 2), num_filter=6, num_group=2,
    num_deformable_group=2)
gold.update({"mdcn/x": x, "mdcn/offset": off, "mdcn/mask": mask, "mdcn/weight": wt,
             "mdcn/bias": bias, "mdcn/out": out.asnumpy()})

# the ModulatedDeformableConvolution block (offsets and mask from its own convolution)
mdc = contrib.cnn.ModulatedDeformableConvolution(4, kernel_size=(3, 3), padding=1,
                                                 in_channels=3, prefix="m_")
x = rng.uniform(-1, 1, (1, 3, 5, 6)).astype(np.float32)
set_params("mdcblock", mdc, "m_", mx.nd.array(x))
gold.update({"mdcblock/x": x, "mdcblock/out": mdc(mx.nd.array(x)).asnumpy()})

# WikiText2 on a small tokens file
lines = [" = Title = ", "", " the cat sat on the mat . ", " the dog sat . ", "",
         " a cat , a dog , the end . "]
with open(os.path.join(HERE, "wiki.test.tokens"), "w", encoding="utf8") as f:
    f.write("\n".join(lines) + "\n")
# MXNet would download the archive when the file's sha1 is not WikiText's: accept ours
contrib.data.text.check_sha1 = lambda path, sha1: True
wiki = contrib.data.text.WikiText2(root=HERE, segment="test", seq_len=4)
gold["wiki/vocab"] = np.array("\n".join(wiki.vocabulary.idx_to_token))
gold["wiki/data"] = wiki._data.asnumpy()
gold["wiki/label"] = wiki._label.asnumpy()

np.savez_compressed(os.path.join(HERE, "golden.npz"), **gold)
print("wrote", len(gold), "arrays")
