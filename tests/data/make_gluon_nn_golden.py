"""Write the fixtures of tests/gluon/nn, tests/gluon/test_loss.py and tests/gluon/model_zoo with
real MXNet 1.9.1. Run with the oracle's interpreter from the repository root::

    /work/mxnet-oracle/bin/python tests/data/make_gluon_nn_golden.py

Files in tests/data/gluon_nn/ (all small):
- layers_golden.npz: for every case of LAYER_CASES (a constructor expression evaluated with
  ``nn`` = gluon.nn in both frameworks), the input ``<case>:x``, the parameters set
  ``<case>:p:<name without prefix>``, the output ``<case>:y``, a head gradient ``<case>:og``
  and the gradients ``<case>:dx``, ``<case>:dp:<name>`` of sum(y * og); for train-mode
  BatchNorm also the running statistics after the step (``<case>:after:<name>``).
- convnet.params (save_parameters of a small conv net, structural names) and convnet_io.npz
  (input, inference output, training-mode output, input gradient).
- loss_golden.npz: inputs and outputs of every loss of LOSS_CASES.
- model_zoo_params.json: for every model of the zoo, the number of parameters and a SHA-1 of
  its sorted "name shape" lines right after construction (deferred dims are 0), the full list
  for a few small models, and the shapes after one forward for the models in FORWARD_CASES.
The suite never imports MXNet.
"""
import hashlib
import json
import os

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon
from mxnet.gluon import nn

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gluon_nn")

# name -> (constructor expression, input shape, mode) ; mode: 'eval', 'train' or 'int:<high>'.
# Max pooling runs in train mode: MXNet's MKLDNN max-pooling backward is wrong after an
# inference-mode forward (no workspace), and pooling does not depend on the mode otherwise.
LAYER_CASES = {
    "dense_flat": ("nn.Dense(4, in_units=6)", (2, 2, 3), "eval"),
    "dense_noflat_tanh": ("nn.Dense(4, flatten=False, activation='tanh', in_units=3)",
                          (2, 5, 3), "eval"),
    "dense_nobias": ("nn.Dense(3, use_bias=False, in_units=4)", (3, 4), "eval"),
    "conv1d": ("nn.Conv1D(3, 3, strides=2, padding=1, in_channels=2)", (2, 2, 9), "eval"),
    "conv2d": ("nn.Conv2D(4, (3, 2), strides=(2, 1), padding=(1, 0), dilation=(1, 2), "
               "groups=2, in_channels=4, activation='relu')", (2, 4, 7, 6), "eval"),
    "conv2d_nobias": ("nn.Conv2D(3, 3, padding=1, use_bias=False, in_channels=2)",
                      (1, 2, 5, 4), "eval"),
    "conv3d": ("nn.Conv3D(2, 2, strides=1, padding=1, in_channels=2)", (1, 2, 3, 4, 3),
               "eval"),
    "deconv1d": ("nn.Conv1DTranspose(3, 3, strides=2, padding=1, output_padding=1, "
                 "in_channels=2)", (2, 2, 5), "eval"),
    "deconv2d": ("nn.Conv2DTranspose(4, 3, strides=2, padding=1, output_padding=1, groups=2, "
                 "in_channels=2)", (2, 2, 4, 3), "eval"),
    "deconv3d": ("nn.Conv3DTranspose(2, 2, strides=2, in_channels=2)", (1, 2, 2, 3, 2),
                 "eval"),
    "maxpool1d_ceil": ("nn.MaxPool1D(3, 2, ceil_mode=True)", (2, 3, 8), "train"),
    "maxpool2d": ("nn.MaxPool2D((3, 2), (2, 1), padding=1)", (2, 3, 7, 6), "train"),
    "maxpool3d_ceil": ("nn.MaxPool3D(2, ceil_mode=True)", (1, 2, 5, 4, 3), "train"),
    "avgpool1d_nopad": ("nn.AvgPool1D(3, 2, padding=1, count_include_pad=False)", (2, 3, 8),
                        "eval"),
    "avgpool2d_ceil": ("nn.AvgPool2D(3, 2, padding=1, ceil_mode=True)", (2, 3, 7, 6), "eval"),
    "avgpool2d_ceil_nopad": ("nn.AvgPool2D(3, 2, padding=1, ceil_mode=True, "
                             "count_include_pad=False)", (2, 3, 7, 6), "eval"),
    "avgpool3d": ("nn.AvgPool3D(2, padding=1)", (1, 2, 4, 5, 3), "eval"),
    "gmaxpool1d": ("nn.GlobalMaxPool1D()", (2, 3, 5), "train"),
    "gmaxpool2d": ("nn.GlobalMaxPool2D()", (2, 3, 4, 5), "train"),
    "gmaxpool3d": ("nn.GlobalMaxPool3D()", (1, 2, 3, 4, 2), "train"),
    "gavgpool1d": ("nn.GlobalAvgPool1D()", (2, 3, 5), "eval"),
    "gavgpool2d": ("nn.GlobalAvgPool2D()", (2, 3, 4, 5), "eval"),
    "gavgpool3d": ("nn.GlobalAvgPool3D()", (1, 2, 3, 4, 2), "eval"),
    "reflpad": ("nn.ReflectionPad2D(2)", (1, 2, 4, 5), "eval"),
    "bn_eval": ("nn.BatchNorm(in_channels=3)", (4, 3, 2, 2), "eval"),
    "bn_train": ("nn.BatchNorm(momentum=0.8, in_channels=3)", (4, 3, 2, 2), "train"),
    "bn_axis_last_train": ("nn.BatchNorm(axis=-1, center=False, scale=False, in_channels=3)",
                           (2, 4, 3), "train"),
    "bn_global_train": ("nn.BatchNorm(use_global_stats=True, in_channels=2)", (3, 2, 4),
                        "train"),
    "instnorm": ("nn.InstanceNorm(in_channels=3, scale=True)", (2, 3, 5), "eval"),
    "instnorm_axis2": ("nn.InstanceNorm(axis=2, in_channels=4, scale=True)", (2, 3, 4, 2),
                       "eval"),
    "layernorm": ("nn.LayerNorm(in_channels=5)", (2, 3, 5), "eval"),
    "layernorm_axis1": ("nn.LayerNorm(axis=1, in_channels=3)", (2, 3, 4), "eval"),
    "groupnorm": ("nn.GroupNorm(num_groups=2)", (2, 4, 3, 2), "eval"),
    "embedding": ("nn.Embedding(10, 4)", (2, 3), "int:10"),
    "act_softrelu": ("nn.Activation('softrelu')", (2, 5), "eval"),
    "act_softsign": ("nn.Activation('softsign')", (2, 5), "eval"),
    "leaky": ("nn.LeakyReLU(0.1)", (2, 5), "eval"),
    "prelu": ("nn.PReLU(in_channels=3)", (2, 3, 4), "eval"),
    "prelu_shared": ("nn.PReLU()", (2, 3, 4), "eval"),
    "elu": ("nn.ELU(0.7)", (2, 5), "eval"),
    "selu": ("nn.SELU()", (2, 5), "eval"),
    "gelu": ("nn.GELU()", (2, 5), "eval"),
    "swish": ("nn.Swish(1.5)", (2, 5), "eval"),
    "flatten": ("nn.Flatten()", (2, 3, 2), "eval"),
    "dropout_eval": ("nn.Dropout(0.5)", (2, 5), "eval"),
}

# name -> (constructor expression, input names, {input: (shape, kind)}) ; kinds: normal,
# uniform01, int:<n>, sign, pos
LOSS_CASES = {
    "l2": ("gluon.loss.L2Loss()", [("pred", (3, 4), "normal"), ("label", (3, 4), "normal")]),
    "l2_w_sw": ("gluon.loss.L2Loss(weight=0.7)",
                [("pred", (3, 4), "normal"), ("label", (3, 4), "normal"),
                 ("sample_weight", (3, 1), "uniform01")]),
    "l1": ("gluon.loss.L1Loss()", [("pred", (3, 2, 2), "normal"),
                                    ("label", (3, 2, 2), "normal")]),
    "l1_reshape": ("gluon.loss.L1Loss()", [("pred", (4, 1), "normal"),
                                            ("label", (4,), "normal")]),
    "bce_logits": ("gluon.loss.SigmoidBinaryCrossEntropyLoss()",
                   [("pred", (3, 4), "normal3"), ("label", (3, 4), "int:2")]),
    "bce_sigmoid": ("gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=True)",
                    [("pred", (3, 4), "uniform01"), ("label", (3, 4), "int:2")]),
    "bce_posw": ("gluon.loss.SigmoidBinaryCrossEntropyLoss()",
                 [("pred", (3, 4), "normal3"), ("label", (3, 4), "int:2"),
                  ("sample_weight", None, None), ("pos_weight", (4,), "pos")]),
    "bce_sigmoid_posw": ("gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=True)",
                         [("pred", (3, 4), "uniform01"), ("label", (3, 4), "int:2"),
                          ("sample_weight", None, None), ("pos_weight", (4,), "pos")]),
    "ce_sparse": ("gluon.loss.SoftmaxCrossEntropyLoss()",
                  [("pred", (4, 5), "normal"), ("label", (4,), "int:5")]),
    "ce_axis1": ("gluon.loss.SoftmaxCrossEntropyLoss(axis=1)",
                 [("pred", (2, 5, 3), "normal"), ("label", (2, 3), "int:5")]),
    "ce_dense": ("gluon.loss.SoftmaxCrossEntropyLoss(sparse_label=False)",
                 [("pred", (4, 5), "normal"), ("label", (4, 5), "uniform01")]),
    "ce_logits": ("gluon.loss.SoftmaxCrossEntropyLoss(from_logits=True, weight=2.0)",
                  [("pred", (4, 5), "normal"), ("label", (4,), "int:5")]),
    "kl": ("gluon.loss.KLDivLoss()", [("pred", (3, 4), "normal"),
                                      ("label", (3, 4), "uniform01")]),
    "kl_nologits": ("gluon.loss.KLDivLoss(from_logits=False)",
                    [("pred", (3, 4), "normal"), ("label", (3, 4), "uniform01")]),
    "ctc": ("gluon.loss.CTCLoss()", [("pred", (2, 6, 4), "normal"),
                                     ("label", (2, 3), "ctclabel")]),
    "ctc_tnc_lengths": ("gluon.loss.CTCLoss(layout='TNC', label_layout='TN')",
                        [("pred", (6, 2, 4), "normal"), ("label", (3, 2), "int:3"),
                         ("pred_lengths", (2,), "predlen"), ("label_lengths", (2,), "lablen")]),
    "huber": ("gluon.loss.HuberLoss(rho=0.8)", [("pred", (3, 4), "normal"),
                                                ("label", (3, 4), "normal")]),
    "hinge": ("gluon.loss.HingeLoss()", [("pred", (3, 4), "normal"), ("label", (3, 4), "sign")]),
    "sqhinge": ("gluon.loss.SquaredHingeLoss(margin=1.5)",
                [("pred", (3, 4), "normal"), ("label", (3, 4), "sign")]),
    "logistic_signed": ("gluon.loss.LogisticLoss()",
                        [("pred", (3, 4), "normal"), ("label", (3, 4), "sign")]),
    "logistic_binary": ("gluon.loss.LogisticLoss(label_format='binary')",
                        [("pred", (3, 4), "normal"), ("label", (3, 4), "int:2")]),
    "triplet": ("gluon.loss.TripletLoss(margin=2)",
                [("pred", (3, 4), "normal"), ("positive", (3, 4), "normal"),
                 ("negative", (3, 4), "normal")]),
    "poisson": ("gluon.loss.PoissonNLLLoss()",
                [("pred", (3, 4), "normal"), ("target", (3, 4), "int:5")]),
    "poisson_rate_full": ("gluon.loss.PoissonNLLLoss(from_logits=False, compute_full=True)",
                          [("pred", (3, 4), "pos"), ("target", (3, 4), "intpos:6")]),
    "cosine": ("gluon.loss.CosineEmbeddingLoss(margin=0.2)",
               [("input1", (4, 3), "normal"), ("input2", (4, 3), "normal"),
                ("label", (4,), "sign")]),
    "sdml": ("gluon.loss.SDMLLoss()", [("x1", (4, 3), "normal"), ("x2", (4, 3), "normal")]),
}

# MXNet's compute_full writes in place (*=) and so cannot run under autograd.record().
NO_GRAD = {"poisson_rate_full"}

MODELS = ['resnet18_v1', 'resnet34_v1', 'resnet50_v1', 'resnet101_v1', 'resnet152_v1',
          'resnet18_v2', 'resnet34_v2', 'resnet50_v2', 'resnet101_v2', 'resnet152_v2',
          'vgg11', 'vgg13', 'vgg16', 'vgg19', 'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn',
          'alexnet', 'inceptionv3', 'densenet121', 'densenet161', 'densenet169', 'densenet201',
          'squeezenet1.0', 'squeezenet1.1', 'mobilenet1.0', 'mobilenet0.75', 'mobilenet0.5',
          'mobilenet0.25', 'mobilenetv2_1.0', 'mobilenetv2_0.75', 'mobilenetv2_0.5',
          'mobilenetv2_0.25']
FULL_LIST = ['resnet18_v1', 'resnet18_v2', 'alexnet', 'squeezenet1.0', 'mobilenetv2_0.25']
FORWARD_CASES = {'resnet18_v1': (1, 3, 32, 32), 'resnet50_v2': (1, 3, 32, 32),
                 'mobilenet0.25': (1, 3, 32, 32), 'mobilenetv2_0.25': (1, 3, 32, 32),
                 'vgg11_bn': (1, 3, 32, 32), 'squeezenet1.1': (1, 3, 224, 224),
                 'densenet121': (1, 3, 224, 224)}


def _strip(block, name):
    return name[len(block.prefix):] if name.startswith(block.prefix) else name


def _make_input(rs, shape, mode):
    if mode.startswith("int:"):
        return rs.randint(0, int(mode[4:]), size=shape).astype(np.float32)
    return rs.normal(size=shape).astype(np.float32)


def layer_fixtures():
    out = {}
    rs = np.random.RandomState(20261123)
    for case, (expr, shape, mode) in LAYER_CASES.items():
        block = eval(expr)  # noqa: S307
        block.initialize()
        x = _make_input(rs, shape, mode)
        params = block.collect_params()
        for name, p in params.items():
            key = _strip(block, name)
            if 'running_var' in key:
                val = rs.uniform(0.5, 1.5, size=p.shape)
            else:
                val = rs.normal(size=p.shape) * 0.5
            p.set_data(mx.nd.array(val.astype(np.float32)))
            out["%s:p:%s" % (case, key)] = p.data().asnumpy()
        xn = mx.nd.array(x)
        if not mode.startswith("int"):
            xn.attach_grad()
        with autograd.record(train_mode=(mode == "train")):
            y = block(xn)
        og = rs.normal(size=y.shape).astype(np.float32)
        y.backward(mx.nd.array(og))
        out[case + ":x"] = x
        out[case + ":y"] = y.asnumpy()
        out[case + ":og"] = og
        if not mode.startswith("int"):
            out[case + ":dx"] = xn.grad.asnumpy()
        for name, p in params.items():
            key = _strip(block, name)
            if p.grad_req != 'null':
                out["%s:dp:%s" % (case, key)] = p.grad().asnumpy()
            if mode == "train":
                out["%s:after:%s" % (case, key)] = p.data().asnumpy()
    np.savez_compressed(os.path.join(HERE, "layers_golden.npz"), **out)


def convnet():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, padding=1, in_channels=3),
                nn.BatchNorm(in_channels=4),
                nn.Activation('relu'),
                nn.MaxPool2D(2),
                nn.Conv2D(6, 3, groups=2, in_channels=4, activation='tanh'),
                nn.AvgPool2D(2, padding=1, count_include_pad=False),
                nn.Flatten(),
                nn.Dense(5, in_units=24))
    return net


def convnet_fixtures():
    rs = np.random.RandomState(7)
    net = convnet()
    net.initialize(mx.init.Xavier())
    for name, p in net.collect_params().items():
        if 'running_var' in name:
            p.set_data(mx.nd.array(rs.uniform(0.5, 1.5, size=p.shape)))
        elif 'running_mean' in name or 'beta' in name or 'gamma' in name or 'bias' in name:
            p.set_data(mx.nd.array(rs.normal(size=p.shape) * 0.3 + ('gamma' in name)))
    net.save_parameters(os.path.join(HERE, "convnet.params"))
    x = rs.normal(size=(2, 3, 8, 8)).astype(np.float32)
    y_eval = net(mx.nd.array(x)).asnumpy()
    xn = mx.nd.array(x)
    xn.attach_grad()
    with autograd.record():
        y_train = net(xn)
    y_train.backward()
    np.savez_compressed(os.path.join(HERE, "convnet_io.npz"), x=x, y_eval=y_eval,
                        y_train=y_train.asnumpy(), dx=xn.grad.asnumpy(),
                        running_mean_after=net[1].running_mean.data().asnumpy(),
                        running_var_after=net[1].running_var.data().asnumpy())


def _loss_input(rs, shape, kind):
    if kind == "normal":
        return rs.normal(size=shape)
    if kind == "normal3":
        return rs.normal(size=shape) * 3
    if kind == "uniform01":
        return rs.uniform(0.05, 0.95, size=shape)
    if kind == "pos":
        return rs.uniform(0.3, 3.0, size=shape)
    if kind == "sign":
        return rs.randint(0, 2, size=shape) * 2 - 1
    if kind.startswith("int:"):
        return rs.randint(0, int(kind[4:]), size=shape)
    if kind.startswith("intpos:"):  # no zero: MXNet's compute_full gives NaN for 0 targets
        return rs.randint(1, int(kind[7:]), size=shape)
    if kind == "ctclabel":
        return np.array([[1, 2, -1], [0, 0, 2]])
    if kind == "predlen":
        return np.array([6, 4])
    if kind == "lablen":
        return np.array([3, 2])
    raise ValueError(kind)


def loss_fixtures():
    rs = np.random.RandomState(99)
    out = {}
    for case, (expr, inputs) in LOSS_CASES.items():
        loss = eval(expr)  # noqa: S307
        args = []
        for name, shape, kind in inputs:
            if shape is None:
                args.append(None)
                continue
            val = _loss_input(rs, shape, kind).astype(np.float32)
            out["%s:%s" % (case, name)] = val
            args.append(mx.nd.array(val))
        if case in NO_GRAD:
            out[case + ":y"] = loss(*args).asnumpy()
            continue
        first = args[0]
        first.attach_grad()
        with autograd.record():
            y = loss(*args)
        y.backward()
        out[case + ":y"] = y.asnumpy()
        out[case + ":d0"] = first.grad.asnumpy()
    np.savez_compressed(os.path.join(HERE, "loss_golden.npz"), **out)


def _lines(net):
    """Sorted "name shape" lines, names without the net's own (counter-dependent) prefix."""
    return sorted("%s %s" % (_strip(net, name), tuple(p.shape))
                  for name, p in net.collect_params().items())


def model_zoo_fixture():
    from mxnet.gluon.model_zoo.vision import get_model
    res = {"models": {}, "full": {}, "after_forward": {}}
    for name in MODELS:
        net = get_model(name)
        lines = _lines(net)
        res["models"][name] = {"n": len(lines),
                               "sha1": hashlib.sha1("\n".join(lines).encode()).hexdigest()}
        if name in FULL_LIST:
            res["full"][name] = lines
        if name in FORWARD_CASES:
            net.initialize()
            net(mx.nd.zeros(FORWARD_CASES[name])).wait_to_read()
            lines = _lines(net)
            res["after_forward"][name] = {
                "shape": FORWARD_CASES[name],
                "sha1": hashlib.sha1("\n".join(lines).encode()).hexdigest()}
    with open(os.path.join(HERE, "model_zoo_params.json"), "w") as f:
        json.dump(res, f, indent=0, sort_keys=True)


if __name__ == "__main__":
    os.makedirs(HERE, exist_ok=True)
    layer_fixtures()
    convnet_fixtures()
    loss_fixtures()
    model_zoo_fixture()
    print("wrote", sorted(os.listdir(HERE)))
