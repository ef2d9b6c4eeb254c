"""Assorted MXNet 1.9.1 operators built from other operators: hard_sigmoid, _split_v2 (split_v2),
batch_take, amp_cast, amp_multicast and the SVMOutput loss layer.

All are composites (no kernel of their own). hard_sigmoid and SVMOutput give their own gradient
with MXNet's exact masks; SVMOutput's gradient ignores the head gradient as MXNet's loss layers do.
"""
import numpy as np

from . import services
from .params import Param
from .registry import OpDef, register
from .shape import empty_along
from .softmax import softmax_label_shape


def _f32(v):
    return float(np.float32(v))


# ---- hard_sigmoid ----------------------------------------------------------------------------
def _hs_composite(F, a, x):
    return F.clip(x * _f32(a["alpha"]) + _f32(a["beta"]), 0.0, 1.0)


def _hs_grad(F, a, inputs, outputs, out_grads):
    x = inputs[0]
    y = x * _f32(a["alpha"]) + _f32(a["beta"])
    mask = (y > 0) * (y < 1)
    return [out_grads[0] * mask * _f32(a["alpha"])]


register(OpDef("hard_sigmoid", params=(Param("alpha", float, 0.2), Param("beta", float, 0.5)),
               composite=_hs_composite, grad=_hs_grad,
               doc="max(0, min(1, alpha * x + beta)); gradient alpha where 0 < alpha x + beta < 1."))


# ---- _split_v2 / split_v2 --------------------------------------------------------------------
def _split_bounds(name, a, n_axis):
    if a["sections"] > 0:
        s = a["sections"]
        small, extra = n_axis // s, n_axis % s
        idx = [0]
        for i in range(s):
            idx.append(idx[-1] + small + (1 if i < extra else 0))
        starts = idx[:-1]
    else:
        starts = list(a["indices"])
        if not starts:
            raise ValueError(f"{name}: give indices or sections > 0")
    bounds = []
    for i, st in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else n_axis
        if n_axis == 0:
            end = st
        elif not 0 <= st <= end <= n_axis:
            raise ValueError(f"{name}: part {i} [{st}, {end}) does not fit axis of size {n_axis}")
        if a["squeeze_axis"] and end - st != 1:
            raise ValueError(f"{name}: squeeze_axis needs parts of size 1, part {i} has {end - st}")
        bounds.append((st, end))
    return bounds


def _split_v2_n(a):
    return a["sections"] if a["sections"] > 0 else len(a["indices"])


def _split_v2_composite(F, a, x):
    nd = x.ndim
    if not -nd <= a["axis"] < nd:
        raise ValueError(f"_split_v2: axis {a['axis']} out of range for {nd}-d input")
    ax = a["axis"] % nd
    outs = []
    for st, end in _split_bounds("_split_v2", a, x.shape[ax]):
        p = F.slice_axis(x, axis=ax, begin=st, end=end) if end > st else empty_along(F, x, ax)
        if a["squeeze_axis"]:
            p = p.reshape(x.shape[:ax] + x.shape[ax + 1:]) if nd > 1 else p
        outs.append(p)
    return outs[0] if len(outs) == 1 else outs


_SPLIT_V2_PARAMS = (Param("indices", "shape", required=True), Param("axis", int, 1),
                    Param("squeeze_axis", bool, False), Param("sections", int, 0))
register(OpDef("_split_v2", aliases=("_npi_split",), params=_SPLIT_V2_PARAMS,
               composite=_split_v2_composite, num_outputs=_split_v2_n,
               doc="Split along `axis` at `indices` (starts of the parts) or into `sections` "
                   "nearly equal parts."))


def _isos(a):
    v = a["indices_or_sections"]
    if isinstance(v, str):
        v = v.strip()
        if v.startswith("(") or v.startswith("["):
            import ast
            return tuple(int(t) for t in ast.literal_eval(v))
        return int(v)
    if isinstance(v, (list, tuple)):
        return tuple(int(t) for t in v)
    return int(v)


def _split_v2_public_n(a):
    v = _isos(a)
    return v if isinstance(v, int) else len(v) + 1


def _split_v2_public(F, a, x):
    v = _isos(a)
    ax = a["axis"] % x.ndim
    if isinstance(v, int):
        if v <= 0 or x.shape[ax] % v:
            raise ValueError("split_v2: array split does not result in an equal division")
        size = x.shape[ax] // v
        idx = tuple(i * size for i in range(v))
    else:
        idx = (0,) + v
    return _split_v2_composite(F, {"indices": idx, "axis": a["axis"],
                                   "squeeze_axis": a["squeeze_axis"], "sections": 0}, x)


register(OpDef("split_v2", params=(Param("indices_or_sections", str, required=True),
                                   Param("axis", int, 0), Param("squeeze_axis", bool, False)),
               composite=_split_v2_public, num_outputs=_split_v2_public_n,
               doc="numpy.split: an int (equal sections) or a tuple of split points."))


# ---- batch_take ------------------------------------------------------------------------------
def _batch_take(F, a, data, idx):
    if data.ndim < 2:
        raise ValueError("batch_take: data must have at least 2 dimensions")
    m = data.shape[-1]
    if data.size // m != idx.size:
        raise ValueError(f"batch_take: index size {idx.size} differs from the data's size "
                         f"excluding the last dimension ({data.size // m})")
    out = F.pick(data.reshape((-1, m)), idx.reshape((-1,)), axis=-1, mode="clip")
    return out.reshape(idx.shape)


register(OpDef("batch_take", inputs=("a", "indices"), composite=_batch_take, differentiable=False,
               doc="out[i] = a[i, indices[i]] (indices clipped to the last axis)."))


# ---- amp_cast / amp_multicast ------------------------------------------------------------------
_AMP_FLOATS = ("float16", "float32", "bfloat16")


def _amp_cast(F, a, x):
    src = np.dtype(x.dtype).name
    dst = a["dtype"] if src in _AMP_FLOATS else src
    return F.cast(x, dtype=dst)


register(OpDef("amp_cast", params=(Param("dtype", "dtype", required=True),), composite=_amp_cast,
               doc="Cast between float16/bfloat16 and float32 for AMP; other dtypes pass unchanged."))


def _amp_multicast(F, a, *xs):
    if len(xs) != a["num_outputs"]:
        raise ValueError(f"amp_multicast: num_outputs={a['num_outputs']} but {len(xs)} inputs")
    names = [np.dtype(x.dtype).name for x in xs]
    if a["cast_narrow"]:
        # MXNet's AMPMultiCastType: the last low-precision input's dtype, else float32
        target = next((n for n in reversed(names) if n in ("float16", "bfloat16")), "float32")
    else:
        target = "float32" if "float32" in names else names[0]
    outs = [F.cast(x, dtype=target if n in _AMP_FLOATS else n) for x, n in zip(xs, names)]
    return outs[0] if len(outs) == 1 else outs


register(OpDef("amp_multicast", inputs=(), variadic="num_outputs",
               params=(Param("num_outputs", int, required=True), Param("cast_narrow", bool, False)),
               composite=_amp_multicast, num_outputs=lambda a: a["num_outputs"],
               doc="Cast float16/bfloat16/float32 inputs to the widest (or, cast_narrow, narrowest) "
                   "of them."))


# ---- SVMOutput -------------------------------------------------------------------------------
def _svm_composite(F, a, data, label):
    if data.ndim < 1 or label.size != data.shape[0]:
        raise ValueError(f"SVMOutput: label shape {label.shape} does not fit data {data.shape} "
                         f"(one label per row needed)")
    return F.cast(data, dtype=np.dtype(data.dtype).name)


def _svm_grad(F, a, inputs, outputs, out_grads):
    data, label = inputs
    out = outputs[0]
    n = out.shape[0]
    m = out.size // n if n else 1
    o2 = out.reshape((n, m))
    dt = np.dtype(out.dtype).name
    oh = F.one_hot(F.cast(label.reshape((-1,)), dtype="int64"), depth=m, dtype=dt)
    margin, reg = _f32(a["margin"]), _f32(a["regularization_coefficient"])
    if a["use_linear"]:
        gk = (o2 < margin) * (-reg)
        go = (o2 > -margin) * reg
    else:
        gk = ((o2 * -1.0 + margin) * (o2 < margin)) * (-2.0 * reg)
        go = ((o2 + margin) * (o2 > -margin)) * (2.0 * reg)
    g = oh * gk + (oh * -1.0 + 1.0) * go
    return [g.reshape(data.shape), F.zeros_like(label)]


register(OpDef("SVMOutput", inputs=("data", "label"),
               params=(Param("margin", float, 1.0), Param("regularization_coefficient", float, 1.0),
                       Param("use_linear", bool, False)),
               composite=_svm_composite, grad=_svm_grad, infer_inputs=softmax_label_shape,
               doc="Support vector machine output layer: identity forward; the gradient is the "
                   "L2- (or, use_linear, L1-) SVM hinge gradient, whatever the head gradient."))


# ---- moments ---------------------------------------------------------------------------------
def _moments(F, a, x):
    axes = a["axes"]
    if axes is not None:
        for ax in axes:
            if not -x.ndim <= ax < x.ndim:
                raise ValueError(f"moments: axis {ax} out of range for {x.ndim}-d input")
    kw = {} if axes is None else {"axis": tuple(axes)}
    mean = F.mean(x, keepdims=True, **kw)
    var = F.mean(F.square(F.broadcast_sub(x, mean)), keepdims=a["keepdims"], **kw)
    if not a["keepdims"]:
        mean = F.mean(x, keepdims=False, **kw)
    return [mean, var]


register(OpDef("moments", params=(Param("axes", "shape", None, optional=True),
                                  Param("keepdims", bool, False)),
               composite=_moments, num_outputs=2,
               doc="Mean and (biased) variance of data over `axes` (all axes when None)."))


# ---- all_finite / multi_all_finite -----------------------------------------------------------
# AMP's overflow check. The output (1,) float32 is set to 1 when init_output, and cleared to 0
# when an element of an input is not finite (checked as float32): with init_output=False the
# flag accumulates over calls, as MXNet's loss scaler uses it (one flag, chunks of arrays). On a
# GPU, one kernel per array (mxc/ops/cuda/reduce.cu mxc_all_finite); on the CPU, mx.nd's
# elementwise operators and a min.
def _finite_flag(F, x):
    if np.dtype(x.dtype).kind != "f":
        return F.ones((1,), ctx=x.context, dtype="float32")
    y = F.cast(x, dtype="float32")            # MXNet checks the value as float32
    ok = F.cast((y - y) == 0, dtype="float32")  # inf - inf and nan give nan
    return F.min(ok).reshape((1,)) if x.size else F.ones((1,), ctx=x.context, dtype="float32")


def _finite_infer(name):
    def infer(attrs, shapes, dtypes):
        if name == "multi_all_finite" and len(shapes) != attrs["num_arrays"]:
            raise ValueError(f"multi_all_finite: num_arrays={attrs['num_arrays']} but "
                             f"{len(shapes)} inputs")
        return [(1,)], [np.dtype(np.float32)]
    return infer


def _finite_forward(name):
    def forward(a, inputs, outputs):
        out = outputs[0]
        if out._ctx.device_typeid == 2:
            from . import _gpu
            return _gpu.forward(name, a, inputs, outputs, family="reduce", kernel="all_finite",
                                iattr=(int(bool(a["init_output"])),), fattr=())
        nd = services.ndarray
        ok = nd.ones((1,), ctx=out.context, dtype="float32")
        for x in inputs:
            ok = ok * _finite_flag(nd, x)
        if not a["init_output"]:
            ok = ok * out                     # only ever cleared: the flag so far counts
        ok.copyto(out)
    return forward


register(OpDef("all_finite", params=(Param("init_output", bool, True),),
               infer=_finite_infer("all_finite"), forward=_finite_forward("all_finite"),
               differentiable=False,
               grad=lambda F, a, i, o, g: [F.zeros_like(i[0])],
               doc="[1.0] when every element is finite (checked as float32), else [0.0]."))
register(OpDef("multi_all_finite", inputs=(), variadic="num_arrays", differentiable=False,
               params=(Param("num_arrays", int, 1), Param("init_output", bool, True)),
               infer=_finite_infer("multi_all_finite"), forward=_finite_forward("multi_all_finite"),
               grad=lambda F, a, i, o, g: [F.zeros_like(x) for x in i],
               doc="[1.0] when every element of every input is finite, else [0.0]."))


# ---- contrib: div_sqrt_dim, quadratic, index_array ---------------------------------------------
def _div_sqrt_dim(F, a, x):
    if x.ndim < 1:
        raise ValueError("_contrib_div_sqrt_dim: data must have at least one dimension")
    return x * float(1.0 / np.sqrt(x.shape[-1]))


register(OpDef("_contrib_div_sqrt_dim", composite=_div_sqrt_dim,
               doc="data / sqrt(data.shape[-1])."))


def _quadratic(F, a, x):
    return x * x * _f32(a["a"]) + x * _f32(a["b"]) + _f32(a["c"])


register(OpDef("_contrib_quadratic", params=(Param("a", float, 0.0), Param("b", float, 0.0),
                                             Param("c", float, 0.0)),
               composite=_quadratic, doc="a * x^2 + b * x + c elementwise."))


def _index_array(F, a, x):
    nd = x.ndim
    axes = tuple(range(nd)) if a["axes"] is None else tuple(a["axes"])
    for ax in axes:
        if not -nd <= ax < nd:
            raise ValueError(f"_contrib_index_array: axis {ax} out of range for {nd}-d input")
    grids = np.indices(x.shape, dtype=np.int64) if nd else np.zeros((0,), np.int64)
    out = np.stack([grids[ax % nd] for ax in axes], axis=-1) if axes else \
        np.zeros(x.shape + (0,), np.int64)
    return F.array(out, ctx=x.context, dtype="int64")


register(OpDef("_contrib_index_array", params=(Param("axes", "shape", None, optional=True),),
               composite=_index_array,
               grad=lambda F, a, i, o, g: [F.zeros_like(i[0])],
               doc="For each element of data, its index along `axes` (all axes when None), "
                   "as int64 of shape data.shape + (len(axes),)."))
