"""``_contrib_DeformableConvolution`` (MXNet 1.9.1's contrib.DeformableConvolution, 2-D, NCHW):
a convolution whose kernel taps sample the input at learned offsets.

``offset`` is (N, num_deformable_group * 2 * kh * kw, Ho, Wo): for group g and tap (i, j), channel
g*2*kh*kw + 2*(i*kw + j) moves the tap along y and the next one along x. A tap at (y, x) inside
[0, H) x [0, W) is interpolated bilinearly (the last row/column repeats), outside it reads 0, as
MXNet's deformable_im2col. The columns are then multiplied by the weight per ``num_group``.

Runs numpy on the host (``_host``); ``_backward_contrib_DeformableConvolution`` gives the data,
offset, weight and bias gradients (the offset gradient is the derivative of the bilinear
interpolation inside the image, 0 outside).
"""
import numpy as np

from ._host import host_forward
from .params import Param
from .registry import OpDef, register

_PARAMS = (Param("kernel", "shape", required=True), Param("stride", "shape", ()),
           Param("dilate", "shape", ()), Param("pad", "shape", ()),
           Param("num_filter", int, required=True), Param("num_group", int, 1),
           Param("num_deformable_group", int, 1), Param("workspace", int, 1024),
           Param("no_bias", bool, False), Param("layout", str, None, optional=True))
_NAME = "_contrib_DeformableConvolution"


def _geom(a):
    k = a["kernel"]
    if len(k) != 2:
        raise ValueError(f"{_NAME}: only 2-D kernels are supported, got kernel={k}")
    s = a["stride"] or (1, 1)
    d = a["dilate"] or (1, 1)
    p = a["pad"] or (0, 0)
    return k, s, d, p


def _out_hw(a, H, W):
    (kh, kw), (sh, sw), (dh, dw), (ph, pw) = _geom(a)
    ho = (H + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
    wo = (W + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    return ho, wo


def _inputs(a):
    return ("data", "offset", "weight") if a["no_bias"] else ("data", "offset", "weight", "bias")


def _infer_inputs(a, shapes):
    shapes = list(shapes)
    d = shapes[0]
    if d is not None and len(d) == 4:
        (kh, kw), _, _, _ = _geom(a)
        ho, wo = _out_hw(a, d[2], d[3])
        if shapes[1] is None:
            shapes[1] = (d[0], a["num_deformable_group"] * 2 * kh * kw, ho, wo)
        if shapes[2] is None:
            shapes[2] = (a["num_filter"], d[1] // a["num_group"], kh, kw)
        if len(shapes) > 3 and shapes[3] is None:
            shapes[3] = (a["num_filter"],)
    return shapes


def _infer(a, shapes, dtypes):
    d = tuple(shapes[0])
    if a["layout"] not in (None, "NCHW"):
        raise ValueError(f"{_NAME}: only layout NCHW is supported, got {a['layout']}")
    if len(d) != 4:
        raise ValueError(f"{_NAME}: data must be 4-D (batch, channel, height, width), got {d}")
    (kh, kw), _, _, _ = _geom(a)
    g, dg, nf = a["num_group"], a["num_deformable_group"], a["num_filter"]
    if d[1] % g or nf % g:
        raise ValueError(f"{_NAME}: channels ({d[1]}) and num_filter ({nf}) must divide by "
                         f"num_group ({g})")
    if d[1] % dg:
        raise ValueError(f"{_NAME}: channels ({d[1]}) must divide by num_deformable_group ({dg})")
    ho, wo = _out_hw(a, d[2], d[3])
    if ho < 1 or wo < 1:
        raise ValueError(f"{_NAME}: kernel {a['kernel']} does not fit data {d} with pad "
                         f"{a['pad']} and dilate {a['dilate']}")
    want = [d, (d[0], dg * 2 * kh * kw, ho, wo), (nf, d[1] // g, kh, kw), (nf,)]
    for i, (s, w) in enumerate(zip(shapes, want)):
        if tuple(s) != w:
            raise ValueError(f"{_NAME}: input {_inputs(a)[i]} has shape {tuple(s)}, expected {w}")
    return [(d[0], nf, ho, wo)], [dtypes[0]]


def _sample(a, x, off):
    """Columns (C, kh, kw, Ho, Wo) of one image and what the backward needs."""
    C, H, W = x.shape
    (kh, kw), (sh, sw), (dh, dw), (ph, pw) = _geom(a)
    G = a["num_deformable_group"]
    ho, wo = off.shape[1:]
    off = off.reshape(G, kh, kw, 2, ho, wo)
    by = (np.arange(ho) * sh - ph)[None, :] + (np.arange(kh) * dh)[:, None]        # (kh, Ho)
    bx = (np.arange(wo) * sw - pw)[None, :] + (np.arange(kw) * dw)[:, None]        # (kw, Wo)
    y = by[None, :, None, :, None] + off[:, :, :, 0]                                # (G,kh,kw,Ho,Wo)
    xx = bx[None, None, :, None, :] + off[:, :, :, 1]
    valid = (y >= 0) & (xx >= 0) & (y < H) & (xx < W)
    yl = np.floor(np.where(valid, y, 0)).astype(np.int64)
    xl = np.floor(np.where(valid, xx, 0)).astype(np.int64)
    ytop, xtop = yl >= H - 1, xl >= W - 1
    yh = np.where(ytop, H - 1, yl + 1)
    xh = np.where(xtop, W - 1, xl + 1)
    ly = np.where(ytop, 0, np.where(valid, y, 0) - yl)
    lx = np.where(xtop, 0, np.where(valid, xx, 0) - xl)
    w = np.stack([(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx]) * valid
    pos = np.stack([yl * W + xl, yl * W + xh, yh * W + xl, yh * W + xh])           # (4, G, ...)
    cpg = C // G
    flat = x.reshape(G, cpg, H * W)
    v = np.stack([flat[g][:, pos[:, g]] for g in range(G)])                       # (G,cpg,4,...)
    cols = np.einsum("gcqijhw,qgijhw->gcijhw", v, w)
    return cols.reshape(C, kh, kw, ho, wo), (pos, w, v, ly, lx, valid, ytop, xtop)


def _gemm_cols(a, data, offset, weight, bias, cols_of):
    """Both deformable forwards: per sample n, each group's weights times the sampled columns
    ``cols_of(n)`` (C, kh, kw, ho, wo), plus the bias; in float64, returned as data's dtype."""
    N = data.shape[0]
    nf, g = a["num_filter"], a["num_group"]
    ho, wo = offset.shape[2:]
    out = np.zeros((N, nf, ho, wo), np.float64)
    wg = weight.astype(np.float64).reshape(g, nf // g, -1)
    for n in range(N):
        out[n] = np.matmul(wg, cols_of(n).reshape(g, -1, ho * wo)).reshape(nf, ho, wo)
    if bias:
        out += bias[0].astype(np.float64)[None, :, None, None]
    return out.astype(data.dtype)


def _fwd(a, data, offset, weight, *bias):
    return _gemm_cols(a, data, offset, weight, bias, lambda n: _sample(
        a, data[n].astype(np.float64), offset[n].astype(np.float64))[0])


def _grad(F, a, inputs, outputs, out_grads):
    gs = F._backward_contrib_DeformableConvolution(out_grads[0], *inputs, **a)
    return list(gs)


register(OpDef(_NAME, inputs=("data", "offset", "weight", "bias"), input_names=_inputs,
               params=_PARAMS, infer=_infer, infer_inputs=_infer_inputs,
               forward=host_forward(_NAME, _fwd), grad=_grad,
               doc="Deformable convolution (2-D, NCHW): kernel taps displaced by `offset`, "
                   "sampled bilinearly."))


def _binfer(a, shapes, dtypes):
    return [tuple(s) for s in shapes[1:]], list(dtypes[1:])


def _bwd(a, og, data, offset, weight, *bias):
    N, C, H, W = data.shape
    nf, g = a["num_filter"], a["num_group"]
    G = a["num_deformable_group"]
    (kh, kw), _, _, _ = _geom(a)
    ho, wo = offset.shape[2:]
    cpg = C // G
    wg = weight.astype(np.float64).reshape(g, nf // g, -1)
    gdata = np.zeros((N, C, H * W))
    goff = np.zeros((N, G, kh, kw, 2, ho, wo))
    gw = np.zeros_like(wg)
    for n in range(N):
        cols, (pos, w, v, ly, lx, valid, ytop, xtop) = _sample(
            a, data[n].astype(np.float64), offset[n].astype(np.float64))
        o = og[n].astype(np.float64).reshape(g, nf // g, ho * wo)
        gw += np.matmul(o, cols.reshape(g, -1, ho * wo).transpose(0, 2, 1))
        dcol = np.matmul(wg.transpose(0, 2, 1), o).reshape(G, cpg, kh, kw, ho, wo)
        for gi in range(G):
            for q in range(4):
                contrib = dcol[gi] * w[q, gi][None]                               # (cpg, ...)
                where = np.broadcast_to(pos[q, gi][None], contrib.shape).reshape(cpg, -1)
                for c in range(cpg):
                    gdata[n, gi * cpg + c] += np.bincount(where[c], contrib[c].ravel(),
                                                          minlength=H * W)
            v1, v2, v3, v4 = (v[gi][:, q] for q in range(4))                      # (cpg, ...)
            dy = (1 - lx[gi]) * (v3 - v1) + lx[gi] * (v4 - v2)
            dx = (1 - ly[gi]) * (v2 - v1) + ly[gi] * (v4 - v3)
            dy = np.where(ytop[gi] | ~valid[gi], 0, dy)
            dx = np.where(xtop[gi] | ~valid[gi], 0, dx)
            goff[n, gi, :, :, 0] = (dcol[gi] * dy).sum(axis=0)
            goff[n, gi, :, :, 1] = (dcol[gi] * dx).sum(axis=0)
    res = [gdata.reshape(data.shape).astype(data.dtype),
           goff.reshape(offset.shape).astype(offset.dtype),
           gw.reshape(weight.shape).astype(weight.dtype)]
    if bias:
        res.append(og.astype(np.float64).sum(axis=(0, 2, 3)).astype(bias[0].dtype))
    return tuple(res)


register(OpDef("_backward_contrib_DeformableConvolution",
               inputs=("out_grad", "data", "offset", "weight", "bias"),
               input_names=lambda a: ("out_grad",) + _inputs(a), params=_PARAMS,
               infer=_binfer, num_outputs=lambda a: 3 if a["no_bias"] else 4,
               forward=host_forward("_backward_contrib_DeformableConvolution", _bwd),
               doc="Gradients of DeformableConvolution's data, offset, weight (and bias)."))


# ---- modulated deformable convolution (DCNv2) ------------------------------------------------
# ``_contrib_ModulatedDeformableConvolution``: the same taps, each also scaled by ``mask`` (N,
# num_deformable_group * kh * kw, Ho, Wo). Its sampling is DCNv2's, not v1's: a tap with
# -1 < y < H and -1 < x < W is interpolated from those of its four neighbours inside the image
# (the others read 0), any other tap reads 0 (modulated_deformable_im2col.h).
_MNAME = "_contrib_ModulatedDeformableConvolution"
_MPARAMS = _PARAMS + (Param("im2col_step", int, 64),)


def _minputs(a):
    names = ("data", "offset", "mask", "weight")
    return names if a["no_bias"] else names + ("bias",)


def _minfer_inputs(a, shapes):
    shapes = list(shapes)
    d = shapes[0]
    if d is not None and len(d) == 4:
        (kh, kw), _, _, _ = _geom(a)
        ho, wo = _out_hw(a, d[2], d[3])
        dg = a["num_deformable_group"]
        fill = [None, (d[0], dg * 2 * kh * kw, ho, wo), (d[0], dg * kh * kw, ho, wo),
                (a["num_filter"], d[1] // a["num_group"], kh, kw), (a["num_filter"],)]
        for i in range(1, len(shapes)):
            if shapes[i] is None:
                shapes[i] = fill[i]
    return shapes


def _minfer(a, shapes, dtypes):
    (kh, kw), _, _, _ = _geom(a)
    d = tuple(shapes[0])
    # the unmodulated checks on data, offset, weight (and bias), then the mask's shape
    try:
        out, odt = _infer(a, [shapes[0], shapes[1]] + list(shapes[3:]), dtypes)
    except ValueError as e:
        raise ValueError(str(e).replace(_NAME, _MNAME)) from None
    want = (d[0], a["num_deformable_group"] * kh * kw) + out[0][2:]
    if tuple(shapes[2]) != want:
        raise ValueError(f"{_MNAME}: input mask has shape {tuple(shapes[2])}, expected {want}")
    return out, odt


def _msample(a, x, off, mask):
    """Masked columns (C, kh, kw, Ho, Wo) of one image, and what the backward needs."""
    C, H, W = x.shape
    (kh, kw), (sh, sw), (dh, dw), (ph, pw) = _geom(a)
    G = a["num_deformable_group"]
    ho, wo = off.shape[1:]
    off = off.reshape(G, kh, kw, 2, ho, wo)
    mask = mask.reshape(G, kh, kw, ho, wo)
    by = (np.arange(ho) * sh - ph)[None, :] + (np.arange(kh) * dh)[:, None]
    bx = (np.arange(wo) * sw - pw)[None, :] + (np.arange(kw) * dw)[:, None]
    y = by[None, :, None, :, None] + off[:, :, :, 0]                            # (G,kh,kw,Ho,Wo)
    xx = bx[None, None, :, None, :] + off[:, :, :, 1]
    inside = (y > -1) & (xx > -1) & (y < H) & (xx < W)
    y, xx = np.where(inside, y, 0), np.where(inside, xx, 0)
    yl, xl = np.floor(y).astype(np.int64), np.floor(xx).astype(np.int64)
    ly, lx = y - yl, xx - xl
    corners = [(yl, xl), (yl, xl + 1), (yl + 1, xl), (yl + 1, xl + 1)]
    ok = np.stack([inside & (cy >= 0) & (cx >= 0) & (cy < H) & (cx < W) for cy, cx in corners])
    pos = np.stack([np.clip(cy, 0, H - 1) * W + np.clip(cx, 0, W - 1) for cy, cx in corners])
    w = np.stack([(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx])
    cpg = C // G
    flat = x.reshape(G, cpg, H * W)
    v = np.stack([flat[g][:, pos[:, g]] for g in range(G)]) * ok.transpose(1, 0, 2, 3, 4, 5)[
        :, None]                                                                  # (G,cpg,4,...)
    val = np.einsum("gcqijhw,qgijhw->gcijhw", v, w)
    cols = val * mask[:, None]
    return cols.reshape(C, kh, kw, ho, wo), (pos, w * ok, v, val, ly, lx, inside, mask)


def _mfwd(a, data, offset, mask, weight, *bias):
    return _gemm_cols(a, data, offset, weight, bias, lambda n: _msample(
        a, data[n].astype(np.float64), offset[n].astype(np.float64),
        mask[n].astype(np.float64))[0])


def _mgrad(F, a, inputs, outputs, out_grads):
    return list(F._backward_contrib_ModulatedDeformableConvolution(out_grads[0], *inputs, **a))


register(OpDef(_MNAME, inputs=("data", "offset", "mask", "weight", "bias"),
               input_names=_minputs, params=_MPARAMS, infer=_minfer,
               infer_inputs=_minfer_inputs, forward=host_forward(_MNAME, _mfwd), grad=_mgrad,
               doc="Modulated deformable convolution (DCNv2; 2-D, NCHW): kernel taps displaced "
                   "by `offset`, sampled bilinearly and scaled by `mask`."))


def _mbwd(a, og, data, offset, mask, weight, *bias):
    N, C, H, W = data.shape
    nf, g = a["num_filter"], a["num_group"]
    G = a["num_deformable_group"]
    (kh, kw), _, _, _ = _geom(a)
    ho, wo = offset.shape[2:]
    cpg = C // G
    wg = weight.astype(np.float64).reshape(g, nf // g, -1)
    gdata = np.zeros((N, C, H * W))
    goff = np.zeros((N, G, kh, kw, 2, ho, wo))
    gmask = np.zeros((N, G, kh, kw, ho, wo))
    gw = np.zeros_like(wg)
    for n in range(N):
        cols, (pos, w, v, val, ly, lx, inside, m) = _msample(
            a, data[n].astype(np.float64), offset[n].astype(np.float64),
            mask[n].astype(np.float64))
        o = og[n].astype(np.float64).reshape(g, nf // g, ho * wo)
        gw += np.matmul(o, cols.reshape(g, -1, ho * wo).transpose(0, 2, 1))
        dcol = np.matmul(wg.transpose(0, 2, 1), o).reshape(G, cpg, kh, kw, ho, wo)
        for gi in range(G):
            dval = dcol[gi] * m[gi][None]                                         # (cpg, ...)
            for q in range(4):
                contrib = (dval * w[q, gi][None]).reshape(cpg, -1)
                where = np.broadcast_to(pos[q, gi][None], dval.shape).reshape(cpg, -1)
                for c in range(cpg):
                    gdata[n, gi * cpg + c] += np.bincount(where[c], contrib[c],
                                                          minlength=H * W)
            v1, v2, v3, v4 = (v[gi][:, q] for q in range(4))
            dy = (1 - lx[gi]) * (v3 - v1) + lx[gi] * (v4 - v2)
            dx = (1 - ly[gi]) * (v2 - v1) + ly[gi] * (v4 - v3)
            goff[n, gi, :, :, 0] = np.where(inside[gi], (dval * dy).sum(axis=0), 0)
            goff[n, gi, :, :, 1] = np.where(inside[gi], (dval * dx).sum(axis=0), 0)
            gmask[n, gi] = (dcol[gi] * val[gi]).sum(axis=0)
    res = [gdata.reshape(data.shape).astype(data.dtype),
           goff.reshape(offset.shape).astype(offset.dtype),
           gmask.reshape(mask.shape).astype(mask.dtype),
           gw.reshape(weight.shape).astype(weight.dtype)]
    if bias:
        res.append(og.astype(np.float64).sum(axis=(0, 2, 3)).astype(bias[0].dtype))
    return tuple(res)


register(OpDef("_backward_contrib_ModulatedDeformableConvolution",
               inputs=("out_grad", "data", "offset", "mask", "weight", "bias"),
               input_names=lambda a: ("out_grad",) + _minputs(a), params=_MPARAMS,
               infer=_binfer, num_outputs=lambda a: 4 if a["no_bias"] else 5,
               forward=host_forward("_backward_contrib_ModulatedDeformableConvolution", _mbwd),
               doc="Gradients of ModulatedDeformableConvolution's data, offset, mask, weight "
                   "(and bias)."))
