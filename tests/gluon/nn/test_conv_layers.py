"""mxc.gluon.nn.conv_layers: convolution, transposed convolution, pooling and padding layers
against real MXNet 1.9.1 (fixtures) and numpy; weight shapes, deferred init, reprs; a small
conv net loaded from MXNet's parameter file."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc import autograd
from mxc.gluon import nn

from .golden_util import DATA, check_case

CONV_CASES = ["conv1d", "conv2d", "conv2d_nobias", "conv3d", "deconv1d", "deconv2d", "deconv3d",
              "maxpool1d_ceil", "maxpool2d", "maxpool3d_ceil", "avgpool1d_nopad",
              "avgpool2d_ceil", "avgpool2d_ceil_nopad", "avgpool3d", "gmaxpool1d", "gmaxpool2d",
              "gmaxpool3d", "gavgpool1d", "gavgpool2d", "gavgpool3d", "reflpad"]


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("case", CONV_CASES)
def test_against_mxnet(case, hybridize):
    check_case(case, hybridize)


def _conv2d_numpy(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return out + b[None, :, None, None]


def test_conv2d_numpy(rng):
    layer = nn.Conv2D(3, 3, strides=2, padding=1, activation='sigmoid')
    layer.initialize(mx.init.Normal(0.5))
    x = rng.normal(size=(2, 4, 7, 5)).astype(np.float32)
    y = layer(mx.nd.array(x)).asnumpy()
    assert layer.weight.shape == (3, 4, 3, 3)
    ref = _conv2d_numpy(x, layer.weight.data().asnumpy(), layer.bias.data().asnumpy(), 2, 1)
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-ref)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("expr,before,data,after,bias", [
    ("nn.Conv1D(4, 3)", (4, 0, 3), (2, 6, 9), (4, 6, 3), (4,)),
    ("nn.Conv2D(6, (3, 2), groups=3)", (6, 0, 3, 2), (1, 9, 8, 8), (6, 3, 3, 2), (6,)),
    ("nn.Conv3D(2, 2)", (2, 0, 2, 2, 2), (1, 3, 4, 4, 4), (2, 3, 2, 2, 2), (2,)),
    ("nn.Conv1DTranspose(4, 3)", (0, 4, 3), (2, 6, 9), (6, 4, 3), (4,)),
    ("nn.Conv2DTranspose(6, 3, groups=2)", (0, 3, 3, 3), (1, 4, 5, 5), (4, 3, 3, 3), (6,)),
    ("nn.Conv3DTranspose(2, 2)", (0, 2, 2, 2, 2), (1, 3, 3, 3, 3), (3, 2, 2, 2, 2), (2,)),
])
def test_deferred_weight_shapes(expr, before, data, after, bias):
    layer = eval(expr)  # noqa: S307
    assert layer.weight.shape == before
    assert layer.bias.shape == bias
    layer.initialize()
    layer(mx.nd.ones(data))
    assert layer.weight.shape == after


def test_weight_shapes_with_in_channels_and_layouts():
    assert nn.Conv2D(8, 3, in_channels=4, groups=2).weight.shape == (8, 2, 3, 3)
    assert nn.Conv2D(8, 3, in_channels=4, layout='NHWC').weight.shape == (8, 3, 3, 4)
    assert nn.Conv3D(8, 3, in_channels=4, layout='NDHWC').weight.shape == (8, 3, 3, 3, 4)
    assert nn.Conv2DTranspose(8, 3, in_channels=4, groups=2).weight.shape == (4, 4, 3, 3)
    assert nn.Conv2DTranspose(8, 3, in_channels=4, layout='NHWC').weight.shape == (4, 3, 3, 8)
    assert nn.Conv2D(8, 3, use_bias=False).bias is None


def test_conv_names_and_alias():
    net = nn.HybridSequential(prefix='net_')
    with net.name_scope():
        net.add(nn.Conv2D(2, 3), nn.Conv1DTranspose(2, 3), nn.MaxPool2D(), nn.AvgPool1D(),
                nn.Conv2D(2, 3, activation='relu'))
    assert sorted(net.collect_params().keys()) == [
        'net_conv0_bias', 'net_conv0_weight', 'net_conv1_bias', 'net_conv1_weight',
        'net_conv2_bias', 'net_conv2_weight']
    assert net[2].name == 'net_pool0' and net[3].name == 'net_pool1'
    assert net[4].act.name == 'net_conv2_relu'


def test_conv_reprs():
    assert repr(nn.Conv2D(16, 3, in_channels=4)) == \
        'Conv2D(4 -> 16, kernel_size=(3, 3), stride=(1, 1))'
    assert repr(nn.Conv2D(16, (3, 2), strides=2, padding=1, dilation=2, groups=4,
                          use_bias=False, activation='relu')) == \
        ('Conv2D(None -> 16, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), '
         'dilation=(2, 2), groups=4, bias=False, Activation(relu))')
    assert repr(nn.Conv1DTranspose(3, 2, in_channels=5)) == \
        'Conv1DTranspose(3 -> 5, kernel_size=(2,), stride=(1,))'
    assert repr(nn.MaxPool2D(3, 2, 1, ceil_mode=True)) == \
        ('MaxPool2D(size=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=True, '
         'global_pool=False, pool_type=max, layout=NCHW)')
    assert repr(nn.GlobalAvgPool1D()) == \
        ('GlobalAvgPool1D(size=(1,), stride=(1,), padding=(0,), ceil_mode=True, '
         'global_pool=True, pool_type=avg, layout=NCW)')


def test_pool_numpy(rng):
    x = rng.normal(size=(2, 3, 6, 4)).astype(np.float32)
    y = nn.MaxPool2D()(mx.nd.array(x)).asnumpy()
    np.testing.assert_allclose(y, x.reshape(2, 3, 3, 2, 2, 2).max(axis=(3, 5)))
    y = nn.AvgPool2D(pool_size=(3, 2), strides=(3, 2))(mx.nd.array(x)).asnumpy()
    # means of a few normal samples come near 0, where only an absolute tolerance makes sense
    np.testing.assert_allclose(y, x.reshape(2, 3, 2, 3, 2, 2).mean(axis=(3, 5)), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(nn.GlobalMaxPool2D()(mx.nd.array(x)).asnumpy(),
                               x.max(axis=(2, 3), keepdims=True))
    np.testing.assert_allclose(nn.GlobalAvgPool2D()(mx.nd.array(x)).asnumpy(),
                               x.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)


def test_pool_shapes_ceil_mode():
    x = mx.nd.ones((1, 1, 7, 7))
    assert nn.MaxPool2D(2, 2)(x).shape == (1, 1, 3, 3)
    assert nn.MaxPool2D(2, 2, ceil_mode=True)(x).shape == (1, 1, 4, 4)
    assert nn.AvgPool1D(3, 2, padding=1)(mx.nd.ones((1, 2, 8))).shape == (1, 2, 4)


def test_reflection_pad_numpy(rng):
    x = rng.normal(size=(1, 2, 3, 4)).astype(np.float32)
    y = nn.ReflectionPad2D(2)(mx.nd.array(x)).asnumpy()
    np.testing.assert_allclose(y, np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)), mode='reflect'))


def test_layout_and_size_checks():
    with pytest.raises(AssertionError):
        nn.Conv1D(2, 3, layout='NWC')
    with pytest.raises(AssertionError):
        nn.Conv2D(2, (3, 3, 3))
    with pytest.raises(AssertionError):
        nn.MaxPool2D(layout='NCW')
    with pytest.raises(ValueError, match="groups"):
        nn.Conv2D(4, 3, in_channels=3, groups=2)


def _convnet():
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


@pytest.mark.parametrize("hybridize", [False, True])
def test_convnet_against_mxnet(hybridize):
    """MXNet's save_parameters file loads; inference, training output, input gradient and the
    running statistics after one step equal MXNet's."""
    net = _convnet()
    net.load_parameters(os.path.join(DATA, "convnet.params"))
    if hybridize:
        net.hybridize()
    with np.load(os.path.join(DATA, "convnet_io.npz")) as z:
        io = dict(z.items())
    x = mx.nd.array(io["x"])
    np.testing.assert_allclose(net(x).asnumpy(), io["y_eval"], rtol=1e-4, atol=1e-5)
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), io["y_train"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), io["dx"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(net[1].running_mean.data().asnumpy(), io["running_mean_after"],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(net[1].running_var.data().asnumpy(), io["running_var_after"],
                               rtol=1e-4, atol=1e-5)
