"""Write tests/data/npx_golden.npz and the .params files in tests/data/npx/ with real MXNet 1.9.1.

Run with the oracle's interpreter from the repository root::

    /work/mxnet-oracle/bin/python tests/data/make_npx_golden.py

* ``npx/*.params``: files MXNet wrote with ``mx.npx.save`` (list, dict and single-array forms,
  zero-dim and zero-size arrays, every dtype mx.np can hold) and with ``mx.nd.save`` under
  ``mx.np_shape(True)`` and without it. Their input values are in the npz (``save_<file>_<i>``
  or ``save_<file>_<key>``), so the tests save the same values with mxc and compare bytes.
* ``npx_golden.npz``: inputs (``in_*``) and outputs (``out_*``) of mx.npx operators.

The suite never imports MXNet.
"""
import os

import numpy as onp
import mxnet as mx
from mxnet import np, npx

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "npx")
os.makedirs(DIR, exist_ok=True)
R = onp.random.RandomState(20240909)
G = {}


def save_sets():
    mixed = [
        R.uniform(-1, 1, (2, 3)).astype("float32"),
        onp.array(3.5, dtype="float32"),                  # zero-dim
        onp.zeros((0, 3), dtype="float32"),               # zero-size
        onp.zeros((2, 0, 1), dtype="int32"),
        onp.arange(5, dtype="int64") - 2,
        R.uniform(-4, 4, (3,)).astype("float16"),
        onp.array([0, 7, 255], dtype="uint8"),
        onp.array([True, False, True], dtype="bool"),
        onp.array([[-3, 4]], dtype="int8"),
        R.normal(0, 1, (2, 2)).astype("float64"),
        onp.array(-7, dtype="int32"),                     # zero-dim int
    ]
    named = {"weight": R.normal(0, 1, (4, 3)).astype("float32"),
             "scalar": onp.array(2.0, dtype="float32"),
             "empty": onp.zeros((0,), dtype="float32"),
             "bias": onp.zeros((4,), dtype="float32")}
    single = R.uniform(0, 1, (2, 2, 2)).astype("float32")
    legacy = [R.uniform(0, 1, (2, 3)).astype("float32"), onp.zeros((0, 2), dtype="float32")]

    npx.set_np()
    try:
        npx.save(os.path.join(DIR, "list.params"), [np.array(a, dtype=a.dtype) for a in mixed])
        npx.save(os.path.join(DIR, "dict.params"),
                 {k: np.array(v, dtype=v.dtype) for k, v in named.items()})
        npx.save(os.path.join(DIR, "single.params"), np.array(single, dtype=single.dtype))
        npx.save(os.path.join(DIR, "empty_dict.params"), {})
        back = npx.load(os.path.join(DIR, "list.params"))
        assert all(b.shape == a.shape and b.dtype == a.dtype for a, b in zip(mixed, back))
    finally:
        npx.reset_np()
    with mx.np_shape(True):
        mx.nd.save(os.path.join(DIR, "nd_np_shape.params"),
                   [mx.nd.array(a, dtype=a.dtype) for a in legacy])
    mx.nd.save(os.path.join(DIR, "nd_legacy.params"),
               {"a": mx.nd.array(legacy[0]), "b": mx.nd.array(legacy[1])})
    for i, a in enumerate(mixed):
        G[f"save_list_{i}"] = a
    for k, v in named.items():
        G[f"save_dict_{k}"] = v
    G["save_single_0"] = single
    for i, a in enumerate(legacy):
        G[f"save_nd_{i}"] = a


def op(name, fn, *inputs):
    for i, x in enumerate(inputs):
        G[f"in_{name}_{i}"] = x
    arrs = [np.array(x, dtype=x.dtype) for x in inputs]
    out = fn(*arrs)
    if isinstance(out, (list, tuple)):
        for j, o in enumerate(out):
            G[f"out_{name}_{j}"] = o.asnumpy()
    else:
        G[f"out_{name}"] = out.asnumpy()


def f32(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, shape).astype("float32")


def op_sets():
    npx.set_np()
    try:
        x = f32(3, 4)
        op("relu", npx.relu, x)
        op("sigmoid", npx.sigmoid, x)
        op("softmax", lambda a: npx.softmax(a, axis=0, temperature=2.0), x)
        op("log_softmax", lambda a: npx.log_softmax(a, axis=-1), x)
        op("softmax_len", lambda a, l: npx.softmax(a, l, axis=-1, use_length=True),
           x, onp.array([1, 3, 4], dtype="int32"))
        op("act_tanh", lambda a: npx.activation(a, act_type="tanh"), x)
        op("act_softrelu", lambda a: npx.activation(a, act_type="softrelu"), x)
        op("leaky", lambda a: npx.leaky_relu(a, act_type="leaky", slope=0.1), x)
        op("elu", lambda a: npx.leaky_relu(a, act_type="elu", slope=0.3), x)
        op("gelu", lambda a: npx.leaky_relu(a, act_type="gelu"), x)
        op("fc", lambda a, w, b: npx.fully_connected(a, w, b, num_hidden=5),
           f32(2, 3, 2), f32(5, 6), f32(5))
        op("fc_noflat", lambda a, w: npx.fully_connected(a, w, None, num_hidden=5,
                                                          no_bias=True, flatten=False),
           f32(2, 3, 4), f32(5, 4))
        op("conv", lambda a, w, b: npx.convolution(a, w, b, kernel=(3, 3), num_filter=4,
                                                    pad=(1, 1), stride=(2, 1)),
           f32(2, 3, 6, 5), f32(4, 3, 3, 3), f32(4))
        op("deconv", lambda a, w: npx.deconvolution(a, w, None, kernel=(2, 2), num_filter=3,
                                                     stride=(2, 2), no_bias=True),
           f32(1, 2, 3, 3), f32(2, 3, 2, 2))
        op("pool_max", lambda a: npx.pooling(a, kernel=(2, 2), pool_type="max", stride=(2, 2)),
           f32(2, 3, 4, 4))
        op("pool_avg_global", lambda a: npx.pooling(a, kernel=(1, 1), pool_type="avg",
                                                    global_pool=True), f32(2, 3, 4, 4))
        op("bn_infer", lambda a, g, b, m, v: npx.batch_norm(a, g, b, m, v, fix_gamma=False,
                                                            use_global_stats=True, eps=1e-5),
           f32(2, 3, 2, 2), f32(3, lo=0.5), f32(3), f32(3), f32(3, lo=0.5, hi=1.5))
        op("layer_norm", lambda a, g, b: npx.layer_norm(a, g, b, axis=-1, eps=1e-5),
           f32(3, 5), f32(5), f32(5))
        op("embedding", lambda i, w: npx.embedding(i, w, input_dim=6, output_dim=3),
           onp.array([[0, 5], [2, 2]], dtype="float32"), f32(6, 3))
        op("one_hot", lambda i: npx.one_hot(i, depth=4, on_value=2.0, off_value=-1.0),
           onp.array([0, 3, 1], dtype="int32"))
        op("pick", lambda a, i: npx.pick(a, i, axis=1, keepdims=True),
           x, onp.array([0, 3, 2], dtype="float32"))
        op("topk", lambda a: npx.topk(a, axis=-1, k=2, ret_typ="both"), x)
        op("topk_idx", lambda a: npx.topk(a, k=3, is_ascend=True, dtype="int32"), x)
        op("batch_dot", lambda a, b: npx.batch_dot(a, b, transpose_b=True),
           f32(2, 3, 4), f32(2, 5, 4))
        op("seq_mask", lambda a, l: npx.sequence_mask(a, l, use_sequence_length=True,
                                                      value=-1.0),
           f32(4, 2, 3), onp.array([2, 4], dtype="float32"))
        op("batch_flatten", npx.batch_flatten, f32(2, 3, 4))
        op("reshape_like", lambda a, b: npx.reshape_like(a, b), f32(2, 6), f32(3, 4))
        op("arange_like", lambda a: npx.arange_like(a, start=0.1, step=0.3, repeat=2),
           f32(2, 3, 4))
        op("arange_like_axis", lambda a: npx.arange_like(a, start=1.0, axis=1), f32(2, 3, 4))
        op("gamma", npx.gamma, f32(5, lo=0.5, hi=4.0))
        op("gammaln", npx.gammaln, f32(5, lo=0.5, hi=4.0))
        op("erf", npx.erf, x)
        op("shape_array", npx.shape_array, f32(2, 0, 3))
        op("slice", lambda a: npx.slice(a, begin=(0, 1), end=(3, 4), step=(2, 2)), x)
        op("smooth_l1", lambda a: npx.smooth_l1(a, scalar=1.5), x)
        op("nonzero", npx.nonzero, onp.array([[0, 1.5], [2, 0], [0, 0]], dtype="float32"))
        op("gather_nd", npx.gather_nd, f32(3, 4),
           onp.array([[0, 2, 1], [3, 0, 0]], dtype="int32"))
        op("cast", lambda a: npx.cast(a, dtype="int32"), f32(2, 3, lo=-9, hi=9))
        op("dropout_eval", lambda a: npx.dropout(a, p=0.5), x)
        op("relu_0d", npx.relu, onp.array(-1.5, dtype="float32"))
        op("sigmoid_empty", npx.sigmoid, onp.zeros((0, 3), dtype="float32"))
        for i, (shape, new, rev) in enumerate([
                ((2, 3, 4), (-2, -1), False), ((2, 1, 4), (-2, -3, -1), False),
                ((2, 3, 4), (-5, -1), False), ((2, 3, 4), (-6, 1, 2, -4), False),
                ((6, 4), (-6, -1, 2, -2), False), ((2, 3, 4), (-4,), False),
                ((2, 3, 4), (4, -1), False), ((2, 3, 4), (-1, 12), True),
                ((2, 3, 4), (6, 4), False), ((0, 3), (-1, 3, 1), False)]):
            a = onp.arange(int(onp.prod(shape)), dtype="float32").reshape(shape)
            op(f"reshape{i}", lambda t, new=new, rev=rev: npx.reshape(t, new, reverse=rev), a)
    finally:
        npx.reset_np()


save_sets()
op_sets()
onp.savez_compressed(os.path.join(HERE, "npx_golden.npz"), **G)
print("wrote", len(G), "arrays and", sorted(os.listdir(DIR)))
