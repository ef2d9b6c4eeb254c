"""The softmax family: softmax (with MXNet's length masking), log_softmax, softmin,
SoftmaxActivation, SoftmaxOutput (alias Softmax), as MXNet 1.9.1, and their backward operators.

Kernels: mxc/ops/cpu/softmax.pyx ("softmax", "softmax_bwd", "softmax_output_bwd"); every
variant is one kernel over an (outer, M, inner) view of the data, M the normalised axis.
"""
import numpy as np

from ..base import MXNetError, OperatorInputError
from .dot import FLOATS
from . import services
from .params import Param
from .registry import OpDef, register, kernel_forward, get

_INTS = (np.dtype(np.int32), np.dtype(np.int64))


def check_float(op, dtype, what="data"):
    if np.dtype(dtype) not in FLOATS:
        raise ValueError(f"{op}: {what} must be float16, float32 or float64, got {np.dtype(dtype).name}")


def no_second_order(name):
    """grad of a backward operator: not supported (MXNet has none for these either)."""
    def grad(F, attrs, inputs, outputs, out_grads):
        raise MXNetError(f"{name}: the gradient of a backward operator is not supported")
    return grad


def split3(shape, axis):
    """(outer, M, inner) of `shape` around `axis`."""
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    return outer, int(shape[axis]), inner


def _norm_axis(op, axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op}: axis {axis} is out of range for an array of {ndim} dimensions")
    return axis % ndim


# ---- softmax / log_softmax / softmin ---------------------------------------------------------
_SOFTMAX_PARAMS = (Param("axis", int, -1), Param("temperature", float, None, optional=True),
                   Param("dtype", str, None, optional=True,
                         choices=("float16", "float32", "float64")),
                   Param("use_length", bool, False))
_PUBLIC = ("axis", "temperature", "dtype", "use_length")
_KIND = {"softmax": (0, 0), "log_softmax": (1, 0), "softmin": (0, 1)}


def length_shape(shape, axis):
    """Shape of the length input: the data's shape without `axis` ((1,) for 1-D data)."""
    s = tuple(d for i, d in enumerate(shape) if i != axis)
    return s if s else (1,)


def _softmax_infer(name):
    def infer(attrs, shapes, dtypes):
        if not shapes[0]:
            raise ValueError(f"{name}: data must have at least one dimension")
        check_float(name, dtypes[0])
        axis = _norm_axis(name, attrs["axis"], len(shapes[0]))
        if attrs["use_length"]:
            if name != "softmax":
                raise ValueError(f"{name}: use_length is only supported by softmax")
            if len(shapes) < 2:
                raise ValueError(f"{name}: use_length=True needs the length input")
            want = length_shape(shapes[0], axis)
            if tuple(shapes[1]) != want:
                raise ValueError(f"{name}: length has shape {tuple(shapes[1])}, expected {want} "
                                 f"(the data's shape without axis {axis})")
            # the length's dtype is checked when the operator runs (MXNet's type inference
            # accepts any; its kernel takes integers only)
        elif len(shapes) > 1:
            raise ValueError(f"{name}: a length input needs use_length=True")
        out = np.dtype(attrs["dtype"]) if attrs["dtype"] else np.dtype(dtypes[0])
        return [tuple(shapes[0])], [out]
    return infer


# the softmax kernels' slots (csrc/kernels/softmax.h): the data viewed as (outer, n, inner)
# over the normalised axis, log_softmax, softmin (negated temperature), a length input
SOFTMAX_INTS = ("outer", "n", "inner", "log", "negate", "use_length")


def _temperature(a, i, o):
    t = a["temperature"]
    return 1.0 if t is None else float(t)


def _softmax_fill(name, data):
    """fill= of softmax/softmax_bwd for operator `name` (softmax, log_softmax, softmin), whose
    data has the shape of data(inputs, outputs)."""
    logm, neg = _KIND[name]
    return {("outer", "n", "inner"): lambda a, i, o: split3(data(i, o).shape,
                                                            a["axis"] % data(i, o).ndim),
            "log": lambda a, i, o: logm, "negate": lambda a, i, o: neg,
            "use_length": lambda a, i, o: 1 if a["use_length"] else 0,
            "temperature": _temperature}


def _zero(a, i, o):
    return 0


def _fixed_view(view):
    """fill= of a plain softmax over view(attrs, inputs, outputs) = (outer, n, inner)."""
    return {("outer", "n", "inner"): view, "log": _zero, "negate": _zero, "use_length": _zero,
            "temperature": lambda a, i, o: 1.0}


def _softmax_forward(name):
    push = kernel_forward("softmax", "softmax", key=lambda a, i, o: (i[0]._dcode, o[0]._dcode),
                          ints=SOFTMAX_INTS, floats=("temperature",),
                          fill=_softmax_fill(name, lambda i, o: i[0]), name=name)

    def forward(attrs, inputs, outputs):
        if attrs.get("use_length") and len(inputs) > 1 and np.dtype(inputs[1].dtype) not in _INTS:
            raise OperatorInputError(f"{name}: length must be int32 or int64, got "
                             f"{np.dtype(inputs[1].dtype).name}")
        push(attrs, inputs, outputs)
    return forward


def _softmax_grad(name):
    bname = "_backward_" + name

    def grad(F, attrs, inputs, outputs, out_grads):
        full = list(inputs)
        kw = {k: attrs[k] for k in _PUBLIC}
        if attrs["dtype"] or attrs["use_length"]:
            args = [out_grads[0], full[0]] + full[1:2] + [outputs[0]]
        else:
            args = [out_grads[0], outputs[0]]
        gx = getattr(F, bname)(*args, **kw)
        res = [gx]
        if len(inputs) > 1:
            res.append(F.zeros_like(inputs[1]))
        return res
    return grad


def _backward_infer(name):
    def infer(attrs, shapes, dtypes):
        n = 2 + (1 if attrs["dtype"] or attrs["use_length"] else 0) + (1 if attrs["use_length"] else 0)
        if len(shapes) != n:
            raise ValueError(f"{name}: expected {n} inputs, got {len(shapes)}")
        if tuple(shapes[0]) != tuple(shapes[-1]):
            raise ValueError(f"{name}: head gradient {tuple(shapes[0])} and output "
                             f"{tuple(shapes[-1])} differ")
        if np.dtype(dtypes[0]) != np.dtype(dtypes[-1]):
            raise ValueError(f"{name}: head gradient dtype {np.dtype(dtypes[0]).name} differs "
                             f"from the output's {np.dtype(dtypes[-1]).name}")
        check_float(name, dtypes[-1], "output")
        gdt = dtypes[1] if n > 2 else dtypes[-1]
        check_float(name, gdt)
        return [tuple(shapes[-1])], [np.dtype(gdt)]
    return infer


def _backward_forward(name):
    fwd = name[len("_backward_"):]
    push = kernel_forward("softmax", "softmax_bwd",
                          key=lambda a, i, o: (i[1]._dcode, o[0]._dcode),
                          ints=SOFTMAX_INTS, floats=("temperature",),
                          fill=_softmax_fill(fwd, lambda i, o: o[0]), name=name)

    def forward(attrs, inputs, outputs):
        g, y = inputs[0], inputs[-1]
        ins = [g, y] + ([inputs[2]] if attrs["use_length"] else [])
        push(attrs, ins, outputs)
    return forward


for _name in ("softmax", "log_softmax", "softmin"):
    _doc = {"softmax": "exp(x) / sum(exp(x)) along `axis`; with use_length only the first "
                       "length[i] entries of each row take part (the rest are 0).",
            "log_softmax": "log(softmax(x)) along `axis`.",
            "softmin": "softmax(-x) along `axis`."}[_name]
    if _name == "softmax":
        register(OpDef(_name, inputs=("data", "length"), params=_SOFTMAX_PARAMS,
                                 input_names=lambda a: ("data", "length") if a["use_length"]
                                 else ("data",),
                                 infer=_softmax_infer(_name), forward=_softmax_forward(_name),
                                 grad=_softmax_grad(_name), doc=_doc))
    else:
        register(OpDef(_name, params=_SOFTMAX_PARAMS, infer=_softmax_infer(_name),
                       forward=_softmax_forward(_name), grad=_softmax_grad(_name), doc=_doc))
    _bname = "_backward_" + _name
    register(OpDef(_bname, inputs=(), variadic="num_args",
                   params=(Param("num_args", int, 2),) + _SOFTMAX_PARAMS,
                   infer=_backward_infer(_bname), forward=_backward_forward(_bname),
                   grad=no_second_order(_bname),
                   doc=f"Gradient of {_name}: inputs (ograd, output) or, with dtype or "
                       f"use_length, (ograd, data[, length], output)."))


# ---- SoftmaxActivation -------------------------------------------------------------------------
def _sa_infer(attrs, shapes, dtypes):
    check_float("SoftmaxActivation", dtypes[0])
    if not shapes[0]:
        raise ValueError("SoftmaxActivation: data must have at least one dimension")
    if attrs["mode"] == "channel" and len(shapes[0]) < 3:
        raise ValueError(f"SoftmaxActivation: mode='channel' needs at least 3 dimensions, "
                         f"got shape {tuple(shapes[0])}")
    return [tuple(shapes[0])], [np.dtype(dtypes[0])]


def _sa_view(mode, shape):
    if mode == "channel":
        return split3(shape, 1)
    return int(np.prod(shape[:-1], dtype=np.int64)), int(shape[-1]), 1


def _sa_bwd_view(shape):
    """MXNet's backward always normalises over axis 1 of (n, c, rest) whatever the mode."""
    if len(shape) == 1:
        return 1, int(shape[0]), 1
    return split3(shape, 1)


register(OpDef("SoftmaxActivation",
               params=(Param("mode", str, "instance", choices=("instance", "channel")),),
               infer=_sa_infer,
               forward=kernel_forward("softmax", "softmax",
                                      key=lambda a, i, o: (i[0]._dcode, o[0]._dcode),
                                      fill=_fixed_view(
                                          lambda a, i, o: _sa_view(a["mode"], i[0].shape)),
                                      name="SoftmaxActivation"),
               grad=lambda F, a, i, o, g: [F._backward_SoftmaxActivation(g[0], o[0], **a)],
               doc="Softmax over the last axis of each instance (mode='instance') or over "
                   "axis 1 at each position (mode='channel'); deprecated in MXNet for softmax."))


def _sab_infer(attrs, shapes, dtypes):
    if tuple(shapes[0]) != tuple(shapes[1]):
        raise ValueError(f"_backward_SoftmaxActivation: shapes {tuple(shapes[0])} and "
                         f"{tuple(shapes[1])} differ")
    check_float("_backward_SoftmaxActivation", dtypes[1], "output")
    return [tuple(shapes[1])], [np.dtype(dtypes[1])]


register(OpDef("_backward_SoftmaxActivation", inputs=("ograd", "output"),
               params=(Param("mode", str, "instance", choices=("instance", "channel")),),
               infer=_sab_infer,
               forward=kernel_forward("softmax", "softmax_bwd",
                                      key=lambda a, i, o: (i[1]._dcode, o[0]._dcode),
                                      fill=_fixed_view(lambda a, i, o: _sa_bwd_view(o[0].shape)),
                                      name="_backward_SoftmaxActivation"),
               grad=no_second_order("_backward_SoftmaxActivation"),
               doc="Gradient of SoftmaxActivation (over axis 1, as MXNet's)."))


# ---- SoftmaxOutput -----------------------------------------------------------------------------
_SO_PARAMS = (Param("grad_scale", float, 1.0), Param("ignore_label", float, -1.0),
              Param("multi_output", bool, False), Param("use_ignore", bool, False),
              Param("preserve_shape", bool, False),
              Param("normalization", str, "null", choices=("null", "batch", "valid")),
              Param("out_grad", bool, False), Param("smooth_alpha", float, 0.0))


def _so_check(name, attrs, shapes, dtypes):
    d, lab = tuple(shapes[0]), tuple(shapes[1])
    if not d:
        raise ValueError(f"{name}: data must have at least one dimension")
    check_float(name, dtypes[0])
    if np.dtype(dtypes[1]) != np.dtype(dtypes[0]):
        raise ValueError(f"{name}: label dtype {np.dtype(dtypes[1]).name} differs from the "
                         f"data's {np.dtype(dtypes[0]).name}")
    if not 0.0 <= attrs["smooth_alpha"] <= 1.0:
        raise ValueError(f"{name}: smooth_alpha must be in [0, 1], got {attrs['smooth_alpha']}")
    if lab == d:
        return
    if attrs["multi_output"]:
        if len(d) < 2:
            raise ValueError(f"{name}: multi_output needs at least 2-D data, got {d}")
        n, k = d[0], d[1]
        ok = [(n, int(np.prod(d, dtype=np.int64)) // max(n * k, 1)), (n,) + d[2:],
              d[:1] + (1,) + d[2:]]
        if lab not in ok:
            raise ValueError(f"{name}: label shape {lab} does not fit data {d} with "
                             f"multi_output (expected {ok[0]} or {ok[1]})")
    elif lab != d[:-1]:
        raise ValueError(f"{name}: label shape {lab} does not fit data {d} (expected {d[:-1]})")


def _so_infer(attrs, shapes, dtypes):
    _so_check("SoftmaxOutput", attrs, shapes, dtypes)
    return [tuple(shapes[0])], [np.dtype(dtypes[0])]


def _so_view(attrs, shape):
    """(outer, M, inner) of SoftmaxOutput's softmax."""
    if attrs["multi_output"]:
        return split3(shape, 1) if len(shape) > 1 else (1, int(shape[0]), 1)
    if attrs["preserve_shape"]:
        return int(np.prod(shape[:-1], dtype=np.int64)), int(shape[-1]), 1
    n = int(shape[0])
    return n, int(np.prod(shape[1:], dtype=np.int64)), 1


def _so_grad(F, attrs, inputs, outputs, out_grads):
    data, label = inputs
    kw = {p.name: attrs[p.name] for p in _SO_PARAMS}
    return [F._backward_SoftmaxOutput(outputs[0], label, **kw), F.zeros_like(label)]


def softmax_label_shape(attrs, in_shapes):
    """The label shape SoftmaxOutput infers from data: (n, d2, ...) with multi_output, else the
    data's shape without its last axis (also SVMOutput's rule)."""
    d = in_shapes[0]
    if d is None:
        return list(in_shapes)
    lab = (d[0],) + tuple(d[2:]) if attrs.get("multi_output") else tuple(d[:-1])
    return [d, lab] + list(in_shapes[2:])


register(OpDef("SoftmaxOutput", aliases=("Softmax",), inputs=("data", "label"),
               params=_SO_PARAMS, infer=_so_infer, infer_inputs=softmax_label_shape,
               forward=kernel_forward("softmax", "softmax",
                                      key=lambda a, i, o: (i[0]._dcode, o[0]._dcode),
                                      fill=_fixed_view(lambda a, i, o: _so_view(a, i[0].shape)),
                                      name="SoftmaxOutput"),
               grad=_so_grad,
               doc="Softmax in the forward pass; in the backward pass the gradient of the cross "
                   "entropy with `label` ((p - onehot(label)) * grad_scale, with MXNet's "
                   "ignore_label, normalization and smooth_alpha), whatever the head gradient."))


def _sob_infer(attrs, shapes, dtypes):
    _so_check("_backward_SoftmaxOutput", attrs, shapes, dtypes)
    return [tuple(shapes[0])], [np.dtype(dtypes[0])]


_NORM = {"null": 0, "batch": 1, "valid": 2}
# its slots (csrc/kernels/softmax.h): the output as (n, K, inner), the flags, the labels' count;
# ignore_label, smooth_alpha, grad_scale (the operator's parameters of those names)
_SO_BWD_INTS = ("n", "K", "inner", "use_ignore", "smooth", "normalization", "out_grad",
                "multi_output", "nlabel")
_so_bwd_kernel = kernel_forward(
    "softmax", "softmax_output_bwd", ints=_SO_BWD_INTS,
    floats=("ignore_label", "smooth_alpha", "grad_scale"),
    fill={_SO_BWD_INTS: lambda a, i, o: a["_view"]}, name="_backward_SoftmaxOutput")


def _sob_forward(attrs, inputs, outputs):
    y, label = inputs
    if tuple(label.shape) == tuple(y.shape):
        # probability labels: (y - label) * grad_scale, times y when out_grad (MXNet 1.9.1)
        run = services.run
        d = run(get("elemwise_sub"), [y, label], get("elemwise_sub").parse({}))
        d = run(get("_mul_scalar"), [d], get("_mul_scalar").parse({"scalar": attrs["grad_scale"]}))
        if attrs["out_grad"]:
            d = run(get("elemwise_mul"), [d, y], get("elemwise_mul").parse({}))
        run(get("_copyto"), [d], {}, out=outputs[0])
        return
    n, k, inner = _so_view(attrs, y.shape)
    nlab = label.size if not attrs["multi_output"] else n * inner
    smooth = 1 if attrs["smooth_alpha"] != 0.0 and not attrs["multi_output"] else 0
    ia = (n, k, inner, int(attrs["use_ignore"]), smooth, _NORM[attrs["normalization"]],
          int(attrs["out_grad"]), int(attrs["multi_output"]), nlab)
    _so_bwd_kernel(dict(attrs, _view=ia), [y, label], outputs)


register(OpDef("_backward_SoftmaxOutput", inputs=("output", "label"), params=_SO_PARAMS,
               infer=_sob_infer, forward=_sob_forward,
               grad=no_second_order("_backward_SoftmaxOutput"),
               doc="SoftmaxOutput's gradient with respect to data, from its output and label."))
