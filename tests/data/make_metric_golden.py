"""Writes tests/data/metric_golden.npz: MXNet 1.9.1's metric values on fixed random inputs, and
a few local-KVStore results (2-bit gradient compression on a 'device' store, SGD with momentum
run inside the store).

Run with the oracle interpreter: /work/mxnet-oracle/bin/python tests/data/make_metric_golden.py

Metrics: ``metric/spec`` is JSON [[case, create args, create kwargs, input kind], ...]; inputs
``in/<kind>/label<b>`` and ``in/<kind>/pred<b>`` for batches b = 0, 1, 2. For each case the
run is: update(batch 0); update(batch 1); reset_local(); update(batch 2), and after each update
``get()`` and ``get_global()`` are recorded: ``out/<case>`` has shape (3, 2, n) (step,
local/global, value; n > 1 for composite metrics).

KVStore: ``kv/2bit/grad`` (steps, devices, n) pushed to key 0 of a 'device' store with
threshold 0.5, ``kv/2bit/pulled`` (steps, n) pulled after each push;
``kv/sgd/{w0,grad,pulled}``: SGD(lr 0.1, momentum 0.9, wd 0.01, rescale_grad 0.5) set with
set_optimizer on a 'local' store, int key 3, two devices per push.
"""
import json
import os

import numpy as np
import mxnet as mx

rng = np.random.RandomState(11)
OUT = {}
B = 12


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def make_inputs(kind, b):
    if kind == "multi":           # 5 classes
        return rng.randint(0, 5, B).astype(np.float32), \
            softmax(rng.randn(B, 5)).astype(np.float32)
    if kind == "binary":
        lab = np.array([0, 1] * (B // 2), np.float32)
        rng.shuffle(lab)
        return lab, softmax(rng.randn(B, 2) * 2).astype(np.float32)
    if kind == "ignore":          # perplexity with ignore_label=0
        return rng.randint(0, 4, B).astype(np.float32), \
            softmax(rng.randn(B, 4)).astype(np.float32)
    if kind == "regress":
        lab = rng.randn(B, 3).astype(np.float32)
        return lab, (lab * 0.7 + rng.randn(B, 3) * 0.5).astype(np.float32)
    if kind == "regress1d":
        lab = rng.randn(B).astype(np.float32)
        return lab, (lab + rng.randn(B) * 0.3).astype(np.float32)
    if kind == "loss":
        return np.zeros(B, np.float32), rng.rand(B, 2).astype(np.float32)
    raise ValueError(kind)


KINDS = ["multi", "binary", "ignore", "regress", "regress1d", "loss"]
for kind in KINDS:
    for b in range(3):
        lab, pred = make_inputs(kind, b)
        OUT["in/%s/label%d" % (kind, b)] = lab
        OUT["in/%s/pred%d" % (kind, b)] = pred

SPEC = [
    ["acc", ["acc"], {}, "multi"],
    ["acc_axis0", ["acc"], {"axis": 1}, "binary"],
    ["top_k3", ["top_k_accuracy"], {"top_k": 3}, "multi"],
    ["f1_macro", ["f1"], {}, "binary"],
    ["f1_micro", ["f1"], {"average": "micro"}, "binary"],
    ["mcc_macro", ["mcc"], {}, "binary"],
    ["mcc_micro", ["mcc"], {"average": "micro"}, "binary"],
    ["perplexity", ["perplexity", None], {}, "multi"],
    ["perplexity_ignore", ["perplexity", 0], {}, "ignore"],
    ["mae", ["mae"], {}, "regress"],
    ["mse", ["mse"], {}, "regress"],
    ["rmse", ["rmse"], {}, "regress"],
    ["mae1d", ["mae"], {}, "regress1d"],
    ["rmse1d", ["rmse"], {}, "regress1d"],
    ["ce", ["ce"], {}, "multi"],
    ["nll", ["nll_loss"], {}, "multi"],
    ["pearsonr", ["pearsonr"], {}, "regress"],
    ["pcc_multi", ["pcc"], {}, "multi"],
    ["pcc_binary", ["pcc"], {}, "binary"],
    ["loss", ["loss"], {}, "loss"],
    ["composite", [["acc", "ce", "mae"]], {}, "multi"],
]
OUT["metric/spec"] = np.array(json.dumps(SPEC))

for case, args, kwargs, kind in SPEC:
    m = mx.metric.create(*args, **kwargs)
    rows = []
    for b in range(3):
        if b == 2:
            m.reset_local()
        lab = mx.nd.array(OUT["in/%s/label%d" % (kind, b)])
        pred = mx.nd.array(OUT["in/%s/pred%d" % (kind, b)])
        m.update([lab], [pred])
        loc = np.atleast_1d(np.asarray(m.get()[1], np.float64))
        glo = np.atleast_1d(np.asarray(m.get_global()[1], np.float64))
        rows.append([loc, glo])
    OUT["out/" + case] = np.array(rows, np.float64)

# ---- KVStore: 2-bit compression on a 'device' store --------------------------------------
kv = mx.kv.create("device")
kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
kv.init(0, mx.nd.zeros((7,)))
grads = rng.uniform(-0.8, 0.8, (4, 2, 7)).astype(np.float32)
pulled = []
for s in range(4):
    kv.push(0, [mx.nd.array(grads[s, d], ctx=mx.cpu(d)) for d in range(2)])
    o = mx.nd.zeros((7,))
    kv.pull(0, out=o)
    pulled.append(o.asnumpy())
OUT["kv/2bit/grad"] = grads
OUT["kv/2bit/pulled"] = np.array(pulled)

# ---- KVStore: SGD with momentum inside a local store --------------------------------------
kv = mx.kv.create("local")
w0 = rng.randn(3, 4).astype(np.float32)
kv.init(3, mx.nd.array(w0))
kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5))
grads = rng.randn(3, 2, 3, 4).astype(np.float32)
pulled = []
for s in range(3):
    kv.push(3, [mx.nd.array(grads[s, d], ctx=mx.cpu(d)) for d in range(2)])
    o = mx.nd.zeros((3, 4))
    kv.pull(3, out=o)
    pulled.append(o.asnumpy())
OUT["kv/sgd/w0"] = w0
OUT["kv/sgd/grad"] = grads
OUT["kv/sgd/pulled"] = np.array(pulled)

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "metric_golden.npz")
np.savez_compressed(path, **OUT)
print("wrote", path, len(OUT), "arrays")
