"""Golden outputs of MXNet 1.9.1's (oneDNN build) _contrib_quantized_batch_norm,
_contrib_quantized_elemwise_mul and _contrib_quantized_embedding, and of quantize_model on nets
holding BatchNorm, elemwise_mul and Embedding, for tests/ops/test_quantized_ops.py and
tests/contrib/test_quantization_layers.py.

Run with the oracle's python, without a subgraph backend (as make_quantization_golden.py):
    MXNET_SUBGRAPH_BACKEND=NONE /work/mxnet-oracle/bin/python tests/data/make_quantized_ops_golden.py
Writes tests/data/quantized_ops_golden.npz ("<case>/in<i>", "<case>/out<i>", attributes in
"<case>/attrs" as JSON) and tests/data/quantized_layers_golden.json. MXNet's imperative call of
these operators fails its own output-count check, so they run through a bound symbol.
"""
import json
import os

import mxnet as mx
import numpy as np
from mxnet.contrib import quantization as q

q.stats = True        # MXNet only checks that scipy imports; calibrate_entropy does the work
HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(11)
out = {}


def f(v):
    return mx.nd.array([v])


def case(name, opname, arrays, **kw):
    names = ["in%d" % i for i in range(len(arrays))]
    s = getattr(mx.sym.contrib, opname)(*[mx.sym.var(n) for n in names], **kw)
    d = dict(zip(names, arrays))
    ex = s.bind(mx.cpu(), {n: d[n] for n in s.list_arguments()},
                aux_states={n: d[n] for n in s.list_auxiliary_states()})
    res = ex.forward()
    out[f"{name}/attrs"] = np.array(json.dumps({"op": opname, "kw": kw}))
    for i, a in enumerate(arrays):
        out[f"{name}/in{i}"] = a.asnumpy()
    for i, r in enumerate(res):
        out[f"{name}/out{i}"] = r.asnumpy()


# elemwise_mul: int32 with the product range, int8 calibrated (truncated, wrapping), float
a = mx.nd.array(rng.randint(-128, 128, (3, 50)), dtype="int8")
b = mx.nd.array(rng.randint(-128, 128, (3, 50)), dtype="int8")
case("mul_int32", "quantized_elemwise_mul", [a, b, f(-0.7), f(1.1), f(-2.0), f(0.5)])
case("mul_calib", "quantized_elemwise_mul", [a, b, f(-0.7), f(1.1), f(-2.0), f(0.5)],
     min_calib_range=-1.5, max_calib_range=1.2)
case("mul_calib_wrap", "quantized_elemwise_mul", [a, b, f(-0.7), f(1.1), f(-2.0), f(0.5)],
     min_calib_range=-0.05, max_calib_range=0.05)
case("mul_float", "quantized_elemwise_mul", [a, b, f(-0.7), f(1.1), f(-2.0), f(0.5)],
     enable_float_output=True)
# embedding: float and integer indices, fractional, negative and past the end
w = mx.nd.array(rng.randint(-128, 128, (6, 5)), dtype="int8")
idx = mx.nd.array([[0, 2.7, 5], [-3, 9, 1.2]])
case("emb_f32", "quantized_embedding", [idx, w, f(-0.4), f(0.9)], input_dim=6, output_dim=5)
case("emb_i32", "quantized_embedding", [mx.nd.array([4, 0, 7, 3], dtype="int32"), w,
                                        f(-1.0), f(1.0)], input_dim=6, output_dim=5)
# batch_norm: int8 and uint8 data, fix_gamma on and off, several eps, saturation
for dt, lo, hi, dmin, dmax in (("int8", -128, 128, -1.3, 0.8), ("uint8", 0, 256, 0.0, 2.5)):
    x = mx.nd.array(rng.randint(lo, hi, (2, 5, 3, 4)), dtype=dt)
    g = mx.nd.array(rng.uniform(-2, 2, 5))
    be = mx.nd.array(rng.uniform(-1, 1, 5))
    mean = mx.nd.array(rng.uniform(-0.5, 0.5, 5))
    var = mx.nd.array(rng.uniform(0.2, 2, 5))
    for tag, kw in (("", {}), ("_nofix_eps", dict(fix_gamma=False, eps=0.05)),
                    ("_narrow", dict(min_calib_range=-0.5, max_calib_range=0.4))):
        kw = dict(dict(min_calib_range=-3.0, max_calib_range=2.5), **kw)
        case(f"bn_{dt}{tag}", "quantized_batch_norm", [x, g, be, mean, var, f(dmin), f(dmax)],
             **kw)
np.savez_compressed(os.path.join(HERE, "quantized_ops_golden.npz"), **out)


# quantize_model on nets with the three layers
def fc_head(x, prefix):
    fl = mx.sym.Flatten(x, name=prefix + "flat")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(fl, num_hidden=3, name=prefix + "fc"),
                                name="softmax")


data = mx.sym.var("data")
mrng = np.random.RandomState(3)
nets = {}
# conv -> BatchNorm -> relu -> pooling -> fc
c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="bconv")
bn = mx.sym.BatchNorm(c, fix_gamma=False, name="bbn")
r = mx.sym.Activation(bn, act_type="relu", name="brelu")
p = mx.sym.Pooling(r, kernel=(2, 2), stride=(2, 2), pool_type="max", name="bpool")
nets["bn"] = (fc_head(p, "b"),
              {"bconv_weight": mrng.randn(4, 1, 3, 3), "bconv_bias": mrng.randn(4) * 0.1,
               "bbn_gamma": mrng.uniform(0.5, 1.5, 4), "bbn_beta": mrng.randn(4) * 0.2,
               "bfc_weight": mrng.randn(3, 16), "bfc_bias": mrng.randn(3) * 0.1},
              {"bbn_moving_mean": mrng.randn(4) * 0.2, "bbn_moving_var": mrng.uniform(0.5, 2, 4)})
# two convolutions multiplied elementwise
ca = mx.sym.Convolution(data, kernel=(3, 3), num_filter=2, pad=(1, 1), name="mconva")
cb = mx.sym.Convolution(data, kernel=(1, 1), num_filter=2, name="mconvb")
nets["mul"] = (fc_head(mx.sym.elemwise_mul(ca, cb, name="mmul"), "m"),
               {"mconva_weight": mrng.randn(2, 1, 3, 3), "mconva_bias": mrng.randn(2) * 0.1,
                "mconvb_weight": mrng.randn(2, 1, 1, 1), "mconvb_bias": mrng.randn(2) * 0.1,
                "mfc_weight": mrng.randn(3, 32), "mfc_bias": mrng.randn(3) * 0.1}, {})
# Embedding of the indices -> fc
emb = mx.sym.Embedding(data, input_dim=10, output_dim=4, name="eemb")
nets["emb"] = (fc_head(emb, "e"),
               {"eemb_weight": mrng.randn(10, 4), "efc_weight": mrng.randn(3, 64),
                "efc_bias": mrng.randn(3) * 0.1}, {})
# non-negative data: with quantized_dtype auto it quantizes to uint8, the only data type
# MXNet's oneDNN quantized convolution runs
X = np.abs(mrng.randn(8, 1, 4, 4)).astype(np.float32)
XI = mrng.randint(0, 10, (8, 16)).astype(np.float32)
model = {"X": X.tolist(), "XI": XI.tolist(), "nets": {}, "cases": {}}
for net, (sym, args, auxs) in nets.items():
    model["nets"][net] = {"sym": sym.tojson(),
                          "args": {k: np.asarray(v, np.float32).tolist() for k, v in args.items()},
                          "auxs": {k: np.asarray(v, np.float32).tolist() for k, v in auxs.items()}}
    nd_args = {k: mx.nd.array(v) for k, v in args.items()}
    nd_auxs = {k: mx.nd.array(v) for k, v in auxs.items()}
    # every dtype and mode with naive calibration; entropy (slower: histograms) once
    # and channel-wise granularity, which without oneDNN's fused operators changes nothing
    for mode, dt, qm in [("naive", dt, qm) for dt in ("int8", "auto") for qm in ("smart", "full")
                         ] + [("entropy", "auto", "smart"), ("naive", "auto", "smart/channel")]:
        it = mx.io.NDArrayIter(XI if net == "emb" else X, np.zeros(8), batch_size=4)
        qsym, qargs, _ = q.quantize_model(sym, nd_args, nd_auxs, ctx=mx.cpu(),
                                          calib_mode=mode, calib_data=it,
                                          quantized_dtype=dt, quantize_mode=qm.split("/")[0],
                                          quantize_granularity="channel-wise"
                                          if qm.endswith("channel") else "tensor-wise")
        qargs = {k: v.asnumpy() for k, v in qargs.items()}
        ex = qsym.simple_bind(mx.cpu(), data=it.provide_data[0].shape,
                              softmax_label=(4,), grad_req="null",
                              type_dict=dict({k: v.dtype for k, v in qargs.items()},
                                             data=np.float32, softmax_label=np.float32))
        for k, v in qargs.items():
            ex.arg_dict[k][:] = v
        for k, v in nd_auxs.items():
            ex.aux_dict[k][:] = v
        ex.arg_dict["data"][:] = (XI if net == "emb" else X)[:4]
        got = model["cases"][f"{net}/{mode}/{dt}/{qm}"] = {
            "qsym": qsym.tojson(),
            "qargs": {k: [np.dtype(v.dtype).name, v.reshape(-1).tolist()]
                      for k, v in qargs.items()}}
        try:    # the quantized net's output, where MXNet runs it (int8 data into a
            got["out"] = ex.forward()[0].asnumpy().tolist()    # conv it does not)
        except mx.base.MXNetError:
            pass
with open(os.path.join(HERE, "quantized_layers_golden.json"), "w") as fh:
    json.dump(model, fh, separators=(",", ":"))
