"""Symbol JSON fixtures in both directions.

1. With mxc (``PYTHONPATH=. python tests/data/make_symbol_golden.py --mxc``): writes
   tests/data/symbol/mxc_<name>-symbol.json, graphs built by mxc.
2. With real MXNet 1.9.1 (``/work/mxnet-oracle/bin/python tests/data/make_symbol_golden.py``):
   writes tests/data/symbol/<name>-symbol.json (graphs built by MXNet: an MLP, a conv-BN-pool
   net, resnet18_v1 from the model zoo, an LSTM, a graph with a CustomOp, an 0.8-era file
   upgraded), and tests/data/symbol_golden.npz: for every graph (MXNet's and mxc's files, loaded
   by MXNet) the argument/output/aux names, inferred shapes, and forward outputs and input
   gradients at fixed inputs.
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "symbol")
MXC = "--mxc" in sys.argv or __name__ != "__main__"   # imported by the tests: mxc
if MXC:
    import mxc as mx
else:
    import mxnet as mx


class Sqr(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])


@mx.operator.register("golden_sqr")
class SqrProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1"):
        super().__init__(need_top_grad=True)

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return Sqr()


def mlp():
    data = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
    h = mx.sym.Activation(h, act_type="relu", name="relu1")
    h = mx.sym.FullyConnected(h, num_hidden=8, name="fc2")
    h = mx.sym.Activation(h, act_type="tanh")
    h = mx.sym.FullyConnected(h, num_hidden=4)
    return mx.sym.SoftmaxOutput(h, name="softmax"), {"data": (5, 10)}


def convbn():
    data = mx.sym.Variable("data", shape=(2, 3, 8, 8), lr_mult=1.0)
    c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv0")
    b = mx.sym.BatchNorm(c, fix_gamma=False, eps=1e-5, name="bn0", attr={"ctx_group": "g1"})
    a = mx.sym.Activation(b, act_type="relu")
    p = mx.sym.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool0")
    f = mx.sym.Flatten(p)
    o = mx.sym.FullyConnected(f, num_hidden=3, no_bias=True, name="fc")
    o = (o * 2.0 + 1) / 3 - o
    return o, {"data": (2, 3, 8, 8)}


def lstm():
    data = mx.sym.Variable("data")
    out = mx.sym.RNN(data, state_size=6, num_layers=1, mode="lstm", name="lstm",
                     state_outputs=True)
    return mx.sym.Group([out[0], mx.sym.sum(out[1], axis=0, name="hsum")]), {"data": (4, 2, 5)}


def custom():
    data = mx.sym.Variable("data")
    y = mx.sym.Custom(data * 3, op_type="golden_sqr", scale="2", name="sq")
    return mx.sym.broadcast_add(mx.sym.sum(y, axis=1, keepdims=True), mx.sym.exp(data)), {"data": (3, 4)}


def misc():
    a = mx.sym.var("a", init='["xavier", {"magnitude": 2}]')
    b = mx.sym.var("b", wd_mult=0.5, __layout__="NC")
    s = mx.sym.split(a + b, num_outputs=2, axis=1, name="split")
    c = mx.sym.concat(s[1], s[0], mx.sym.slice_axis(b, axis=1, begin=0, end=2), dim=1)
    d = mx.sym.transpose(mx.sym.Reshape(c, shape=(-1, 3)), axes=(1, 0))
    e = mx.sym.mean(d, axis=1, keepdims=True)
    return mx.sym.Group([e, mx.sym.BlockGrad(a) ** 2, 1 - mx.sym.relu(c)]), \
        {"a": (3, 4), "b": (3, 4)}


GRAPHS = {"mlp": mlp, "convbn": convbn, "lstm": lstm, "custom": custom, "misc": misc}

LEGACY_08 = {
    "nodes": [
        {"op": "null", "param": {}, "name": "data", "inputs": [], "backward_source_id": -1},
        {"op": "null", "param": {}, "name": "fc_weight", "inputs": [], "backward_source_id": -1,
         "attr": {"lr_mult": "2"}},
        {"op": "null", "param": {}, "name": "fc_bias", "inputs": [], "backward_source_id": -1},
        {"op": "FullyConnected", "param": {"no_bias": "False", "num_hidden": "6"},
         "name": "fc", "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1,
         "attr": {"ctx_group": "stage1"}},
        {"op": "null", "param": {}, "name": "bn_gamma", "inputs": [], "backward_source_id": -1},
        {"op": "null", "param": {}, "name": "bn_beta", "inputs": [], "backward_source_id": -1},
        {"op": "BatchNorm", "param": {"eps": "0.001", "fix_gamma": "True", "momentum": "0.9",
                                      "use_global_stats": "False"},
         "name": "bn", "inputs": [[3, 0], [4, 0], [5, 0]], "backward_source_id": -1},
        {"op": "argmax", "param": {"axis": "-1"}, "name": "am", "inputs": [[6, 0]],
         "backward_source_id": -1},
    ],
    "arg_nodes": [0, 1, 2, 4, 5],
    "heads": [[6, 0], [7, 0]],
}


def inputs_for(sym, shapes, seed):
    rng = np.random.RandomState(seed)
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    args = {}
    for n, s in zip(sym.list_arguments(), arg_shapes):
        if n.endswith("label"):
            args[n] = rng.randint(0, s[-1] if len(s) > 1 else 3, size=s).astype(np.float32) \
                if False else rng.randint(0, 3, size=s).astype(np.float32)
        else:
            args[n] = rng.uniform(-1, 1, size=s).astype(np.float32)
    aux = {}
    for n, s in zip(sym.list_auxiliary_states(), aux_shapes):
        aux[n] = (rng.uniform(0.5, 1.5, size=s) if "var" in n else rng.uniform(-.1, .1, size=s)) \
            .astype(np.float32)
    return args, aux


def run_mxnet(sym, shapes, seed, rec, key):
    args, aux = inputs_for(sym, shapes, seed)
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**shapes)
    rec[f"{key}:arguments"] = np.array(sym.list_arguments())
    rec[f"{key}:outputs"] = np.array(sym.list_outputs())
    rec[f"{key}:aux"] = np.array(sym.list_auxiliary_states(), dtype="U64")
    rec[f"{key}:out_shapes"] = np.array(json.dumps([list(s) for s in out_shapes]))
    for n, v in args.items():
        rec[f"{key}:arg:{n}"] = v
    for n, v in aux.items():
        rec[f"{key}:auxin:{n}"] = v
    dtypes = {n: np.float32 for n in args}
    ex = sym.bind(mx.cpu(), {n: mx.nd.array(v, dtype=dtypes[n]) for n, v in args.items()},
                  args_grad={n: mx.nd.zeros(v.shape) for n, v in args.items()},
                  aux_states={n: mx.nd.array(v) for n, v in aux.items()})
    outs = ex.forward(is_train=True)
    ogs = [mx.nd.array(np.random.RandomState(seed + 1 + i).uniform(-1, 1, size=o.shape))
           for i, o in enumerate(outs)]
    ex.backward(ogs)
    for i, (o, g) in enumerate(zip(outs, ogs)):
        rec[f"{key}:out{i}"] = o.asnumpy()
        rec[f"{key}:ograd{i}"] = g.asnumpy()
    for n, g in ex.grad_dict.items():
        rec[f"{key}:grad:{n}"] = g.asnumpy()
    for n, a in ex.aux_dict.items():
        rec[f"{key}:auxout:{n}"] = a.asnumpy()


def main():
    os.makedirs(OUT, exist_ok=True)
    if MXC:
        for name, build in GRAPHS.items():
            with mx.name.NameManager():
                sym, _ = build()
            sym.save(os.path.join(OUT, f"mxc_{name}-symbol.json"))
        return
    rec = {}
    seed = 0
    for name, build in GRAPHS.items():
        with mx.name.NameManager():
            sym, shapes = build()
        sym.save(os.path.join(OUT, f"{name}-symbol.json"))
        run_mxnet(sym, shapes, seed, rec, name)
        seed += 10
        f = os.path.join(OUT, f"mxc_{name}-symbol.json")
        if os.path.exists(f):       # written by mxc: must load and run the same in MXNet
            run_mxnet(mx.sym.load(f), shapes, seed - 10, rec, "mxc_" + name)
    net = mx.gluon.model_zoo.vision.resnet18_v1(classes=10)
    net.initialize()
    net.hybridize()
    net(mx.nd.zeros((1, 3, 32, 32)))
    sym = net(mx.sym.var("data"))
    sym.save(os.path.join(OUT, "resnet18_v1-symbol.json"))
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(data=(1, 3, 32, 32))
    rec["resnet18_v1:arguments"] = np.array(sym.list_arguments())
    rec["resnet18_v1:aux"] = np.array(sym.list_auxiliary_states())
    rec["resnet18_v1:arg_shapes"] = np.array(json.dumps([list(s) for s in arg_shapes]))
    rec["resnet18_v1:out_shapes"] = np.array(json.dumps([list(s) for s in out_shapes]))
    legacy = mx.sym.load_json(json.dumps(LEGACY_08))
    with open(os.path.join(OUT, "legacy_000800-symbol.json"), "w") as f:
        json.dump(LEGACY_08, f, indent=1)
    legacy.save(os.path.join(OUT, "legacy_000800-upgraded-symbol.json"))
    np.savez_compressed(os.path.join(HERE, "symbol_golden.npz"), **rec)


if __name__ == "__main__":
    main()
