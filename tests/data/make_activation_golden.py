"""Writes tests/data/activation_golden.npz from real MXNet 1.9.1 (run with the oracle's python:
/work/mxnet-oracle/bin/python tests/data/make_activation_golden.py).

One case per entry of CASES: inputs, keyword arguments, outputs, a head gradient per output and
the input gradients MXNet's autograd gives (for the inputs named in `wrt`). Covers the
activation, softmax and loss families (tests/ops/test_activation.py, test_softmax.py,
test_loss_ops.py read it). Keys: "<case>/kw" (JSON), "<case>/op", "<case>/in<i>",
"<case>/out<j>", "<case>/head<j>", "<case>/grad<i>" (input i's gradient)."""
import json
import os

import mxnet as mx
import numpy as np

rng = np.random.RandomState(7)


def randn(*shape, scale=1.0):
    return (rng.randn(*shape) * scale).astype(np.float32)


def labels(n, k, shape=None):
    return rng.randint(0, k, size=shape if shape is not None else (n,)).astype(np.float32)


x34 = randn(3, 4, scale=2.0)
x34[0, 0] = 0.0
CASES = []


def case(name, op, inputs, kw=None, wrt=(0,)):
    CASES.append((name, op, inputs, kw or {}, wrt))


for t in ("relu", "sigmoid", "tanh", "softrelu", "softsign"):
    case(f"act_{t}", "Activation", [x34], {"act_type": t})
case("act_softrelu_big", "Activation", [np.array([[-30., -5., 19., 21., 40.]], np.float32)],
     {"act_type": "softrelu"})

case("leaky", "LeakyReLU", [x34], {"act_type": "leaky", "slope": 0.1})
case("leaky_default", "LeakyReLU", [x34])
case("elu", "LeakyReLU", [x34], {"act_type": "elu", "slope": 0.7})
case("selu", "LeakyReLU", [x34], {"act_type": "selu"})
case("gelu", "LeakyReLU", [x34], {"act_type": "gelu"})
case("prelu", "LeakyReLU", [randn(2, 3, 4), np.array([0.1, 0.2, 0.3], np.float32)],
     {"act_type": "prelu"}, wrt=(0, 1))
case("prelu_scalar_gamma", "LeakyReLU", [randn(2, 3), np.array([0.25], np.float32)],
     {"act_type": "prelu"}, wrt=(0, 1))
case("rrelu_infer", "LeakyReLU", [x34], {"act_type": "rrelu", "lower_bound": 0.1,
                                        "upper_bound": 0.3}, wrt=())

x345 = randn(3, 4, 5, scale=2.0)
case("softmax", "softmax", [x34])
case("softmax_axis0", "softmax", [x345], {"axis": 0})
case("softmax_axis1_temp", "softmax", [x345], {"axis": 1, "temperature": 2.5})
case("softmax_dtype64", "softmax", [x34], {"dtype": "float64"})
case("softmax_length", "softmax", [randn(3, 5), np.array([2, 5, 0], np.int32)],
     {"use_length": True})
case("softmax_length_axis1", "softmax", [x345, np.array([[1, 4, 2, 3, 0], [4, 4, 1, 2, 3],
                                                         [2, 1, 1, 1, 4]], np.int64)],
     {"use_length": True, "axis": 1})
case("log_softmax", "log_softmax", [x345], {"axis": 1})
case("log_softmax_temp", "log_softmax", [x34], {"temperature": 0.5})
case("softmin", "softmin", [x34])
case("softmin_axis0", "softmin", [x345], {"axis": 0, "temperature": 3.0})
case("softmax_act_instance", "SoftmaxActivation", [randn(2, 5)])
case("softmax_act_channel", "SoftmaxActivation", [randn(2, 3, 4)], {"mode": "channel"})
case("softmax_act_instance_3d", "SoftmaxActivation", [randn(2, 3, 4)])

case("so_basic", "SoftmaxOutput", [randn(4, 5), labels(4, 5)])
case("so_scale_batch", "SoftmaxOutput", [randn(4, 5), labels(4, 5)],
     {"grad_scale": 2.0, "normalization": "batch"})
case("so_ignore_valid", "SoftmaxOutput",
     [randn(5, 4), np.array([1, 0, 1, 3, 2], np.float32)],
     {"use_ignore": True, "ignore_label": 1, "normalization": "valid"})
case("so_smooth", "SoftmaxOutput", [randn(4, 5), labels(4, 5)], {"smooth_alpha": 0.1})
case("so_out_grad", "SoftmaxOutput", [randn(4, 5), labels(4, 5)], {"out_grad": True})
case("so_multi", "SoftmaxOutput", [randn(2, 3, 4), labels(2, 3, (2, 4))],
     {"multi_output": True})
case("so_multi_ignore_valid", "SoftmaxOutput",
     [randn(2, 3, 4), np.array([[0, 1, 2, 1], [1, 1, 0, 2]], np.float32)],
     {"multi_output": True, "use_ignore": True, "ignore_label": 1, "normalization": "valid"})
case("so_multi_4d", "SoftmaxOutput", [randn(2, 3, 2, 2), labels(2, 3, (2, 2, 2))],
     {"multi_output": True, "normalization": "batch"})
case("so_preserve", "SoftmaxOutput", [randn(2, 3, 4), labels(2, 4, (2, 3))],
     {"preserve_shape": True})
case("so_flat3d", "SoftmaxOutput", [randn(2, 3, 4), labels(2, 12, (2, 3))])
case("so_prob_label", "SoftmaxOutput",
     [randn(3, 4), np.full((3, 4), 0.25, np.float32)], {"grad_scale": 0.5})
case("softmax_alias", "Softmax", [randn(3, 4), labels(3, 4)])

for op in ("LinearRegressionOutput", "MAERegressionOutput", "LogisticRegressionOutput"):
    case(f"reg_{op}", op, [randn(4, 3), randn(4, 3)], {"grad_scale": 2.0})
case("reg_linear_col", "LinearRegressionOutput", [randn(4, 1), randn(4)])

case("smooth_l1", "smooth_l1", [np.array([[-3., -1.1, -0.9, -0.2, 0.], [0.1, 0.26, 0.24, 1.5, 4.]],
                                          np.float32)])
case("smooth_l1_sigma2", "smooth_l1", [randn(3, 4)], {"scalar": 2.0})
case("softmax_ce", "softmax_cross_entropy", [randn(4, 5, scale=3.0), labels(4, 5)])
case("blockgrad", "BlockGrad", [x34])
case("stop_gradient", "stop_gradient", [x34])
case("make_loss", "make_loss", [x34])
case("MakeLoss", "MakeLoss", [x34], {"grad_scale": 2.0})
case("MakeLoss_batch", "MakeLoss", [x34], {"normalization": "batch"})
case("MakeLoss_valid", "MakeLoss", [x34], {"normalization": "valid", "valid_thresh": 0.1,
                                           "grad_scale": 3.0})
case("l2_instance", "L2Normalization", [x34])
case("l2_channel", "L2Normalization", [randn(2, 3, 4)], {"mode": "channel"})
case("l2_spatial", "L2Normalization", [randn(2, 3, 2, 2)], {"mode": "spatial", "eps": 1e-3})
case("lrn3", "LRN", [randn(2, 5, 3, 3)], {"nsize": 3})
case("lrn5", "LRN", [randn(1, 6, 2, 3)], {"nsize": 5, "alpha": 0.01, "beta": 0.6,
                                         "knorm": 1.5})


def main():
    out = {}
    for name, op, inputs, kw, wrt in CASES:
        nd_in = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
        for i in wrt:
            nd_in[i].attach_grad()
        fn = getattr(mx.nd, op)
        with mx.autograd.record(train_mode=False):
            res = fn(*nd_in, **kw)
        outs = res if isinstance(res, list) else [res]
        heads = [rng.randn(*o.shape).astype(np.float32) for o in outs]
        if wrt:
            mx.autograd.backward(outs[:1], [mx.nd.array(heads[0], dtype=outs[0].dtype)])
        out[f"{name}/op"] = np.array(op)
        out[f"{name}/kw"] = np.array(json.dumps(kw))
        for i, a in enumerate(inputs):
            out[f"{name}/in{i}"] = a
        for j, o in enumerate(outs):
            out[f"{name}/out{j}"] = o.asnumpy()
            out[f"{name}/head{j}"] = heads[j]
        for i in wrt:
            out[f"{name}/grad{i}"] = nd_in[i].grad.asnumpy()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "activation_golden.npz")
    np.savez_compressed(path, **out)
    print(f"wrote {path}: {len(CASES)} cases, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
