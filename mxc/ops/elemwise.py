"""Elementwise operators: unary math, binary (same-shape, broadcast, scalar), cast, clip, where.

Kernels: mxc/ops/cpu/elemwise.pyx ("unary:<name>", "binary:<name>", "scalar:<name>",
"rscalar:<name>", "cast", "clip", "where"). Gradients are written with differentiable operators
through F, so they work for mx.nd today and mx.sym later.
"""
import math

import numpy as np

from .params import Param
from ._partial_shape import complete, fill_unknown
from .registry import OpDef, register, kernel_forward


# ---- shape and dtype inference -------------------------------------------------------------
def same_shape(op):
    def infer(attrs, shapes, dtypes):
        for s, d in zip(shapes[1:], dtypes[1:]):
            if s != shapes[0]:
                raise ValueError(f"{op}: shapes {shapes[0]} and {s} differ (use broadcast_{op.lstrip('_').replace('elemwise_', '')} to broadcast)")
            if d != dtypes[0]:
                raise ValueError(f"{op}: dtypes {dtypes[0]} and {d} differ")
        return [shapes[0]], [dtypes[0]]
    return infer


def broadcast_shape(op, a, b):
    """numpy/MXNet broadcasting of two shapes (leading 1s prepended to the shorter)."""
    n = max(len(a), len(b))
    a2 = (1,) * (n - len(a)) + tuple(a)
    b2 = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a2, b2):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ValueError(f"{op}: shapes {tuple(a)} and {tuple(b)} cannot be broadcast together")
    return tuple(out)


def broadcast_infer(op):
    def infer(attrs, shapes, dtypes):
        if dtypes[0] != dtypes[1]:
            raise ValueError(f"{op}: dtypes {dtypes[0]} and {dtypes[1]} differ")
        return [broadcast_shape(op, shapes[0], shapes[1])], [dtypes[0]]
    return infer


def unary_infer(attrs, shapes, dtypes):
    return [shapes[0]], [dtypes[0]]


def _padded_views(inputs, outputs):
    """Inputs reshaped (as views) to the output's ndim, as the broadcast kernels expect."""
    n = len(outputs[0].shape)
    return [x if x.ndim == n else x.reshape((1,) * (n - x.ndim) + x.shape) for x in inputs]


def sum_to(F, g, shape):
    """Reduce a broadcast gradient `g` back to `shape`."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(shape)
                                      if d == 1 and g.shape[i + lead] != 1)
    return F.sum(g, axis=axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)


# ---- unary -----------------------------------------------------------------------------------
def _zero_grad(F, a, i, o, g):
    return [F.zeros_like(i[0])]


def digamma(F, x):
    """psi(x) composed from differentiable operators: recurrence to x+6, then the asymptotic
    series (|error| < 1e-10 there); reflection psi(x) = psi(1-x) - pi/tan(pi x) for x < 0.5."""
    def positive(z):
        acc = F.zeros_like(z)
        for k in range(6):
            acc = acc + 1.0 / (z + k)
        w = z + 6.0
        w2 = 1.0 / (w * w)
        series = F.log(w) - 0.5 / w - w2 * (1.0 / 12 - w2 * (1.0 / 120 - w2 / 252))
        return series - acc
    refl = x < 0.5
    xr = F.where(refl, 1.0 - x, x)
    p = positive(xr)
    psi = F.where(refl, p - math.pi / F.tan(math.pi * x), p)
    # the poles 0, -1, -2, ... give +inf, as MXNet's psi (its float maximum), so gamma's
    # gradient there is gamma(x) * inf
    pole = (x <= 0) * (x == F.floor(x))
    return F.where(pole, F.ones_like(x) * math.inf, psi)


_UNARY = {
    # name: gradient as f(F, x, y, g)
    "negative": lambda F, x, y, g: -g,
    "abs": lambda F, x, y, g: g * F.sign(x),
    "sign": None, "round": None, "rint": None, "ceil": None, "floor": None, "trunc": None,
    "fix": None, "logical_not": None,
    "square": lambda F, x, y, g: 2.0 * x * g,
    "sqrt": lambda F, x, y, g: F._backward_sqrt(g, y),
    "rsqrt": lambda F, x, y, g: -0.5 * g * y / x,
    "cbrt": lambda F, x, y, g: g / (3.0 * y * y),
    "exp": lambda F, x, y, g: g * y,
    "expm1": lambda F, x, y, g: g * (y + 1.0),
    "log": lambda F, x, y, g: g / x,
    "log10": lambda F, x, y, g: g / (x * math.log(10.0)),
    "log2": lambda F, x, y, g: g / (x * math.log(2.0)),
    "log1p": lambda F, x, y, g: g / (x + 1.0),
    "sin": lambda F, x, y, g: g * F.cos(x),
    "cos": lambda F, x, y, g: -g * F.sin(x),
    "tan": lambda F, x, y, g: g * (y * y + 1.0),
    "arcsin": lambda F, x, y, g: g / F.sqrt(1.0 - x * x),
    "arccos": lambda F, x, y, g: -g / F.sqrt(1.0 - x * x),
    "arctan": lambda F, x, y, g: g / (x * x + 1.0),
    "sinh": lambda F, x, y, g: g * F.cosh(x),
    "cosh": lambda F, x, y, g: g * F.sinh(x),
    "tanh": lambda F, x, y, g: F._backward_tanh(g, y),
    "arcsinh": lambda F, x, y, g: g / F.sqrt(x * x + 1.0),
    "arccosh": lambda F, x, y, g: g / F.sqrt(x * x - 1.0),
    "arctanh": lambda F, x, y, g: g / (1.0 - x * x),
    # + zeros_like(x): the gradient stays in x's graph, so a second order is zero (as MXNet's
    # _backward_degrees/_backward_radians, which read x), not "not in a computational graph"
    "degrees": lambda F, x, y, g: g * (180.0 / math.pi) + F.zeros_like(x),
    "radians": lambda F, x, y, g: g * (math.pi / 180.0) + F.zeros_like(x),
    "sigmoid": lambda F, x, y, g: F._backward_sigmoid(g, y),
    "relu": lambda F, x, y, g: F._backward_relu(g, y),
    "softsign": lambda F, x, y, g: g / F.square(F.abs(x) + 1.0),
    "erf": lambda F, x, y, g: g * (2.0 / math.sqrt(math.pi)) * F.exp(-x * x),
    "erfinv": lambda F, x, y, g: g * (0.5 * math.sqrt(math.pi)) * F.exp(y * y),
    "gamma": lambda F, x, y, g: g * y * digamma(F, x),
    "gammaln": lambda F, x, y, g: g * digamma(F, x),
    "reciprocal": lambda F, x, y, g: -g * y * y,
}


def _unary_grad(rule):
    if rule is None:
        return _zero_grad
    return lambda F, a, i, o, g: [rule(F, i[0], o[0], g[0])]


for _name, _rule in _UNARY.items():
    register(OpDef(_name, infer=unary_infer,
                   forward=kernel_forward("elemwise", "unary:" + _name, ints=(), floats=()),
                   grad=_unary_grad(_rule), inplace=((0, 0),), fast=("elemwise", "unary:" + _name, 1),
                   doc=f"Elementwise {_name} (MXNet operator ``{_name}``)."))

register(OpDef("_copy", aliases=("identity",), infer=unary_infer,
               forward=kernel_forward("elemwise", "unary:copy", name="_copy", ints=(),
                                      floats=()),
               grad=lambda F, a, i, o, g: [g[0]], inplace=((0, 0),),
               fast=("elemwise", "unary:copy", 1), doc="A copy of the input."))
_lhs_copy = kernel_forward("elemwise", "unary:copy", name="_identity_with_attr_like_rhs", ints=(),
                           floats=())
register(OpDef("_identity_with_attr_like_rhs", inputs=("lhs", "rhs"),
               infer=same_shape("_identity_with_attr_like_rhs"),
               forward=lambda a, i, o: _lhs_copy(a, i[:1], o),
               grad=lambda F, a, i, o, g: [g[0], F.zeros_like(i[1])], inplace=((0, 0),),
               doc="A copy of lhs that must have rhs's shape and dtype: a shape constraint for "
                   "inference (both ways), as MXNet's internal operator."))
register(OpDef("_copyto", infer=unary_infer,
               forward=kernel_forward("elemwise", "unary:copy", name="_copyto"),
               grad=lambda F, a, i, o, g: [g[0]], fast=("elemwise", "unary:copy", 1),
               doc="Copy into ``out`` (NDArray.copyto)."))


# ---- binary ----------------------------------------------------------------------------------
# name: (elemwise op name and aliases, broadcast op aliases, gradient f(F, a, b, y, g) -> (ga, gb))
_BINARY = {
    "add": (("elemwise_add", "_add", "_plus", "_Plus"), ("broadcast_plus",),
            lambda F, a, b, y, g: (g, g)),
    "sub": (("elemwise_sub", "_sub", "_minus", "_Minus"), ("broadcast_minus",),
            lambda F, a, b, y, g: (g, -g)),
    "mul": (("elemwise_mul", "_mul", "_Mul"), (), lambda F, a, b, y, g: (g * b, g * a)),
    "div": (("elemwise_div", "_div", "_Div"), (),
            lambda F, a, b, y, g: (g / b, -g * a / (b * b))),
    "mod": (("_mod", "_Mod"), (), lambda F, a, b, y, g: (g, -g * F.floor(a / b))),
    "power": (("_power", "_Power"), (),
              lambda F, a, b, y, g: (g * b * a ** (b - 1.0), g * y * F.log(a))),
    "maximum": (("_maximum", "_Maximum"), (),
                lambda F, a, b, y, g: (g * (a >= b), g * (a < b))),
    "minimum": (("_minimum", "_Minimum"), (),
                lambda F, a, b, y, g: (g * (a <= b), g * (a > b))),
    "hypot": (("_hypot", "_Hypot"), (), lambda F, a, b, y, g: (g * a / y, g * b / y)),
    "equal": (("_equal",), (), None),
    "not_equal": (("_not_equal",), (), None),
    "greater": (("_greater",), (), None),
    "greater_equal": (("_greater_equal",), (), None),
    "lesser": (("_lesser",), (), None),
    "lesser_equal": (("_lesser_equal",), (), None),
    "logical_and": (("_logical_and",), (), None),
    "logical_or": (("_logical_or",), (), None),
    "logical_xor": (("_logical_xor",), (), None),
}


def _binary_grad(rule):
    if rule is None:
        return lambda F, a, i, o, g: [F.zeros_like(i[0]), F.zeros_like(i[1])]

    def grad(F, attrs, inputs, outputs, ograds):
        a, b = inputs
        ga, gb = rule(F, a, b, outputs[0], ograds[0])
        return [sum_to(F, ga, a.shape), sum_to(F, gb, b.shape)]
    return grad


def _binary_forward(kname):
    fwd = kernel_forward("elemwise", kname, ints=(), floats=())

    def forward(attrs, inputs, outputs):
        fwd(attrs, _padded_views(inputs, outputs), outputs)
    return forward


for _name, (_ew, _bcast_aliases, _rule) in _BINARY.items():
    _grad = _binary_grad(_rule)
    register(OpDef(_ew[0], aliases=_ew[1:], inputs=("lhs", "rhs"), infer=same_shape(_ew[0]),
                   forward=kernel_forward("elemwise", "binary:" + _name, name=_ew[0], ints=(),
                                          floats=()), grad=_grad,
                   inplace=((0, 0), (1, 0)), fast=("elemwise", "binary:" + _name, 2), doc=f"Elementwise {_name} of two arrays of one shape."))
    _bname = "broadcast_" + _name
    register(OpDef(_bname, aliases=_bcast_aliases, inputs=("lhs", "rhs"),
                   infer=broadcast_infer(_bname), forward=_binary_forward("binary:" + _name),
                   grad=_grad, inplace=((0, 0), (1, 0)), fast=("elemwise", "binary:" + _name, 2),
                   doc=f"{_name} with numpy-style broadcasting."))


register(OpDef("rcbrt", infer=unary_infer, composite=lambda F, a, x: F.reciprocal(F.cbrt(x)),
               doc="Reciprocal of the cube root, elementwise (differentiates through its parts)."))


# ---- fused first-order gradients of unary ops (MXNet's _backward_<op>(out_grad, output)) -------
# One kernel instead of two or three elementwise ops in every backward; their own gradients are
# written with F, so second order still works. rule(F, g, y, h) -> (d/dg, d/dy) for head h.
_UNARY_BACKWARD = {
    "tanh": lambda F, g, y, h: (F._backward_tanh(h, y), -2.0 * g * y * h),
    "sigmoid": lambda F, g, y, h: (F._backward_sigmoid(h, y), h * g * (1.0 - 2.0 * y)),
    "relu": lambda F, g, y, h: (F._backward_relu(h, y), F.zeros_like(y)),
    "sqrt": lambda F, g, y, h: (F._backward_sqrt(h, y), -h * g / (2.0 * y * y)),
}


def _unary_backward_grad(rule):
    def grad(F, attrs, inputs, outputs, ograds):
        return list(rule(F, inputs[0], inputs[1], ograds[0]))
    return grad


for _name, _rule in _UNARY_BACKWARD.items():
    _bname = "_backward_" + _name
    register(OpDef(_bname, inputs=("ograd", "output"), infer=same_shape(_bname),
                   forward=kernel_forward("elemwise", f"binary:{_name}_grad", name=_bname,
                                          ints=(), floats=()),
                   grad=_unary_backward_grad(_rule), inplace=((0, 0),),
                   fast=("elemwise", f"binary:{_name}_grad", 2),
                   doc=f"Gradient of {_name} from the output gradient and {_name}'s output."))


# ---- scalar forms ----------------------------------------------------------------------------
_SCALAR_PARAMS = (Param("scalar", float, 1.0), Param("is_int", bool, True))


# op name: (kernel, aliases, gradient f(F, x, s, y, g))
_SCALAR = {
    "_plus_scalar": ("scalar:add", ("_PlusScalar",), lambda F, x, s, y, g: g),
    "_minus_scalar": ("scalar:sub", ("_MinusScalar",), lambda F, x, s, y, g: g),
    "_rminus_scalar": ("rscalar:sub", ("_RMinusScalar",), lambda F, x, s, y, g: -g),
    "_mul_scalar": ("scalar:mul", ("_MulScalar",), lambda F, x, s, y, g: g * s),
    "_div_scalar": ("scalar:div", ("_DivScalar",), lambda F, x, s, y, g: g / s),
    "_rdiv_scalar": ("rscalar:div", ("_RDivScalar",), lambda F, x, s, y, g: -g * s / (x * x)),
    "_mod_scalar": ("scalar:mod", ("_ModScalar",), lambda F, x, s, y, g: g),
    "_rmod_scalar": ("rscalar:mod", ("_RModScalar",),
                     lambda F, x, s, y, g: -g * F.floor(s / x)),
    "_power_scalar": ("scalar:power", ("_PowerScalar",),
                      # x ** 1.0 is x exactly: the gradient of x ** 2 skips a pow per element
                      lambda F, x, s, y, g: g * s * (x if s == 2.0 else x ** (s - 1.0))),
    "_rpower_scalar": ("rscalar:power", ("_RPowerScalar",),
                       lambda F, x, s, y, g: g * y * math.log(s)),
    "_maximum_scalar": ("scalar:maximum", ("_MaximumScalar",), lambda F, x, s, y, g: g * (x >= s)),
    "_minimum_scalar": ("scalar:minimum", ("_MinimumScalar",), lambda F, x, s, y, g: g * (x <= s)),
    "_hypot_scalar": ("scalar:hypot", ("_HypotScalar",), lambda F, x, s, y, g: g * x / y),
    "_equal_scalar": ("scalar:equal", ("_EqualScalar",), None),
    "_not_equal_scalar": ("scalar:not_equal", ("_NotEqualScalar",), None),
    "_greater_scalar": ("scalar:greater", ("_GreaterScalar",), None),
    "_greater_equal_scalar": ("scalar:greater_equal", ("_GreaterEqualScalar",), None),
    "_lesser_scalar": ("scalar:lesser", ("_LesserScalar",), None),
    "_lesser_equal_scalar": ("scalar:lesser_equal", ("_LesserEqualScalar",), None),
    "_logical_and_scalar": ("scalar:logical_and", ("_LogicalAndScalar",), None),
    "_logical_or_scalar": ("scalar:logical_or", ("_LogicalOrScalar",), None),
    "_logical_xor_scalar": ("scalar:logical_xor", ("_LogicalXorScalar",), None),
}


def _scalar_grad(rule):
    if rule is None:
        return _zero_grad
    return lambda F, a, i, o, g: [rule(F, i[0], a["scalar"], o[0], g[0])]


for _name, (_k, _aliases, _rule) in _SCALAR.items():
    register(OpDef(_name, aliases=_aliases, params=_SCALAR_PARAMS, infer=unary_infer,
                   forward=kernel_forward("elemwise", _k, floats=("scalar",), name=_name),
                   grad=_scalar_grad(_rule), inplace=((0, 0),), fast=("elemwise", _k, 3),
                   doc=f"{_k.split(':')[1]} of an array and a scalar."))


# ---- cast, clip, where -------------------------------------------------------------------------
def _cast_infer(attrs, shapes, dtypes):
    return [shapes[0]], [np.dtype(attrs["dtype"])]


# "Cast" is the name MXNet writes into symbol files (cast is its alias)
register(OpDef("Cast", aliases=("cast",), params=(Param("dtype", "dtype", required=True),),
               infer=_cast_infer,
               forward=kernel_forward("elemwise", "cast", ints=(), floats=(),
                                      key=lambda a, i, o: (i[0]._dcode, o[0]._dcode), name="cast"),
               grad=lambda F, a, i, o, g: [F.cast(g[0], dtype=i[0].dtype.__name__)],
               doc="Cast to `dtype` (numpy's conversion rules)."))

register(OpDef("clip", params=(Param("a_min", float, required=True),
                               Param("a_max", float, required=True)),
               infer=unary_infer,
               forward=kernel_forward("elemwise", "clip", floats=("a_min", "a_max")),
               grad=lambda F, a, i, o, g: [g[0] * (i[0] >= a["a_min"]) * (i[0] <= a["a_max"])],
               inplace=((0, 0),), doc="Clip values into [a_min, a_max]."))


def _where_infer(attrs, shapes, dtypes):
    c, x, y = shapes
    if x != y:
        raise ValueError(f"where: x and y must have one shape, got {x} and {y}")
    if dtypes[1] != dtypes[2]:
        raise ValueError(f"where: x and y must have one dtype, got {dtypes[1]} and {dtypes[2]}")
    if c != x and not (len(c) == 1 and len(x) >= 1 and c[0] == x[0]):
        raise ValueError(f"where: condition shape {c} must equal {x} or be ({x[0] if x else '?'},)")
    return [x], [dtypes[1]]


def _where_infer_back(attrs, in_s, outs):
    ref = next((s for s in (outs[0], in_s[1], in_s[2]) if complete(s)), None)
    if ref is None:
        return None
    return [None, fill_unknown(in_s[1], ref), fill_unknown(in_s[2], ref)]


register(OpDef("where", inputs=("condition", "x", "y"), infer=_where_infer,
               infer_back=_where_infer_back, infer_dtypes=lambda a, d: [d[1]],
               forward=kernel_forward("elemwise", "where", ints=(), floats=(),
                                      key=lambda a, i, o: (i[0]._dcode, i[1]._dcode)),
               grad=lambda F, a, i, o, g: [F.zeros_like(i[0]),
                                           F.where(i[0], g[0], F.zeros_like(g[0])),
                                           F.where(i[0], F.zeros_like(g[0]), g[0])],
               doc="Elements of x where condition is nonzero, else of y."))
