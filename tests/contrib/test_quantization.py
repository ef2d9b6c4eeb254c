"""mx.contrib.quantization: the rewritten graph, the quantized parameters and the calibrated
thresholds against MXNet 1.9.1's on the same nets (a small conv net, a residual block, two
branches joined by Concat) and
calibration data
(tests/data/quantization_model_golden.json, made by tests/data/make_quantization_golden.py
without a subgraph backend), and the accuracy of quantized models on a small synthetic task."""
import json
import os

import numpy as np
import pytest

import mxc as mx
from mxc.contrib import quantization as q

with open(os.path.join(os.path.dirname(__file__), "..", "data",
                       "quantization_model_golden.json")) as _fh:
    MODEL = json.load(_fh)
CALIB_KEYS = ("min_calib_range", "max_calib_range")


def _graph(js):
    """(op, name, attrs without thresholds, inputs) per node, the thresholds by node, heads."""
    g = json.loads(js)
    nodes, ths = [], {}
    for n in g["nodes"]:
        attrs = dict(n.get("attrs", {}))
        th = tuple(float(attrs.pop(k)) for k in CALIB_KEYS if k in attrs)
        if th:
            ths[n["name"]] = th
        nodes.append((n["op"], n["name"], attrs, [list(e) for e in n["inputs"]]))
    return nodes, ths, g["heads"]


def _quantize(mode, dtype, qmode, net=""):
    sym = mx.sym.load_json(MODEL[net + "sym"])
    args = {k: mx.nd.array(np.array(v, np.float32)) for k, v in MODEL[net + "args"].items()}
    X = np.array(MODEL["X"], np.float32)
    it = mx.io.NDArrayIter(X, np.zeros(len(X)), batch_size=4)
    return q.quantize_model(sym, args, {}, ctx=mx.cpu(), calib_mode=mode, calib_data=it,
                            quantized_dtype=dtype, quantize_mode=qmode,
                            excluded_sym_names=["fc1"] if qmode == "full" else None)


@pytest.mark.parametrize("case", sorted(MODEL["cases"]))
def test_quantize_model_matches_mxnet(case):
    net = case.split("/")[0] + "_" if case.count("/") == 3 else ""
    mode, dtype, qmode = case.split("/")[-3:]
    want = MODEL["cases"][case]
    qsym, qargs, _ = _quantize(mode, dtype, qmode, net)
    nodes, ths, heads = _graph(qsym.tojson())
    wnodes, wths, wheads = _graph(want["qsym"])
    assert nodes == wnodes
    assert heads == wheads
    assert sorted(ths) == sorted(wths)
    for name, th in ths.items():
        # the input's thresholds come from the data itself: equal; a layer's come through the
        # float forward, whose last bit may differ from MXNet's
        rtol = 0 if name == "data_quantize" else 2e-6
        np.testing.assert_allclose(th, wths[name], rtol=rtol, err_msg=name)
    assert sorted(qargs) == sorted(want["qargs"])
    for k, (dt, vals) in want["qargs"].items():
        assert qargs[k].dtype == np.dtype(dt), k
        np.testing.assert_array_equal(qargs[k].asnumpy().reshape(-1), np.array(vals, dt), k)


def test_entropy_calibration_keeps_uint8_side_for_positive_layers():
    hist_data = (np.array([0, 0, 0, 5, 9, 3, 1], np.int64), np.linspace(-7, 7, 8),
                 0.0, 7.0, 7.0)
    th_dict = q._get_optimal_thresholds({"relu_output": hist_data}, "uint8",
                                        num_quantized_bins=1)
    lo, hi = th_dict["relu_output"]
    assert lo == 0 and float(hi[0]) in np.linspace(-7, 7, 8)
    with pytest.raises(ValueError, match="quantized_dtype"):
        q.quantize_model(mx.sym.var("data"), {}, {}, quantized_dtype="int4")
    with pytest.raises(ValueError, match="calib_data"):
        q.quantize_model(mx.sym.load_json(MODEL["sym"]), {}, {}, calib_mode="naive")


# ---- a small synthetic task ----------------------------------------------------------------------
def _task(n, seed):
    """8x8 images, 3 classes: a bright 3x3 blob at the left, the middle or the right, in noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.standard_normal((n, 1, 8, 8)).astype(np.float32) * 0.6
    rows = rng.integers(0, 6, n)
    for i in range(n):
        c = 1 + 2 * y[i] if y[i] < 2 else 5
        X[i, 0, rows[i]:rows[i] + 3, c:c + 3] += 1.5
    return X, y.astype(np.float32)


def _conv_net():
    data = mx.sym.var("data")
    c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=8, pad=(1, 1), no_bias=True,
                           name="conv0")
    r = mx.sym.Activation(c, act_type="relu", name="relu0")
    p = mx.sym.Pooling(r, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool0")
    fl = mx.sym.Flatten(p, name="flat0")
    fc = mx.sym.FullyConnected(fl, num_hidden=3, name="fc0")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def _accuracy(sym, args, aux, X, y):
    mod = mx.mod.Module(sym, context=mx.cpu())
    mod.bind(for_training=False, data_shapes=[("data", X.shape)],
             label_shapes=[("softmax_label", y.shape)])
    mod.set_params(args, aux)
    mod.forward(mx.io.DataBatch([mx.nd.array(X)], [mx.nd.array(y)]), is_train=False)
    return float((mod.get_outputs()[0].asnumpy().argmax(1) == y).mean())


@pytest.fixture(scope="module")
def trained():
    mx.random.seed(3)
    np.random.seed(3)       # NDArrayIter's shuffle draws from numpy's global generator
    X, y = _task(600, 0)
    sym = _conv_net()
    mod = mx.mod.Module(sym, context=mx.cpu())
    mod.fit(mx.io.NDArrayIter(X, y, batch_size=50, shuffle=True), num_epoch=6,
            optimizer="adam", optimizer_params={"learning_rate": 0.02},
            initializer=mx.init.Xavier())
    args, aux = mod.get_params()
    return sym, args, aux


@pytest.mark.parametrize("calib_mode", ["naive", "entropy"])
def test_quantized_conv_net_accuracy_within_one_percent(trained, calib_mode):
    sym, args, aux = trained
    Xt, yt = _task(800, 1)
    float_acc = _accuracy(sym, args, aux, Xt, yt)
    assert float_acc > 0.9
    Xc, _ = _task(200, 2)
    qsym, qargs, qaux = q.quantize_model(
        sym, args, aux, ctx=mx.cpu(), calib_mode=calib_mode,
        calib_data=mx.io.NDArrayIter(Xc, np.zeros(len(Xc)), batch_size=50),
        quantized_dtype="auto")
    ops = [n["op"] for n in json.loads(qsym.tojson())["nodes"]]
    assert "_contrib_quantized_conv" in ops and "_contrib_quantized_fully_connected" in ops
    q_acc = _accuracy(qsym, qargs, qaux, Xt, yt)
    assert abs(q_acc - float_acc) <= 0.01, (float_acc, q_acc)


def test_quantize_net_gluon_block(trained):
    from mxc.gluon import nn
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, use_bias=False), nn.Activation("relu"),
            nn.MaxPool2D(2, 2), nn.Flatten(), nn.Dense(3))
    net.initialize()
    X, y = _task(300, 4)
    net(mx.nd.array(X[:2]))
    _, args, _ = trained
    net[0].weight.set_data(args["conv0_weight"])
    net[4].weight.set_data(args["fc0_weight"])
    net[4].bias.set_data(args["fc0_bias"])
    want = net(mx.nd.array(X)).asnumpy()
    calib = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(mx.nd.array(X[:100]), y[:100]),
                                     batch_size=50)
    with pytest.warns(UserWarning, match="quantize_net_v2"):
        qnet = q.quantize_net(net, quantized_dtype="auto", calib_mode="naive",
                              calib_data=calib, ctx=mx.cpu())
    got = qnet(mx.nd.array(X)).asnumpy()
    assert (got.argmax(1) == want.argmax(1)).mean() >= 0.99
    # outputs beyond the calibrated range saturate (a few of the 300 images): 99% are close
    assert np.quantile(np.abs(got - want), 0.99) <= 0.05 * np.abs(want).max()
    assert [p.name for p in qnet.collect_params().values() if p.dtype == np.int8]


def test_monitor_reports_an_operator_output_once():
    """Calibration counts what the monitor reports: as MXNet 1.9.1 (printed by its executor),
    an operator's output is reported as an output only, not again as the next one's input."""
    d = mx.sym.var("data")
    r = mx.sym.Activation(mx.sym.Convolution(d, kernel=(1, 1), num_filter=2, name="c"),
                          act_type="relu", name="r")
    ex = r.simple_bind(mx.cpu(), data=(1, 1, 2, 2), grad_req="null")
    names = []
    ex.set_monitor_callback(lambda n, a: names.append(n), monitor_all=True)
    ex.forward()
    mx.nd.waitall()
    assert names == ["data", "c_data", "c_weight", "c_weight", "c_bias", "c_bias", "c_output",
                     "r_input0", "r_output"]
