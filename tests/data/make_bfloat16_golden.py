"""Writes tests/data/bfloat16/: what MXNet 1.9.1 does with bfloat16 on the CPU (oneDNN).

- arrays.params: float32 arrays, their bfloat16 casts (type flag 12) and the bfloat16 results of
  a few operators on them, saved by mx.nd.save (so mxc reads MXNet's own flag-12 entries).
- convert.json: small float32 graphs and what amp.convert_symbol(target_dtype='bfloat16')
  makes of them (amp_cast nodes kept; "conv_optional" with cast_optional_params).

Run with MXNet 1.9.1's interpreter: /work/mxnet-oracle/bin/python tests/data/make_bfloat16_golden.py
"""
import json
import os

import numpy as np
import mxnet as mx
from mxnet.contrib import amp

from make_amp_golden import graph_conv   # the same conv graph as the float16 goldens (this directory)

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bfloat16")
BF = np.dtype([("bfloat16", np.uint16)])     # MXNet 1.9.1's name for bfloat16


def arrays():
    rng = np.random.RandomState(7)
    f32 = {
        "x": rng.uniform(-2, 2, (2, 3, 5, 5)).astype(np.float32),
        "w": rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32),
        "fcx": rng.uniform(-2, 2, (3, 6)).astype(np.float32),
        "fcw": rng.uniform(-1, 1, (5, 6)).astype(np.float32),
        # values that round: ties to even, 1 + 2^-8 + 2^-9, nan, inf, tiny
        "edge": np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -9, -(1 + 2 ** -8),
                          3.1415927, 65504.0, 3.4e38, np.inf, -np.inf, np.nan, 1e-40, 0.0,
                          -0.0, 1e-20], np.float32),
    }
    out = {}
    for k, v in f32.items():
        out[k + "_f32"] = mx.nd.array(v)
        out[k + "_bf16"] = mx.nd.array(v).astype(BF)
    x, w = out["x_bf16"], out["w_bf16"]
    fx, fw = out["fcx_bf16"], out["fcw_bf16"]
    out["conv"] = mx.nd.Convolution(x, w, no_bias=True, kernel=(3, 3), num_filter=4)
    out["fc"] = mx.nd.FullyConnected(fx, fw, no_bias=True, num_hidden=5)
    out["relu"] = mx.nd.Activation(x, act_type="relu")
    out["tanh"] = mx.nd.Activation(x, act_type="tanh")
    out["maxpool"] = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max")
    out["avgpool"] = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="avg")
    out["add"] = x + x
    out["mul"] = x * x
    out["bn"] = mx.nd.BatchNorm(x, mx.nd.ones((3,)), mx.nd.zeros((3,)), mx.nd.zeros((3,)),
                                mx.nd.ones((3,)), fix_gamma=False)
    out["to_f32"] = x.astype("float32")
    mx.nd.waitall()
    mx.nd.save(os.path.join(HERE, "arrays.params"), out)


def graph_mlp():
    d = mx.sym.var("data")
    x = mx.sym.FullyConnected(d, num_hidden=8, name="fc1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    y = mx.sym.FullyConnected(x, num_hidden=8, name="fc2")
    z = mx.sym.exp(x, name="e")
    w = mx.sym.elemwise_add(y, z, name="add")
    return mx.sym.SoftmaxOutput(w, name="softmax")


def convert():
    cases = {}
    for name, fn in (("conv", graph_conv), ("mlp", graph_mlp)):
        sym = fn()
        conv = amp.convert_symbol(sym, target_dtype="bfloat16")
        cases[name] = {"original": sym.tojson(),
                       "converted": conv.tojson(remove_amp_cast=False)}
    # as convert_model calls it: the parameters named, those feeding bfloat16 operators bfloat16
    sym = graph_conv()
    conv = amp.convert_symbol(sym, target_dtype="bfloat16", data_names=["data", "skip"],
                              cast_optional_params=True)
    cases["conv_optional"] = {"original": sym.tojson(),
                              "converted": conv.tojson(remove_amp_cast=False)}
    with open(os.path.join(HERE, "convert.json"), "w") as f:
        json.dump(cases, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    os.makedirs(HERE, exist_ok=True)
    arrays()
    convert()
