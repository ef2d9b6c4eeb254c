"""``_contrib_ModulatedDeformableConvolution`` (MXNet 1.9.1's contrib, "DCNv2"; 2-D, NCHW): a
deformable convolution whose sampled taps are also scaled by a learned ``mask``.

``offset`` is (N, num_deformable_group * 2 * kh * kw, Ho, Wo) as DeformableConvolution's (for
group g and tap (i, j), channel g*2*kh*kw + 2*(i*kw + j) moves the tap along y, the next one
along x); ``mask`` is (N, num_deformable_group * kh * kw, Ho, Wo). Sampling follows MXNet's
modulated_deformable_im2col, which differs from DeformableConvolution's: a tap at (y, x) with
-1 < y < H and -1 < x < W is interpolated bilinearly from its four neighbours, each neighbour
outside the image reading 0; taps further out read 0. The sample times the mask forms the
columns that the weight multiplies per ``num_group``.

Runs numpy on the host (``_host``). ``_backward_contrib_ModulatedDeformableConvolution`` gives
the data, offset, mask, weight and bias gradients (MXNet 1.9.1 has them on the GPU only); the
offset gradient is the derivative of the interpolation where a tap is sampled, 0 elsewhere.
"""
import numpy as np

from ._host import host_forward
from .contrib_deformable import _geom, _out_hw
from .params import Param
from .registry import OpDef, register

_NAME = "_contrib_ModulatedDeformableConvolution"
_PARAMS = (Param("kernel", "shape", required=True), Param("stride", "shape", ()),
           Param("dilate", "shape", ()), Param("pad", "shape", ()),
           Param("num_filter", int, required=True), Param("num_group", int, 1),
           Param("num_deformable_group", int, 1), Param("workspace", int, 1024),
           Param("no_bias", bool, False), Param("im2col_step", int, 64),
           Param("layout", str, None, optional=True))


def _inputs(a):
    names = ("data", "offset", "mask", "weight")
    return names if a["no_bias"] else names + ("bias",)


def _expected(a, d):
    (kh, kw), _, _, _ = _geom(a)
    ho, wo = _out_hw(a, d[2], d[3])
    dg, nf = a["num_deformable_group"], a["num_filter"]
    return [d, (d[0], dg * 2 * kh * kw, ho, wo), (d[0], dg * kh * kw, ho, wo),
            (nf, d[1] // a["num_group"], kh, kw), (nf,)]


def _infer_inputs(a, shapes):
    shapes = list(shapes)
    d = shapes[0]
    if d is not None and len(d) == 4:
        for i, want in enumerate(_expected(a, d)[:len(shapes)]):
            if shapes[i] is None:
                shapes[i] = want
    return shapes


def _infer(a, shapes, dtypes):
    d = tuple(shapes[0])
    if a["layout"] not in (None, "NCHW"):
        raise ValueError(f"{_NAME}: only layout NCHW is supported, got {a['layout']}")
    if len(d) != 4:
        raise ValueError(f"{_NAME}: data must be 4-D (batch, channel, height, width), got {d}")
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
    for name, s, w in zip(_inputs(a), shapes, _expected(a, d)):
        if tuple(s) != w:
            raise ValueError(f"{_NAME}: input {name} has shape {tuple(s)}, expected {w}")
    return [(d[0], nf, ho, wo)], [dtypes[0]]


def _sample(a, x, off, mask):
    """Columns (C, kh, kw, Ho, Wo) of one image (mask applied) and what the backward needs."""
    C, H, W = x.shape
    (kh, kw), (sh, sw), (dh, dw), (ph, pw) = _geom(a)
    G = a["num_deformable_group"]
    ho, wo = off.shape[1:]
    off = off.reshape(G, kh, kw, 2, ho, wo)
    mask = mask.reshape(G, 1, kh, kw, ho, wo)
    by = (np.arange(ho) * sh - ph)[None, :] + (np.arange(kh) * dh)[:, None]        # (kh, Ho)
    bx = (np.arange(wo) * sw - pw)[None, :] + (np.arange(kw) * dw)[:, None]        # (kw, Wo)
    y = by[None, :, None, :, None] + off[:, :, :, 0]                                # (G,kh,kw,Ho,Wo)
    xx = bx[None, None, :, None, :] + off[:, :, :, 1]
    valid = (y > -1) & (xx > -1) & (y < H) & (xx < W)
    y, xx = np.where(valid, y, 0), np.where(valid, xx, 0)
    yl, xl = np.floor(y).astype(np.int64), np.floor(xx).astype(np.int64)
    ly, lx = y - yl, xx - xl
    corners = [(yl, xl), (yl, xl + 1), (yl + 1, xl), (yl + 1, xl + 1)]
    inside = np.stack([valid & (cy >= 0) & (cy < H) & (cx >= 0) & (cx < W) for cy, cx in corners])
    pos = np.stack([np.clip(cy, 0, H - 1) * W + np.clip(cx, 0, W - 1) for cy, cx in corners])
    w = np.stack([(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx]) * inside
    cpg = C // G
    flat = x.reshape(G, cpg, H * W)
    # neighbour values (G, cpg, 4, kh, kw, Ho, Wo), 0 outside the image
    v = np.stack([flat[g][:, pos[:, g]] * inside[:, g] for g in range(G)])
    val = np.einsum("gcqijhw,qgijhw->gcijhw", v, w)
    cols = val * mask
    return cols.reshape(C, kh, kw, ho, wo), (pos, w, v, val, ly, lx, valid, inside, mask)


def _fwd(a, data, offset, mask, weight, *bias):
    N = data.shape[0]
    nf, g = a["num_filter"], a["num_group"]
    ho, wo = offset.shape[2:]
    out = np.zeros((N, nf, ho, wo), np.float64)
    wg = weight.astype(np.float64).reshape(g, nf // g, -1)
    for n in range(N):
        cols, _ = _sample(a, data[n].astype(np.float64), offset[n].astype(np.float64),
                          mask[n].astype(np.float64))
        out[n] = np.matmul(wg, cols.reshape(g, -1, ho * wo)).reshape(nf, ho, wo)
    if bias:
        out += bias[0].astype(np.float64)[None, :, None, None]
    return out.astype(data.dtype)


def _grad(F, a, inputs, outputs, out_grads):
    return list(F._backward_contrib_ModulatedDeformableConvolution(out_grads[0], *inputs, **a))


register(OpDef(_NAME, inputs=("data", "offset", "mask", "weight", "bias"), input_names=_inputs,
               params=_PARAMS, infer=_infer, infer_inputs=_infer_inputs,
               forward=host_forward(_NAME, _fwd), grad=_grad,
               doc="Modulated deformable convolution (DCNv2; 2-D, NCHW): kernel taps displaced "
                   "by `offset`, sampled bilinearly and scaled by `mask`."))


def _bwd(a, og, data, offset, mask, weight, *bias):
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
        cols, (pos, w, v, val, ly, lx, valid, inside, m) = _sample(
            a, data[n].astype(np.float64), offset[n].astype(np.float64),
            mask[n].astype(np.float64))
        o = og[n].astype(np.float64).reshape(g, nf // g, ho * wo)
        gw += np.matmul(o, cols.reshape(g, -1, ho * wo).transpose(0, 2, 1))
        dcol = np.matmul(wg.transpose(0, 2, 1), o).reshape(G, cpg, kh, kw, ho, wo)
        gmask[n] = (dcol * val).sum(axis=1)
        dval = dcol * m                                                        # (G,cpg,...)
        for gi in range(G):
            for q in range(4):
                contrib = dval[gi] * w[q, gi][None]
                where = np.broadcast_to(pos[q, gi][None], contrib.shape).reshape(cpg, -1)
                for c in range(cpg):
                    gdata[n, gi * cpg + c] += np.bincount(where[c], contrib[c].ravel(),
                                                          minlength=H * W)
            v1, v2, v3, v4 = (v[gi][:, q] for q in range(4))                  # (cpg, ...)
            dy = (1 - lx[gi]) * (v3 - v1) + lx[gi] * (v4 - v2)
            dx = (1 - ly[gi]) * (v2 - v1) + ly[gi] * (v4 - v3)
            goff[n, gi, :, :, 0] = np.where(valid[gi], (dval[gi] * dy).sum(axis=0), 0)
            goff[n, gi, :, :, 1] = np.where(valid[gi], (dval[gi] * dx).sum(axis=0), 0)
    res = [gdata.reshape(data.shape).astype(data.dtype),
           goff.reshape(offset.shape).astype(offset.dtype),
           gmask.reshape(mask.shape).astype(mask.dtype),
           gw.reshape(weight.shape).astype(weight.dtype)]
    if bias:
        res.append(og.astype(np.float64).sum(axis=(0, 2, 3)).astype(bias[0].dtype))
    return tuple(res)


register(OpDef("_backward_contrib_ModulatedDeformableConvolution",
               inputs=("out_grad", "data", "offset", "mask", "weight", "bias"),
               input_names=lambda a: ("out_grad",) + _inputs(a), params=_PARAMS,
               infer=lambda a, s, d: ([tuple(x) for x in s[1:]], list(d[1:])),
               num_outputs=lambda a: 4 if a["no_bias"] else 5,
               forward=host_forward("_backward_contrib_ModulatedDeformableConvolution", _bwd),
               doc="Gradients of ModulatedDeformableConvolution's data, offset, mask, weight "
                   "(and bias)."))
