"""Replays the layer cases of tests/data/gluon_nn/layers_golden.npz (written by real MXNet
1.9.1, tests/data/make_gluon_nn_golden.py) on mxc."""
import os

import numpy as np

import mxc as mx
from mxc import autograd
from mxc.gluon import nn  # noqa: F401  (used by the eval'd constructor expressions)

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "data", "gluon_nn")

# The same constructor expressions as the fixture script (name -> (expr, input shape, mode)).
LAYER_CASES = {
    "dense_flat": "nn.Dense(4, in_units=6)",
    "dense_noflat_tanh": "nn.Dense(4, flatten=False, activation='tanh', in_units=3)",
    "dense_nobias": "nn.Dense(3, use_bias=False, in_units=4)",
    "conv1d": "nn.Conv1D(3, 3, strides=2, padding=1, in_channels=2)",
    "conv2d": ("nn.Conv2D(4, (3, 2), strides=(2, 1), padding=(1, 0), dilation=(1, 2), "
               "groups=2, in_channels=4, activation='relu')"),
    "conv2d_nobias": "nn.Conv2D(3, 3, padding=1, use_bias=False, in_channels=2)",
    "conv3d": "nn.Conv3D(2, 2, strides=1, padding=1, in_channels=2)",
    "deconv1d": "nn.Conv1DTranspose(3, 3, strides=2, padding=1, output_padding=1, in_channels=2)",
    "deconv2d": ("nn.Conv2DTranspose(4, 3, strides=2, padding=1, output_padding=1, groups=2, "
                 "in_channels=2)"),
    "deconv3d": "nn.Conv3DTranspose(2, 2, strides=2, in_channels=2)",
    "maxpool1d_ceil": "nn.MaxPool1D(3, 2, ceil_mode=True)",
    "maxpool2d": "nn.MaxPool2D((3, 2), (2, 1), padding=1)",
    "maxpool3d_ceil": "nn.MaxPool3D(2, ceil_mode=True)",
    "avgpool1d_nopad": "nn.AvgPool1D(3, 2, padding=1, count_include_pad=False)",
    "avgpool2d_ceil": "nn.AvgPool2D(3, 2, padding=1, ceil_mode=True)",
    "avgpool2d_ceil_nopad": "nn.AvgPool2D(3, 2, padding=1, ceil_mode=True, count_include_pad=False)",
    "avgpool3d": "nn.AvgPool3D(2, padding=1)",
    "gmaxpool1d": "nn.GlobalMaxPool1D()",
    "gmaxpool2d": "nn.GlobalMaxPool2D()",
    "gmaxpool3d": "nn.GlobalMaxPool3D()",
    "gavgpool1d": "nn.GlobalAvgPool1D()",
    "gavgpool2d": "nn.GlobalAvgPool2D()",
    "gavgpool3d": "nn.GlobalAvgPool3D()",
    "reflpad": "nn.ReflectionPad2D(2)",
    "bn_eval": "nn.BatchNorm(in_channels=3)",
    "bn_train": "nn.BatchNorm(momentum=0.8, in_channels=3)",
    "bn_axis_last_train": "nn.BatchNorm(axis=-1, center=False, scale=False, in_channels=3)",
    "bn_global_train": "nn.BatchNorm(use_global_stats=True, in_channels=2)",
    "instnorm": "nn.InstanceNorm(in_channels=3, scale=True)",
    "instnorm_axis2": "nn.InstanceNorm(axis=2, in_channels=4, scale=True)",
    "layernorm": "nn.LayerNorm(in_channels=5)",
    "layernorm_axis1": "nn.LayerNorm(axis=1, in_channels=3)",
    "groupnorm": "nn.GroupNorm(num_groups=2)",
    "embedding": "nn.Embedding(10, 4)",
    "act_softrelu": "nn.Activation('softrelu')",
    "act_softsign": "nn.Activation('softsign')",
    "leaky": "nn.LeakyReLU(0.1)",
    "prelu": "nn.PReLU(in_channels=3)",
    "prelu_shared": "nn.PReLU()",
    "elu": "nn.ELU(0.7)",
    "selu": "nn.SELU()",
    "gelu": "nn.GELU()",
    "swish": "nn.Swish(1.5)",
    "flatten": "nn.Flatten()",
    "dropout_eval": "nn.Dropout(0.5)",
}
TRAIN_CASES = {"bn_train", "bn_axis_last_train", "bn_global_train", "maxpool1d_ceil",
               "maxpool2d", "maxpool3d_ceil", "gmaxpool1d", "gmaxpool2d", "gmaxpool3d"}
INT_CASES = {"embedding"}

_cache = {}


def golden():
    if "layers" not in _cache:
        with np.load(os.path.join(DATA, "layers_golden.npz")) as z:
            _cache["layers"] = dict(z.items())
    return _cache["layers"]


def _strip(block, name):
    return name[len(block.prefix):] if name.startswith(block.prefix) else name


def replay(case, hybridize=False):
    """Build the case's layer, load MXNet's parameters, run forward+backward as the fixture
    did; returns (fixture dict, {'y','dx','dp:<k>','after:<k>'} computed by mxc)."""
    g = golden()
    block = eval(LAYER_CASES[case])  # noqa: S307
    block.initialize()
    params = block.collect_params()
    for name, p in params.items():
        p.set_data(mx.nd.array(g["%s:p:%s" % (case, _strip(block, name))]))
    if hybridize:
        block.hybridize()
    x = mx.nd.array(g[case + ":x"])
    if case not in INT_CASES:
        x.attach_grad()
    with autograd.record(train_mode=case in TRAIN_CASES):
        y = block(x)
    y.backward(mx.nd.array(g[case + ":og"]))
    got = {"y": y.asnumpy()}
    if case not in INT_CASES:
        got["dx"] = x.grad.asnumpy()
    for name, p in params.items():
        key = _strip(block, name)
        if p.grad_req != 'null':
            got["dp:" + key] = p.grad().asnumpy()
        if case in TRAIN_CASES:
            got["after:" + key] = p.data().asnumpy()
    return g, got


def check_case(case, hybridize=False, rtol=1e-4, atol=1e-5):
    g, got = replay(case, hybridize)
    for key, val in got.items():
        ref = g["%s:%s" % (case, key)]
        assert val.shape == ref.shape, (case, key, val.shape, ref.shape)
        np.testing.assert_allclose(val, ref, rtol=rtol, atol=atol, err_msg="%s %s" % (case, key))
    # every gradient MXNet produced was produced here too
    want = {k.split(":", 1)[1] for k in g if k.startswith(case + ":") and
            (k.startswith(case + ":dp:") or k.startswith(case + ":after:"))}
    assert want <= set(got), (case, want - set(got))
