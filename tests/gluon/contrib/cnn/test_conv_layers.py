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
