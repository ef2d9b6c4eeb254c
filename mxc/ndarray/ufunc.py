"""MXNet's array/scalar arithmetic functions (``mx.nd.add(x, 2)``, ``x * y``, ``3 - x``):
NDArray with NDArray broadcasts, NDArray with a scalar uses the ``_*_scalar`` operator."""
import numbers

import numpy as np

from ..ops import registry
from .ndarray import NDArray, array, _nd
from .register import run

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "modulo", "power", "maximum",
           "minimum", "hypot", "equal", "not_equal", "greater", "greater_equal", "lesser",
           "lesser_equal", "logical_and", "logical_or", "logical_xor", "floor_divide"]




_SCALARS = (numbers.Number, np.generic)


def _helper(lhs, rhs, bcast, scalar, rscalar, pyop, out=None):
    if isinstance(lhs, NDArray):
        if isinstance(rhs, NDArray):
            return run(bcast, [lhs, rhs], bcast._defaults, out)
        if isinstance(rhs, _SCALARS):
            return run(scalar, [lhs], {"scalar": float(rhs), "is_int": True}, out)
        if isinstance(rhs, np.ndarray):
            return run(bcast, [lhs, array(rhs, ctx=lhs.context, dtype=lhs.dtype)], bcast._defaults, out)
        raise TypeError(f"type {type(rhs).__name__} not supported")
    if isinstance(rhs, NDArray):
        if isinstance(lhs, _SCALARS):
            return run(rscalar, [rhs], {"scalar": float(lhs), "is_int": True}, out)
        if isinstance(lhs, np.ndarray):
            return run(bcast, [array(lhs, ctx=rhs.context, dtype=rhs.dtype), rhs], bcast._defaults, out)
        raise TypeError(f"type {type(lhs).__name__} not supported")
    return pyop(lhs, rhs)


def _make(fname, bcast, scalar, rscalar, pyop):
    bcast, scalar, rscalar = registry.get(bcast), registry.get(scalar), registry.get(rscalar)
    bcast.parse({})     # fill the cached default attributes

    def f(lhs, rhs, out=None):
        return _helper(lhs, rhs, bcast, scalar, rscalar, pyop, out)
    f.__name__ = fname
    f.__doc__ = f"{fname} of arrays and scalars with broadcasting (MXNet's ``mx.nd.{fname}``)."
    return f


import operator as _op

_TABLE = [
    ("add", "broadcast_add", "_plus_scalar", "_plus_scalar", _op.add),
    ("subtract", "broadcast_sub", "_minus_scalar", "_rminus_scalar", _op.sub),
    ("multiply", "broadcast_mul", "_mul_scalar", "_mul_scalar", _op.mul),
    ("divide", "broadcast_div", "_div_scalar", "_rdiv_scalar", _op.truediv),
    ("modulo", "broadcast_mod", "_mod_scalar", "_rmod_scalar", _op.mod),
    ("power", "broadcast_power", "_power_scalar", "_rpower_scalar", _op.pow),
    ("maximum", "broadcast_maximum", "_maximum_scalar", "_maximum_scalar", max),
    ("minimum", "broadcast_minimum", "_minimum_scalar", "_minimum_scalar", min),
    ("hypot", "broadcast_hypot", "_hypot_scalar", "_hypot_scalar", lambda a, b: (a * a + b * b) ** 0.5),
    ("equal", "broadcast_equal", "_equal_scalar", "_equal_scalar", lambda a, b: float(a == b)),
    ("not_equal", "broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar",
     lambda a, b: float(a != b)),
    ("greater", "broadcast_greater", "_greater_scalar", "_lesser_scalar", lambda a, b: float(a > b)),
    ("greater_equal", "broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar",
     lambda a, b: float(a >= b)),
    ("lesser", "broadcast_lesser", "_lesser_scalar", "_greater_scalar", lambda a, b: float(a < b)),
    ("lesser_equal", "broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar",
     lambda a, b: float(a <= b)),
    ("logical_and", "broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar",
     lambda a, b: float(bool(a) and bool(b))),
    ("logical_or", "broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar",
     lambda a, b: float(bool(a) or bool(b))),
    ("logical_xor", "broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar",
     lambda a, b: float(bool(a) != bool(b))),
]

for _row in _TABLE:
    globals()[_row[0]] = _make(*_row)
true_divide = divide  # noqa: F821


def floor_divide(lhs, rhs, out=None):
    """Floor division (``//``): floor(a / b) for floats, (a - a mod b) / b for integers."""
    nd = _nd()
    x = lhs if isinstance(lhs, NDArray) else rhs
    if not isinstance(x, NDArray):
        return lhs // rhs
    if np.issubdtype(x.dtype, np.floating):
        res = nd.floor(divide(lhs, rhs))  # noqa: F821
    else:
        res = divide(subtract(lhs, modulo(lhs, rhs)), rhs)  # noqa: F821
    if out is not None:
        return res.copyto(out)
    return res


# (fast array-array op, array-scalar op, scalar-array op, general function) per Python operator,
# in the order of handle.OPERATORS
_OPERATOR_TABLE = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar", "add"),
    "sub": ("broadcast_sub", "_minus_scalar", "_rminus_scalar", "subtract"),
    "mul": ("broadcast_mul", "_mul_scalar", "_mul_scalar", "multiply"),
    "truediv": ("broadcast_div", "_div_scalar", "_rdiv_scalar", "divide"),
    "mod": ("broadcast_mod", "_mod_scalar", "_rmod_scalar", "modulo"),
    "pow": ("broadcast_power", "_power_scalar", "_rpower_scalar", "power"),
    "eq": ("broadcast_equal", "_equal_scalar", "_equal_scalar", "equal"),
    "ne": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar", "not_equal"),
    "gt": ("broadcast_greater", "_greater_scalar", "_lesser_scalar", "greater"),
    "ge": ("broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar", "greater_equal"),
    "lt": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar", "lesser"),
    "le": ("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar", "lesser_equal"),
}


def _slow_operator(f, comparison):
    def slow(self, other, reflected, inplace):
        try:
            if inplace:
                return f(self, other, out=self)
            return f(other, self) if reflected else f(self, other)
        except TypeError:
            if comparison:        # x == None, x != "a": let Python fall back to identity
                return NotImplemented
            raise
    return slow


def install_operators():
    """Give NDArray's C operators their kernels and their general fallbacks."""
    from .._core import handle
    table = []
    for name in handle.OPERATORS:
        bin_op, sc, rsc, fname = _OPERATOR_TABLE[name]
        table.append((registry.get(bin_op).fast_kernel(), registry.get(sc).fast_kernel(),
                      registry.get(rsc).fast_kernel(),
                      _slow_operator(globals()[fname], name in ("eq", "ne", "gt", "ge", "lt", "le"))))
    handle.install_operators(table)
