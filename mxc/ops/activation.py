"""Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU (leaky, prelu, rrelu, elu,
selu, gelu), as MXNet 1.9.1, with their backward operators.

Kernels: relu/sigmoid/tanh/softsign forward are the elementwise kernels (mxc/ops/cpu/elemwise);
softrelu, every backward and LeakyReLU are in mxc/ops/cpu/activation.pyx. Gradients follow MXNet's
formulas, including its selu derivative (see csrc/kernels/activation.h).
"""
import numpy as np

from ..base import MXNetError
from . import services
from .params import Param
from .registry import OpDef, register, kernel_forward, is_training, get
from .softmax import check_float, no_second_order

_ACT_TYPES = ("relu", "sigmoid", "tanh", "softrelu", "softsign")
_FWD = {t: kernel_forward("elemwise", "unary:" + t, name="Activation")
        for t in ("relu", "sigmoid", "tanh", "softsign")}
_FWD["softrelu"] = kernel_forward("activation", "fwd:softrelu", name="Activation", ints=(),
                                  floats=())


def folded_relu(forward):
    """`forward` of an operator whose CPU kernel also applies a ReLU folded into it where
    attrs["_relu"] is set (Convolution, BatchNorm in inference graphs: mxc/executor/fold.py),
    as the relu operator does it (nan stays nan). The GPU kernels do not fold it: there the
    ReLU runs after the forward, in place."""
    relu = _FWD["relu"]

    def wrapped(attrs, inputs, outputs):
        forward(attrs, inputs, outputs)
        if attrs.get("_relu") and outputs[0]._ctx.device_typeid == 2:
            relu(attrs, [outputs[0]], [outputs[0]])
    return wrapped


def _float_unary_infer(name):
    def infer(attrs, shapes, dtypes):
        check_float(name, dtypes[0])
        return [tuple(shapes[0])], [np.dtype(dtypes[0])]
    return infer


def _act_forward(attrs, inputs, outputs):
    _FWD[attrs["act_type"]](attrs, inputs, outputs)


def _act_grad(F, attrs, inputs, outputs, out_grads):
    t = inputs[0] if attrs["act_type"] == "softsign" else outputs[0]
    return [F._backward_Activation(out_grads[0], t, act_type=attrs["act_type"])]


_ACT_PARAM = Param("act_type", str, required=True, choices=_ACT_TYPES)
register(OpDef("Activation", params=(_ACT_PARAM,), infer=_float_unary_infer("Activation"),
               forward=_act_forward, grad=_act_grad,
               doc="Elementwise activation: relu, sigmoid, tanh, softrelu (log(1 + exp(x))) or "
                   "softsign (x / (1 + |x|))."))


def _act_bwd_infer(attrs, shapes, dtypes):
    if tuple(shapes[0]) != tuple(shapes[1]) or np.dtype(dtypes[0]) != np.dtype(dtypes[1]):
        raise ValueError(f"_backward_Activation: head gradient {tuple(shapes[0])} "
                         f"{np.dtype(dtypes[0]).name} and {tuple(shapes[1])} "
                         f"{np.dtype(dtypes[1]).name} differ")
    check_float("_backward_Activation", dtypes[0])
    return [tuple(shapes[0])], [np.dtype(dtypes[0])]


_BWD = {t: kernel_forward("activation", "bwd:" + t, name="_backward_Activation", ints=(),
                         floats=()) for t in _ACT_TYPES}
register(OpDef("_backward_Activation", inputs=("ograd", "data"), params=(_ACT_PARAM,),
               infer=_act_bwd_infer,
               forward=lambda a, i, o: _BWD[a["act_type"]](a, i, o),
               grad=no_second_order("_backward_Activation"),
               doc="Gradient of Activation from the head gradient and the output (the input "
                   "for softsign)."))


# ---- LeakyReLU -------------------------------------------------------------------------------
_LEAKY_PARAMS = (Param("act_type", str, "leaky",
                       choices=("rrelu", "leaky", "prelu", "elu", "selu", "gelu")),
                 Param("slope", float, 0.25), Param("lower_bound", float, 0.125),
                 Param("upper_bound", float, 0.334))


def gamma_view(shape, gshape):
    """(d0, d1, rest, g0, g1): data as (d0, d1, rest), gamma aligned on data axes 0 and 1 as
    MXNet's expand_shape does; ValueError when gamma does not fit."""
    ndim = len(shape)
    res = [1] * ndim
    s = len(gshape) - 1
    for i in range(ndim - 1, -1, -1):
        if s >= 0 and i <= 1 and (shape[i] == gshape[s] or gshape[s] == 1):
            res[i] = gshape[s]
            s -= 1
    if s != -1:
        raise ValueError(f"LeakyReLU: cannot broadcast gamma of shape {tuple(gshape)} to data of "
                         f"shape {tuple(shape)} (gamma covers axes 0 and 1)")
    d0 = shape[0]
    d1 = shape[1] if ndim > 1 else 1
    rest = int(np.prod(shape[2:], dtype=np.int64)) if ndim > 2 else 1
    return d0, d1, rest, res[0], (res[1] if ndim > 1 else 1)


def _leaky_infer(attrs, shapes, dtypes):
    if not shapes[0]:
        raise ValueError("LeakyReLU: data must have at least one dimension")
    check_float("LeakyReLU", dtypes[0])
    prelu = attrs["act_type"] == "prelu"
    if prelu:
        if len(shapes) < 2:
            raise ValueError("LeakyReLU: act_type='prelu' needs the gamma input")
        if np.dtype(dtypes[1]) != np.dtype(dtypes[0]):
            raise ValueError(f"LeakyReLU: gamma dtype {np.dtype(dtypes[1]).name} differs from the "
                             f"data's {np.dtype(dtypes[0]).name}")
        gamma_view(shapes[0], shapes[1])
    elif len(shapes) > 1:
        raise ValueError(f"LeakyReLU: act_type={attrs['act_type']!r} takes no gamma input")
    n = 2 if attrs["act_type"] == "rrelu" else 1
    return [tuple(shapes[0])] * n, [np.dtype(dtypes[0])] * n


def _leaky_infer_inputs(attrs, shapes):
    shapes = list(shapes)
    if attrs["act_type"] == "prelu" and len(shapes) > 1 and shapes[1] is None \
            and shapes[0] is not None and len(shapes[0]) > 1:
        shapes[1] = (shapes[0][1],)
    return shapes


# LeakyReLU's kernel slots (csrc/kernels/activation.h): leaky and elu read the slope; prelu
# the view of data (d0, d1, rest) and gamma (g0, g1) (gamma_view); the others none
_PRELU_VIEW = ("d0", "d1", "rest", "g0", "g1")


def _prelu_view(a, i, o):
    return a["_view"]


def _k(name):
    t = name.split(":")[1]
    if t in ("xelu", "elu"):
        return kernel_forward("activation", name, name="LeakyReLU", floats=("slope",))
    if t == "prelu":
        return kernel_forward("activation", name, name="LeakyReLU", ints=_PRELU_VIEW,
                              fill={_PRELU_VIEW: _prelu_view})
    return kernel_forward("activation", name, name="LeakyReLU", ints=(), floats=())


_LK = {n: _k(n) for n in ("fwd:xelu", "fwd:xelu_arr", "fwd:elu", "fwd:selu", "fwd:gelu",
                          "fwd:prelu")}
_FILL = kernel_forward("init", "fill", key=lambda a, i, o: o[0]._dcode,
                       fill={"value": lambda a, i, o: a["_v"]}, name="LeakyReLU")


def _leaky_forward(attrs, inputs, outputs):
    t = attrs["act_type"]
    x = inputs[0]
    if t == "leaky":
        _LK["fwd:xelu"](attrs, [x], outputs)
    elif t == "elu":
        _LK["fwd:elu"](attrs, [x], outputs)
    elif t in ("selu", "gelu"):
        _LK["fwd:" + t](attrs, [x], outputs)
    elif t == "prelu":
        _LK["fwd:prelu"](dict(attrs, _view=gamma_view(x.shape, inputs[1].shape)),
                         inputs[:2], outputs)
    else:   # rrelu: (out, mask)
        out, mask = outputs
        lo, hi = attrs["lower_bound"], attrs["upper_bound"]
        if is_training():
            try:
                rop = get("_random_uniform")
            except MXNetError:
                raise MXNetError("LeakyReLU: rrelu in training needs the _random_uniform "
                                 "operator") from None
            services.run(rop, [], rop.parse({"low": lo, "high": hi, "shape": mask.shape,
                                    "dtype": np.dtype(mask._dtype).name}), out=mask)
            _LK["fwd:xelu_arr"](attrs, [x, mask], [out])
        else:
            # inference: the fixed slope (lower + upper) / 2 (computed in float32 as MXNet);
            # the mask output holds that slope (MXNet leaves it unwritten)
            s = float(np.float32(np.float32(lo) + np.float32(hi)) / np.float32(2.0))
            _LK["fwd:xelu"](dict(attrs, slope=s), [x], [out])
            _FILL(dict(attrs, _v=s), [], [mask])


def _leaky_grad(F, attrs, inputs, outputs, out_grads):
    full = list(inputs)
    t = attrs["act_type"]
    kw = {p.name: attrs[p.name] for p in _LEAKY_PARAMS}
    g = out_grads[0]
    if t == "prelu":
        dx, dg = F._backward_LeakyReLU(g, full[0], full[1], **kw)
        return [dx, dg] if len(inputs) > 1 else [dx]
    if t == "gelu":
        return [F._backward_LeakyReLU(g, full[0], **kw)]
    if t == "rrelu":
        return [F._backward_LeakyReLU(g, outputs[0], outputs[1], **kw)]
    return [F._backward_LeakyReLU(g, outputs[0], **kw)]


register(OpDef("LeakyReLU", inputs=("data", "gamma"), params=_LEAKY_PARAMS, infer=_leaky_infer,
                         input_init={1: '["Constant", {"value": 0.25}]'},
                         input_names=lambda a: ("data", "gamma") if a["act_type"] == "prelu"
                         else ("data",),
                         forward=_leaky_forward, grad=_leaky_grad,
                         num_outputs=lambda a: 2 if a["act_type"] == "rrelu" else 1,
                         infer_inputs=_leaky_infer_inputs, resources=("random",),
                         doc="Leaky ReLU family: leaky (x > 0 ? x : slope x), prelu (learnt "
                             "slope gamma, broadcast over axis 1), rrelu (random slope in "
                             "[lower_bound, upper_bound) in training, their mean otherwise; "
                             "returns (out, mask)), elu, selu, gelu."))


def _lb_infer(attrs, shapes, dtypes):
    t = attrs["act_type"]
    n = {"prelu": 3, "rrelu": 3}.get(t, 2)
    if len(shapes) != n:
        raise ValueError(f"_backward_LeakyReLU: act_type={t!r} takes {n} inputs, got {len(shapes)}")
    for s, d in zip(shapes[1:2] + shapes[2:] * (t == "rrelu"), dtypes[1:]):
        if tuple(s) != tuple(shapes[0]) or np.dtype(d) != np.dtype(dtypes[0]):
            raise ValueError(f"_backward_LeakyReLU: inputs must match the head gradient "
                             f"{tuple(shapes[0])} {np.dtype(dtypes[0]).name}")
    check_float("_backward_LeakyReLU", dtypes[0])
    if t == "prelu":
        gamma_view(shapes[1], shapes[2])
        return [tuple(shapes[0]), tuple(shapes[2])], [np.dtype(dtypes[0])] * 2
    return [tuple(shapes[0])], [np.dtype(dtypes[0])]


_LB = {n: _k("bwd:" + n) for n in ("xelu", "xelu_arr", "elu", "selu", "gelu", "prelu")}


def _lb_forward(attrs, inputs, outputs):
    t = attrs["act_type"]
    if t == "leaky":
        _LB["xelu"](attrs, inputs, outputs)
    elif t == "elu":
        _LB["elu"](attrs, inputs, outputs)
    elif t in ("selu", "gelu"):
        _LB[t](attrs, inputs, outputs)
    elif t == "rrelu":
        _LB["xelu_arr"](attrs, inputs, outputs)
    else:
        _LB["prelu"](dict(attrs, _view=gamma_view(inputs[1].shape, inputs[2].shape)),
                     inputs, outputs)


register(OpDef("_backward_LeakyReLU", inputs=(), variadic="num_args",
               params=(Param("num_args", int, 2),) + _LEAKY_PARAMS,
               infer=_lb_infer, forward=_lb_forward,
               num_outputs=lambda a: 2 if a["act_type"] == "prelu" else 1,
               grad=no_second_order("_backward_LeakyReLU"),
               doc="Gradient of LeakyReLU: (ograd, output) for leaky/elu/selu, (ograd, data) for "
                   "gelu, (ograd, output, mask) for rrelu, (ograd, data, gamma) -> (dx, dgamma) "
                   "for prelu."))
