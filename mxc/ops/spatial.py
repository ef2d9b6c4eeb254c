"""Spatial operators of MXNet 1.9.1: ROIPooling, Correlation, BilinearSampler, GridGenerator and
SpatialTransformer (GridGenerator(affine) followed by BilinearSampler, as MXNet computes it).

Kernels: mxc/ops/cpu/spatial.pyx (csrc/kernels/spatial.h); GridGenerator is built from dot and
broadcast operators. float16 (computed in float32), float32 and float64.
"""
import numpy as np

from .params import Param
from .registry import OpDef, register, kernel_forward


def _fdtype(op, dtype):
    d = np.dtype(dtype)
    if d not in (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"{op}: only float16, float32 and float64 are supported, got {d.name}")
    return d


def _same_dtype(op, dtypes):
    d = _fdtype(op, dtypes[0])
    for x in dtypes[1:]:
        if np.dtype(x) != d:
            raise ValueError(f"{op}: inputs differ in dtype ({d.name}, {np.dtype(x).name})")
    return d


def _nd4(op, what, s):
    s = tuple(s)
    if len(s) != 4:
        raise ValueError(f"{op}: {what} must be 4-D (batch, channel, height, width), got {s}")
    return s


# ---- ROIPooling ------------------------------------------------------------------------------
def _roi_infer(a, s, d):
    ds = _nd4("ROIPooling", "data", s[0])
    rs = tuple(s[1])
    if len(rs) != 2 or rs[1] != 5:
        raise ValueError(f"ROIPooling: rois must have shape (num_rois, 5), got {rs}")
    ps = a["pooled_size"]
    if len(ps) != 2 or min(ps) <= 0:
        raise ValueError(f"ROIPooling: pooled_size must be two positive ints, got {ps}")
    if not 0.0 <= a["spatial_scale"] <= 1.0:
        raise ValueError(f"ROIPooling: spatial_scale must be in [0, 1], got {a['spatial_scale']}")
    dt = _same_dtype("ROIPooling", d)
    out = (rs[0], ds[1], ps[0], ps[1])
    return [out, out], [dt, np.dtype(np.int64)]


def _roi_grad(F, a, inputs, outputs, out_grads):
    data, rois = inputs
    return [F._backward_ROIPooling(out_grads[0], outputs[1], data), F.zeros_like(rois)]


def _roi_bwd_infer(a, s, d):
    return [tuple(s[2])], [_fdtype("_backward_ROIPooling", d[0])]


_roi_bwd_kernel = kernel_forward("spatial", "roipool_bwd", name="_backward_ROIPooling", ints=(),
                                 floats=())

register(OpDef("ROIPooling", inputs=("data", "rois"),
               params=(Param("pooled_size", "shape", required=True),
                       Param("spatial_scale", float, required=True)),
               infer=_roi_infer, num_outputs=2, num_visible_outputs=1,
               forward=kernel_forward("spatial", "roipool", ints=(), floats=("spatial_scale",),
                                      name="ROIPooling"),
               grad=_roi_grad,
               doc="Max pooling of each region of interest (batch_index, x1, y1, x2, y2) scaled by "
                   "spatial_scale into pooled_size bins."))
register(OpDef("_backward_ROIPooling", inputs=("ograd", "argmax", "data"), infer=_roi_bwd_infer,
               forward=lambda a, i, o: _roi_bwd_kernel(a, i[:2], o),
               doc="Gradient of ROIPooling with respect to data (scatter to the argmax)."))


# ---- BilinearSampler -------------------------------------------------------------------------
def _bs_infer(a, s, d):
    ds = _nd4("BilinearSampler", "data", s[0])
    gs = _nd4("BilinearSampler", "grid", s[1])
    if gs[0] != ds[0] or gs[1] != 2:
        raise ValueError(f"BilinearSampler: grid must have shape (batch, 2, h, w) with the data's "
                         f"batch {ds[0]}, got {gs}")
    return [(ds[0], ds[1], gs[2], gs[3])], [_same_dtype("BilinearSampler", d)]


def _bs_grad(F, a, inputs, outputs, out_grads):
    gd, gg = F._backward_BilinearSampler(out_grads[0], inputs[0], inputs[1])
    return [gd, gg]


def _bs_bwd_infer(a, s, d):
    return [tuple(s[1]), tuple(s[2])], [_fdtype("_backward_BilinearSampler", d[0])] * 2


register(OpDef("BilinearSampler", inputs=("data", "grid"),
               params=(Param("cudnn_off", bool, None, optional=True),),
               infer=_bs_infer,
               forward=kernel_forward("spatial", "bilinear", name="BilinearSampler", ints=(),
                                      floats=()),
               grad=_bs_grad,
               doc="Sample data at grid (x, y in [-1, 1]) with bilinear interpolation; points "
                   "outside the input read zero."))
register(OpDef("_backward_BilinearSampler", inputs=("ograd", "data", "grid"),
               infer=_bs_bwd_infer, num_outputs=2,
               forward=kernel_forward("spatial", "bilinear_bwd", name="_backward_BilinearSampler",
                                      ints=(), floats=()),
               doc="Gradients of BilinearSampler with respect to data and grid."))


# ---- GridGenerator ---------------------------------------------------------------------------
def _affine_dst(dt, h, w):
    t = np.dtype(dt).type
    idx = np.arange(h * w)
    sx, sy = t(2.0 / (w - 1)) if w > 1 else t(np.inf), t(2.0 / (h - 1)) if h > 1 else t(np.inf)
    g = np.empty((3, h * w), dtype=dt)
    g[0] = t(-1.0) + (idx % w).astype(dt) * sx
    g[1] = t(-1.0) + (idx // w).astype(dt) * sy
    g[2] = 1
    return g


def _grid_generator(F, a, data):
    op = "GridGenerator"
    dt = _fdtype(op, data.dtype)
    if a["transform_type"] == "affine":
        if data.ndim != 2 or data.shape[1] != 6:
            raise ValueError(f"{op}: affine transform needs data of shape (batch, 6), got "
                             f"{data.shape}")
        h, w = a["target_shape"]
        if h <= 0 or w <= 0:
            raise ValueError(f"{op}: affine transform needs a positive target_shape, got "
                             f"{a['target_shape']}")
        dst = F.array(_affine_dst(dt, h, w), ctx=data.context, dtype=dt)
        n = data.shape[0]
        return F.dot(data.reshape((n * 2, 3)), dst).reshape((n, 2, h, w))
    if data.ndim != 4 or data.shape[1] != 2:
        raise ValueError(f"{op}: warp transform needs data of shape (batch, 2, h, w), got "
                         f"{data.shape}")
    n, _, h, w = data.shape
    t = np.dtype(dt).type
    dst = np.stack([np.tile(np.arange(w, dtype=dt), (h, 1)),
                    np.repeat(np.arange(h, dtype=dt)[:, None], w, axis=1)])[None]
    scale = np.array([(t(w) - t(1.0)) / t(2.0), (t(h) - t(1.0)) / t(2.0)], dtype=dt)
    out = F.broadcast_add(data, F.array(dst, ctx=data.context, dtype=dt))
    out = F.broadcast_div(out, F.array(scale.reshape(1, 2, 1, 1), ctx=data.context, dtype=dt))
    return out - 1.0


register(OpDef("GridGenerator",
               params=(Param("transform_type", str, required=True, choices=("affine", "warp")),
                       Param("target_shape", "shape", (0, 0))),
               composite=_grid_generator,
               doc="Sampling grid for BilinearSampler from an affine matrix (batch, 6) and "
                   "target_shape, or from an optical flow (batch, 2, h, w)."))


# ---- SpatialTransformer ----------------------------------------------------------------------
def _spatial_transformer(F, a, data, loc):
    if data.ndim != 4:
        raise ValueError(f"SpatialTransformer: data must be 4-D, got {data.shape}")
    if loc.ndim != 2 or loc.shape != (data.shape[0], 6):
        raise ValueError(f"SpatialTransformer: loc must have shape ({data.shape[0]}, 6), got "
                         f"{loc.shape}")
    grid = F.GridGenerator(loc, transform_type="affine", target_shape=a["target_shape"])
    return F.BilinearSampler(data, grid)


register(OpDef("SpatialTransformer", inputs=("data", "loc"),
               params=(Param("target_shape", "shape", (0, 0)),
                       Param("transform_type", str, required=True, choices=("affine",)),
                       Param("sampler_type", str, required=True, choices=("bilinear",)),
                       Param("cudnn_off", bool, None, optional=True)),
               composite=_spatial_transformer,
               doc="Affine spatial transformer: bilinear sampling of data on the grid of loc."))


# ---- Correlation -----------------------------------------------------------------------------
_CORR_PARAMS = (Param("kernel_size", int, 1), Param("max_displacement", int, 1),
                Param("stride1", int, 1), Param("stride2", int, 1), Param("pad_size", int, 0),
                Param("is_multiply", bool, True))


def _corr_geometry(a, s):
    op = "Correlation"
    s1 = _nd4(op, "data1", s[0])
    s2 = _nd4(op, "data2", s[1])
    if s1 != s2:
        raise ValueError(f"{op}: data1 {s1} and data2 {s2} differ in shape")
    k, md, st1, st2, p = (a["kernel_size"], a["max_displacement"], a["stride1"], a["stride2"],
                          a["pad_size"])
    if k < 1 or k % 2 == 0:
        raise ValueError(f"{op}: kernel_size must be a positive odd number, got {k}")
    if st1 < 1 or st2 < 1 or md < 0 or p < 0:
        raise ValueError(f"{op}: strides must be positive and max_displacement, pad_size >= 0")
    ph, pw = s1[2] + 2 * p, s1[3] + 2 * p
    border = md + (k - 1) // 2
    th = int(np.ceil(np.float32(ph - 2 * border) / np.float32(st1)))
    tw = int(np.ceil(np.float32(pw - 2 * border) / np.float32(st1)))
    grid = 2 * (md // st2) + 1
    if th < 1 or tw < 1:
        raise ValueError(f"{op}: neighborhood and kernel don't fit in the input {s1}")
    return (s1[0], grid * grid, th, tw)


def _corr_infer(a, s, d):
    return [_corr_geometry(a, s)], [_same_dtype("Correlation", d)]


# Correlation's slots (csrc/kernels/spatial.h), its parameters
CORR_INTS = ("kernel_size", "max_displacement", "stride1", "stride2", "pad_size", "is_multiply")
_CORR_FILL = {"is_multiply": lambda a, i, o: int(a["is_multiply"])}


def _corr_grad(F, a, inputs, outputs, out_grads):
    g1, g2 = F._backward_Correlation(out_grads[0], inputs[0], inputs[1], **{
        k: a[k] for k in ("kernel_size", "max_displacement", "stride1", "stride2", "pad_size",
                          "is_multiply")})
    return [g1, g2]


def _corr_bwd_infer(a, s, d):
    return [tuple(s[1]), tuple(s[2])], [_fdtype("_backward_Correlation", d[0])] * 2


register(OpDef("Correlation", inputs=("data1", "data2"), params=_CORR_PARAMS, infer=_corr_infer,
               forward=kernel_forward("spatial", "corr", ints=CORR_INTS, floats=(), fill=_CORR_FILL,
                                      name="Correlation"),
               grad=_corr_grad,
               doc="Correlation of two feature maps (FlowNet): mean over a kernel_size window "
                   "and channels of products (or absolute differences) at each displacement."))
register(OpDef("_backward_Correlation", inputs=("ograd", "data1", "data2"), params=_CORR_PARAMS,
               infer=_corr_bwd_infer, num_outputs=2,
               forward=kernel_forward("spatial", "corr_bwd", key=lambda a, i, o: i[1]._dcode,
                                      ints=CORR_INTS, floats=(), fill=_CORR_FILL,
                                      name="_backward_Correlation"),
               doc="Gradients of Correlation with respect to data1 and data2."))
