"""Golden outputs of MXNet 1.9.1's contrib operators for tests/ops/test_contrib_*.py.

Run with MXNet's own interpreter (the oracle venv):
    /work/mxnet-oracle/bin/python tests/data/make_contrib_golden.py
writes tests/data/contrib_golden.npz (inputs, outputs and input gradients under a fixed seed).
"""
import os

import numpy as np
import mxnet as mx

rs = np.random.RandomState(7)
G = {}


def fwd_bwd(key, fn, inputs, grad_idx):
    """Record inputs, outputs and the gradients (head = fixed random) of inputs in grad_idx."""
    nds = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for i in grad_idx:
        nds[i].attach_grad()
    with mx.autograd.record():
        out = fn(*nds)
    outs = out if isinstance(out, (list, tuple)) else [out]
    heads = [rs.uniform(-1, 1, o.shape).astype(np.float32) for o in outs]
    if grad_idx:
        mx.autograd.backward(outs, [mx.nd.array(h) for h in heads])
    for i, x in enumerate(inputs):
        G[f"{key}/in{i}"] = x
    for i, (o, h) in enumerate(zip(outs, heads)):
        G[f"{key}/out{i}"] = o.asnumpy()
        G[f"{key}/head{i}"] = h
    for i in grad_idx:
        G[f"{key}/grad{i}"] = nds[i].grad.asnumpy()


f32 = np.float32
# ROIAlign: plain, sample_ratio=2, position-sensitive, aligned
data = rs.rand(2, 8, 9, 10).astype(f32)
rois = np.array([[0, 1.2, 0.7, 7.9, 6.3], [1, -2.0, 3.0, 12.0, 11.5], [1, 4.0, 4.0, 4.5, 4.2],
                 [0, 0, 0, 30, 30]], f32)
for key, kw in [("roialign", dict(pooled_size=(2, 3), spatial_scale=0.9)),
                ("roialign_s2", dict(pooled_size=(3, 2), spatial_scale=1.0, sample_ratio=2)),
                ("roialign_ps", dict(pooled_size=(2, 2), spatial_scale=0.8,
                                     position_sensitive=True)),
                ("roialign_al", dict(pooled_size=(2, 2), spatial_scale=1.0, aligned=True))]:
    fwd_bwd(key, lambda d, r, kw=kw: mx.nd.contrib.ROIAlign(d, r, **kw), [data, rois], [0])
# RROIAlign (forward only)
rrois = np.array([[0, 4.0, 4.5, 5.0, 3.0, 30.0], [1, 5.0, 3.0, 8.0, 6.0, -75.0]], f32)
fwd_bwd("rroialign", lambda d, r: mx.nd.contrib.RROIAlign(d, r, pooled_size=(2, 3),
                                                          spatial_scale=1.0), [data, rrois], [])
# PSROIPooling
psdata = rs.rand(2, 2 * 3 * 3, 12, 11).astype(f32)
psrois = np.array([[0, 10, 22, 150, 170], [1, 20, 15, 154, 160], [0, 100, 100, 90, 95]], f32)
fwd_bwd("psroi", lambda d, r: mx.nd.contrib.PSROIPooling(d, r, spatial_scale=0.0625,
                                                         output_dim=2, pooled_size=3),
        [psdata, psrois], [0])
# BilinearResize2D and AdaptiveAvgPooling2D
img = rs.rand(2, 3, 7, 6).astype(f32)
like = rs.rand(2, 3, 4, 9).astype(f32)
for key, kw in [("resize_size", dict(height=11, width=4)),
                ("resize_size_nac", dict(height=5, width=9, align_corners=False)),
                ("resize_scale", dict(scale_height=1.5, scale_width=0.5)),
                ("resize_odd", dict(scale_height=2.0, scale_width=3.0, mode="odd_scale")),
                ("resize_even_up", dict(mode="to_even_up")),
                ("resize_odd_down", dict(mode="to_odd_down"))]:
    fwd_bwd(key, lambda d, kw=kw: mx.nd.contrib.BilinearResize2D(d, **kw), [img], [0])
fwd_bwd("resize_like", lambda d, l: mx.nd.contrib.BilinearResize2D(d, l, mode="like"),
        [img, like], [0, 1])
for key, kw in [("adaptive_3x4", dict(output_size=(3, 4))), ("adaptive_5", dict(output_size=5)),
                ("adaptive_1", dict())]:
    fwd_bwd(key, lambda d, kw=kw: mx.nd.contrib.AdaptiveAvgPooling2D(d, **kw), [img], [0])
# Proposal / MultiProposal
A, H, W = 9, 8, 9
cls = rs.rand(2, 2 * A, H, W).astype(f32)
bbox = ((rs.rand(2, 4 * A, H, W) - 0.5) * 0.4).astype(f32)
info = np.array([[120, 135, 0.8], [100, 140, 1.0]], f32)
pkw = dict(scales=(2, 4, 8), ratios=(0.5, 1, 2), rpn_pre_nms_top_n=200, rpn_post_nms_top_n=40,
           threshold=0.6, rpn_min_size=8, output_score=True)
fwd_bwd("multiproposal", lambda c, b, i: mx.nd.contrib.MultiProposal(c, b, i, **pkw),
        [cls, bbox, info], [])
fwd_bwd("proposal", lambda c, b, i: mx.nd.contrib.Proposal(c, b, i, **pkw),
        [cls[:1], bbox[:1], info[:1]], [])
fwd_bwd("proposal_iou", lambda c, b, i: mx.nd.contrib.Proposal(c, b, i, iou_loss=True, **pkw),
        [cls[1:], bbox[1:], info[1:]], [])
# quantize / dequantize
q_in = rs.uniform(-0.7, 1.3, (3, 5)).astype(f32)
for ot in ("uint8", "int8"):
    fwd_bwd(f"quantize_{ot}", lambda x, lo, hi, ot=ot: mx.nd.contrib.quantize(x, lo, hi, out_type=ot),
            [q_in, np.array([-0.7], f32), np.array([1.3], f32)], [])
    qa, lo, hi = (G[f"quantize_{ot}/out{i}"] for i in range(3))
    fwd_bwd(f"dequantize_{ot}", lambda q, lo, hi: mx.nd.contrib.dequantize(q, lo, hi),
            [qa, lo, hi], [])
# DeformableConvolution (forward; MXNet 1.9.1 has no CPU backward)
dc_x = rs.rand(2, 4, 6, 5).astype(f32)
dc_off = ((rs.rand(2, 2 * 2 * 3 * 3, 6, 5) - 0.5) * 3).astype(f32)
dc_w = rs.normal(0, 0.3, (6, 2, 3, 3)).astype(f32)
dc_b = rs.rand(6).astype(f32)
fwd_bwd("deformconv", lambda x, o, w, b: mx.nd.contrib.DeformableConvolution(
    x, o, w, b, kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=2, num_deformable_group=2),
    [dc_x, dc_off, dc_w, dc_b], [])

np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)), "contrib_golden.npz"),
                    **G)
print(len(G), "arrays")
