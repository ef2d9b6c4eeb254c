"""mxc's contrib operators against MXNet 1.9.1's outputs and gradients
(tests/data/contrib_golden.npz, made by tests/data/make_contrib_golden.py with the oracle)."""
import os

import numpy as np
import pytest

import mxc as mx

_G = np.load(os.path.join(os.path.dirname(__file__), "..", "data", "contrib_golden.npz"))


def _run(key, fn, grad_idx, rtol=1e-4, atol=1e-4, outs_checked=None):
    n_in = sum(1 for k in _G.files if k.startswith(key + "/in"))
    inputs = [_G[f"{key}/in{i}"] for i in range(n_in)]
    nds = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for i in grad_idx:
        nds[i].attach_grad()
    with mx.autograd.record():
        out = fn(*nds)
    outs = out if isinstance(out, (list, tuple)) else [out]
    n_out = sum(1 for k in _G.files if k.startswith(key + "/out"))
    assert len(outs) == n_out, key
    for i, o in enumerate(outs):
        if outs_checked is not None and i not in outs_checked:
            continue
        want = _G[f"{key}/out{i}"]
        got = o.asnumpy()
        assert got.shape == want.shape and got.dtype == want.dtype, (key, got.shape, want.shape)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=atol, err_msg=f"{key} output {i}")
    if grad_idx:
        heads = [mx.nd.array(_G[f"{key}/head{i}"]) for i in range(n_out)]
        mx.autograd.backward(outs, heads)
        for i in grad_idx:
            np.testing.assert_allclose(nds[i].grad.asnumpy(), _G[f"{key}/grad{i}"], rtol=rtol,
                                       atol=atol, err_msg=f"{key} gradient {i}")


@pytest.mark.parametrize("key,kw", [
    ("roialign", dict(pooled_size=(2, 3), spatial_scale=0.9)),
    ("roialign_s2", dict(pooled_size=(3, 2), spatial_scale=1.0, sample_ratio=2)),
    ("roialign_ps", dict(pooled_size=(2, 2), spatial_scale=0.8, position_sensitive=True)),
    ("roialign_al", dict(pooled_size=(2, 2), spatial_scale=1.0, aligned=True))])
def test_roialign_matches_mxnet(key, kw):
    _run(key, lambda d, r: mx.nd.contrib.ROIAlign(d, r, **kw), [0])


def test_rroialign_matches_mxnet():
    _run("rroialign", lambda d, r: mx.nd.contrib.RROIAlign(d, r, pooled_size=(2, 3),
                                                          spatial_scale=1.0), [])


def test_psroipooling_matches_mxnet():
    _run("psroi", lambda d, r: mx.nd.contrib.PSROIPooling(d, r, spatial_scale=0.0625,
                                                         output_dim=2, pooled_size=3), [0])


@pytest.mark.parametrize("key,kw", [
    ("resize_size", dict(height=11, width=4)),
    ("resize_size_nac", dict(height=5, width=9, align_corners=False)),
    ("resize_scale", dict(scale_height=1.5, scale_width=0.5)),
    ("resize_odd", dict(scale_height=2.0, scale_width=3.0, mode="odd_scale")),
    ("resize_even_up", dict(mode="to_even_up")),
    ("resize_odd_down", dict(mode="to_odd_down"))])
def test_bilinear_resize_matches_mxnet(key, kw):
    _run(key, lambda d: mx.nd.contrib.BilinearResize2D(d, **kw), [0])


def test_bilinear_resize_like_matches_mxnet():
    _run("resize_like", lambda d, l: mx.nd.contrib.BilinearResize2D(d, l, mode="like"), [0, 1])


@pytest.mark.parametrize("key,kw", [("adaptive_3x4", dict(output_size=(3, 4))),
                                    ("adaptive_5", dict(output_size=5)), ("adaptive_1", {})])
def test_adaptive_avg_pooling_matches_mxnet(key, kw):
    _run(key, lambda d: mx.nd.contrib.AdaptiveAvgPooling2D(d, **kw), [0])


_PKW = dict(scales=(2, 4, 8), ratios=(0.5, 1, 2), rpn_pre_nms_top_n=200, rpn_post_nms_top_n=40,
            threshold=0.6, rpn_min_size=8, output_score=True)


def test_proposal_matches_mxnet():
    _run("multiproposal", lambda c, b, i: mx.nd.contrib.MultiProposal(c, b, i, **_PKW), [])
    _run("proposal", lambda c, b, i: mx.nd.contrib.Proposal(c, b, i, **_PKW), [])
    _run("proposal_iou", lambda c, b, i: mx.nd.contrib.Proposal(c, b, i, iou_loss=True, **_PKW),
         [])


def test_proposal_without_score_and_zero_gradient():
    c, b, i = (mx.nd.array(_G[f"proposal/in{k}"]) for k in range(3))
    for x in (c, b, i):
        x.attach_grad()
    kw = dict(_PKW, output_score=False)
    with mx.autograd.record():
        out = mx.nd.contrib.Proposal(c, b, i, **kw)
    assert isinstance(out, mx.nd.NDArray) and out.shape == (40, 5)
    out.backward()
    assert all(float(abs(x.grad).sum().asscalar()) == 0 for x in (c, b, i))
    with pytest.raises(mx.base.MXNetError):
        mx.nd.contrib.Proposal(mx.nd.array(_G["multiproposal/in0"]),
                               mx.nd.array(_G["multiproposal/in1"]),
                               mx.nd.array(_G["multiproposal/in2"]), **kw)


@pytest.mark.parametrize("ot", ["uint8", "int8"])
def test_quantize_roundtrip_matches_mxnet(ot):
    _run(f"quantize_{ot}", lambda x, lo, hi: mx.nd.contrib.quantize(x, lo, hi, out_type=ot), [],
         atol=0)
    _run(f"dequantize_{ot}", lambda q, lo, hi: mx.nd.contrib.dequantize(q, lo, hi), [],
         rtol=1e-6, atol=1e-7)


def test_deformable_convolution_matches_mxnet():
    _run("deformconv", lambda x, o, w, b: mx.nd.contrib.DeformableConvolution(
        x, o, w, b, kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=2,
        num_deformable_group=2), [])
