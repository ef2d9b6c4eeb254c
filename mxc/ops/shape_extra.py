"""More shape operators: slice_like, Crop, Pad/pad (+ _backward_Pad), diag (+ _backward_diag),
space_to_depth, depth_to_space, shape_array, size_array, zeros_like, ones_like,
add_n/ElementWiseSum, reshape_like.

Kernels: mxc/ops/cpu/shape_extra.pyx (csrc/kernels/shape_extra.h) for pad, diag, add_n and the
shape arrays; zeros_like/ones_like use init's fill kernel; the rest are rearrangements built from
slice, reshape and transpose (their gradients come with them)."""
import numpy as np

from ..base import OperatorInputError
from .params import Param
from .registry import OpDef, register, kernel_forward
from .shape import _copy_forward, _reshape_grad


def _prod(shape):
    return int(np.prod(shape, dtype=np.int64))


# ---- slice_like / Crop ---------------------------------------------------------------------------
def _slice_like(F, a, data, like):
    ds, fs = data.shape, like.shape
    end = [None] * len(ds)
    if not a["axes"]:
        if len(fs) != len(ds):
            raise ValueError(f"slice_like: shape_like {fs} must have the {len(ds)} dimensions of "
                             f"data {ds} when axes is empty")
        axes = range(len(ds))
    else:
        axes = []
        for ax in a["axes"]:
            if not -len(ds) <= ax < len(ds) or ax % len(ds) >= len(fs):
                raise ValueError(f"slice_like: axis {ax} is out of range for data {ds} and "
                                 f"shape_like {fs}")
            axes.append(ax % len(ds))
    for ax in axes:
        if fs[ax] > ds[ax]:
            raise ValueError(f"slice_like: shape_like {fs} is larger than data {ds} on axis {ax}")
        end[ax] = fs[ax]
    return F.slice(data, begin=(0,) * len(ds), end=tuple(end))


register(OpDef("slice_like", inputs=("data", "shape_like"), params=(Param("axes", "shape", ()),),
               composite=_slice_like,
               doc="data sliced from the start to shape_like's size on `axes` (all by default)."))


def _crop(F, a, *xs):
    if a["num_args"] not in (1, 2) or len(xs) != a["num_args"]:
        raise ValueError(f"Crop: num_args must be 1 or 2 and match the inputs, got {a['num_args']} "
                         f"and {len(xs)} inputs")
    data = xs[0]
    if data.ndim != 4:
        raise ValueError(f"Crop: data must be 4-D (N, C, H, W), got shape {data.shape}")
    H, W = data.shape[2:]
    h, w = xs[1].shape[2:4] if len(xs) == 2 else a["h_w"]
    if len(xs) == 2 and xs[1].ndim < 4:
        raise ValueError(f"Crop: crop_like must be 4-D, got shape {xs[1].shape}")
    if a["center_crop"]:
        oy, ox = (H - h) // 2, (W - w) // 2
    else:
        oy, ox = a["offset"]
    if h < 0 or w < 0 or oy < 0 or ox < 0 or oy + h > H or ox + w > W:
        raise ValueError(f"Crop: a {h}x{w} crop at offset ({oy}, {ox}) does not fit {H}x{W}")
    return F.slice(data, begin=(None, None, oy, ox), end=(None, None, oy + h, ox + w))


register(OpDef("Crop", inputs=(), variadic="num_args",
               params=(Param("num_args", int, required=True), Param("offset", "shape", (0, 0)),
                       Param("h_w", "shape", (0, 0)), Param("center_crop", bool, False)),
               composite=_crop,
               doc="Legacy crop of the last two axes of (N, C, H, W) to h_w or to crop_like's size, "
                   "at `offset` or centred."))


# ---- Pad ---------------------------------------------------------------------------------------
_PAD_MODES = {"constant": 0, "edge": 1, "reflect": 2}


def _pad_check(a, shape):
    shape = tuple(shape)
    pw = tuple(a["pad_width"])
    nd = len(shape)
    if nd not in (4, 5):
        raise ValueError(f"Pad: only 4-D or 5-D input is supported (as MXNet), got shape {shape}")
    if len(pw) != 2 * nd:
        raise ValueError(f"Pad: pad_width must have {2 * nd} entries for a {nd}-D input, got {pw}")
    if any(pw[:4]):
        raise ValueError(f"Pad: padding of the first two axes must be zero, got {pw}")
    if any(p < 0 for p in pw):
        raise ValueError(f"Pad: pad_width must not be negative, got {pw}")
    if a["mode"] == "reflect":
        for d in range(2, nd):
            if pw[2 * d] >= shape[d] or pw[2 * d + 1] >= shape[d]:
                raise ValueError(f"Pad: reflect padding {pw} must be smaller than the input "
                                 f"{shape} on every axis")
    if a["mode"] == "edge" and any(shape[d] == 0 and (pw[2 * d] or pw[2 * d + 1]) for d in range(nd)):
        raise ValueError(f"Pad: cannot edge-pad an empty axis of {shape}")
    return tuple(s + pw[2 * d] + pw[2 * d + 1] for d, s in enumerate(shape))


def _pad_infer(a, s, d):
    return [_pad_check(a, s[0])], [d[0]]


def _pad_grad(F, a, i, o, g):
    return [F._backward_Pad(g[0], i[0], mode=a["mode"], pad_width=a["pad_width"])]


# pad's slots (csrc/kernels/shape_extra.h): the data's ndim, the mode, then (before, after)
# per axis
PAD_INTS = ("ndim", "mode", "pad_width*")


def _pad_fill(data_at):
    return {"ndim": lambda a, i, o: i[data_at].ndim, "mode": lambda a, i, o: _PAD_MODES[a["mode"]],
            "pad_width": lambda a, i, o: a["pad_width"]}


_PAD_PARAMS = (Param("mode", str, required=True, choices=tuple(_PAD_MODES)),
               Param("pad_width", "shape", required=True), Param("constant_value", float, 0.0))

register(OpDef("Pad", aliases=("pad",), params=_PAD_PARAMS, infer=_pad_infer,
               forward=kernel_forward("shape_extra", "pad", name="Pad", ints=PAD_INTS,
                                      floats=("constant_value",), fill=_pad_fill(0)),
               grad=_pad_grad,
               doc="Pad a 4-D/5-D array on its spatial axes with a constant, the edge values or "
                   "their reflection (numpy's modes)."))


def _bpad_infer(a, s, d):
    if tuple(s[0]) != _pad_check(a, s[1]):
        raise ValueError(f"_backward_Pad: gradient {tuple(s[0])} does not fit data {tuple(s[1])} "
                         f"padded by {a['pad_width']}")
    return [tuple(s[1])], [d[0]]


register(OpDef("_backward_Pad", inputs=("ograd", "data"), params=_PAD_PARAMS, infer=_bpad_infer,
               forward=kernel_forward("shape_extra", "pad_grad", name="_backward_Pad",
                                      ints=PAD_INTS, floats=(), fill=_pad_fill(1)),
               grad=lambda F, a, i, o, g: [F.Pad(g[0], mode=a["mode"], pad_width=a["pad_width"],
                                                 constant_value=0.0), F.zeros_like(i[1])],
               doc="Pad's gradient: each element of `ograd` added to the input element it came "
                   "from (`data` gives only the shape)."))


# ---- diag --------------------------------------------------------------------------------------
def _diag_plan(shape, a, op="diag"):
    """(mode, k, axis1, axis2, out_shape) for an input of `shape`: extract (0) or build (1)."""
    shape = tuple(shape)
    k = a["k"]
    if len(shape) == 0:
        raise ValueError(f"{op}: input must have at least one dimension")
    if len(shape) == 1:
        n = shape[0] + abs(k)
        return 1, k, 0, 1, (n, n)
    nd = len(shape)
    x1, x2 = a["axis1"], a["axis2"]
    for x in (x1, x2):
        if not -nd <= x < nd:
            raise ValueError(f"{op}: axis {x} is out of range for {nd} dimensions")
    x1, x2 = x1 % nd, x2 % nd
    if x1 == x2:
        raise ValueError(f"{op}: axis1 and axis2 cannot refer to the same axis {x1}")
    h, w = shape[x1], shape[x2]
    if k > 0:
        w -= k
    elif k < 0:
        h += k
    L = min(h, w)
    if L < 0:
        raise ValueError(f"{op}: diagonal {k} does not exist in shape {shape}")
    rest = tuple(s for j, s in enumerate(shape) if j not in (x1, x2))
    return 0, k, x1, x2, rest + (L,)


def _diag_infer(a, s, d):
    return [_diag_plan(s[0], a)[4]], [d[0]]


# diag's slots: mode (0 extract the diagonal, 1 place it), k, axis1, axis2
DIAG_INTS = ("mode", "k", "axis1", "axis2")


def _diag_view(a, i, o):
    return _diag_plan(i[0].shape, a)[:4]


def _diag_grad(F, a, i, o, g):
    return [F._backward_diag(g[0], i[0], k=a["k"], axis1=a["axis1"], axis2=a["axis2"])]


_DIAG_PARAMS = (Param("k", int, 0), Param("axis1", int, 0), Param("axis2", int, 1))

register(OpDef("diag", params=_DIAG_PARAMS, infer=_diag_infer,
               forward=kernel_forward("shape_extra", "diag", name="diag", ints=DIAG_INTS,
                                      floats=(), fill={DIAG_INTS: _diag_view}),
               grad=_diag_grad,
               doc="The k-th diagonal of the (axis1, axis2) planes, or a 2-D array with a 1-D "
                   "input on its k-th diagonal."))


def _bdiag_infer(a, s, d):
    want = _diag_plan(s[1], a, "_backward_diag")[4]
    if tuple(s[0]) != want:
        raise ValueError(f"_backward_diag: gradient {tuple(s[0])} does not fit {want}")
    return [tuple(s[1])], [d[0]]


def _bdiag_view(a, i, o):
    mode, k, x1, x2, _ = _diag_plan(i[1].shape, a, "_backward_diag")
    return 1 - mode, k, x1, x2


register(OpDef("_backward_diag", inputs=("ograd", "data"), params=_DIAG_PARAMS, infer=_bdiag_infer,
               forward=kernel_forward("shape_extra", "diag", name="_backward_diag",
                                      fill={DIAG_INTS: _bdiag_view}),
               grad=lambda F, a, i, o, g: [F.diag(g[0], k=a["k"], axis1=a["axis1"], axis2=a["axis2"]),
                                           F.zeros_like(i[1])],
               doc="diag's gradient: the inverse placement of `ograd` into data's shape."))


# ---- space_to_depth / depth_to_space -------------------------------------------------------------
# (composites: bad shapes raise OperatorInputError, an MXNetError and a ValueError, as MXNet
#  raises MXNetError)
def _block(op, a, x):
    b = a["block_size"]
    if b < 1:
        raise OperatorInputError(f"{op}: block_size must be >= 1, got {b}")
    if x.ndim != 4:
        raise OperatorInputError(f"{op}: data must be 4-D (N, C, H, W), got shape {x.shape}")
    if 0 in tuple(x.shape):
        raise OperatorInputError(f"{op}: no dimension of the data may be 0, got shape {x.shape}")
    return b


def _space_to_depth(F, a, x):
    b = _block("space_to_depth", a, x)
    N, C, H, W = x.shape
    if H % b or W % b:
        raise OperatorInputError(f"space_to_depth: H and W of {x.shape} must be multiples of {b}")
    y = F.transpose(x.reshape((N, C, H // b, b, W // b, b)), axes=(0, 3, 5, 1, 2, 4))
    return y.reshape((N, C * b * b, H // b, W // b))


def _depth_to_space(F, a, x):
    b = _block("depth_to_space", a, x)
    N, C, H, W = x.shape
    if C % (b * b):
        raise OperatorInputError(f"depth_to_space: C of {x.shape} must be a multiple of {b * b}")
    y = F.transpose(x.reshape((N, b, b, C // (b * b), H, W)), axes=(0, 3, 4, 1, 5, 2))
    return y.reshape((N, C // (b * b), H * b, W * b))


register(OpDef("space_to_depth", params=(Param("block_size", int, required=True),),
               composite=_space_to_depth,
               doc="Move b x b spatial blocks of (N, C, H, W) into channels."))
register(OpDef("depth_to_space", params=(Param("block_size", int, required=True),),
               composite=_depth_to_space,
               doc="Move channel blocks of (N, C, H, W) into b x b spatial blocks."))


# ---- shape_array / size_array / zeros_like / ones_like -------------------------------------------
_zero_grad = (lambda F, a, i, o, g: [F.zeros_like(i[0])])

register(OpDef("shape_array", infer=lambda a, s, d: ([(len(s[0]),)], [np.dtype(np.int64)]),
               infer_dtypes=lambda a, d: [np.dtype(np.int64)],
               forward=kernel_forward("shape_extra", "shape_array", name="shape_array", ints=(),
                                      floats=()),
               grad=_zero_grad, doc="The shape of the input as a 1-D int64 array."))
register(OpDef("size_array", infer=lambda a, s, d: ([(1,)], [np.dtype(np.int64)]),
               infer_dtypes=lambda a, d: [np.dtype(np.int64)],
               forward=kernel_forward("shape_extra", "size_array", name="size_array", ints=(),
                                      floats=()),
               grad=_zero_grad, doc="The size of the input as a 1-element int64 array."))


def _fill_like(value, name):
    fill = kernel_forward("init", "fill", key=lambda a, i, o: o[0]._dcode,
                          fill={"value": lambda a, i, o: value}, name=name)

    def forward(a, inputs, outputs):
        fill(a, [], outputs)       # the values do not depend on the input's
    return forward


# dtype= is accepted and written to symbol files, and the result keeps the input's dtype: that is
# what MXNet 1.9.1 does with it (GluonCV's CenterNet decoder passes it)
for _name, _value in (("zeros_like", 0.0), ("ones_like", 1.0)):
    register(OpDef(_name, params=(Param("dtype", "dtype", None, doc="ignored, as in MXNet"),),
                   infer=lambda a, s, d: ([tuple(s[0])], [d[0]]),
                   forward=_fill_like(_value, _name), grad=_zero_grad,
                   doc=f"An array of {_name[:-5]} with the input's shape and dtype."))


# ---- add_n -------------------------------------------------------------------------------------
def _add_n_infer(a, s, d):
    if not s or len(s) != a["num_args"]:
        raise ValueError(f"add_n: num_args {a['num_args']} must equal the {len(s)} inputs (>= 1)")
    for k, (shp, dt) in enumerate(zip(s, d)):
        if tuple(shp) != tuple(s[0]) or dt != d[0]:
            raise ValueError(f"add_n: input {k} has shape {tuple(shp)} and dtype {np.dtype(dt).name}, "
                             f"expected {tuple(s[0])} and {np.dtype(d[0]).name}")
    return [tuple(s[0])], [d[0]]


register(OpDef("add_n", aliases=("ElementWiseSum",), inputs=(), variadic="num_args",
               params=(Param("num_args", int, required=True),), infer=_add_n_infer,
               forward=kernel_forward("shape_extra", "add_n", name="add_n", ints=(), floats=()),
               grad=lambda F, a, i, o, g: [g[0] for _ in i],
               doc="The element-wise sum of all inputs, in one pass."))


# ---- reshape_like ------------------------------------------------------------------------------
def _range(v, nd, default, op, name):
    if v is None:
        return default
    if not -nd <= v <= nd:
        raise ValueError(f"{op}: {name} {v} is out of range for {nd} dimensions")
    return v % nd if v < 0 else v


def _reshape_like_infer(a, s, d):
    lhs, rhs = tuple(s[0]), tuple(s[1])
    lb = _range(a["lhs_begin"], len(lhs), 0, "reshape_like", "lhs_begin")
    le = _range(a["lhs_end"], len(lhs), len(lhs), "reshape_like", "lhs_end")
    rb = _range(a["rhs_begin"], len(rhs), 0, "reshape_like", "rhs_begin")
    re = _range(a["rhs_end"], len(rhs), len(rhs), "reshape_like", "rhs_end")
    out = lhs[:lb] + rhs[rb:re] + lhs[le:]
    if _prod(out) != _prod(lhs):
        raise ValueError(f"reshape_like: cannot reshape {lhs} into {out} (from rhs {rhs})")
    return [out], [d[0]]


def _reshape_like_forward():
    fwd = _copy_forward("reshape_like")

    def forward(a, inputs, outputs):
        fwd(a, inputs[:1], outputs)
    return forward


register(OpDef("reshape_like", inputs=("lhs", "rhs"),
               params=tuple(Param(n, int, None, optional=True)
                            for n in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")),
               infer=_reshape_like_infer, forward=_reshape_like_forward(),
               grad=lambda F, a, i, o, g: [_reshape_grad(F, a, i, o, g)[0], F.zeros_like(i[1])],
               inplace=((0, 0),),
               doc="lhs reshaped so that lhs[lhs_begin:lhs_end] takes the shape rhs[rhs_begin:rhs_end]."))
