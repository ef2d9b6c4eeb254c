"""Golden outputs of MXNet 1.9.1's (oneDNN build) INT8 quantization for
tests/ops/test_quantization.py and tests/contrib/test_quantization.py.

Run with the oracle's python, without a subgraph backend (MXNet's default on CPU fuses conv+relu
before calibrating, so the monitored names lose the layers' own outputs):
    MXNET_SUBGRAPH_BACKEND=NONE /work/mxnet-oracle/bin/python tests/data/make_quantization_golden.py
Writes tests/data/quantization_golden.npz (operator cases: inputs and outputs, keyed
"<case>/<name>") and tests/data/quantization_model_golden.json (quantize_model's graphs and
thresholds on a small conv net).
"""
import json
import os

import mxnet as mx
import numpy as np
from mxnet.contrib import quantization as q

q.stats = True        # MXNet only checks that scipy imports; calibrate_entropy does the work
HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(7)
out = {}


def f(v):
    return mx.nd.array([v])


def case(name, ins, res):
    for k, v in ins.items():
        out[f"{name}/in_{k}"] = v.asnumpy() if isinstance(v, mx.nd.NDArray) else np.asarray(v)
    res = res if isinstance(res, (list, tuple)) else [res]
    for i, r in enumerate(res):
        out[f"{name}/out{i}"] = r.asnumpy()


# quantize_v2 / quantize / dequantize / requantize
x = mx.nd.array(np.concatenate([rng.randn(200).astype(np.float32) * 2,
                                np.arange(-6, 7, dtype=np.float32) * 0.5 / 127.5 * 2]))
for ot in ("int8", "uint8", "auto"):
    case(f"qv2_{ot}_calib", {"x": x}, mx.nd.contrib.quantize_v2(x, out_type=ot, min_calib_range=-2.0,
                                                               max_calib_range=2.0))
    case(f"qv2_{ot}_data", {"x": x}, mx.nd.contrib.quantize_v2(x, out_type=ot))
xp = mx.nd.abs(x)
case("qv2_auto_pos", {"x": xp}, mx.nd.contrib.quantize_v2(xp, out_type="auto", min_calib_range=0.0,
                                                         max_calib_range=3.0))
for ot in ("int8", "uint8"):
    case(f"q_{ot}", {"x": x}, mx.nd.contrib.quantize(x, f(-1.5), f(2.5), out_type=ot))
for dt in ("int8", "uint8"):
    lo, hi = (-128, 128) if dt == "int8" else (0, 256)
    qd = mx.nd.array(np.arange(lo, hi), dtype=dt)
    case(f"deq_{dt}", {"q": qd}, mx.nd.contrib.dequantize(qd, f(-0.7), f(1.3)))
i32 = mx.nd.array(np.concatenate([rng.randint(-2 ** 20, 2 ** 20, 300),
                                  [2 ** 31 - 1, -2 ** 31 + 1, 0]]), dtype="int32")
i32s = mx.nd.array(rng.randint(-2 ** 20, 2 ** 20, 300), dtype="int32")
for name, kw in (("req_int8_calib", dict(min_calib_range=-0.3, max_calib_range=0.4)),
                 ("req_uint8_calib", dict(out_type="uint8", min_calib_range=0.0, max_calib_range=0.4)),
                 ("req_auto_calib", dict(out_type="auto", min_calib_range=0.0, max_calib_range=0.4))):
    case(name, {"x": i32}, mx.nd.contrib.requantize(i32, f(-1.0), f(1.0), **kw))
case("req_int8_data", {"x": i32s}, mx.nd.contrib.requantize(i32s, f(-1.0), f(1.0)))
case("req_int8_data_full", {"x": i32}, mx.nd.contrib.requantize(i32, f(-1.0), f(1.0)))

# products
for dt in ("uint8",):
    d = mx.nd.array(rng.randint(0, 256, (2, 4, 7, 6)), dtype=dt)
    w = mx.nd.array(rng.randint(-127, 128, (6, 4, 3, 3)), dtype="int8")
    b = mx.nd.array(rng.randint(-127, 128, (6,)), dtype="int8")
    case("conv", {"d": d, "w": w, "b": b},
         mx.nd.contrib.quantized_conv(d, w, b, f(0.0), f(3.0), f(-0.5), f(0.6), f(-0.2), f(0.1),
                                      kernel=(3, 3), num_filter=6, pad=(1, 2), stride=(2, 1),
                                      dilate=(1, 2)))
    case("conv_nobias", {"d": d, "w": w},
         mx.nd.contrib.quantized_conv(d, w, f(0.0), f(3.0), f(-0.5), f(0.6), kernel=(3, 3),
                                      num_filter=6, no_bias=True))
for dt in ("int8", "uint8"):
    lo = -127 if dt == "int8" else 0
    d = mx.nd.array(rng.randint(lo, 128, (3, 2, 5)), dtype=dt)
    w = mx.nd.array(rng.randint(-127, 128, (4, 10)), dtype="int8")
    b = mx.nd.array(rng.randint(-127, 128, (4,)), dtype="int8")
    case(f"fc_{dt}", {"d": d, "w": w, "b": b},
         mx.nd.contrib.quantized_fully_connected(d, w, b, f(-1.0), f(1.5), f(-0.25), f(0.5),
                                                 f(-0.3), f(0.2), num_hidden=4))
    case(f"fc_{dt}_nobias", {"d": d, "w": w},
         mx.nd.contrib.quantized_fully_connected(d, w, f(-1.0), f(1.5), f(-0.25), f(0.5),
                                                 num_hidden=4, no_bias=True))

# range-passing operators
for dt in ("int8", "uint8"):
    lo = -128 if dt == "int8" else 0
    d = mx.nd.array(rng.randint(lo, lo + 256, (2, 3, 7, 8)), dtype=dt)
    for pt in ("max", "avg"):
        case(f"pool_{pt}_{dt}", {"d": d},
             mx.nd.contrib.quantized_pooling(d, f(-1.0), f(2.0), kernel=(3, 2), stride=(2, 2),
                                             pad=(1, 1), pool_type=pt))
    case(f"pool_global_{dt}", {"d": d},
         mx.nd.contrib.quantized_pooling(d, f(-1.0), f(2.0), kernel=(1, 1), global_pool=True,
                                         pool_type="avg"))
    case(f"act_{dt}", {"d": d}, mx.nd.contrib.quantized_act(d, f(-1.0), f(2.0), act_type="relu"))
    case(f"flatten_{dt}", {"d": d}, mx.nd.contrib.quantized_flatten(d, f(-1.0), f(2.0)))

# elemwise_add: every pair of input types, uncalibrated (int32) and calibrated
for da in ("int8", "uint8"):
    for db in ("int8", "uint8"):
        lo_a, lo_b = (-128 if da == "int8" else 0), (-128 if db == "int8" else 0)
        a = mx.nd.array(rng.randint(lo_a, lo_a + 256, (3, 50)), dtype=da)
        b = mx.nd.array(rng.randint(lo_b, lo_b + 256, (3, 50)), dtype=db)
        case(f"add_{da}_{db}", {"a": a, "b": b},
             mx.nd.contrib.quantized_elemwise_add(a, b, f(-0.5), f(1.0), f(-2.0), f(0.75)))
        case(f"add_{da}_{db}_calib", {"a": a, "b": b},
             mx.nd.contrib.quantized_elemwise_add(a, b, f(-0.5), f(1.0), f(-2.0), f(0.75),
                                                  min_calib_range=-1.5, max_calib_range=2.5))

# concat: mixed types and ranges along axis 1 and 2
c1 = mx.nd.array(rng.randint(-128, 128, (2, 3, 4)), dtype="int8")
c2 = mx.nd.array(rng.randint(0, 256, (2, 2, 4)), dtype="uint8")
c3 = mx.nd.array(rng.randint(0, 256, (2, 1, 4)), dtype="uint8")
case("concat_mixed", {"a": c1, "b": c2, "c": c3},
     mx.nd.contrib.quantized_concat(c1, c2, c3, f(-1.0), f(1.0), f(0.0), f(3.0), f(-0.5), f(0.5),
                                    num_args=3, dim=1))
case("concat_u8", {"b": c2, "c": c3},
     mx.nd.contrib.quantized_concat(c2, c3, f(0.0), f(3.0), f(0.0), f(3.0), num_args=2, dim=1))
case("concat_u8_axis2", {"b": c2, "c": c2},
     mx.nd.contrib.quantized_concat(c2, c2, f(0.0), f(3.0), f(0.0), f(1.0), num_args=2, dim=2))

# calibrate_entropy on a skewed histogram
vals = np.concatenate([rng.randn(20000), rng.randn(200) * 6]).astype(np.float32)
th = float(np.abs(vals).max())
hist, edges = np.histogram(vals, bins=2001, range=(-th, th))
for nq in (255, 511):
    case(f"calib_{nq}", {"hist": hist.astype(np.float32), "edges": edges.astype(np.float32)},
         mx.nd.contrib.calibrate_entropy(mx.nd.array(hist), mx.nd.array(edges),
                                         num_quantized_bins=nq))
np.savez_compressed(os.path.join(HERE, "quantization_golden.npz"), **out)


# quantize_model on a small conv net
def conv_net():
    data = mx.sym.var("data")
    c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv0")
    r = mx.sym.Activation(c, act_type="relu", name="relu0")
    p = mx.sym.Pooling(r, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool0")
    fl = mx.sym.Flatten(p, name="flat0")
    fc = mx.sym.FullyConnected(fl, num_hidden=3, name="fc0")
    s = mx.sym.Activation(fc, act_type="sigmoid", name="sig0")
    fc1 = mx.sym.FullyConnected(s, num_hidden=3, name="fc1")
    return mx.sym.SoftmaxOutput(fc1, name="softmax")


mrng = np.random.RandomState(0)
args = {"conv0_weight": mrng.randn(4, 1, 3, 3), "conv0_bias": mrng.randn(4) * 0.1,
        "fc0_weight": mrng.randn(3, 16), "fc0_bias": mrng.randn(3) * 0.1,
        "fc1_weight": mrng.randn(3, 3), "fc1_bias": mrng.randn(3) * 0.1}
X = mrng.randn(8, 1, 4, 4).astype(np.float32)
model = {"args": {k: np.asarray(v, np.float32).tolist() for k, v in args.items()},
         "X": X.tolist(), "cases": {}}
nd_args = {k: mx.nd.array(v) for k, v in args.items()}
sym = conv_net()
model["sym"] = sym.tojson()
for mode in ("none", "naive", "entropy"):
    for dt in ("int8", "auto", "uint8"):
        for qm in ("smart", "full"):
            it = mx.io.NDArrayIter(X, np.zeros(8), batch_size=4)
            qsym, qargs, _ = q.quantize_model(sym, nd_args, {}, ctx=mx.cpu(), calib_mode=mode,
                                              calib_data=it, quantized_dtype=dt,
                                              quantize_mode=qm,
                                              excluded_sym_names=["fc1"] if qm == "full" else None)
            model["cases"][f"{mode}/{dt}/{qm}"] = {
                "qsym": qsym.tojson(),
                "qargs": {k: [np.dtype(v.dtype).name, v.asnumpy().reshape(-1).tolist()]
                          for k, v in qargs.items()}}
# a residual block: elemwise_add between quantized convolutions
data = mx.sym.var("data")
c0 = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="rconv0")
r0 = mx.sym.Activation(c0, act_type="relu", name="rrelu0")
c1 = mx.sym.Convolution(r0, kernel=(3, 3), num_filter=4, pad=(1, 1), no_bias=True, name="rconv1")
add = mx.sym.elemwise_add(c1, r0, name="radd")
fl = mx.sym.Flatten(mx.sym.Activation(add, act_type="relu", name="rrelu1"), name="rflat")
res = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(fl, num_hidden=3, name="rfc"), name="softmax")
res_args = {"rconv0_weight": mrng.randn(4, 1, 3, 3), "rconv0_bias": mrng.randn(4) * 0.1,
            "rconv1_weight": mrng.randn(4, 4, 3, 3) * 0.3, "rfc_weight": mrng.randn(3, 64),
            "rfc_bias": mrng.randn(3) * 0.1}
model["res_sym"] = res.tojson()
model["res_args"] = {k: np.asarray(v, np.float32).tolist() for k, v in res_args.items()}
for mode in ("naive", "entropy"):
    it = mx.io.NDArrayIter(X, np.zeros(8), batch_size=4)
    qsym, qargs, _ = q.quantize_model(res, {k: mx.nd.array(v) for k, v in res_args.items()}, {},
                                      ctx=mx.cpu(), calib_mode=mode, calib_data=it,
                                      quantized_dtype="auto")
    model["cases"][f"res/{mode}/auto/smart"] = {
        "qsym": qsym.tojson(),
        "qargs": {k: [np.dtype(v.dtype).name, v.asnumpy().reshape(-1).tolist()]
                  for k, v in qargs.items()}}
# two branches joined by Concat (dim 1)
ca = mx.sym.Activation(mx.sym.Convolution(data, kernel=(1, 1), num_filter=2, name="cconva"),
                       act_type="relu", name="crelua")
cb = mx.sym.Convolution(data, kernel=(3, 3), num_filter=3, pad=(1, 1), name="cconvb")
cat = mx.sym.Concat(ca, cb, dim=1, name="ccat")
cfl = mx.sym.Flatten(mx.sym.Pooling(cat, kernel=(2, 2), stride=(2, 2), pool_type="avg",
                                    name="cpool"), name="cflat")
cnet = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(cfl, num_hidden=3, name="cfc"), name="softmax")
cat_args = {"cconva_weight": mrng.randn(2, 1, 1, 1), "cconva_bias": mrng.randn(2) * 0.1,
            "cconvb_weight": mrng.randn(3, 1, 3, 3), "cconvb_bias": mrng.randn(3) * 0.1,
            "cfc_weight": mrng.randn(3, 20), "cfc_bias": mrng.randn(3) * 0.1}
model["cat_sym"] = cnet.tojson()
model["cat_args"] = {k: np.asarray(v, np.float32).tolist() for k, v in cat_args.items()}
for mode in ("naive", "entropy"):
    it = mx.io.NDArrayIter(X, np.zeros(8), batch_size=4)
    qsym, qargs, _ = q.quantize_model(cnet, {k: mx.nd.array(v) for k, v in cat_args.items()}, {},
                                      ctx=mx.cpu(), calib_mode=mode, calib_data=it,
                                      quantized_dtype="auto")
    model["cases"][f"cat/{mode}/auto/smart"] = {
        "qsym": qsym.tojson(),
        "qargs": {k: [np.dtype(v.dtype).name, v.asnumpy().reshape(-1).tolist()]
                  for k, v in qargs.items()}}
with open(os.path.join(HERE, "quantization_model_golden.json"), "w") as fh:
    json.dump(model, fh, separators=(",", ":"))
