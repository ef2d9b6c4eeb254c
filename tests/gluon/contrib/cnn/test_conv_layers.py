"""gluon.contrib.cnn.DeformableConvolution against real MXNet 1.9.1 with non-zero offsets
(tests/data/make_gluon_contrib_golden.py)."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc import autograd
from mxc.gluon.contrib.cnn import DeformableConvolution

GOLD = np.load(os.path.join(os.path.dirname(__file__), "..", "..", "..", "data",
                            "gluon_contrib", "golden.npz"))


@pytest.mark.parametrize("hybrid", [False, True])
def test_deformable_convolution_matches_mxnet(hybrid):
    net = DeformableConvolution(4, kernel_size=(3, 2), padding=(1, 0), in_channels=3,
                                activation="relu", prefix="d_")
    net.initialize()
    if hybrid:
        net.hybridize()
    for name, p in net.collect_params().items():
        p.set_data(mx.nd.array(GOLD["deform/param/" + name[2:]]))
    x = mx.nd.array(GOLD["deform/x"])
    x.attach_grad()
    with autograd.record():
        out = net(x)
        (out * mx.nd.array(GOLD["deform/w"])).sum().backward()
    np.testing.assert_allclose(out.asnumpy(), GOLD["deform/out"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), GOLD["deform/dx"], rtol=1e-4, atol=1e-4)


def test_deformable_convolution_parameters():
    net = DeformableConvolution(6, kernel_size=3, num_deformable_group=2, use_bias=False,
                                offset_use_bias=False, prefix="d_")
    assert sorted(net.collect_params().keys()) == ["d_deformable_conv_weight", "d_offset_weight"]
    assert net.offset_weight.shape == (36, 0, 3, 3)
    net.initialize()
    out = net(mx.nd.ones((1, 4, 5, 5)))
    assert out.shape == (1, 6, 3, 3) and net.deformable_conv_weight.shape == (6, 4, 3, 3)
    with pytest.raises(ValueError, match="layout"):
        DeformableConvolution(2, layout="NCW")


def test_modulated_deformable_convolution_operator_matches_mxnet():
    args = [mx.nd.array(GOLD["mdcn/" + k]) for k in ("x", "offset", "mask", "weight", "bias")]
    out = mx.nd.contrib.ModulatedDeformableConvolution(
        *args, kernel=(3, 3), pad=(1, 0), dilate=(1, 2), num_filter=6, num_group=2,
        num_deformable_group=2)
    np.testing.assert_allclose(out.asnumpy(), GOLD["mdcn/out"], rtol=1e-5, atol=1e-5)
    with pytest.raises(mx.base.MXNetError, match="ModulatedDeformableConvolution: input mask"):
        mx.nd.contrib.ModulatedDeformableConvolution(
            args[0], args[1], args[2][:, :9], args[3], args[4], kernel=(3, 3), pad=(1, 0),
            dilate=(1, 2), num_filter=6, num_group=2, num_deformable_group=2)


def test_modulated_deformable_convolution_gradients_are_numerical():
    # MXNet 1.9.1 has no CPU backward for the offsets and mask: central differences instead
    rng = np.random.default_rng(0)
    kw = dict(kernel=(2, 2), pad=(1, 1), num_filter=2, num_deformable_group=1)
    vals = [rng.uniform(-1, 1, (1, 2, 3, 3)), rng.uniform(-1.6, 1.6, (1, 8, 4, 4)),
            rng.uniform(0, 1, (1, 4, 4, 4)), rng.uniform(-1, 1, (2, 2, 2, 2)),
            rng.uniform(-1, 1, (2,))]
    w = rng.uniform(-1, 1, (1, 2, 4, 4))

    def f(vs):
        out = mx.nd.contrib.ModulatedDeformableConvolution(
            *[mx.nd.array(v, dtype="float64") for v in vs], **kw)
        return float((out.asnumpy() * w).sum())

    args = [mx.nd.array(v, dtype="float64") for v in vals]
    for a in args:
        a.attach_grad()
    with autograd.record():
        out = mx.nd.contrib.ModulatedDeformableConvolution(*args, **kw)
        (out * mx.nd.array(w, dtype="float64")).sum().backward()
    # the backward operator by its own name gives the same gradients
    direct = getattr(mx.nd, "_backward_contrib_ModulatedDeformableConvolution")(
        mx.nd.array(w, dtype="float64"), *[mx.nd.array(v, dtype="float64") for v in vals], **kw)
    for a, g in zip(args, direct):
        np.testing.assert_allclose(g.asnumpy(), a.grad.asnumpy(), rtol=1e-12, atol=1e-12)
    eps = 1e-6
    for i, v in enumerate(vals):
        num = np.zeros_like(v)
        for j in range(v.size):
            up, dn = [x.copy() for x in vals], [x.copy() for x in vals]
            up[i].flat[j] += eps
            dn[i].flat[j] -= eps
            num.flat[j] = (f(up) - f(dn)) / (2 * eps)
        np.testing.assert_allclose(args[i].grad.asnumpy(), num, rtol=1e-5, atol=1e-6,
                                   err_msg="input %d" % i)


@pytest.mark.parametrize("hybrid", [False, True])
def test_modulated_deformable_block_matches_mxnet(hybrid):
    from mxc.gluon.contrib.cnn import ModulatedDeformableConvolution
    net = ModulatedDeformableConvolution(4, kernel_size=(3, 3), padding=1, in_channels=3,
                                         prefix="m_")
    assert net.offset_weight.shape == (27, 3, 3, 3)
    net.initialize()
    if hybrid:
        net.hybridize()
    for name, p in net.collect_params().items():
        p.set_data(mx.nd.array(GOLD["mdcblock/param/" + name[2:]]))
    x = mx.nd.array(GOLD["mdcblock/x"])
    x.attach_grad()
    with autograd.record():
        out = net(x)
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), GOLD["mdcblock/out"], rtol=1e-5, atol=1e-5)
    assert np.isfinite(x.grad.asnumpy()).all()
