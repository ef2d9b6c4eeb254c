"""MXNet's array/scalar arithmetic functions (``mx.nd.add(x, 2)``, ``x * y``, ``3 - x``):
NDArray with NDArray broadcasts, NDArray with a scalar uses the ``_*_scalar`` operator."""
import numbers
import operator

import numpy as np

from ..ops import registry
from .ndarray import NDArray, array, _nd
from .register import run
from .._core import handle

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
    f.ops = (bcast, scalar, rscalar)     # what NDArray's C operators use (install_operators)
    return f


add = _make("add", "broadcast_add", "_plus_scalar", "_plus_scalar", operator.add)
subtract = _make("subtract", "broadcast_sub", "_minus_scalar", "_rminus_scalar", operator.sub)
multiply = _make("multiply", "broadcast_mul", "_mul_scalar", "_mul_scalar", operator.mul)
divide = _make("divide", "broadcast_div", "_div_scalar", "_rdiv_scalar", operator.truediv)
modulo = _make("modulo", "broadcast_mod", "_mod_scalar", "_rmod_scalar", operator.mod)
power = _make("power", "broadcast_power", "_power_scalar", "_rpower_scalar", operator.pow)
maximum = _make("maximum", "broadcast_maximum", "_maximum_scalar", "_maximum_scalar", max)
minimum = _make("minimum", "broadcast_minimum", "_minimum_scalar", "_minimum_scalar", min)
hypot = _make("hypot", "broadcast_hypot", "_hypot_scalar", "_hypot_scalar",
              lambda a, b: (a * a + b * b) ** 0.5)
equal = _make("equal", "broadcast_equal", "_equal_scalar", "_equal_scalar",
              lambda a, b: float(a == b))
not_equal = _make("not_equal", "broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar",
                  lambda a, b: float(a != b))
# scalar OP x for comparisons flips the comparison: 2 > x is x < 2
greater = _make("greater", "broadcast_greater", "_greater_scalar", "_lesser_scalar",
                lambda a, b: float(a > b))
greater_equal = _make("greater_equal", "broadcast_greater_equal", "_greater_equal_scalar",
                      "_lesser_equal_scalar", lambda a, b: float(a >= b))
lesser = _make("lesser", "broadcast_lesser", "_lesser_scalar", "_greater_scalar",
               lambda a, b: float(a < b))
lesser_equal = _make("lesser_equal", "broadcast_lesser_equal", "_lesser_equal_scalar",
                     "_greater_equal_scalar", lambda a, b: float(a <= b))
logical_and = _make("logical_and", "broadcast_logical_and", "_logical_and_scalar",
                    "_logical_and_scalar", lambda a, b: float(bool(a) and bool(b)))
logical_or = _make("logical_or", "broadcast_logical_or", "_logical_or_scalar",
                   "_logical_or_scalar", lambda a, b: float(bool(a) or bool(b)))
logical_xor = _make("logical_xor", "broadcast_logical_xor", "_logical_xor_scalar",
                    "_logical_xor_scalar", lambda a, b: float(bool(a) != bool(b)))
true_divide = divide


def floor_divide(lhs, rhs, out=None):
    """Floor division (``//``): floor(a / b) for floats, (a - a mod b) / b for integers."""
    nd = _nd()
    x = lhs if isinstance(lhs, NDArray) else rhs
    if not isinstance(x, NDArray):
        return lhs // rhs
    if np.issubdtype(x.dtype, np.floating):
        res = nd.floor(divide(lhs, rhs))
    else:
        res = divide(subtract(lhs, modulo(lhs, rhs)), rhs)
    if out is not None:
        return res.copyto(out)
    return res


# the mx.nd function behind each Python operator, in the order of handle.OPERATORS
_OPERATOR_FUNCTIONS = {"add": add, "sub": subtract, "mul": multiply, "truediv": divide,
                       "mod": modulo, "pow": power, "eq": equal, "ne": not_equal, "gt": greater,
                       "ge": greater_equal, "lt": lesser, "le": lesser_equal}


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
    table = []
    for name in handle.OPERATORS:
        f = _OPERATOR_FUNCTIONS[name]
        table.append(tuple(op.fast_kernel() for op in f.ops)
                     + (_slow_operator(f, name in ("eq", "ne", "gt", "ge", "lt", "le")),))
    handle.install_operators(table)
