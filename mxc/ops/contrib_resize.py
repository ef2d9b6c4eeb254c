"""Spatial resizing from MXNet 1.9.1's contrib: ``_contrib_AdaptiveAvgPooling2D`` and
``_contrib_BilinearResize2D`` (``mx.nd.contrib.AdaptiveAvgPooling2D`` / ``BilinearResize2D``), on
NCHW data, with their backward operators ``_backward_contrib_<name>``.

Both run numpy on the host (``_host``). Adaptive average pooling averages, for output cell
(oh, ow), the input rows floor(oh*H/OH) .. ceil((oh+1)*H/OH) (columns alike). Bilinear resizing
follows MXNet: with ``align_corners`` the source coordinate is dst * (in-1)/(out-1), otherwise
(dst + 0.5) * in/out - 0.5 clamped at 0; an output of size 1 samples index 0; equal sizes copy.
"""
import numpy as np

from ._host import host_forward
from .params import Param
from .registry import OpDef, register

_REAL = ("float16", "float32", "float64")


def _check4(name, shape, dtype):
    if len(shape) != 4:
        raise ValueError(f"{name}: data must be 4-D (batch, channel, height, width), got shape "
                         f"{tuple(shape)}")
    if np.dtype(dtype).name not in _REAL:
        raise ValueError(f"{name}: data type {np.dtype(dtype).name} is not supported "
                         f"(float16/32/64)")


# ---- AdaptiveAvgPooling2D -------------------------------------------------------------------------
def _adaptive_size(a):
    s = a["output_size"]
    if len(s) == 1:
        return s[0], s[0]
    if len(s) == 2:
        return s[0], s[1]
    return 1, 1


def _adaptive_infer(a, shapes, dtypes):
    name = "_contrib_AdaptiveAvgPooling2D"
    _check4(name, shapes[0], dtypes[0])
    oh, ow = _adaptive_size(a)
    if oh < 1 or ow < 1:
        raise ValueError(f"{name}: output_size must be positive, got {a['output_size']}")
    n, c = shapes[0][:2]
    return [(n, c, oh, ow)], [dtypes[0]]


def _bins(isz, osz):
    o = np.arange(osz, dtype=np.int64)
    start = np.floor(o * isz / osz).astype(np.int64)
    end = np.ceil((o + 1) * isz / osz).astype(np.int64)
    return start, end


def _adaptive_matrix(isz, osz, dtype):
    """(osz, isz) averaging weights along one axis."""
    start, end = _bins(isz, osz)
    m = np.zeros((osz, isz), np.float64)
    for o in range(osz):
        m[o, start[o]:end[o]] = 1.0 / (end[o] - start[o])
    return m


def _adaptive_fwd(a, x):
    oh, ow = _adaptive_size(a)
    mh = _adaptive_matrix(x.shape[2], oh, x.dtype)
    mw = _adaptive_matrix(x.shape[3], ow, x.dtype)
    y = np.einsum("ph,nchw,qw->ncpq", mh, x.astype(np.float64), mw, optimize=True)
    return y.astype(x.dtype)


def _adaptive_grad(F, a, inputs, outputs, out_grads):
    return [F._backward_contrib_AdaptiveAvgPooling2D(out_grads[0], inputs[0], **a)]


register(OpDef("_contrib_AdaptiveAvgPooling2D",
               params=(Param("output_size", "shape", ()),),
               infer=_adaptive_infer,
               forward=host_forward("_contrib_AdaptiveAvgPooling2D", _adaptive_fwd),
               grad=_adaptive_grad,
               doc="Average pooling of NCHW data to a fixed output size (int or (h, w))."))


def _adaptive_binfer(a, shapes, dtypes):
    return [tuple(shapes[1])], [dtypes[1]]


def _adaptive_bwd(a, og, x):
    mh = _adaptive_matrix(x.shape[2], og.shape[2], x.dtype)
    mw = _adaptive_matrix(x.shape[3], og.shape[3], x.dtype)
    g = np.einsum("ph,ncpq,qw->nchw", mh, og.astype(np.float64), mw, optimize=True)
    return g.astype(x.dtype)


register(OpDef("_backward_contrib_AdaptiveAvgPooling2D", inputs=("out_grad", "data"),
               params=(Param("output_size", "shape", ()),), infer=_adaptive_binfer,
               forward=host_forward("_backward_contrib_AdaptiveAvgPooling2D", _adaptive_bwd),
               doc="Gradient of AdaptiveAvgPooling2D's data (inputs: out_grad, data)."))


# ---- BilinearResize2D ---------------------------------------------------------------------------
_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up")
_BR_PARAMS = (Param("height", int, 1), Param("width", int, 1),
              Param("scale_height", float, None, optional=True),
              Param("scale_width", float, None, optional=True),
              Param("mode", str, "size", choices=_MODES),
              Param("align_corners", bool, True))



def _resize_shape(name, a, d, like=None):
    h, w = d[2], d[3]
    mode = a["mode"]
    if mode == "size":
        if a["scale_height"] is not None:
            nh = int(a["scale_height"] * h)
            sw = a["scale_width"] if a["scale_width"] is not None else a["scale_height"]
            nw = int(sw * w)
        else:
            nh, nw = a["height"], a["width"]
    elif mode == "odd_scale":
        if a["scale_height"] is None or a["scale_width"] is None:
            raise ValueError(f"{name}: mode 'odd_scale' needs scale_height and scale_width")
        nh = int(h * a["scale_height"]) if h % 2 == 0 else int((h - 1) * a["scale_height"]) + 1
        nw = int(w * a["scale_width"]) if w % 2 == 0 else int((w - 1) * a["scale_width"]) + 1
    elif mode == "like":
        if like is None or len(like) != 4:
            raise ValueError(f"{name}: mode 'like' needs a 4-D second input `like`")
        nh, nw = like[2], like[3]
    elif mode == "to_even_down":
        nh, nw = (h if h % 2 == 0 else h - 1), (w if w % 2 == 0 else w - 1)
    elif mode == "to_even_up":
        nh, nw = (h if h % 2 == 0 else h + 1), (w if w % 2 == 0 else w + 1)
    elif mode == "to_odd_down":
        nh, nw = (h if h % 2 == 1 else h - 1), (w if w % 2 == 1 else w - 1)
    else:
        nh, nw = (h if h % 2 == 1 else h + 1), (w if w % 2 == 1 else w + 1)
    if nh < 1 or nw < 1:
        raise ValueError(f"{name}: output size ({nh}, {nw}) is not positive (input {tuple(d)}, "
                         f"mode {mode!r})")
    return (d[0], d[1], int(nh), int(nw))


def _br_inputs(a):
    return ("data", "like") if a["mode"] == "like" else ("data",)


def _br_infer(a, shapes, dtypes):
    name = "_contrib_BilinearResize2D"
    _check4(name, shapes[0], dtypes[0])
    like = tuple(shapes[1]) if len(shapes) > 1 else None
    return [_resize_shape(name, a, tuple(shapes[0]), like)], [dtypes[0]]


def _axis_weights(isz, osz, align):
    """Source index, neighbour offset and weight of the second neighbour along one axis."""
    if osz > 1:
        scale = np.float32((isz - 1) / (osz - 1)) if align else np.float32(isz / osz)
    else:
        scale = np.float32(0.0)
    dst = np.arange(osz, dtype=np.float32)
    if align:
        src = scale * dst
    else:
        src = scale * (dst + np.float32(0.5)) - np.float32(0.5)
        src = np.where(src < 0, np.float32(0.0), src)
    i0 = src.astype(np.int64)
    lam = (src - i0).astype(np.float32)
    step = (i0 < isz - 1).astype(np.int64)
    return i0, i0 + step, lam


def _br_fwd(a, x, *like):
    oh, ow = _resize_shape("_contrib_BilinearResize2D", a, x.shape,
                           like[0].shape if like else None)[2:]
    if (oh, ow) == x.shape[2:]:
        return x.copy()
    h0, h1, lh = _axis_weights(x.shape[2], oh, a["align_corners"])
    w0, w1, lw = _axis_weights(x.shape[3], ow, a["align_corners"])
    dt = x.dtype
    lh = lh.astype(dt)[:, None]
    lw = lw.astype(dt)[None, :]
    one = dt.type(1)
    r0, r1 = x[:, :, h0, :], x[:, :, h1, :]
    top = (one - lw) * r0[..., w0] + lw * r0[..., w1]
    bot = (one - lw) * r1[..., w0] + lw * r1[..., w1]
    return ((one - lh) * top + lh * bot).astype(dt)


def _br_grad(F, a, inputs, outputs, out_grads):
    g = F._backward_contrib_BilinearResize2D(out_grads[0], *inputs, **a)
    g = [g] if not isinstance(g, (list, tuple)) else list(g)
    return g


register(OpDef("_contrib_BilinearResize2D", inputs=("data", "like"), input_names=_br_inputs,
               params=_BR_PARAMS, infer=_br_infer,
               forward=host_forward("_contrib_BilinearResize2D", _br_fwd), grad=_br_grad,
               doc="Bilinear resizing of NCHW data to (height, width), a scale, the size of "
                   "`like`, or the nearest even/odd size."))


def _br_binfer(a, shapes, dtypes):
    return [tuple(s) for s in shapes[1:]], list(dtypes[1:])


def _br_bwd(a, og, x, *like):
    oh, ow = og.shape[2:]
    extra = tuple(np.zeros_like(l) for l in like)
    if (oh, ow) == x.shape[2:]:
        return (og.astype(x.dtype),) + extra
    h0, h1, lh = _axis_weights(x.shape[2], oh, a["align_corners"])
    w0, w1, lw = _axis_weights(x.shape[3], ow, a["align_corners"])
    # separable adjoint: columns first, then rows
    lw64, lh64 = lw.astype(np.float64), lh.astype(np.float64)
    ogd = og.astype(np.float64)
    mw = np.zeros((ow, x.shape[3]))
    np.add.at(mw, (np.arange(ow), w0), 1.0 - lw64)
    np.add.at(mw, (np.arange(ow), w1), lw64)
    mh = np.zeros((oh, x.shape[2]))
    np.add.at(mh, (np.arange(oh), h0), 1.0 - lh64)
    np.add.at(mh, (np.arange(oh), h1), lh64)
    g = np.einsum("ph,ncpq,qw->nchw", mh, ogd, mw, optimize=True)
    return (g.astype(x.dtype),) + extra


register(OpDef("_backward_contrib_BilinearResize2D", inputs=("out_grad", "data", "like"),
               input_names=lambda a: ("out_grad",) + _br_inputs(a), params=_BR_PARAMS,
               infer=_br_binfer, num_outputs=lambda a: 2 if a["mode"] == "like" else 1,
               forward=host_forward("_backward_contrib_BilinearResize2D", _br_bwd),
               doc="Gradient of BilinearResize2D (inputs: out_grad, data[, like])."))
