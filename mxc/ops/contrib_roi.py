"""Region-of-interest pooling from MXNet 1.9.1's contrib: ``_contrib_ROIAlign`` (also
position-sensitive), ``_contrib_RROIAlign`` (rotated boxes) and ``_contrib_PSROIPooling``, with
their backward operators. NCHW data; boxes are rows of ``rois``.

They run numpy on the host (``_host``), vectorised per box. Sampling follows MXNet's CPU code:
a sample at (y, x) outside [-1, H] x [-1, W] contributes 0, otherwise it is clamped at 0 and
interpolated bilinearly between its four neighbours (the last row/column repeats); each bin
averages a grid of ``sample_ratio`` (or ceil(bin size)) samples per axis. The gradient with
respect to the boxes is zero, as in MXNet.
"""
import math

import numpy as np

from ._host import host_forward
from .params import Param
from .registry import OpDef, register
from ..base import MXNetError

_REAL = ("float16", "float32", "float64")


def _nd(shape):
    return tuple(int(d) for d in shape)


def _check(name, dshape, rshape, dtypes, ncols):
    if len(dshape) != 4:
        raise ValueError(f"{name}: data must be 4-D (batch, channel, height, width), got shape "
                         f"{dshape}")
    if len(rshape) != 2 or rshape[1] not in ncols:
        want = " or ".join(str(c) for c in ncols)
        raise ValueError(f"{name}: rois must be 2-D (num_rois, {want}), got shape {rshape}")
    if np.dtype(dtypes[0]).name not in _REAL:
        raise ValueError(f"{name}: data type {np.dtype(dtypes[0]).name} is not supported "
                         f"(float16/32/64)")


def _bilinear(H, W, y, x):
    """Positions (4, ...) in the flattened H*W plane and weights (4, ...) of MXNet's bilinear
    sample at (y, x); samples out of range get weight 0."""
    out = (y < -1.0) | (y > H) | (x < -1.0) | (x > W)
    y = np.where(y <= 0, 0, y)
    x = np.where(x <= 0, 0, x)
    yl = y.astype(np.int64)
    xl = x.astype(np.int64)
    ytop = yl >= H - 1
    xtop = xl >= W - 1
    yl = np.where(ytop, H - 1, yl)
    xl = np.where(xtop, W - 1, xl)
    yh = np.where(ytop, H - 1, yl + 1)
    xh = np.where(xtop, W - 1, xl + 1)
    y = np.where(ytop, yl.astype(y.dtype), y)
    x = np.where(xtop, xl.astype(x.dtype), x)
    ly = (y - yl).astype(y.dtype)
    lx = (x - xl).astype(x.dtype)
    hy, hx = 1 - ly, 1 - lx
    w = np.stack([hy * hx, hy * lx, ly * hx, ly * lx])
    pos = np.stack([yl * W + xl, yl * W + xh, yh * W + xl, yh * W + xh])
    w = np.where(out[None], 0, w)
    pos = np.where(out[None], 0, pos)
    return pos, w


def _grid(n, sample, size, pooled):
    return sample if sample > 0 else int(math.ceil(size / pooled))


# ---- ROIAlign -------------------------------------------------------------------------------------
_RA_PARAMS = (Param("pooled_size", "shape", required=True),
              Param("spatial_scale", float, required=True),
              Param("sample_ratio", int, -1),
              Param("position_sensitive", bool, False),
              Param("aligned", bool, False))


def _pooled(name, a):
    ps = a["pooled_size"]
    if len(ps) != 2 or ps[0] < 1 or ps[1] < 1:
        raise ValueError(f"{name}: pooled_size must be two positive ints (h, w), got {ps}")
    return ps


def _ra_infer(a, shapes, dtypes):
    name = "_contrib_ROIAlign"
    d, r = _nd(shapes[0]), _nd(shapes[1])
    _check(name, d, r, dtypes, (5,))
    ph, pw = _pooled(name, a)
    c = d[1]
    if a["position_sensitive"]:
        if c % (ph * pw):
            raise ValueError(f"{name}: position_sensitive needs channels ({c}) divisible by "
                             f"pooled h*w ({ph * pw})")
        c //= ph * pw
    return [(r[0], c, ph, pw)], [dtypes[0]]


def _ra_samples(a, roi, H, W, T):
    """(positions, weights / count) of one box, shaped (4, PH, PW, gh, gw)."""
    PH, PW = a["pooled_size"]
    off = T(0.5) if a["aligned"] else T(0)
    sc = T(a["spatial_scale"])
    sw, sh, ew, eh = (T(v) * sc - off for v in roi[1:5])
    rw, rh = ew - sw, eh - sh
    if a["aligned"]:
        if not (rw > 0 and rh > 0):
            raise ValueError(f"ROIAlign: box {list(roi)} has no area with aligned=True")
    else:
        rw, rh = max(rw, T(1)), max(rh, T(1))
    bh, bw = T(rh / T(PH)), T(rw / T(PW))
    gh = _grid(0, a["sample_ratio"], rh, PH)
    gw = _grid(0, a["sample_ratio"], rw, PW)
    ys = (sh + np.arange(PH, dtype=T)[:, None] * bh
          + (np.arange(gh, dtype=T)[None, :] + T(0.5)) * bh / T(gh))        # (PH, gh)
    xs = (sw + np.arange(PW, dtype=T)[:, None] * bw
          + (np.arange(gw, dtype=T)[None, :] + T(0.5)) * bw / T(gw))        # (PW, gw)
    y = np.broadcast_to(ys[:, None, :, None], (PH, PW, gh, gw))
    x = np.broadcast_to(xs[None, :, None, :], (PH, PW, gh, gw))
    pos, w = _bilinear(H, W, y, x)
    return pos, w / T(gh * gw)


def _ps_select(a, vals, C_out):
    """Position-sensitive: output channel c at bin (ph, pw) reads input channel
    c*PH*PW + ph*PW + pw. vals: (C_in, PH, PW) -> (C_out, PH, PW)."""
    PH, PW = a["pooled_size"]
    c = np.arange(C_out)[:, None, None]
    ph = np.arange(PH)[None, :, None]
    pw = np.arange(PW)[None, None, :]
    return vals[c * PH * PW + ph * PW + pw, ph, pw]


def _ra_fwd(a, data, rois):
    N, C, H, W = data.shape
    T = data.dtype.type
    PH, PW = a["pooled_size"]
    C_out = C // (PH * PW) if a["position_sensitive"] else C
    out = np.zeros((rois.shape[0], C_out, PH, PW), data.dtype)
    flat = data.reshape(N, C, H * W)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        if b < 0 or b >= N:
            continue
        pos, w = _ra_samples(a, roi, H, W, T)
        v = (flat[b][:, pos] * w[None]).sum(axis=(1, 4, 5))                # (C, PH, PW)
        out[r] = _ps_select(a, v, C_out) if a["position_sensitive"] else v
    return out


def _ra_grad(F, a, inputs, outputs, out_grads):
    g = F._backward_contrib_ROIAlign(out_grads[0], inputs[1], inputs[0], **a)
    return [g, F.zeros_like(inputs[1])]


register(OpDef("_contrib_ROIAlign", inputs=("data", "rois"), params=_RA_PARAMS,
               infer=_ra_infer, forward=host_forward("_contrib_ROIAlign", _ra_fwd),
               grad=_ra_grad,
               doc="ROI Align (Mask R-CNN): bilinear samples averaged per bin of each box "
                   "[batch_index, x1, y1, x2, y2]."))


def _ra_binfer(a, shapes, dtypes):
    return [_nd(shapes[2])], [dtypes[2]]


def _ra_bwd(a, og, rois, data):
    N, C, H, W = data.shape
    T = data.dtype.type
    PH, PW = a["pooled_size"]
    gx = np.zeros((N, C, H * W), np.float64)
    ps = a["position_sensitive"]
    C_out = og.shape[1]
    for r, roi in enumerate(rois):
        b = int(roi[0])
        if b < 0 or b >= N:
            continue
        pos, w = _ra_samples(a, roi, H, W, T)
        g = og[r].astype(np.float64)                                          # (C_out, PH, PW)
        if ps:
            c = (np.arange(C_out)[:, None, None] * PH * PW + np.arange(PH)[None, :, None] * PW
                 + np.arange(PW)[None, None, :])                              # (C_out, PH, PW)
            contrib = g[None, :, :, :, None, None] * w[:, None]               # (4, C_out, ...)
            chan = np.broadcast_to(c[None, :, :, :, None, None], contrib.shape)
            where = np.broadcast_to(pos[:, None], contrib.shape)
            np.add.at(gx[b], (chan.ravel(), where.ravel()), contrib.ravel())
        else:
            contrib = g[:, None, :, :, None, None] * w[None]                  # (C, 4, ...)
            where = np.broadcast_to(pos[None], contrib.shape).reshape(C, -1)
            for ch in range(C):
                gx[b, ch] += np.bincount(where[ch], contrib[ch].ravel(), minlength=H * W)
    return gx.reshape(data.shape).astype(data.dtype)


register(OpDef("_backward_contrib_ROIAlign", inputs=("out_grad", "rois", "data"),
               params=_RA_PARAMS, infer=_ra_binfer,
               forward=host_forward("_backward_contrib_ROIAlign", _ra_bwd),
               doc="Gradient of ROIAlign's data (inputs: out_grad, rois, data)."))


# ---- RROIAlign ------------------------------------------------------------------------------------
_RR_PARAMS = (Param("pooled_size", "shape", required=True),
              Param("spatial_scale", float, required=True),
              Param("sampling_ratio", int, -1))


def _rr_infer(a, shapes, dtypes):
    name = "_contrib_RROIAlign"
    d, r = _nd(shapes[0]), _nd(shapes[1])
    _check(name, d, r, dtypes, (6,))
    ph, pw = _pooled(name, a)
    return [(r[0], d[1], ph, pw)], [dtypes[0]]


def _rr_fwd(a, data, rois):
    N, C, H, W = data.shape
    T = data.dtype.type
    PH, PW = a["pooled_size"]
    sc = T(a["spatial_scale"])
    out = np.zeros((rois.shape[0], C, PH, PW), data.dtype)
    flat = data.reshape(N, C, H * W)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        if b < 0 or b >= N:
            continue
        cw, ch = T(roi[1]) * sc, T(roi[2]) * sc
        rw, rh = max(T(roi[3]) * sc, T(1)), max(T(roi[4]) * sc, T(1))
        theta = T(roi[5]) * T(math.pi) / T(180.0)
        bh, bw = T(rh / T(PH)), T(rw / T(PW))
        gh = _grid(0, a["sampling_ratio"], rh, PH)
        gw = _grid(0, a["sampling_ratio"], rw, PW)
        yy = (-rh / T(2) + np.arange(PH, dtype=T)[:, None] * bh
              + (np.arange(gh, dtype=T)[None, :] + T(0.5)) * bh / T(gh))     # (PH, gh)
        xx = (-rw / T(2) + np.arange(PW, dtype=T)[:, None] * bw
              + (np.arange(gw, dtype=T)[None, :] + T(0.5)) * bw / T(gw))     # (PW, gw)
        yy = np.broadcast_to(yy[:, None, :, None], (PH, PW, gh, gw))
        xx = np.broadcast_to(xx[None, :, None, :], (PH, PW, gh, gw))
        cos, sin = T(np.cos(theta)), T(np.sin(theta))
        x = xx * cos + yy * sin + cw
        y = yy * cos - xx * sin + ch
        pos, w = _bilinear(H, W, y, x)
        out[r] = (flat[b][:, pos] * w[None]).sum(axis=(1, 4, 5)) / T(gh * gw)
    return out


def _rr_grad(F, a, inputs, outputs, out_grads):
    raise MXNetError("RROIAlign: the backward pass is not implemented (as in MXNet 1.9.1)")


register(OpDef("_contrib_RROIAlign", inputs=("data", "rois"), params=_RR_PARAMS,
               infer=_rr_infer, forward=host_forward("_contrib_RROIAlign", _rr_fwd),
               grad=_rr_grad,
               doc="Rotated ROI Align: boxes [batch_index, center_x, center_y, width, height, "
                   "angle in degrees]. Forward only (MXNet has no backward either)."))


# ---- PSROIPooling ---------------------------------------------------------------------------------
_PS_PARAMS = (Param("spatial_scale", float, required=True),
              Param("output_dim", int, required=True),
              Param("pooled_size", int, required=True),
              Param("group_size", int, 0))


def _group(a):
    return a["group_size"] if a["group_size"] > 0 else a["pooled_size"]


def _ps_infer(a, shapes, dtypes):
    name = "_contrib_PSROIPooling"
    d, r = _nd(shapes[0]), _nd(shapes[1])
    _check(name, d, r, dtypes, (5,))
    g = _group(a)
    if d[1] != a["output_dim"] * g * g:
        raise ValueError(f"{name}: data has {d[1]} channels, expected output_dim * group_size^2 "
                         f"= {a['output_dim'] * g * g}")
    if np.dtype(dtypes[1]) != np.dtype(dtypes[0]):
        raise ValueError(f"{name}: rois must have data's dtype {np.dtype(dtypes[0]).name}")
    p = a["pooled_size"]
    return [(r[0], a["output_dim"], p, p)], [dtypes[0]]


def _ps_bins(a, roi, H, W, T):
    """Per bin (ph, pw): (hstart, hend, wstart, wend) and the input channel offset."""
    P = a["pooled_size"]
    sc = T(a["spatial_scale"])
    sw = T(np.round(roi[1])) * sc
    sh = T(np.round(roi[2])) * sc
    ew = T(np.round(roi[3]) + 1) * sc
    eh = T(np.round(roi[4]) + 1) * sc
    rw = max(ew - sw, T(0.1))
    rh = max(eh - sh, T(0.1))
    bh, bw = T(rh / T(P)), T(rw / T(P))
    bins = []
    for ph in range(P):
        hs = min(max(int(np.floor(T(ph) * bh + sh)), 0), H)
        he = min(max(int(np.ceil(T(ph + 1) * bh + sh)), 0), H)
        for pw in range(P):
            ws = min(max(int(np.floor(T(pw) * bw + sw)), 0), W)
            we = min(max(int(np.ceil(T(pw + 1) * bw + sw)), 0), W)
            bins.append((ph, pw, hs, he, ws, we))
    return bins


def _ps_channel(a, ctop, ph, pw):
    g, P = _group(a), a["pooled_size"]
    gw = min(max(int(np.floor(pw * g / P)), 0), g - 1)
    gh = min(max(int(np.floor(ph * g / P)), 0), g - 1)
    return (ctop * g + gh) * g + gw


def _ps_fwd(a, data, rois):
    N, C, H, W = data.shape
    T = data.dtype.type
    P, D = a["pooled_size"], a["output_dim"]
    out = np.zeros((rois.shape[0], D, P, P), data.dtype)
    ctops = np.arange(D)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        if b < 0 or b >= N:
            continue
        for ph, pw, hs, he, ws, we in _ps_bins(a, roi, H, W, T):
            if he <= hs or we <= ws:
                continue
            chans = [_ps_channel(a, c, ph, pw) for c in ctops]
            s = data[b, chans, hs:he, ws:we].sum(axis=(1, 2), dtype=np.float64)
            out[r, :, ph, pw] = s / ((he - hs) * (we - ws))
    return out


def _ps_grad(F, a, inputs, outputs, out_grads):
    g = F._backward_contrib_PSROIPooling(out_grads[0], inputs[1], inputs[0], **a)
    return [g, F.zeros_like(inputs[1])]


register(OpDef("_contrib_PSROIPooling", inputs=("data", "rois"), params=_PS_PARAMS,
               infer=_ps_infer, forward=host_forward("_contrib_PSROIPooling", _ps_fwd),
               grad=_ps_grad,
               doc="Position-sensitive ROI pooling (R-FCN): bin (ph, pw) of class c averages "
                   "input channel (c * group + gh) * group + gw over the bin."))


def _ps_bwd(a, og, rois, data):
    N, C, H, W = data.shape
    T = data.dtype.type
    D = a["output_dim"]
    gx = np.zeros(data.shape, np.float64)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        if b < 0 or b >= N:
            continue
        for ph, pw, hs, he, ws, we in _ps_bins(a, roi, H, W, T):
            if he <= hs or we <= ws:
                continue
            area = (he - hs) * (we - ws)
            for c in range(D):
                gx[b, _ps_channel(a, c, ph, pw), hs:he, ws:we] += float(og[r, c, ph, pw]) / area
    return gx.astype(data.dtype)


register(OpDef("_backward_contrib_PSROIPooling", inputs=("out_grad", "rois", "data"),
               params=_PS_PARAMS, infer=_ra_binfer,
               forward=host_forward("_backward_contrib_PSROIPooling", _ps_bwd),
               doc="Gradient of PSROIPooling's data (inputs: out_grad, rois, data)."))
