"""Writes tests/data/amp/: small float32 graphs and what MXNet 1.9.1's amp.convert_symbol /
convert_model make of them (JSON with the amp_cast nodes kept), plus a BatchNorm backward
fixture (tests/data/amp/batchnorm_backward.npz) for the inference/training formulas.

Run with MXNet 1.9.1's interpreter: /work/mxnet-oracle/bin/python tests/data/make_amp_golden.py
"""
import json
import os

import numpy as np
import mxnet as mx
from mxnet.contrib import amp

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "amp")


def graph_mlp():
    d = mx.sym.var("data")
    x = mx.sym.FullyConnected(d, num_hidden=8, name="fc1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    y = mx.sym.FullyConnected(x, num_hidden=8, name="fc2")
    z = mx.sym.Activation(x, act_type="softrelu", name="sr")
    w = mx.sym.elemwise_add(y, z, name="add")
    w = mx.sym.BatchNorm(w, name="bn")
    w = mx.sym.exp(w, name="e")
    return mx.sym.SoftmaxOutput(w, name="softmax")


def graph_conv():
    d = mx.sym.var("data")
    c = mx.sym.Convolution(d, kernel=(3, 3), num_filter=4, name="conv")
    b = mx.sym.BatchNorm(c, fix_gamma=False, name="bn")
    a = mx.sym.Activation(b, act_type="relu", name="act")
    p = mx.sym.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    f = mx.sym.Flatten(p, name="flat")
    o = mx.sym.FullyConnected(f, num_hidden=3, name="fc")
    s = mx.sym.var("skip")
    g = mx.sym.broadcast_add(o, s, name="badd")
    return mx.sym.log_softmax(g, name="lsm")


def graph_widest():
    a = mx.sym.var("a")
    b = mx.sym.var("b")
    f = mx.sym.FullyConnected(a, num_hidden=4, name="fc")
    m = mx.sym.elemwise_mul(f, b, name="mul")         # fp16 x unknown: amp_multicast
    n = mx.sym.elemwise_add(f, f, name="twice")       # fp16 x fp16: stays fp16
    return mx.sym.Group([m, n])


def main():
    os.makedirs(HERE, exist_ok=True)
    cases = {}
    for name, fn in (("mlp", graph_mlp), ("conv", graph_conv), ("widest", graph_widest)):
        sym = fn()
        conv = amp.convert_symbol(sym)
        cases[name] = {"original": sym.tojson(),
                       "converted": conv.tojson(remove_amp_cast=False),
                       "saved": conv.tojson()}     # what save() writes: the casts removed
    sym = graph_mlp()
    cases["mlp_excluded"] = {
        "original": sym.tojson(), "excluded_sym_names": ["fc2"],
        "converted": amp.convert_symbol(sym, excluded_sym_names=["fc2"]).tojson(
            remove_amp_cast=False)}
    sym = graph_conv()
    arg_shapes, _, aux_shapes = sym.infer_shape(data=(2, 3, 6, 6), skip=(2, 3))
    args = {n: mx.nd.ones(s) for n, s in zip(sym.list_arguments(), arg_shapes)
            if n not in ("data", "skip")}
    aux = {n: mx.nd.ones(s) for n, s in zip(sym.list_auxiliary_states(), aux_shapes)}
    for opt in (False, True):
        csym, cargs, caux = amp.convert_model(sym, args, aux, cast_optional_params=opt)
        cases[f"conv_model_{int(opt)}"] = {
            "original": sym.tojson(), "cast_optional_params": opt,
            "converted": csym.tojson(remove_amp_cast=False),
            "arg_dtypes": {k: np.dtype(v.dtype).name for k, v in cargs.items()},
            "aux_dtypes": {k: np.dtype(v.dtype).name for k, v in caux.items()}}
    with open(os.path.join(HERE, "convert_symbol.json"), "w") as f:
        json.dump(cases, f, indent=1, sort_keys=True)

    # BatchNorm backward: inference formula (recorded with train_mode=False) and training
    rng = np.random.RandomState(7)
    x = rng.randn(4, 3, 5).astype(np.float32)
    gamma = (rng.rand(3) + 0.5).astype(np.float32)
    beta = rng.rand(3).astype(np.float32)
    mm = rng.rand(3).astype(np.float32)
    mv = (rng.rand(3) + 0.5).astype(np.float32)
    dy = rng.randn(4, 3, 5).astype(np.float32)
    out = {"x": x, "gamma": gamma, "beta": beta, "mm": mm, "mv": mv, "dy": dy}
    for tag, train in (("infer", False), ("train", True)):
        xs = [mx.nd.array(v) for v in (x, gamma, beta)]
        for v in xs:
            v.attach_grad()
        m, v_ = mx.nd.array(mm), mx.nd.array(mv)
        with mx.autograd.record(train_mode=train):
            y = mx.nd.BatchNorm(xs[0], xs[1], xs[2], m, v_, fix_gamma=False, eps=1e-3,
                                momentum=0.9)
        y.backward(mx.nd.array(dy), train_mode=train)
        out[f"{tag}_y"] = y.asnumpy()
        out[f"{tag}_dx"] = xs[0].grad.asnumpy()
        out[f"{tag}_dgamma"] = xs[1].grad.asnumpy()
        out[f"{tag}_dbeta"] = xs[2].grad.asnumpy()
        out[f"{tag}_mm"] = m.asnumpy()
        out[f"{tag}_mv"] = v_.asnumpy()
    np.savez(os.path.join(HERE, "batchnorm_backward.npz"), **out)


if __name__ == "__main__":
    main()
