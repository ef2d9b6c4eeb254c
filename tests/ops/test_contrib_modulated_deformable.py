"""ModulatedDeformableConvolution (mxc/ops/contrib_deformable.py): the forward against
MXNet 1.9.1 (tests/data/make_modulated_deformable_golden.py), every gradient against central
differences (MXNet has no CPU backward to compare with), the symbol front and bad shapes."""
import os
import sys

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

from .oputil import check_grad

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "data"))
from make_modulated_deformable_golden import CASES  # noqa: E402

G = np.load(os.path.join(HERE, "..", "data", "modulated_deformable_golden.npz"))
OP = "_contrib_ModulatedDeformableConvolution"


def _ins(name):
    n = 4 if CASES[name][1].get("no_bias") else 5
    return [G[f"{name}/in{i}"] for i in range(n)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_matches_mxnet(name):
    out = mx.nd.contrib.ModulatedDeformableConvolution(*[mx.nd.array(x) for x in _ins(name)],
                                                       **CASES[name][1])
    np.testing.assert_allclose(out.asnumpy(), G[f"{name}/out0"], rtol=1e-5, atol=1e-5)


def test_mask_of_ones_and_zero_offsets_is_a_convolution():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    off = np.zeros((2, 18, 5, 5), np.float32)
    mask = np.ones((2, 9, 5, 5), np.float32)
    got = mx.nd.contrib.ModulatedDeformableConvolution(
        *[mx.nd.array(v) for v in (x, off, mask, w, b)], kernel=(3, 3), num_filter=4, pad=(1, 1))
    want = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), kernel=(3, 3),
                             num_filter=4, pad=(1, 1))
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-5)
    half = mx.nd.contrib.ModulatedDeformableConvolution(
        *[mx.nd.array(v) for v in (x, off, mask / 2, w)], kernel=(3, 3), num_filter=4,
        pad=(1, 1), no_bias=True)
    np.testing.assert_allclose(half.asnumpy(), (want.asnumpy() - b[:, None, None]) / 2,
                               rtol=1e-5, atol=1e-5)
    # the backward operator: data, weight and bias gradients are Convolution's
    head = rng.standard_normal((2, 4, 5, 5)).astype(np.float32)
    gx, goff, gmask, gw, gb = mx.nd._backward_contrib_ModulatedDeformableConvolution(
        *[mx.nd.array(v) for v in (head, x, off, mask, w, b)], kernel=(3, 3), num_filter=4,
        pad=(1, 1))
    xs = [mx.nd.array(v) for v in (x, w, b)]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution(*xs, kernel=(3, 3), num_filter=4, pad=(1, 1))
    y.backward(mx.nd.array(head))
    for got, v in zip((gx, gw, gb), xs):
        np.testing.assert_allclose(got.asnumpy(), v.grad.asnumpy(), rtol=1e-4, atol=1e-4)
    assert goff.shape == off.shape and gmask.shape == mask.shape


@pytest.mark.parametrize("params", [
    {"kernel": (2, 2), "num_filter": 2, "pad": (1, 1)},
    {"kernel": (2, 2), "num_filter": 2, "num_deformable_group": 2, "num_group": 2,
     "dilate": (2, 1), "no_bias": True},
])
def test_gradients_against_central_differences(params):
    rng = np.random.default_rng(7)
    N, C, H, W = 1, 2, 4, 4
    kh, kw = params["kernel"]
    dg, ng, nf = params.get("num_deformable_group", 1), params.get("num_group", 1), 2
    d, p = params.get("dilate", (1, 1)), params.get("pad", (0, 0))
    ho = H + 2 * p[0] - d[0] * (kh - 1)
    wo = W + 2 * p[1] - d[1] * (kw - 1)
    # offsets away from integers (the interpolation's kinks), some taps partly outside
    off = rng.uniform(-1.4, 1.4, (N, dg * 2 * kh * kw, ho, wo))
    off += 0.25 * (np.abs(off - np.round(off)) < 0.05)
    ins = [rng.standard_normal((N, C, H, W)), off, rng.uniform(0.2, 1, (N, dg * kh * kw, ho, wo)),
           rng.standard_normal((nf, C // ng, kh, kw))]
    if not params.get("no_bias"):
        ins.append(rng.standard_normal(nf))
    check_grad(OP, ins, params, rng, rtol=1e-4, atol=1e-6)


def test_symbol_infers_offset_and_mask_shapes():
    sym = mx.sym.contrib.ModulatedDeformableConvolution(
        data=mx.sym.var("im_data"), offset=mx.sym.var("offset_data"),
        mask=mx.sym.var("mask_data"), weight=mx.sym.var("weight"), bias=mx.sym.var("bias"),
        num_filter=4, pad=(2, 2), kernel=(3, 3), dilate=(2, 2), num_deformable_group=2,
        name="test_op")
    assert sym.list_arguments() == ["im_data", "offset_data", "mask_data", "weight", "bias"]
    args, outs, _ = sym.infer_shape(im_data=(2, 4, 5, 6))
    assert args == [(2, 4, 5, 6), (2, 36, 5, 6), (2, 18, 5, 6), (4, 4, 3, 3), (4,)]
    assert outs == [(2, 4, 5, 6)]


def test_bad_shapes():
    x = mx.nd.zeros((1, 2, 4, 4))
    with pytest.raises(MXNetError, match="input mask has shape"):
        mx.nd.contrib.ModulatedDeformableConvolution(
            x, mx.nd.zeros((1, 18, 4, 4)), mx.nd.zeros((1, 8, 4, 4)), mx.nd.zeros((2, 2, 3, 3)),
            mx.nd.zeros(2), kernel=(3, 3), num_filter=2, pad=(1, 1))
    with pytest.raises(MXNetError, match="num_deformable_group"):
        mx.nd.contrib.ModulatedDeformableConvolution(
            x, mx.nd.zeros((1, 54, 4, 4)), mx.nd.zeros((1, 27, 4, 4)), mx.nd.zeros((2, 2, 3, 3)),
            mx.nd.zeros(2), kernel=(3, 3), num_filter=2, pad=(1, 1), num_deformable_group=3)
