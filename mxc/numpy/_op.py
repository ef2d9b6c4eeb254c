"""The functions of ``mx.np`` under numpy's names and signatures.

Each one is built on the registry operators (``mx.nd``), so it runs on the device and autograd
records it; results are ``mx.np.ndarray`` (see ``_core.wrap``). Index bookkeeping that numpy does
on the host (result shapes, boolean masks turned into positions) is done on the host here too;
array math is not."""
import builtins
import math
import numbers

import numpy as onp

from .._core import modes as _modes
from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from ..ops import registry as _registry
from . import _core
from ._core import (wrap, view_as, nd, cast, reshape_view, norm_axis, norm_axes, is_scalar,
                    default_float, check_out, to_bool, as_bits, _BOOL, _UINT8)
from .multiarray import ndarray, array, zeros, ones, full, empty, arange

_pybool = builtins.bool
_pymax = builtins.max
_pymin = builtins.min
_pyabs = builtins.abs
_pysum = builtins.sum
_pyround = builtins.round
_pyall = builtins.all
_pyany = builtins.any

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod", "remainder",
    "fmod", "power", "float_power", "maximum", "minimum", "fmax", "fmin", "hypot", "arctan2",
    "copysign", "ldexp", "lcm", "gcd", "equal", "not_equal", "greater", "less", "greater_equal",
    "less_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "invert",
    "abs", "absolute", "fabs", "negative", "positive", "sign", "exp", "expm1", "exp2", "log",
    "log2", "log10", "log1p", "sqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "floor", "ceil", "trunc", "rint", "fix", "round", "round_", "around", "degrees", "radians",
    "deg2rad", "rad2deg", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "nan_to_num",
    "clip", "where", "sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var",
    "average", "cumsum", "cumprod", "argmax", "argmin", "all", "any", "ptp", "count_nonzero",
    "concatenate", "append", "stack", "vstack", "row_stack", "hstack", "dstack", "column_stack",
    "split", "array_split", "hsplit", "vsplit", "dsplit", "reshape", "ravel", "transpose",
    "swapaxes", "moveaxis", "rollaxis", "expand_dims", "squeeze", "broadcast_to",
    "broadcast_arrays", "tile", "repeat", "flip", "fliplr", "flipud", "roll", "rot90", "pad",
    "dot", "matmul", "tensordot", "inner", "outer", "vdot", "einsum", "kron", "sort", "argsort",
    "unique", "nonzero", "flatnonzero", "argwhere", "take", "take_along_axis", "diag",
    "diagonal", "diagflat", "trace", "interp", "atleast_1d", "atleast_2d", "atleast_3d",
    "may_share_memory", "shares_memory", "shape", "size", "ndim", "copy", "result_type",
    "delete", "insert", "diff", "ediff1d", "cross", "histogram", "bincount", "percentile",
    "median", "quantile", "logaddexp", "sinc", "signbit", "heaviside", "isclose", "allclose",
    "array_equal", "searchsorted", "floor_divide", "nanmax", "nanmin", "nansum", "nanprod",
    "product", "sometrue", "hanning", "hamming", "blackman", "indices", "diag_indices_from",
    "unravel_index", "polyval", "resize",
]


# ---- operands ------------------------------------------------------------------------------------
def _arr(x, ctx=None):
    return _core.asarray_like(x, ctx)


def _has(name):
    return name in _registry.names()


def _op(name):
    return getattr(nd(), name)


def _promote_pair(x1, x2, what):
    """(a1, s1, a2, s2): mx.np arrays or Python scalars, and the promoted dtype."""
    s1, s2 = is_scalar(x1), is_scalar(x2)
    if s1 and s2:
        x1 = _arr(onp.asarray(x1))
        s1 = False
    if not s1:
        x1 = _arr(x1, _core.ctx_of(x2))
    if not s2:
        x2 = _arr(x2, _core.ctx_of(x1))
    if s1:
        dt = _core.scalar_result_type(x2._dtype, x1)
    elif s2:
        dt = _core.scalar_result_type(x1._dtype, x2)
    else:
        dt = _core.result_type(x1._dtype, x2._dtype)
    return x1, x2, dt


def _to(x, dt):
    if isinstance(x, NDArray):
        return cast(x, dt)
    if isinstance(x, (onp.generic,)):
        x = x.item()
    return x


def _bits(x):
    return as_bits(x) if isinstance(x, NDArray) else (int(x) if isinstance(x, (bool, onp.bool_))
                                                      else x)


def _bcast_shape(*shapes):
    try:
        return tuple(onp.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(str(tuple(s)) for s in shapes)) from None


def _zero_size_binary(x1, x2, dt):
    shapes = [x.shape for x in (x1, x2) if isinstance(x, NDArray)]
    return zeros(_bcast_shape(*shapes), dtype=dt, ctx=_core.ctx_of(x1, x2))


def _recorded(*xs):
    """Whether autograd records an operation on these operands."""
    return _modes._M.recording and _pyany(isinstance(x, NDArray) and x._ag is not None
                                          for x in xs)


def _apply2(ndfn, x1, x2):
    """ndfn (an mx.nd ufunc taking arrays or scalars) on promoted operands; 0-d arrays are
    lifted to (1,) for the kernels and the numpy shape is restored."""
    shapes = [x.shape for x in (x1, x2) if isinstance(x, NDArray)]
    oshape = _bcast_shape(*shapes)
    if (_pyany(0 in s for s in shapes) or 0 in oshape) and not _recorded(x1, x2):
        return None, oshape     # nothing to compute (under autograd the op runs, so that
        #                         backward reaches the inputs with their zero gradients)
    if len(shapes) == 2 and shapes[0] != shapes[1] and len(shapes[0]) != len(shapes[1]):
        nd_ = len(oshape)
        x1 = reshape_view(x1, (1,) * (nd_ - x1.ndim) + x1.shape)
        x2 = reshape_view(x2, (1,) * (nd_ - x2.ndim) + x2.shape)
    if not oshape:
        x1 = reshape_view(x1, (1,)) if isinstance(x1, NDArray) else x1
        x2 = reshape_view(x2, (1,)) if isinstance(x2, NDArray) else x2
    r = wrap(ndfn(x1, x2))
    return reshape_view(r, oshape), oshape


_BOOL_ARITH = {"add": "logical_or", "multiply": "logical_and", "maximum": "logical_or",
               "minimum": "logical_and"}


def _arith(name, ndname, x1, x2, out=None, float_result=False):
    x1, x2, dt = _promote_pair(x1, x2, name)
    if float_result and dt.kind not in "f":
        dt = default_float()
    if dt == _BOOL:
        if name in _BOOL_ARITH:
            return _logic(name, _BOOL_ARITH[name], x1, x2, out)
        if name == "subtract":
            raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the "
                            "bitwise_xor, the `^` operator, or the logical_xor function instead.")
        dt = onp.dtype(onp.int8)
    a, b = _to(x1, dt), _to(x2, dt)
    res, oshape = _apply2(_op(ndname), a, b)
    if res is None:
        res = zeros(oshape, dtype=dt, ctx=_core.ctx_of(x1, x2))
    res = cast(res, dt)
    return check_out(out, res, name)


def _compare(name, ndname, x1, x2, out=None):
    x1, x2, dt = _promote_pair(x1, x2, name)
    a, b = _bits(_to(x1, dt)), _bits(_to(x2, dt))
    res, oshape = _apply2(_op(ndname), a, b)
    if res is None:
        return check_out(out, zeros(oshape, dtype=_BOOL, ctx=_core.ctx_of(x1, x2)), name)
    if _recorded(x1, x2):     # a recorded cast: backward gives the inputs zero gradients
        return check_out(out, cast(res, _BOOL), name)
    return check_out(out, to_bool(res), name)


def _truth(x):
    """Any array as 0/1 bits (uint8 for bool, the array itself otherwise)."""
    if isinstance(x, NDArray):
        return as_bits(x)
    return 1 if x else 0


def _logic(name, ndname, x1, x2, out=None):
    x1, x2, dt = _promote_pair(x1, x2, name)
    a, b = _truth(x1), _truth(x2)
    if isinstance(a, NDArray) and isinstance(b, NDArray) and a._dtype != b._dtype:
        a, b = cast(a, dt if dt != _BOOL else _UINT8), cast(b, dt if dt != _BOOL else _UINT8)
    res, oshape = _apply2(_op(ndname), a, b)
    if res is None:
        return check_out(out, zeros(oshape, dtype=_BOOL, ctx=_core.ctx_of(x1, x2)), name)
    return check_out(out, to_bool(res), name)


def add(x1, x2, out=None, **kw):
    return _arith("add", "add", x1, x2, out)


def subtract(x1, x2, out=None, **kw):
    return _arith("subtract", "subtract", x1, x2, out)


def multiply(x1, x2, out=None, **kw):
    return _arith("multiply", "multiply", x1, x2, out)


def true_divide(x1, x2, out=None, **kw):
    return _arith("true_divide", "divide", x1, x2, out, float_result=True)


divide = true_divide


def floor_divide(x1, x2, out=None, **kw):
    return _arith("floor_divide", "floor_divide", x1, x2, out)


def mod(x1, x2, out=None, **kw):
    return _arith("mod", "modulo", x1, x2, out)


remainder = mod


def fmod(x1, x2, out=None, **kw):
    """Remainder with the sign of the dividend (C's fmod)."""
    x1, x2, dt = _promote_pair(x1, x2, "fmod")
    m = mod(_abs_any(x1), _abs_any(x2))
    return check_out(out, multiply(m, _sign_nonzero(x1)) if dt.kind != "u" else m, "fmod")


def _abs_any(x):
    return absolute(x) if isinstance(x, NDArray) else _pyabs(x)


def _sign_nonzero(x):
    if isinstance(x, NDArray):
        return where(less(x, 0), -1, 1).astype(x._dtype, copy=False)
    return -1 if x < 0 else 1


def power(x1, x2, out=None, **kw):
    return _arith("power", "power", x1, x2, out)


def float_power(x1, x2, out=None, **kw):
    return check_out(out, power(_to_float(x1, onp.float64), _to_float(x2, onp.float64)),
                     "float_power")


def _to_float(x, dt=None):
    if isinstance(x, NDArray):
        if x._dtype.kind != "f" or (dt is not None and x._dtype != onp.dtype(dt)):
            return cast(_arr(x), dt or default_float())
        return _arr(x)
    if is_scalar(x):
        return float(x)
    a = _arr(x)
    return cast(a, dt or default_float()) if a._dtype.kind != "f" else a


def maximum(x1, x2, out=None, **kw):
    return _arith("maximum", "maximum", x1, x2, out)


def minimum(x1, x2, out=None, **kw):
    return _arith("minimum", "minimum", x1, x2, out)


def fmax(x1, x2, out=None, **kw):
    """maximum that ignores NaNs (takes the other operand)."""
    r = maximum(x1, x2)
    if r._dtype.kind != "f":
        return check_out(out, r, "fmax")
    r = where(isnan(x1), x2, r)
    return check_out(out, where(isnan(x2), x1, r), "fmax")


def fmin(x1, x2, out=None, **kw):
    r = minimum(x1, x2)
    if r._dtype.kind != "f":
        return check_out(out, r, "fmin")
    r = where(isnan(x1), x2, r)
    return check_out(out, where(isnan(x2), x1, r), "fmin")


def hypot(x1, x2, out=None, **kw):
    return _arith("hypot", "hypot", x1, x2, out, float_result=True)


def arctan2(x1, x2, out=None, **kw):
    """Element-wise arc tangent of x1/x2 choosing the quadrant (composed from arctan/where)."""
    y, x, dt = _promote_pair(x1, x2, "arctan2")
    y, x = _to_float(y), _to_float(x)
    if dt.kind == "f":
        y, x = _to(y, dt), _to(x, dt)
    if not isinstance(y, NDArray):
        y = full((), y, dtype=x._dtype, ctx=x._ctx)
    if not isinstance(x, NDArray):
        x = full((), x, dtype=y._dtype, ctx=y._ctx)
    dt = x._dtype if x._dtype.kind == "f" else y._dtype
    pi = math.pi

    def signed(v, sign_of):        # copysign(v, sign_of) for a constant or an array v
        v = full((), v, dtype=dt, ctx=x._ctx) if not isinstance(v, NDArray) else cast(v, dt)
        return where(signbit(sign_of), negative(v), v)

    x_zero = equal(x, 0)
    base = arctan(true_divide(y, where(x_zero, 1, x)))
    # x < 0 (and x = -0): the quadrant across the negative x axis
    r = where(signbit(x), add(base, signed(pi, y)), base)
    # x = +-0: +-pi/2 off the y axis, and numpy's signed-zero table at the origin
    at_origin = where(signbit(x), signed(pi, y), signed(0.0, y))
    r = where(x_zero, where(equal(y, 0), at_origin, signed(pi / 2, y)), r)
    # both infinite: +-pi/4 or +-3pi/4 (y / x is nan there)
    both_inf = logical_and(isinf(x), isinf(y))
    r = where(both_inf, signed(where(greater(x, 0), pi / 4, 3 * pi / 4), y), r)
    r = where(logical_or(isnan(x), isnan(y)), add(x, y), r)
    return check_out(out, r, "arctan2")


def copysign(x1, x2, out=None, **kw):
    a, b, dt = _promote_pair(x1, x2, "copysign")
    a = _to_float(a)
    mag = absolute(a) if isinstance(a, NDArray) else _pyabs(a)
    if isinstance(b, NDArray):
        neg = signbit(_to_float(b))
    else:
        neg = math.copysign(1.0, float(b)) < 0
    if isinstance(neg, NDArray):
        r = where(neg, negative(mag) if isinstance(mag, NDArray) else -mag, mag)
    else:
        r = negative(mag) if neg else mag
    if not isinstance(r, NDArray):
        r = array(r)
    return check_out(out, r, "copysign")


def ldexp(x1, x2, out=None, **kw):
    """x1 * 2**x2."""
    a = _to_float(x1)
    e = _to_float(x2, a._dtype if isinstance(a, NDArray) else None)
    return check_out(out, multiply(a, power(2.0, e)), "ldexp")


def gcd(x1, x2, out=None, **kw):
    """Greatest common divisor of integers (Euclid's algorithm on the device)."""
    a, b, dt = _promote_pair(x1, x2, "gcd")
    if dt.kind not in "iu":
        raise TypeError("ufunc 'gcd' not supported for the input types")
    a = absolute(_arr(a) if isinstance(a, NDArray) else full((), a, dtype=dt))
    b = absolute(_arr(b) if isinstance(b, NDArray) else full((), b, dtype=dt))
    shp = _bcast_shape(a.shape, b.shape)
    a, b = broadcast_to(cast(a, dt), shp), broadcast_to(cast(b, dt), shp)
    for _ in range(200):
        nz = not_equal(b, 0)
        if not _pybool(any(nz)):
            break
        safe_b = where(nz, b, 1)
        a, b = where(nz, b, a), where(nz, mod(a, safe_b), 0)
    return check_out(out, cast(a, dt), "gcd")


def lcm(x1, x2, out=None, **kw):
    a, b, dt = _promote_pair(x1, x2, "lcm")
    g = gcd(a, b)
    safe = where(equal(g, 0), 1, g)
    r = absolute(multiply(floor_divide(a, safe), b))
    return check_out(out, where(equal(g, 0), 0, r).astype(dt, copy=False), "lcm")


def equal(x1, x2, out=None, **kw):
    return _compare("equal", "equal", x1, x2, out)


def not_equal(x1, x2, out=None, **kw):
    return _compare("not_equal", "not_equal", x1, x2, out)


def greater(x1, x2, out=None, **kw):
    return _compare("greater", "greater", x1, x2, out)


def less(x1, x2, out=None, **kw):
    return _compare("less", "lesser", x1, x2, out)


def greater_equal(x1, x2, out=None, **kw):
    return _compare("greater_equal", "greater_equal", x1, x2, out)


def less_equal(x1, x2, out=None, **kw):
    return _compare("less_equal", "lesser_equal", x1, x2, out)


def logical_and(x1, x2, out=None, **kw):
    return _logic("logical_and", "logical_and", x1, x2, out)


def logical_or(x1, x2, out=None, **kw):
    return _logic("logical_or", "logical_or", x1, x2, out)


def logical_xor(x1, x2, out=None, **kw):
    return _logic("logical_xor", "logical_xor", x1, x2, out)


def logical_not(x, out=None, **kw):
    x = _arr(x)
    if x._size == 0:
        return check_out(out, zeros(x.shape, dtype=_BOOL, ctx=x._ctx), "logical_not")
    b = as_bits(x)
    r = reshape_view(wrap(nd().logical_not(reshape_view(b, (1,)) if not b.ndim else b)), x.shape)
    return check_out(out, to_bool(r), "logical_not")


def _bitwise(name, boolop, x1, x2, out):
    a, b, dt = _promote_pair(x1, x2, name)
    if dt == _BOOL:
        return boolop(a, b, out)
    for cand in ("_npi_" + name, name):
        if _has(cand):
            a, b = _to(a, dt), _to(b, dt)
            if not isinstance(a, NDArray):
                a = full((), a, dtype=dt, ctx=b._ctx)
            if not isinstance(b, NDArray):
                b = full((), b, dtype=dt, ctx=a._ctx)
            shp = _bcast_shape(a.shape, b.shape)
            a, b = broadcast_to(a, shp), broadcast_to(b, shp)
            return check_out(out, wrap(_op(cand)(a, b)), name)
    if dt.kind not in "iu":
        raise TypeError(f"ufunc '{name}' not supported for the input types")
    return check_out(out, _bitwise_compose(name, _to(a, dt), _to(b, dt), dt), name)


def _bitwise_compose(name, a, b, dt):
    """Bit by bit with integer arithmetic (the registry has no bitwise kernels): exact for any
    integer dtype, two's complement for negative values."""
    if not isinstance(a, NDArray):
        a = full((), a, dtype=dt, ctx=b._ctx)
    if not isinstance(b, NDArray):
        b = full((), b, dtype=dt, ctx=a._ctx)
    nbits = dt.itemsize * 8
    wide = onp.dtype(onp.int64)
    # work on the unsigned residues in int64 (a value mod 2**nbits, split into two halves for
    # 64-bit types so that nothing overflows)
    a64, b64 = cast(a, wide), cast(b, wide)
    res = zeros(_bcast_shape(a.shape, b.shape), dtype=wide, ctx=a._ctx)
    rest_a, rest_b = a64, b64
    for k in range(nbits):
        ba = mod(rest_a, 2)
        bb = mod(rest_b, 2)
        if name == "bitwise_and":
            bit = multiply(ba, bb)
        elif name == "bitwise_or":
            bit = maximum(ba, bb)
        else:
            bit = mod(add(ba, bb), 2)
        if k == nbits - 1 and dt.kind == "i":
            res = subtract(res, multiply(bit, 1 << k))
        else:
            res = add(res, multiply(bit, 1 << k))
        rest_a = floor_divide(rest_a, 2)
        rest_b = floor_divide(rest_b, 2)
    return cast(res, dt)


def bitwise_and(x1, x2, out=None, **kw):
    return _bitwise("bitwise_and", logical_and, x1, x2, out)


def bitwise_or(x1, x2, out=None, **kw):
    return _bitwise("bitwise_or", logical_or, x1, x2, out)


def bitwise_xor(x1, x2, out=None, **kw):
    return _bitwise("bitwise_xor", logical_xor, x1, x2, out)


def invert(x, out=None, **kw):
    """~x: logical not for bool, -x - 1 for signed integers, max - x for unsigned."""
    x = _arr(x)
    if x._dtype == _BOOL:
        return logical_not(x, out)
    if x._dtype.kind == "i":
        return check_out(out, subtract(negative(x), 1), "invert")
    if x._dtype.kind == "u":
        return check_out(out, subtract(onp.iinfo(x._dtype).max, x), "invert")
    raise TypeError("ufunc 'invert' not supported for the input types")


bitwise_not = invert


# ---- unary -------------------------------------------------------------------------------------
def _unary(name, ndname, x, out=None, to_float=False, keep_bool=False):
    x = _arr(x)
    if to_float and x._dtype.kind != "f":
        x = cast(x, default_float())
    if x._dtype == _BOOL:
        if keep_bool:
            return check_out(out, x.copy(), name)
        x = cast(x, onp.int8)
    if x._size == 0:
        return check_out(out, empty(x.shape, dtype=x._dtype, ctx=x._ctx), name)
    y = x if x.ndim else reshape_view(x, (1,))
    r = reshape_view(wrap(_op(ndname)(y)), x.shape)
    return check_out(out, r, name)


def _make_unary(name, ndname, to_float=False, keep_bool=False):
    def f(x, out=None, **kwargs):
        return _unary(name, ndname, x, out, to_float, keep_bool)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"numpy's ``{name}`` on mx.np arrays (registry operator ``{ndname}``)."
    return f


absolute = _make_unary("absolute", "abs", keep_bool=True)
abs = absolute  # noqa: A001  (numpy's name)
fabs = _make_unary("fabs", "abs", to_float=True)
sign = _make_unary("sign", "sign", keep_bool=True)
exp = _make_unary("exp", "exp", True)
expm1 = _make_unary("expm1", "expm1", True)
log = _make_unary("log", "log", True)
log2 = _make_unary("log2", "log2", True)
log10 = _make_unary("log10", "log10", True)
log1p = _make_unary("log1p", "log1p", True)
sqrt = _make_unary("sqrt", "sqrt", True)
cbrt = _make_unary("cbrt", "cbrt", True)
square = _make_unary("square", "square", keep_bool=True)
reciprocal = _make_unary("reciprocal", "reciprocal")
sin = _make_unary("sin", "sin", True)
cos = _make_unary("cos", "cos", True)
tan = _make_unary("tan", "tan", True)
arcsin = _make_unary("arcsin", "arcsin", True)
arccos = _make_unary("arccos", "arccos", True)
arctan = _make_unary("arctan", "arctan", True)
sinh = _make_unary("sinh", "sinh", True)
cosh = _make_unary("cosh", "cosh", True)
tanh = _make_unary("tanh", "tanh", True)
arcsinh = _make_unary("arcsinh", "arcsinh", True)
arccosh = _make_unary("arccosh", "arccosh", True)
arctanh = _make_unary("arctanh", "arctanh", True)
floor = _make_unary("floor", "floor", keep_bool=True)
ceil = _make_unary("ceil", "ceil", keep_bool=True)
trunc = _make_unary("trunc", "trunc", keep_bool=True)
def rint(x, out=None, **kw):
    """Round to the nearest integer, halves to even (numpy's rule; MXNet's rint kernel rounds
    halves down)."""
    x = _arr(x)
    if x._dtype.kind != "f" or x._size == 0:
        return check_out(out, x.copy(), "rint")
    f = floor(x)
    d = subtract(x, f)
    up = add(f, 1)
    half = add(f, mod(f, 2))
    r = where(greater(d, 0.5), up, where(less(d, 0.5), f, half))
    return check_out(out, cast(r, x._dtype), "rint")
fix = _make_unary("fix", "fix", keep_bool=True)
degrees = _make_unary("degrees", "degrees", True)
radians = _make_unary("radians", "radians", True)
rad2deg = degrees
deg2rad = radians


def negative(x, out=None, **kw):
    x = _arr(x)
    if x._dtype == _BOOL:
        raise TypeError("The numpy boolean negative, the `-` operator, is not supported, use the "
                        "`~` operator or the logical_not function instead.")
    return _unary("negative", "negative", x, out)


def positive(x, out=None, **kw):
    return check_out(out, _arr(x).copy(), "positive")


def exp2(x, out=None, **kw):
    return check_out(out, power(2.0, _to_float(x)), "exp2")


def round(a, decimals=0, out=None):  # noqa: A001  (numpy's name)
    """Round half to even (numpy's rule) to `decimals` places."""
    a = _arr(a)
    if a._dtype.kind in "iub":
        if decimals >= 0:
            return check_out(out, a.copy(), "round")
        f = 10 ** (-decimals)
        r = multiply(rint(true_divide(a, f)), f)
        return check_out(out, cast(r, a._dtype), "round")
    if decimals == 0:
        return check_out(out, rint(a), "round")
    f = 10.0 ** decimals
    return check_out(out, true_divide(rint(multiply(a, f)), f), "round")


around = round
round_ = round


def isnan(x, out=None, **kw):
    x = _arr(x)
    if x._dtype.kind != "f":
        return check_out(out, zeros(x.shape, dtype=_BOOL, ctx=x._ctx), "isnan")
    return check_out(out, not_equal(x, x), "isnan")


def isinf(x, out=None, **kw):
    x = _arr(x)
    if x._dtype.kind != "f":
        return check_out(out, zeros(x.shape, dtype=_BOOL, ctx=x._ctx), "isinf")
    return check_out(out, equal(absolute(x), float("inf")), "isinf")


def isposinf(x, out=None, **kw):
    x = _arr(x)
    if x._dtype.kind != "f":
        return check_out(out, zeros(x.shape, dtype=_BOOL, ctx=x._ctx), "isposinf")
    return check_out(out, equal(x, float("inf")), "isposinf")


def isneginf(x, out=None, **kw):
    x = _arr(x)
    if x._dtype.kind != "f":
        return check_out(out, zeros(x.shape, dtype=_BOOL, ctx=x._ctx), "isneginf")
    return check_out(out, equal(x, float("-inf")), "isneginf")


def isfinite(x, out=None, **kw):
    x = _arr(x)
    if x._dtype.kind != "f":
        return check_out(out, ones(x.shape, dtype=_BOOL, ctx=x._ctx), "isfinite")
    return check_out(out, logical_not(logical_or(isnan(x), isinf(x))), "isfinite")


def signbit(x, out=None, **kw):
    x = _arr(x)
    if x._dtype.kind == "f":
        # -0.0 has its sign bit set: 1/-0.0 is -inf
        neg = logical_or(less(x, 0), logical_and(equal(x, 0), less(reciprocal(x), 0)))
        return check_out(out, neg, "signbit")
    return check_out(out, less(x, 0), "signbit")


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, **kw):
    x = _arr(x)
    if x._dtype.kind != "f":
        return x.copy() if copy else x
    info = onp.finfo(x._dtype)
    posinf = float(info.max) if posinf is None else float(posinf)
    neginf = float(info.min) if neginf is None else float(neginf)
    r = where(isnan(x), nan, x)
    r = where(isposinf(x), posinf, r)
    r = where(isneginf(x), neginf, r)
    r = cast(r, x._dtype)
    if not copy:
        nd()._copyto(r, out=x)
        return x
    return r


def sinc(x, out=None, **kw):
    x = _to_float(x)
    px = multiply(x, math.pi)
    safe = where(equal(px, 0), 1.0, px)
    return check_out(out, where(equal(px, 0), 1.0, true_divide(sin(safe), safe)).astype(
        x._dtype, copy=False), "sinc")


def logaddexp(x1, x2, out=None, **kw):
    a, b = _to_float(x1), _to_float(x2)
    m = maximum(a, b)
    return check_out(out, add(m, log1p(exp(negative(absolute(subtract(a, b)))))), "logaddexp")


def heaviside(x1, x2, out=None, **kw):
    x1 = _to_float(x1)
    r = where(less(x1, 0), 0.0, where(greater(x1, 0), 1.0, x2))
    return check_out(out, cast(r, result_type(x1, x2)), "heaviside")


def clip(a, a_min=None, a_max=None, out=None, **kw):
    a = _arr(a)
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    if isinstance(a_min, NDArray) or isinstance(a_max, NDArray) or \
            (not is_scalar(a_min) and a_min is not None) or \
            (not is_scalar(a_max) and a_max is not None):
        r = a
        if a_min is not None:
            r = maximum(r, a_min)
        if a_max is not None:
            r = minimum(r, a_max)
        return check_out(out, r, "clip")
    if a._size == 0:
        return check_out(out, a.copy(), "clip")
    if a._dtype.kind == "f":
        lo = -onp.inf if a_min is None else float(a_min)
        hi = onp.inf if a_max is None else float(a_max)
    elif a._dtype == _BOOL:
        return check_out(out, cast(clip(cast(a, onp.int8), a_min, a_max), _BOOL), "clip")
    else:
        info = onp.iinfo(a._dtype)
        lo = float(info.min) if a_min is None else float(a_min)
        hi = float(info.max) if a_max is None else float(a_max)
    y = a if a.ndim else reshape_view(a, (1,))
    r = reshape_view(wrap(nd().clip(y, a_min=lo, a_max=hi)), a.shape)
    return check_out(out, r, "clip")


def where(condition, x=None, y=None):
    """Elements of `x` where `condition` holds, else of `y` (broadcasting); with `condition`
    alone, the indices of its non-zero elements (as nonzero)."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    cond = _arr(condition, _core.ctx_of(x, y))
    if is_scalar(x) and is_scalar(y):
        dt = onp.result_type(x, y) if not isinstance(x, float) and not isinstance(y, float) \
            else default_float()
        if dt == onp.dtype(onp.float64):
            dt = default_float()
        x = full((), x, dtype=dt, ctx=cond._ctx)
    x, y, dt = _promote_pair(x, y, "where")
    if not isinstance(x, NDArray):
        x = full((), x, dtype=dt, ctx=y._ctx)
    if not isinstance(y, NDArray):
        y = full((), y, dtype=dt, ctx=x._ctx)
    x, y = cast(x, dt), cast(y, dt)
    shp = _bcast_shape(cond.shape, x.shape, y.shape)
    if 0 in shp:
        return zeros(shp, dtype=dt, ctx=x._ctx)
    work = shp if shp else (1,)
    c = broadcast_to(as_bits(cond), work)
    xb, yb = broadcast_to(as_bits(x), work), broadcast_to(as_bits(y), work)
    if c._dtype != xb._dtype:
        c = cast(c, xb._dtype)
    r = wrap(nd().where(c, xb, yb))
    if dt == _BOOL:
        r = to_bool(r)
    return reshape_view(r, shp)


# ---- reductions --------------------------------------------------------------------------------
def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduce(name, ndname, a, axis, keepdims, out=None, dtype=None, empty_value=None,
            bool_as=None, initial=None):
    a = _arr(a)
    axes = norm_axes(axis, a.ndim, name)
    rshape = _reduced_shape(a.shape, axes, keepdims)
    if dtype is not None:
        a = cast(a, dtype)
    elif a._dtype == _BOOL and bool_as is not None:
        a = cast(a, bool_as)
    if not axes:
        res = a.copy()
    elif a._size == 0:
        if empty_value is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             f"identity")
        res = full(rshape, empty_value, dtype=a._dtype, ctx=a._ctx)
    else:
        src = as_bits(a)
        r = wrap(_op(ndname)(src, axis=axes, keepdims=keepdims))
        if src is not a:
            r = to_bool(r)
        res = reshape_view(r, rshape)
    if initial is not None:
        res = (add if ndname in ("sum", "nansum") else multiply if ndname == "prod" else
               maximum if ndname == "max" else minimum)(res, initial)
    return check_out(out, res, name)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    _no_where(where, "sum")
    return _reduce("sum", "sum", a, axis, keepdims, out, dtype, 0, onp.int64, initial)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_where(where, "prod")
    return _reduce("prod", "prod", a, axis, keepdims, out, dtype, 1, onp.int64, initial)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    a = _arr(a)
    return sum(where(isnan(a), 0, a), axis, dtype, out, keepdims)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    a = _arr(a)
    return prod(where(isnan(a), 1, a), axis, dtype, out, keepdims)


def _no_where(where, what):
    if where is not None and where is not True:
        raise NotImplementedError(f"{what}: where= is not supported")


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_where(where, "max")
    return _reduce("max", "max", a, axis, keepdims, out, None, initial, None, None)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_where(where, "min")
    return _reduce("min", "min", a, axis, keepdims, out, None, initial, None, None)


max = amax  # noqa: A001
min = amin  # noqa: A001


def nanmax(a, axis=None, out=None, keepdims=False):
    a = _arr(a)
    return amax(where(isnan(a), -onp.inf, a), axis, out, keepdims)


def nanmin(a, axis=None, out=None, keepdims=False):
    a = _arr(a)
    return amin(where(isnan(a), onp.inf, a), axis, out, keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    return check_out(out, subtract(amax(a, axis, keepdims=keepdims),
                                   amin(a, axis, keepdims=keepdims)), "ptp")


def _count(shape, axes):
    n = 1
    for i in axes:
        n *= shape[i]
    return n


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    _no_where(where, "mean")
    a = _arr(a)
    axes = norm_axes(axis, a.ndim, "mean")
    dt = onp.dtype(dtype) if dtype is not None else (
        a._dtype if a._dtype.kind == "f" else default_float())
    x = cast(a, dt)
    n = _count(a.shape, axes)
    if n == 0:
        return check_out(out, full(_reduced_shape(a.shape, axes, keepdims), onp.nan, dtype=dt,
                                   ctx=a._ctx), "mean")
    if not axes:
        return check_out(out, x.copy(), "mean")
    r = wrap(nd().mean(x, axis=axes, keepdims=keepdims))
    return check_out(out, reshape_view(r, _reduced_shape(a.shape, axes, keepdims)), "mean")


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    _no_where(where, "var")
    a = _arr(a)
    axes = norm_axes(axis, a.ndim, "var")
    dt = onp.dtype(dtype) if dtype is not None else (
        a._dtype if a._dtype.kind == "f" else default_float())
    x = cast(a, dt)
    n = _count(a.shape, axes)
    m = mean(x, axes, keepdims=True)
    d = square(subtract(x, m))
    s = sum(d, axes, keepdims=keepdims)
    denom = n - ddof
    r = true_divide(s, denom) if denom > 0 else multiply(s, onp.nan)
    return check_out(out, cast(r, dt), "var")


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    return check_out(out, sqrt(var(a, axis, dtype, None, ddof, keepdims, where)), "std")


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    a = _arr(a)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        n = a.size if axis is None else _count(a.shape, norm_axes(axis, a.ndim, "average"))
        return (avg, full(avg.shape, n, dtype=avg._dtype, ctx=a._ctx)) if returned else avg
    w = _arr(weights, a._ctx)
    if w.shape != a.shape:
        if axis is None or not isinstance(axis, (numbers.Integral, onp.integer)):
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.ndim != 1 or w.shape[0] != a.shape[axis]:
            raise ValueError("Length of weights not compatible with specified axis.")
        shp = [1] * a.ndim
        shp[norm_axis(axis, a.ndim, "average")] = w.shape[0]
        w = w.reshape(shp)
    dt = result_type(a, w)
    if dt.kind != "f":
        dt = default_float()
    a, w = cast(a, dt), cast(w, dt)
    wsum = sum(broadcast_to(w, a.shape), axis, keepdims=keepdims)
    if _pybool(any(equal(wsum, 0))):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = true_divide(sum(multiply(a, w), axis, keepdims=keepdims), wsum)
    return (avg, wsum) if returned else avg


def _cum(name, a, axis, dtype, out, mult):
    a = _arr(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    if a.ndim == 0:
        a = reshape_view(a, (1,))
    axis = norm_axis(axis, a.ndim, name)
    dt = onp.dtype(dtype) if dtype is not None else (
        onp.dtype(onp.int64) if a._dtype == _BOOL else a._dtype)
    n = a.shape[axis]
    if a._size == 0:
        return check_out(out, zeros(a.shape, dtype=dt, ctx=a._ctx), name)
    own = "_np_" + name
    if _has(own):
        return check_out(out, cast(wrap(_op(own)(a, axis=axis)), dt), name)
    work = onp.dtype(onp.float64) if dt.kind != "f" else dt
    x = cast(a, work)
    x = moveaxis(x, axis, -1)
    shp = x.shape
    x2 = reshape_view(x, (x.size // n, n))
    if not mult:
        upper = triu(ones((n, n), dtype=work, ctx=a._ctx))
        r = dot(x2, upper)
    else:
        # running products: exp(cumsum(log|x|)) with the sign and zeros tracked separately
        parts = [x2[:, 0:1]]
        acc = x2[:, 0:1]
        for j in range(1, n):
            acc = multiply(acc, x2[:, j:j + 1])
            parts.append(acc)
        r = concatenate(parts, axis=1)
    r = moveaxis(reshape_view(r, shp), -1, axis)
    return check_out(out, cast(r, dt), name)


def cumsum(a, axis=None, dtype=None, out=None):
    return _cum("cumsum", a, axis, dtype, out, False)


def cumprod(a, axis=None, dtype=None, out=None):
    return _cum("cumprod", a, axis, dtype, out, True)


from .multiarray import triu  # noqa: E402


def _arg(name, ndname, a, axis, out, keepdims=False):
    a = _arr(a)
    if a._size == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    src = as_bits(a)
    if src._dtype.kind in "iu" and src._dtype != onp.dtype(onp.float64):
        src = cast(src, onp.float64)   # the kernels work on values; keep ints exact
    if axis is None:
        r = wrap(_op(ndname)(reshape_view(src, (src._size,)), axis=0))
        r = reshape_view(cast(r, onp.int64), (1,) * a.ndim if keepdims else ())
    else:
        ax = norm_axis(axis, a.ndim, name)
        y = src if src.ndim else reshape_view(src, (1,))
        r = wrap(_op(ndname)(y, axis=ax, keepdims=keepdims))
        r = reshape_view(cast(r, onp.int64), _reduced_shape(a.shape, (ax,), keepdims))
    return check_out(out, r, name)


def argmax(a, axis=None, out=None, keepdims=False):
    return _arg("argmax", "argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    return _arg("argmin", "argmin", a, axis, out, keepdims)


def all(a, axis=None, out=None, keepdims=False, where=None):  # noqa: A001
    a = _arr(a)
    b = not_equal(a, 0) if a._dtype != _BOOL else a
    return _reduce("all", "min", b, axis, keepdims, out, None, True)


def any(a, axis=None, out=None, keepdims=False, where=None):  # noqa: A001
    a = _arr(a)
    b = not_equal(a, 0) if a._dtype != _BOOL else a
    return _reduce("any", "max", b, axis, keepdims, out, None, False)


def count_nonzero(a, axis=None, keepdims=False):
    return sum(not_equal(_arr(a), 0), axis, onp.int64, keepdims=keepdims)


# ---- shapes ----------------------------------------------------------------------------------------
def shape(a):
    return _arr(a).shape if not isinstance(a, NDArray) else a.shape


def size(a, axis=None):
    s = shape(a)
    if axis is None:
        n = 1
        for d in s:
            n *= d
        return n
    return s[axis]


def ndim(a):
    return len(shape(a))


def copy(a, order="C"):
    return _arr(a).copy()


def result_type(*arrays_and_dtypes):
    dt = None
    for v in arrays_and_dtypes:
        if isinstance(v, NDArray):
            d = v._dtype
        elif isinstance(v, (onp.dtype, type, str)):
            d = onp.dtype(v)
        elif is_scalar(v):
            d = None if dt is None else _core.scalar_result_type(dt, v)
            if d is None:
                d = onp.asarray(v).dtype
                if d == onp.dtype(onp.float64):
                    d = default_float()
        else:
            d = onp.asarray(v).dtype
        dt = d if dt is None else _core.result_type(dt, d)
    return dt


def reshape(a, newshape, order="C"):
    return _arr(a).reshape(newshape, order=order)


def ravel(x, order="C"):
    x = _arr(x)
    if order not in ("C", "K", "A"):
        raise NotImplementedError("ravel: only order='C' is supported")
    return reshape_view(x, (x._size,))


def transpose(a, axes=None):
    a = _arr(a)
    if axes is None:
        axes = tuple(range(a.ndim))[::-1]
    else:
        axes = tuple(norm_axis(int(x), a.ndim, "transpose") for x in axes)
        if sorted(axes) != list(range(a.ndim)):
            raise ValueError("axes don't match array")
    if axes == tuple(range(a.ndim)):
        return reshape_view(a, a.shape) if a._ag is None else wrap(nd().identity(a)) \
            if a.ndim else a
    new_shape = tuple(a.shape[i] for i in axes)
    if a._size == 0:
        return empty(new_shape, dtype=a._dtype, ctx=a._ctx)
    return wrap(nd().transpose(a, axes=axes))


def swapaxes(a, axis1, axis2):
    a = _arr(a)
    i, j = norm_axis(axis1, a.ndim, "swapaxes"), norm_axis(axis2, a.ndim, "swapaxes")
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    a = _arr(a)
    src = [source] if isinstance(source, (numbers.Integral, onp.integer)) else list(source)
    dst = [destination] if isinstance(destination, (numbers.Integral, onp.integer)) \
        else list(destination)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    src = [norm_axis(s, a.ndim, "moveaxis") for s in src]
    dst = [norm_axis(d, a.ndim, "moveaxis") for d in dst]
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def rollaxis(a, axis, start=0):
    a = _arr(a)
    n = a.ndim
    axis = norm_axis(axis, n, "rollaxis")
    if not -n <= start <= n:
        raise ValueError(f"rollaxis: start {start} out of range")
    if start < 0:
        start += n
    if axis < start:
        start -= 1
    if axis == start:
        return a
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return transpose(a, axes)


def expand_dims(a, axis):
    a = _arr(a)
    axes = (axis,) if isinstance(axis, (numbers.Integral, onp.integer)) else tuple(axis)
    out_nd = a.ndim + len(axes)
    axes = sorted(norm_axis(x, out_nd, "expand_dims") for x in axes)
    shp = list(a.shape)
    for x in axes:
        shp.insert(x, 1)
    return reshape_view(a, shp)


def squeeze(a, axis=None):
    a = _arr(a)
    if axis is None:
        shp = tuple(d for d in a.shape if d != 1)
    else:
        axes = norm_axes(axis, a.ndim, "squeeze")
        for x in axes:
            if a.shape[x] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal "
                                 "to one")
        shp = tuple(d for i, d in enumerate(a.shape) if i not in axes)
    return reshape_view(a, shp)


def broadcast_to(array, shape):  # noqa: A002  (numpy's name)
    a = _arr(array)
    shape = (int(shape),) if isinstance(shape, (numbers.Integral, onp.integer)) else \
        tuple(int(d) for d in shape)
    if len(shape) < a.ndim:
        raise ValueError("input operand has more dimensions than allowed by the axis remapping")
    padded = (1,) * (len(shape) - a.ndim) + a.shape
    for s, t in zip(padded, shape):
        if s != t and s != 1:
            raise ValueError(f"operands could not be broadcast together with remapped shapes "
                             f"[original->remapped]: {a.shape} and requested shape {shape}")
    if padded == shape:
        return reshape_view(a, shape)
    if 0 in shape:
        return zeros(shape, dtype=a._dtype, ctx=a._ctx)
    x = reshape_view(a, padded)
    return wrap(nd().broadcast_to(x, shape=shape))


def broadcast_arrays(*args):
    """A tuple, as numpy 2 returns (MXNet 1.9.1, with numpy 1.x, returned a list)."""
    arrs = [_arr(a) for a in args]
    shp = _bcast_shape(*[a.shape for a in arrs])
    return tuple(broadcast_to(a, shp) for a in arrs)


def tile(A, reps):
    a = _arr(A)
    reps = (int(reps),) if isinstance(reps, (numbers.Integral, onp.integer)) else \
        tuple(int(r) for r in reps)
    n = _pymax(a.ndim, len(reps))
    reps = (1,) * (n - len(reps)) + reps
    x = reshape_view(a, (1,) * (n - a.ndim) + a.shape)
    out_shape = tuple(d * r for d, r in zip(x.shape, reps))
    if 0 in out_shape or n == 0:
        return zeros(out_shape, dtype=a._dtype, ctx=a._ctx) if 0 in out_shape else a.copy()
    return wrap(nd().tile(x, reps=reps))


def repeat(a, repeats, axis=None):
    a = _arr(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = norm_axis(axis, a.ndim, "repeat")
    if isinstance(repeats, NDArray):
        repeats = repeats.asnumpy()
    if onp.ndim(repeats) == 0 or onp.size(repeats) == 1:
        r = int(onp.asarray(repeats).reshape(-1)[0])
        if r < 0:
            raise ValueError("negative dimensions are not allowed")
        if r == 0 or a._size == 0:
            shp = list(a.shape)
            shp[axis] *= r
            return zeros(tuple(shp), dtype=a._dtype, ctx=a._ctx)
        return wrap(nd().repeat(a, repeats=r, axis=axis))
    reps = onp.asarray(repeats, dtype=onp.int64)
    if reps.shape != (a.shape[axis],):
        raise ValueError(f"repeat: repeats has {reps.size} values for an axis of length "
                         f"{a.shape[axis]}")
    idx = onp.repeat(onp.arange(a.shape[axis]), reps)      # positions: index bookkeeping
    return take(a, array(idx, dtype="int64", ctx=a._ctx), axis=axis)


def flip(m, axis=None):
    a = _arr(m)
    if a.ndim == 0:
        return a.copy()
    axes = norm_axes(axis, a.ndim, "flip")
    if a._size == 0 or not axes:
        return a.copy()
    return wrap(nd().flip(a, axis=axes))


def fliplr(m):
    a = _arr(m)
    if a.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(a, 1)


def flipud(m):
    a = _arr(m)
    if a.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(a, 0)


def _slice_axis(a, axis, begin, end):
    if end - begin == a.shape[axis]:
        return a
    if end <= begin:        # empty (slice_axis refuses that outside numpy shapes)
        key = (slice(None),) * axis + (slice(0, 0),)
        if _recorded(a):
            return _recorded_empty_index(a, key, a[key].shape)
        shape = list(a.shape)
        shape[axis] = 0
        return zeros(tuple(shape), dtype=a._dtype, ctx=a._ctx)
    return wrap(nd().slice_axis(a, axis=axis, begin=begin, end=end))


def roll(a, shift, axis=None):
    a = _arr(a)
    if axis is None:
        return reshape_view(roll(ravel(a), shift, 0), a.shape)
    shifts = (shift,) if isinstance(shift, (numbers.Integral, onp.integer)) else tuple(shift)
    axes = (axis,) if isinstance(axis, (numbers.Integral, onp.integer)) else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    r = a
    for s, ax in zip(shifts, axes):
        ax = norm_axis(ax, a.ndim, "roll")
        n = a.shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s == 0:
            continue
        r = concatenate([_slice_axis(r, ax, n - s, n), _slice_axis(r, ax, 0, n - s)], axis=ax)
    return r if r is not a else a.copy()


def rot90(m, k=1, axes=(0, 1)):
    m = _arr(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    a0, a1 = norm_axis(axes[0], m.ndim, "rot90"), norm_axis(axes[1], m.ndim, "rot90")
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k %= 4
    if k == 0:
        return m.copy()
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1)


def pad(array, pad_width, mode="constant", **kwargs):  # noqa: A002
    """numpy's pad for modes constant, edge, reflect, symmetric, wrap, minimum, maximum, mean
    (composed from slices and concatenation, so autograd flows through it)."""
    a = _arr(array)
    pw = onp.broadcast_to(onp.asarray(pad_width, dtype=onp.int64), (a.ndim, 2)).tolist()
    if onp.any(onp.asarray(pw) < 0):
        raise ValueError("index can't contain negative values")
    r = a
    cval = kwargs.get("constant_values", 0)
    cvals = onp.broadcast_to(onp.asarray(cval, dtype=onp.float64), (a.ndim, 2)).tolist()
    for ax, (before, after) in enumerate(pw):
        if before == 0 and after == 0:
            continue
        n = r.shape[ax]
        pieces = []
        if mode == "constant":
            for cnt, v in ((before, cvals[ax][0]), (after, cvals[ax][1])):
                shp = list(r.shape)
                shp[ax] = cnt
                pieces.append(full(tuple(shp), v, dtype=r._dtype, ctx=r._ctx))
            lo, hi = pieces
        elif mode == "edge":
            if n == 0:
                raise ValueError("can't extend empty axis using modes other than 'constant'")
            lo = repeat(_slice_axis(r, ax, 0, 1), before, ax)
            hi = repeat(_slice_axis(r, ax, n - 1, n), after, ax)
        elif mode in ("maximum", "minimum", "mean"):
            f = {"maximum": amax, "minimum": amin, "mean": mean}[mode]
            stat = f(r, axis=ax, keepdims=True)
            stat = cast(stat, r._dtype)
            lo, hi = repeat(stat, before, ax), repeat(stat, after, ax)
        elif mode in ("reflect", "symmetric", "wrap"):
            lo = _pad_side(r, ax, before, mode, True)
            hi = _pad_side(r, ax, after, mode, False)
        else:
            raise NotImplementedError(f"pad: mode {mode!r} is not supported")
        parts = [p for p in (lo, r, hi) if p.shape[ax] > 0]
        r = concatenate(parts, axis=ax)
    return r if r is not a else a.copy()


def _pad_side(r, ax, cnt, mode, before):
    n = r.shape[ax]
    if cnt == 0:
        shp = list(r.shape)
        shp[ax] = 0
        return zeros(tuple(shp), dtype=r._dtype, ctx=r._ctx)
    if mode == "wrap":
        idx = [(i % n) for i in range(-cnt, 0)] if before else [i % n for i in range(cnt)]
    else:
        # reflect: period 2n-2 without repeating the edge; symmetric: period 2n with it
        def refl(i):
            if mode == "reflect":
                if n == 1:
                    return 0
                p = 2 * n - 2
                i %= p
                return i if i < n else p - i
            p = 2 * n
            i %= p
            return i if i < n else p - 1 - i
        idx = [refl(i) for i in range(-cnt, 0)] if before else \
            [refl(n - 1 + i) if mode == "reflect" else refl(n + i - 0) for i in range(1, cnt + 1)]
        if not before and mode == "symmetric":
            idx = [refl(n - 1 + i) for i in range(1, cnt + 1)]
            idx = [(2 * n - 1 - (n - 1 + i)) % (2 * n) if False else _sym(n, n - 1 + i)
                   for i in range(1, cnt + 1)]
        if before and mode == "symmetric":
            idx = [_sym(n, i) for i in range(-cnt, 0)]
    return take(r, array(onp.asarray(idx, dtype=onp.int64), dtype="int64", ctx=r._ctx), axis=ax)


def _sym(n, i):
    p = 2 * n
    i %= p
    return i if i < n else p - 1 - i


def concatenate(seq, axis=0, out=None, dtype=None, casting="same_kind"):
    arrs = [_arr(a) for a in seq]
    if not arrs:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrs = [ravel(a) for a in arrs]
        axis = 0
    dt = arrs[0]._dtype
    for a in arrs[1:]:
        dt = _core.result_type(dt, a._dtype)
    if dtype is not None:
        dt = onp.dtype(dtype)
    nd_ = arrs[0].ndim
    if nd_ == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    for a in arrs:
        if a.ndim != nd_:
            raise ValueError("all the input array dimensions except for the concatenation axis "
                             "must match exactly, but along dimension 0, the arrays have "
                             f"{nd_} and {a.ndim} dimension(s)")
    ax = norm_axis(axis, nd_, "concatenate")
    for a in arrs:
        for i in range(nd_):
            if i != ax and a.shape[i] != arrs[0].shape[i]:
                raise ValueError("all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {i}, the arrays "
                                 f"have size {arrs[0].shape[i]} and {a.shape[i]}")
    arrs = [cast(a, dt) for a in arrs]
    total = _pysum(a.shape[ax] for a in arrs)
    shp = list(arrs[0].shape)
    shp[ax] = total
    keep = [a for a in arrs if a._size > 0]
    if not keep:
        res = zeros(tuple(shp), dtype=dt, ctx=arrs[0]._ctx)
    elif len(keep) == 1:
        res = keep[0].copy() if keep[0]._ag is None else wrap(nd().identity(keep[0]))
    else:
        res = wrap(nd().concat(*keep, dim=ax))
    return check_out(out, res, "concatenate")


def append(arr, values, axis=None):
    arr, values = _arr(arr), _arr(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def stack(arrays, axis=0, out=None):
    arrs = [_arr(a) for a in arrays]
    if not arrs:
        raise ValueError("need at least one array to stack")
    shp = arrs[0].shape
    for a in arrs:
        if a.shape != shp:
            raise ValueError("all input arrays must have the same shape")
    ax = norm_axis(axis, len(shp) + 1, "stack")
    return check_out(out, concatenate([expand_dims(a, ax) for a in arrs], ax), "stack")


def atleast_1d(*arys):
    res = [reshape_view(a, (1,)) if a.ndim == 0 else a for a in (_arr(x) for x in arys)]
    return res[0] if len(res) == 1 else tuple(res)     # numpy 2: a tuple


def atleast_2d(*arys):
    res = []
    for a in (_arr(x) for x in arys):
        if a.ndim == 0:
            a = reshape_view(a, (1, 1))
        elif a.ndim == 1:
            a = reshape_view(a, (1,) + a.shape)
        res.append(a)
    return res[0] if len(res) == 1 else tuple(res)     # numpy 2: a tuple


def atleast_3d(*arys):
    res = []
    for a in (_arr(x) for x in arys):
        if a.ndim == 0:
            a = reshape_view(a, (1, 1, 1))
        elif a.ndim == 1:
            a = reshape_view(a, (1,) + a.shape + (1,))
        elif a.ndim == 2:
            a = reshape_view(a, a.shape + (1,))
        res.append(a)
    return res[0] if len(res) == 1 else tuple(res)     # numpy 2: a tuple


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def vstack(tup, out=None):
    return check_out(out, concatenate(_as_list(atleast_2d(*tup)), 0), "vstack")


row_stack = vstack


def hstack(tup, out=None):
    arrs = _as_list(atleast_1d(*tup))
    return check_out(out, concatenate(arrs, 0 if arrs[0].ndim == 1 else 1), "hstack")


def dstack(tup):
    return concatenate(_as_list(atleast_3d(*tup)), 2)


def column_stack(tup):
    arrs = []
    for a in (_arr(x) for x in tup):
        if a.ndim < 2:
            a = reshape_view(a, (a.size, 1))
        arrs.append(a)
    return concatenate(arrs, 1)


def array_split(ary, indices_or_sections, axis=0):
    a = _arr(ary)
    ax = norm_axis(axis, a.ndim, "array_split")
    n = a.shape[ax]
    if isinstance(indices_or_sections, (numbers.Integral, onp.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        bounds, b = [], 0
        for s in sizes:
            bounds.append((b, b + s))
            b += s
    else:
        idx = [0] + [int(i) for i in indices_or_sections] + [n]
        bounds = []
        for b, e in zip(idx[:-1], idx[1:]):
            b = _pymin(_pymax(b if b >= 0 else b + n, 0), n)
            e = _pymin(_pymax(e if e >= 0 else e + n, 0), n)
            bounds.append((b, _pymax(b, e)))
    out = []
    for b, e in bounds:
        if e == b:
            shp = list(a.shape)
            shp[ax] = 0
            out.append(zeros(tuple(shp), dtype=a._dtype, ctx=a._ctx))
        else:
            out.append(wrap(nd().slice_axis(a, axis=ax, begin=b, end=e)))
    return out


def split(ary, indices_or_sections, axis=0):
    a = _arr(ary)
    if isinstance(indices_or_sections, (numbers.Integral, onp.integer)):
        ax = norm_axis(axis, a.ndim, "split")
        if a.shape[ax] % int(indices_or_sections):
            raise ValueError("array split does not result in an equal division")
    return array_split(a, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    a = _arr(ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    a = _arr(ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    a = _arr(ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, 2)


def delete(arr, obj, axis=None):
    a = _arr(arr)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = norm_axis(axis, a.ndim, "delete")
    n = a.shape[ax]
    if isinstance(obj, NDArray):
        obj = obj.asnumpy()
    keep = onp.ones(n, dtype=bool)
    keep[onp.arange(n)[obj]] = False
    return take(a, array(onp.nonzero(keep)[0], dtype="int64", ctx=a._ctx), axis=ax)


def _insert_gather(a, obj, values, ax):
    """insert at several positions (a sequence, an array or a slice `obj`): numpy.insert run on
    element numbers (a's, then values' after them) gives every output element's source, with
    numpy's own broadcasting of `values`; the device gathers them (autograd reaches both)."""
    v = cast(_arr(values, a._ctx), a._dtype)
    if isinstance(obj, NDArray):
        obj = obj.asnumpy()
    a_tag = onp.arange(a._size, dtype=onp.int64).reshape(a.shape)
    v_tag = onp.arange(a._size, a._size + v._size, dtype=onp.int64).reshape(v.shape)
    src = onp.insert(a_tag, obj, v_tag, axis=ax)
    pool = concatenate([ravel(a), ravel(v)]) if v._size else ravel(a)
    if src.size == 0:
        return zeros(src.shape, dtype=a._dtype, ctx=a._ctx)
    return reshape_view(take(pool, array(src.reshape(-1), dtype="int64", ctx=a._ctx)),
                        src.shape)


def insert(arr, obj, values, axis=None):
    a = _arr(arr)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = norm_axis(axis, a.ndim, "insert")
    if not isinstance(obj, (numbers.Integral, onp.integer)):
        return _insert_gather(a, obj, values, ax)
    pos = int(obj)
    n = a.shape[ax]
    if pos < 0:
        pos += n
    v = _arr(values, a._ctx)
    vshape = list(a.shape)
    vshape[ax] = 1 if v.ndim == 0 or v.ndim < a.ndim and v.size <= 1 else \
        (v.shape[ax] if v.ndim == a.ndim else v.size)
    if v.ndim < a.ndim:
        v = broadcast_to(moveaxis(reshape_view(v, v.shape + (1,) * 0), -1, -1) if v.ndim else v,
                         tuple(vshape) if v.ndim == 0 else tuple(
                             vshape[:ax] + [v.size] + vshape[ax + 1:])) if v.ndim else \
            broadcast_to(v, tuple(vshape))
    v = cast(v, a._dtype)
    return concatenate([_slice_axis(a, ax, 0, pos), v, _slice_axis(a, ax, pos, n)], ax)


def diff(a, n=1, axis=-1, prepend=None, append=None):  # noqa: A002
    a = _arr(a)
    ax = norm_axis(axis, a.ndim, "diff")
    if prepend is not None or append is not None:
        parts = []
        for extra in (prepend,):
            if extra is not None:
                e = _arr(extra, a._ctx)
                shp = list(a.shape)
                shp[ax] = 1
                parts.append(broadcast_to(e, tuple(shp)) if e.ndim == 0 else e)
        parts.append(a)
        if append is not None:
            e = _arr(append, a._ctx)
            shp = list(a.shape)
            shp[ax] = 1
            parts.append(broadcast_to(e, tuple(shp)) if e.ndim == 0 else e)
        a = concatenate(parts, ax)
    for _ in range(n):
        m = a.shape[ax]
        if m == 0:
            break
        hi, lo = _slice_axis(a, ax, 1, m), _slice_axis(a, ax, 0, m - 1)
        a = not_equal(hi, lo) if a._dtype == _BOOL else subtract(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    a = ravel(_arr(ary))
    d = diff(a)
    parts = []
    if to_begin is not None:
        parts.append(ravel(_arr(to_begin, a._ctx)))
    parts.append(d)
    if to_end is not None:
        parts.append(ravel(_arr(to_end, a._ctx)))
    return concatenate(parts) if len(parts) > 1 else d


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    a, b = _arr(a), _arr(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product (dimension must be 2 or 3)")

    def comp(x, i):
        if i >= x.shape[-1]:
            return zeros(x.shape[:-1], dtype=x._dtype, ctx=x._ctx)
        return squeeze(_slice_axis(x, x.ndim - 1, i, i + 1), -1)
    a0, a1, a2 = comp(a, 0), comp(a, 1), comp(a, 2)
    b0, b1, b2 = comp(b, 0), comp(b, 1), comp(b, 2)
    c2 = subtract(multiply(a0, b1), multiply(a1, b0))
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return c2
    c0 = subtract(multiply(a1, b2), multiply(a2, b1))
    c1 = subtract(multiply(a2, b0), multiply(a0, b2))
    return moveaxis(stack([c0, c1, c2], -1), -1, axisc)


# ---- linear algebra products ---------------------------------------------------------------------
def _float_work(*arrs):
    dt = arrs[0]._dtype
    for a in arrs[1:]:
        dt = _core.result_type(dt, a._dtype)
    work = dt if dt.kind == "f" else onp.dtype(onp.float64)
    return dt, [cast(a, work) for a in arrs]


def dot(a, b, out=None):
    a, b = _arr(a), _arr(b, None)
    if a.ndim == 0 or b.ndim == 0:
        return check_out(out, multiply(a, b), "dot")
    dt, (x, y) = _float_work(a, b)
    if x.shape[-1] != (y.shape[0] if y.ndim == 1 else y.shape[-2]):
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim "
                         f"{a.ndim - 1}) != {y.shape[0] if y.ndim == 1 else y.shape[-2]} (dim "
                         f"{0 if y.ndim == 1 else y.ndim - 2})")
    if y.ndim > 2:
        y = moveaxis(y, -2, 0)
    oshape = x.shape[:-1] + y.shape[1:]
    if x._size == 0 or y._size == 0:
        return check_out(out, zeros(oshape, dtype=dt, ctx=a._ctx), "dot")
    if x.ndim == 1 and y.ndim == 1:
        r = wrap(nd().dot(reshape_view(x, (1, x.shape[0])), y))
    else:
        r = wrap(nd().dot(x, y))
    return check_out(out, cast(reshape_view(r, oshape), dt), "dot")


def matmul(a, b, out=None, **kw):
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    dt, (x, y) = _float_work(a, b)
    x1 = x.ndim == 1
    y1 = y.ndim == 1
    if x1:
        x = reshape_view(x, (1, x.shape[0]))
    if y1:
        y = reshape_view(y, (y.shape[0], 1))
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature (n?,k),(k,m?)->(n?,m?) (size {y.shape[-2]} is "
                         f"different from {x.shape[-1]})")
    batch = _bcast_shape(x.shape[:-2], y.shape[:-2])
    n, k, m = x.shape[-2], x.shape[-1], y.shape[-1]
    oshape = batch + (n, m)
    if 0 in oshape or k == 0:
        r = zeros(oshape, dtype=x._dtype, ctx=x._ctx)
    elif not batch:
        r = wrap(nd().dot(x, y))
    else:
        nb = 1
        for d in batch:
            nb *= d
        xb = reshape_view(broadcast_to(x, batch + (n, k)), (nb, n, k))
        yb = reshape_view(broadcast_to(y, batch + (k, m)), (nb, k, m))
        r = reshape_view(wrap(nd().batch_dot(xb, yb)), oshape)
    fshape = oshape
    if x1:
        fshape = fshape[:-2] + fshape[-1:]
    if y1:
        fshape = fshape[:-1]
    return check_out(out, cast(reshape_view(r, fshape), dt), "matmul")


def tensordot(a, b, axes=2):
    a, b = _arr(a), _arr(b)
    if isinstance(axes, (numbers.Integral, onp.integer)):
        n = int(axes)
        ax_a = list(range(a.ndim - n, a.ndim))
        ax_b = list(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (numbers.Integral, onp.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (numbers.Integral, onp.integer)) else list(ax_b)
    if len(ax_a) != len(ax_b):
        raise ValueError("shape-mismatch for sum")
    ax_a = [norm_axis(x, a.ndim, "tensordot") for x in ax_a]
    ax_b = [norm_axis(x, b.ndim, "tensordot") for x in ax_b]
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError("shape-mismatch for sum")
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    k = 1
    for i in ax_a:
        k *= a.shape[i]
    ma = 1
    for i in free_a:
        ma *= a.shape[i]
    mb = 1
    for i in free_b:
        mb *= b.shape[i]
    at = reshape_view(transpose(a, free_a + ax_a) if a.ndim else a, (ma, k))
    bt = reshape_view(transpose(b, ax_b + free_b) if b.ndim else b, (k, mb))
    r = matmul(at, bt)
    return reshape_view(r, tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b))


def inner(a, b):
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b, out=None):
    a, b = ravel(_arr(a)), ravel(_arr(b))
    return check_out(out, multiply(reshape_view(a, (a.size, 1)), reshape_view(b, (1, b.size))),
                     "outer")


def vdot(a, b):
    a, b = ravel(_arr(a)), ravel(_arr(b))
    if a.size != b.size:
        raise ValueError("cannot reshape: vdot needs arrays of the same size")
    return dot(a, b)


def kron(a, b):
    a, b = _arr(a), _arr(b)
    n = _pymax(a.ndim, b.ndim)
    a = reshape_view(a, (1,) * (n - a.ndim) + a.shape)
    b = reshape_view(b, (1,) * (n - b.ndim) + b.shape)
    ia = []
    ib = []
    for da, db in zip(a.shape, b.shape):
        ia += [da, 1]
        ib += [1, db]
    r = multiply(reshape_view(a, ia), reshape_view(b, ib))
    return reshape_view(r, tuple(da * db for da, db in zip(a.shape, b.shape)))


def einsum(*operands, **kwargs):
    """numpy's einsum (explicit and implicit output, '...' broadcasting), evaluated pairwise as
    broadcast products followed by sums, so autograd differentiates it."""
    out = kwargs.pop("out", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"einsum: unexpected arguments {sorted(kwargs)}")
    subscripts, ops = operands[0], [_arr(o) for o in operands[1:]]
    if not isinstance(subscripts, str):
        raise NotImplementedError("einsum: only the subscripts-string form is supported")
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, rhs = subscripts.split("->")
        explicit = True
    else:
        lhs, rhs, explicit = subscripts, None, False
    terms = lhs.split(",")
    if len(terms) != len(ops):
        raise ValueError("einsum: more operands than subscript terms" if len(ops) > len(terms)
                         else "einsum: fewer operands than subscript terms")
    used = set(c for c in subscripts if c.isalpha())
    free_letters = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                    if c not in used]
    ell_n = 0
    for t, o in zip(terms, ops):
        if "..." in t:
            ell_n = _pymax(ell_n, o.ndim - (len(t) - 3))
    ell = "".join(free_letters[:ell_n])
    new_terms = []
    for t, o in zip(terms, ops):
        if "..." in t:
            k = o.ndim - (len(t) - 3)
            t = t.replace("...", ell[ell_n - k:] if k else "")
        if len(t) != o.ndim:
            raise ValueError(f"einsum: operand has {o.ndim} dimensions, subscripts '{t}' "
                             f"name {len(t)}")
        new_terms.append(t)
    if explicit:
        rhs = rhs.replace("...", ell)
    else:
        counts = {}
        for t in new_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        rhs = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    # sizes
    sizes = {}
    for t, o in zip(new_terms, ops):
        for c, d in zip(t, o.shape):
            if c in sizes and sizes[c] != d and d != 1 and sizes[c] != 1:
                raise ValueError(f"einsum: size of label '{c}' differs ({sizes[c]} vs {d})")
            sizes[c] = _pymax(sizes.get(c, d), d)
    dt = ops[0]._dtype
    for o in ops[1:]:
        dt = _core.result_type(dt, o._dtype)
    # repeated labels inside one term: take the diagonal
    cur = []
    for t, o in zip(new_terms, ops):
        o = cast(o, dt)
        while len(set(t)) != len(t):
            c = next(ch for ch in t if t.count(ch) > 1)
            i = t.index(c)
            j = t.index(c, i + 1)
            o = diagonal(o, 0, i, j)
            t = "".join(ch for k, ch in enumerate(t) if k not in (i, j)) + c
        cur.append((t, o))

    def needed_later(idx):
        keep = set(rhs)
        for k, (t, _) in enumerate(cur):
            if k > idx:
                keep |= set(t)
        return keep

    t0, acc = cur[0]
    # sum out labels only in the first operand and not needed anywhere else
    for k in range(1, len(cur) + 1):
        keep = needed_later(k - 1)
        drop = [i for i, c in enumerate(t0) if c not in keep]
        if drop:
            acc = sum(acc, tuple(drop))
            t0 = "".join(c for i, c in enumerate(t0) if i not in drop)
        if k == len(cur):
            break
        t1, o1 = cur[k]
        letters = t0 + "".join(c for c in t1 if c not in t0)
        a_shape = [acc.shape[t0.index(c)] if c in t0 else 1 for c in letters]
        a_perm = [t0.index(c) for c in letters if c in t0]
        b_perm = [t1.index(c) for c in letters if c in t1]
        b_shape = [o1.shape[t1.index(c)] if c in t1 else 1 for c in letters]
        av = reshape_view(transpose(acc, a_perm) if acc.ndim > 1 else acc, a_shape)
        bv = reshape_view(transpose(o1, b_perm) if o1.ndim > 1 else o1, b_shape)
        acc = multiply(av, bv)
        t0 = letters
    keep = set(rhs)
    drop = [i for i, c in enumerate(t0) if c not in keep]
    if drop:
        acc = sum(acc, tuple(drop))
        t0 = "".join(c for i, c in enumerate(t0) if i not in drop)
    if sorted(t0) != sorted(rhs):
        raise ValueError(f"einsum: output subscripts '{rhs}' do not match the inputs")
    perm = [t0.index(c) for c in rhs]
    res = transpose(acc, perm) if len(perm) > 1 else acc
    if res is acc and _pyany(acc is o for _, o in cur):
        res = acc.copy()
    return check_out(out, cast(res, dt), "einsum")


# ---- sorting, searching, selecting ------------------------------------------------------------
def sort(a, axis=-1, kind=None, order=None, **kw):
    a = _arr(a)
    if order is not None:
        raise NotImplementedError("sort: order= is not supported")
    if axis is None:
        a = ravel(a)
        axis = -1
    if a.ndim == 0:
        return a.copy()
    ax = norm_axis(axis, a.ndim, "sort")
    if a._size == 0:
        return a.copy()
    src = as_bits(a)
    r = wrap(nd().sort(src, axis=ax, is_ascend=True))
    return to_bool(r) if src is not a else r


def argsort(a, axis=-1, kind=None, order=None, **kw):
    a = _arr(a)
    if order is not None:
        raise NotImplementedError("argsort: order= is not supported")
    if axis is None:
        a = ravel(a)
        axis = -1
    if a.ndim == 0:
        return zeros((), dtype="int64", ctx=a._ctx)
    ax = norm_axis(axis, a.ndim, "argsort")
    if a._size == 0:
        return zeros(a.shape, dtype="int64", ctx=a._ctx)
    src = as_bits(a)
    return cast(wrap(nd().argsort(src, axis=ax, is_ascend=True, dtype="int64")), onp.int64)


def _bool_mask_select(data, mask):
    """data[mask] for 1-d data and mask (mask bool) on the device."""
    idx = cast(mask, onp.int32) if mask._dtype == _BOOL else mask
    for name in ("_contrib_boolean_mask", "_npi_boolean_mask"):
        if _has(name):
            return wrap(_op(name)(data, idx))
    raise MXNetError("mx.np: the registry has no boolean_mask operator")


def flatnonzero(a):
    a = ravel(_arr(a))
    if a._size == 0:
        return zeros((0,), dtype="int64", ctx=a._ctx)
    pos = arange(a._size, dtype="int64", ctx=a._ctx)
    return _bool_mask_select(pos, not_equal(a, 0))


def nonzero(a):
    a = _arr(a)
    if a.ndim == 0:
        a = reshape_view(a, (1,))
    flat = flatnonzero(a)
    res = []
    rem = flat
    strides = []
    s = 1
    for d in reversed(a.shape):
        strides.append(s)
        s *= d
    strides = strides[::-1]
    for st in strides:
        res.append(floor_divide(rem, st))
        rem = mod(rem, st)
    return tuple(res)


def argwhere(a):
    nz = nonzero(a)
    a = _arr(a)
    if a.ndim == 0:
        return reshape_view(zeros((int(bool(a)), 0), dtype="int64", ctx=a._ctx), (int(bool(a)), 0))
    return stack(nz, axis=1) if nz[0].size else zeros((0, a.ndim), dtype="int64", ctx=a._ctx)


def _unique_axis(a, return_index, return_inverse, return_counts, axis):
    """unique slices along `axis`: numpy finds them on the host, the device gathers them (so
    autograd reaches `a` through take)."""
    ax = norm_axis(axis, a.ndim, "unique")
    _, index, inverse, counts = onp.unique(a.asnumpy(), return_index=True,
                                           return_inverse=True, return_counts=True, axis=ax)
    ctx = a._ctx
    outs = [take(a, array(index, dtype="int64", ctx=ctx), axis=ax)]
    for want, v in ((return_index, index), (return_inverse, inverse), (return_counts, counts)):
        if want:
            outs.append(array(v.astype(onp.int64), dtype="int64", ctx=ctx))
    return outs[0] if len(outs) == 1 else tuple(outs)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """Sorted unique elements of the flattened array (optionally first indices, inverse and
    counts), computed with a device sort and a boolean mask."""
    if axis is not None:
        return _unique_axis(_arr(ar), return_index, return_inverse, return_counts, axis)
    a = ravel(_arr(ar))
    n = a._size
    if n == 0:
        e = zeros((0,), dtype=a._dtype, ctx=a._ctx)
        outs = [e] + [zeros((0,), dtype="int64", ctx=a._ctx)] * (
            return_index + return_inverse + return_counts)
        return e if len(outs) == 1 else tuple(outs)
    bits = as_bits(a)
    src = cast(bits, onp.float64) if bits._dtype.kind in "iu" else bits
    order = cast(wrap(nd().argsort(src, axis=0, is_ascend=True, dtype="float64")), onp.int64)
    # a stable order: ties broken by position (argsort may not be stable)
    sv = take(src, order)
    key_val, key_pos = sv, cast(order, onp.float64)
    del key_val, key_pos
    s = take(a, order)
    sb = as_bits(s)
    first = ones((1,), dtype=_BOOL, ctx=a._ctx)
    flags = concatenate([first, not_equal(sb[1:], sb[:-1])]) if n > 1 else first
    uniq = _bool_mask_select(s if s._dtype != _BOOL else sb, flags)
    if s._dtype == _BOOL:
        uniq = to_bool(uniq)
    outs = [uniq]
    starts = _bool_mask_select(arange(n, dtype="int64", ctx=a._ctx), flags)
    if return_index:
        # first occurrence: minimum original position within each group
        grp = subtract(cumsum(cast(flags, onp.int64)), 1)
        big = onp.iinfo(onp.int64).max
        m = starts.size
        onehot = equal(reshape_view(grp, (1, n)), reshape_view(arange(m, dtype="int64",
                                                                        ctx=a._ctx), (m, 1)))
        pos = where(onehot, reshape_view(cast(order, onp.float64), (1, n)), float(big))
        outs.append(cast(amin(pos, axis=1), onp.int64))
    if return_inverse:
        grp = subtract(cumsum(cast(flags, onp.int64)), 1)
        inv = zeros((n,), dtype="int64", ctx=a._ctx)
        inv[order] = grp
        outs.append(inv)
    if return_counts:
        ends = concatenate([starts[1:], full((1,), n, dtype="int64", ctx=a._ctx)])
        outs.append(subtract(ends, starts))
    return outs[0] if len(outs) == 1 else tuple(outs)


def take(a, indices, axis=None, mode="raise", out=None):
    a = _arr(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = norm_axis(axis, a.ndim, "take")
    scalar_idx = is_scalar(indices)
    idx = _arr(indices, a._ctx) if not isinstance(indices, NDArray) else _arr(indices)
    if not isinstance(indices, NDArray) and not scalar_idx and idx._dtype.kind == "f":
        idx = cast(_arr(onp.asarray(indices)), onp.int64)
    if idx._dtype.kind == "f" and not isinstance(indices, NDArray):
        idx = cast(idx, onp.int64)
    n = a.shape[ax]
    if mode not in ("raise", "clip", "wrap"):
        raise ValueError(f"take: mode must be 'raise', 'clip' or 'wrap', got {mode!r}")
    oshape = a.shape[:ax] + idx.shape + a.shape[ax + 1:]
    if idx._size == 0 or 0 in oshape:
        return check_out(out, zeros(oshape, dtype=a._dtype, ctx=a._ctx), "take")
    if n == 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if mode == "raise":
        lo, hi = float(amin(idx).item()), float(amax(idx).item())
        if lo < -n or hi >= n:
            bad = hi if hi >= n else lo
            raise IndexError(f"index {int(bad)} is out of bounds for axis {ax} with size {n}")
        if lo < 0:
            idx = where(less(idx, 0), add(idx, n), idx)
        m = "clip"
    else:
        m = mode
    flat_idx = reshape_view(idx, (idx._size,))
    src = as_bits(a)
    r = wrap(nd().take(src, flat_idx, axis=ax, mode=m))
    if src is not a:
        r = to_bool(r)
    return check_out(out, reshape_view(r, oshape), "take")


def take_along_axis(arr, indices, axis):
    a = _arr(arr)
    idx = _arr(indices, a._ctx)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = norm_axis(axis, a.ndim, "take_along_axis")
    if idx.ndim != a.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    shp = list(_bcast_shape(tuple(d if i != ax else 1 for i, d in enumerate(a.shape)),
                            tuple(d if i != ax else 1 for i, d in enumerate(idx.shape))))
    ishape = list(shp)
    ishape[ax] = idx.shape[ax]
    ashape = list(shp)
    ashape[ax] = a.shape[ax]
    ab = broadcast_to(a, tuple(ashape))
    ib = broadcast_to(idx, tuple(ishape))
    if _has("_take_along_axis"):
        return wrap(nd()._take_along_axis(ab, cast(ib, onp.int64), axis=ax))
    raise MXNetError("take_along_axis: the registry has no _take_along_axis operator")


def diag(v, k=0):
    v = _arr(v)
    if v.ndim not in (1, 2):
        raise ValueError("Input must be 1- or 2-d.")
    if v._size == 0 and v.ndim == 1:
        n = _pyabs(k)
        return zeros((n, n), dtype=v._dtype, ctx=v._ctx)
    return wrap(nd().diag(as_bits(v) if v._dtype != _BOOL else cast(v, onp.uint8), k=int(k))) \
        if v._dtype == _BOOL else wrap(nd().diag(v, k=int(k)))


def diagflat(v, k=0):
    return diag(ravel(_arr(v)), k)


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = _arr(a)
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    i, j = norm_axis(axis1, a.ndim, "diagonal"), norm_axis(axis2, a.ndim, "diagonal")
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    return wrap(nd().diag(a, k=int(offset), axis1=i, axis2=j))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d = diagonal(a, offset, axis1, axis2)
    return sum(d, -1, dtype, out)


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional linear interpolation (device composition over all intervals)."""
    if period is not None:
        raise NotImplementedError("interp: period= is not supported")
    xs = _to_float(_arr(x) if not is_scalar(x) else full((), float(x)))
    xp = _to_float(_arr(xp))
    fp = _to_float(_arr(fp))
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape:
        raise ValueError("fp and xp are not of the same length.")
    n = xp.shape[0]
    if n == 0:
        raise ValueError("array of sample points is empty")
    dt = fp._dtype
    xf = reshape_view(cast(xs, xp._dtype), (xs._size, 1))
    if n == 1:
        r = broadcast_to(reshape_view(fp, (1,)), (xs._size,))
    else:
        cnt = sum(greater_equal(xf, reshape_view(xp, (1, n))), axis=1)   # 0..n
        j = clip(subtract(cnt, 1), 0, n - 2)
        x0, x1 = take(xp, j), take(xp, add(j, 1))
        y0, y1 = take(fp, j), take(fp, add(j, 1))
        xv = reshape_view(xf, (xs._size,))
        den = subtract(x1, x0)
        t = true_divide(subtract(xv, x0), where(equal(den, 0), 1, den))
        r = add(y0, multiply(t, subtract(y1, y0)))
        r = where(equal(xv, reshape_view(xp[n - 1:], ())), reshape_view(fp[n - 1:], ()), r)
        xv_r = xv
        lo_v = fp[0:1] if left is None else float(left)
        hi_v = fp[n - 1:] if right is None else float(right)
        r = where(less(xv_r, xp[0:1]), lo_v, r)
        r = where(greater(xv_r, xp[n - 1:]), hi_v, r)
    return reshape_view(cast(r, dt), xs.shape)


def searchsorted(a, v, side="left", sorter=None):
    a = _arr(a)
    if sorter is not None:
        a = take(a, sorter)
    scalar = is_scalar(v)
    vv = _arr(v, a._ctx) if not scalar else full((), v, dtype=a._dtype, ctx=a._ctx)
    dt = _core.result_type(a._dtype, vv._dtype)
    n = a.shape[0]
    col = reshape_view(cast(vv, dt), (vv._size, 1))
    row = reshape_view(cast(a, dt), (1, n))
    cmp = less(row, col) if side == "left" else less_equal(row, col)
    r = sum(cmp, axis=1, dtype="int64")
    return reshape_view(r, vv.shape)


def histogram(a, bins=10, range=None, normed=None, weights=None, density=None):  # noqa: A002
    a = ravel(_arr(a))
    if weights is not None or density:
        raise NotImplementedError("histogram: weights/density are not supported")
    if isinstance(bins, (numbers.Integral, onp.integer)):
        if range is None:
            range = (float(amin(a).item()), float(amax(a).item())) if a.size else (0.0, 1.0)
        cnt, edges = nd().histogram(a.as_nd_ndarray(), bins=int(bins), range=tuple(range))
    else:
        cnt, edges = nd().histogram(a.as_nd_ndarray(), bins=_arr(bins).as_nd_ndarray())
    return wrap(cnt), wrap(edges)


def bincount(x, weights=None, minlength=0):
    x = _arr(x)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array")
    n = _pymax(int(amax(x).item()) + 1 if x.size else 0, int(minlength))
    if n == 0:
        return zeros((0,), dtype="int64", ctx=x._ctx)
    onehot = equal(reshape_view(x, (x.size, 1)), reshape_view(arange(n, dtype=x._dtype,
                                                                        ctx=x._ctx), (1, n)))
    if weights is None:
        return sum(onehot, axis=0, dtype="int64")
    w = _to_float(_arr(weights, x._ctx), onp.float64)
    return sum(multiply(cast(onehot, onp.float64), reshape_view(w, (w.size, 1))), axis=0)


def quantile(a, q, axis=None, out=None, overwrite_input=False, interpolation="linear",
             keepdims=False, method=None):
    a = _to_float(_arr(a))
    method = method or interpolation
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = norm_axis(axis, a.ndim, "quantile")
    s = sort(a, axis=ax)
    n = a.shape[ax]
    qs = onp.asarray(q.asnumpy() if isinstance(q, NDArray) else q, dtype=onp.float64)
    if onp.any(qs < 0) or onp.any(qs > 1):
        raise ValueError("Quantiles must be in the range [0, 1]")
    res = []
    for qq in qs.reshape(-1):
        pos = qq * (n - 1)
        lo, hi = int(math.floor(pos)), int(math.ceil(pos))
        vlo, vhi = _slice_axis(s, ax, lo, lo + 1), _slice_axis(s, ax, hi, hi + 1)
        if method == "linear":
            r = add(vlo, multiply(subtract(vhi, vlo), pos - lo))
        elif method == "lower":
            r = vlo
        elif method == "higher":
            r = vhi
        elif method == "midpoint":
            r = multiply(add(vlo, vhi), 0.5)
        elif method == "nearest":
            r = vlo if (pos - lo) < 0.5 or ((pos - lo) == 0.5 and lo % 2 == 0) else vhi
        else:
            raise ValueError(f"quantile: unknown interpolation {method!r}")
        res.append(r if keepdims else squeeze(r, ax))
    if qs.ndim == 0:
        return check_out(out, res[0], "quantile")
    return check_out(out, reshape_view(stack(res, 0), qs.shape + res[0].shape), "quantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, interpolation="linear",
               keepdims=False, method=None):
    qs = q.asnumpy() if isinstance(q, NDArray) else q
    return quantile(a, onp.asarray(qs, dtype=onp.float64) / 100.0, axis, out, overwrite_input,
                    interpolation, keepdims, method)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _to_float(a), _to_float(b)
    diff_ = absolute(subtract(a, b))
    tol = add(atol, multiply(rtol, absolute(b)))
    r = less_equal(diff_, tol)
    r = logical_or(r, equal(a, b))
    if equal_nan:
        r = logical_or(r, logical_and(isnan(a), isnan(b)))
    return r


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _pybool(all(isclose(a, b, rtol, atol, equal_nan)).item())


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = _arr(a1), _arr(a2)
    if a1.shape != a2.shape:
        return False
    if a1._size == 0:
        return True
    e = equal(a1, a2)
    if equal_nan:
        e = logical_or(e, logical_and(isnan(a1), isnan(a2)))
    return _pybool(all(e).item())


def may_share_memory(a, b, max_work=None):
    if not (isinstance(a, NDArray) and isinstance(b, NDArray)):
        return False
    if a._chunk is not b._chunk:
        return False
    a0, a1 = a._offset, a._offset + a._size * a._itemsize
    b0, b1 = b._offset, b._offset + b._size * b._itemsize
    return a0 < b1 and b0 < a1


shares_memory = may_share_memory


# ---- indexing -----------------------------------------------------------------------------------
def _host_key(k):
    """An index component for numpy (to learn the result shape on a zero-stride dummy)."""
    if isinstance(k, NDArray):
        return k.asnumpy()
    if isinstance(k, list):
        return onp.asarray([_host_key(v) for v in k]) if k and isinstance(k[0], NDArray) \
            else onp.asarray(k)
    return k


def _expand_bool(key, shape):
    """Boolean masks in `key` replaced by their nonzero positions (numpy's rule)."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    dim = 0
    n_ell = _pysum(1 for k in key if k is Ellipsis)
    n_real = _pysum((_key_ndim(k) if _is_bool_key(k) else 1) for k in key
                    if k is not None and k is not Ellipsis)
    for k in key:
        if _is_bool_key(k):
            m = k.asnumpy() if isinstance(k, NDArray) else onp.asarray(k)
            if m.shape != tuple(shape[dim:dim + m.ndim]) and m.ndim:
                raise IndexError(f"boolean index did not match indexed array along dimension "
                                 f"{dim}; dimension is {shape[dim] if dim < len(shape) else 0} "
                                 f"but corresponding boolean dimension is {m.shape[0]}")
            if m.ndim == 0:
                out.append(None if m else onp.zeros((0,), dtype=onp.int64))
                continue
            out.extend(onp.nonzero(m))
            dim += m.ndim
        elif k is Ellipsis:
            out.append(k)
            dim += len(shape) - (n_real - 0) if n_ell else 0
        else:
            out.append(k)
            if k is not None:
                dim += 1
    return tuple(out)


def _key_ndim(k):
    return k.ndim if isinstance(k, NDArray) else onp.ndim(k)


def _is_bool_key(k):
    if isinstance(k, NDArray):
        return k._dtype == _BOOL
    if isinstance(k, onp.ndarray):
        return k.dtype == onp.bool_
    if isinstance(k, list) and k and _pyall(isinstance(v, (bool, onp.bool_)) for v in k):
        return True
    return isinstance(k, (bool, onp.bool_))


def _has_bool(key):
    if isinstance(key, tuple):
        return _pyany(_is_bool_key(k) for k in key)
    return _is_bool_key(key)


def _result_shape(shape, key):
    dummy = onp.lib.stride_tricks.as_strided(onp.zeros(1, dtype=onp.int8), shape=shape,
                                             strides=(0,) * len(shape))
    hk = tuple(_host_key(k) for k in key) if isinstance(key, tuple) else _host_key(key)
    return dummy[hk].shape


def _wrap_negative(k, size):
    """An integer index array with numpy's negative positions (-1 is the last) made
    non-negative for an axis of `size`; the kernels take positions in [0, size)."""
    if isinstance(k, NDArray):
        if k._dtype.kind == "i":
            return add(k, cast(multiply(less(k, 0), size), k._dtype))
        return k
    if isinstance(k, (list, range, onp.ndarray)):
        h = onp.asarray(k)
        if h.dtype.kind == "i" and h.size and h.min() < 0:
            return onp.where(h < 0, h + size, h)
    return k


def _norm_key(key, shape):
    """Index arrays as the NDArray indexing takes them: device arrays as NDArray views, negative
    positions wrapped for their axis of `shape`."""
    def one(k, axis):
        if isinstance(k, NDArray) and k._dtype.kind == "f":
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                             "(`None`) and integer or boolean arrays are valid indices")
        if axis is not None and axis < len(shape):
            k = _wrap_negative(k, shape[axis])
        if isinstance(k, NDArray) and type(k) is not NDArray:
            return view_as(k, NDArray)
        return k
    keys = key if isinstance(key, tuple) else (key,)
    n_real = _pysum(1 for k in keys if k is not None and k is not Ellipsis)
    out, axis = [], 0
    for k in keys:
        if k is Ellipsis:
            axis += len(shape) - n_real
            out.append(k)
        elif k is None:
            out.append(k)
        else:
            out.append(one(k, axis))
            axis += 1
    return tuple(out) if isinstance(key, tuple) else out[0]


def _false_scalar_key(key):
    """Whether `key` holds a 0-d False (numpy: a new axis of length 0, so nothing selected)."""
    keys = key if isinstance(key, tuple) else (key,)
    return _pyany(_is_bool_key(k) and _key_ndim(k) == 0 and
                  not _pybool(k.asnumpy() if isinstance(k, NDArray) else k) for k in keys)


def _getitem(a, key):
    if _false_scalar_key(key):
        return zeros(_result_shape(a.shape, key), dtype=a._dtype, ctx=a._ctx)
    if _has_bool(key):
        key = _expand_bool(key, a.shape)
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    if key is Ellipsis or (isinstance(key, tuple) and len(key) == 0):
        return view_as(a, ndarray)
    oshape = _result_shape(a.shape, key)
    if 0 in oshape:
        if _recorded(a) and _core.is_basic_key(key) and a.ndim:
            return _recorded_empty_index(a, key, oshape)
        return zeros(oshape, dtype=a._dtype, ctx=a._ctx)
    src = a if a.ndim else reshape_view(a, (1,))
    if a.ndim == 0:
        key = _zero_d_key(key)
    k = _norm_key(key, src.shape)
    if isinstance(k, tuple) and _pyall(k2 is None or k2 is Ellipsis or isinstance(k2, slice)
                                       for k2 in k) and _pyall(k2 is None for k2 in k):
        return reshape_view(src, oshape)
    r = NDArray.__getitem__(src, k)
    r = wrap(r) if type(r) is NDArray and r is not src else (
        view_as(r, ndarray) if type(r) is not ndarray else r)
    if r.shape != oshape:
        r = reshape_view(r, oshape)
    return r


def _recorded_empty_index(a, key, oshape):
    """An empty result of basic indexing under autograd: the slice operators run (numpy
    shapes allow empty slices) so that backward reaches `a` with its zero gradient."""
    from ..util import np_shape
    keys = key if isinstance(key, tuple) else (key,)
    if Ellipsis in keys:
        i = keys.index(Ellipsis)
        n_real = _pysum(1 for k in keys if k is not None and k is not Ellipsis)
        keys = keys[:i] + (slice(None),) * (a.ndim - n_real) + keys[i + 1:]
    with np_shape(True):
        r = wrap(_core.basic_index(nd(), view_as(a, NDArray), keys))
    return reshape_view(r, oshape) if r.shape != oshape else r


def _zero_d_key(key):
    """A key for a 0-d array (only None and Ellipsis make sense) applied to its (1,) view."""
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if k is not None and k is not Ellipsis:
            raise IndexError("too many indices for array: array is 0-dimensional, but 1 were "
                             "indexed")
    return tuple(k for k in key if k is None) + (slice(None),)


def _setitem(a, key, value):
    if _false_scalar_key(key):
        return
    if _has_bool(key):
        key = _expand_bool(key, a.shape)
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    if isinstance(value, NDArray):
        value = cast(_arr(value), a._dtype)
    elif not is_scalar(value):
        value = array(onp.asarray(value), dtype=a._dtype, ctx=a._ctx)
    if key is Ellipsis or (isinstance(key, tuple) and len(key) == 0) or a.ndim == 0:
        if a.ndim == 0 and not (key is Ellipsis or key == () or key is None or
                                (isinstance(key, slice) and key == slice(None))):
            raise IndexError("too many indices for array: array is 0-dimensional")
        target = a
        if is_scalar(value):
            nd()._full(shape=a.shape, value=float(value), dtype=a._dtype.name, out=a) \
                if a._size else None
            return
        v = broadcast_to(value, a.shape)
        if a._size:
            nd()._copyto(v if v is not value else v.copy() if may_share_memory(v, a) else v,
                         out=target)
        return
    oshape = _result_shape(a.shape, key)
    if 0 in oshape:
        return
    if isinstance(value, NDArray):
        if value.ndim > len(oshape):        # numpy drops leading 1s of a longer value
            lead = value.shape[:value.ndim - len(oshape)]
            if _pyany(d != 1 for d in lead):
                raise ValueError(f"could not broadcast input array from shape {value.shape} "
                                 f"into shape {oshape}")
            value = reshape_view(value, value.shape[len(lead):])
        if value.shape != oshape:
            value = broadcast_to(value, oshape)
        if value.ndim == 0:
            value = reshape_view(value, (1,))
        value = view_as(value, NDArray)
    k = _norm_key(key, a.shape)
    NDArray.__setitem__(a, k, value)


# ---- MXNet 1.9.1 names numpy 2 dropped, windows, index helpers, polyval, resize ----------------
def product(a, axis=None, dtype=None, out=None, keepdims=False):
    """numpy 1.x's alias of prod (MXNet 1.9.1 keeps it)."""
    return prod(a, axis, dtype, out, keepdims)


def sometrue(a, axis=None, keepdims=False, out=None):
    """numpy 1.x's alias of any (MXNet 1.9.1 keeps it)."""
    return any(a, axis, out, keepdims)


def _window(name, M, dtype, ctx, coeffs):
    """sum_k c_k cos(2 pi k n / (M - 1)) over n in [0, M): the cosine-sum windows, computed on
    the device in float64 and cast to `dtype` (float32 by default, as MXNet)."""
    M = int(M)
    ctx = _core.ctx_arg(ctx)
    dt = onp.dtype(dtype)
    if M <= 0:
        return empty((0,), dt, ctx=ctx)
    if M == 1:
        return ones((1,), dt, ctx=ctx)
    phase = multiply(arange(M, dtype="float64", ctx=ctx), 2.0 * math.pi / (M - 1))
    res = full((M,), float(coeffs[0]), dtype="float64", ctx=ctx)
    for k, c in enumerate(coeffs[1:], 1):
        res = add(res, multiply(cos(multiply(phase, float(k))), float(c)))
    return cast(res, dt)


def hanning(M, dtype=onp.float32, ctx=None):
    return _window("hanning", M, dtype, ctx, (0.5, -0.5))


def hamming(M, dtype=onp.float32, ctx=None):
    return _window("hamming", M, dtype, ctx, (0.54, -0.46))


def blackman(M, dtype=onp.float32, ctx=None):
    return _window("blackman", M, dtype, ctx, (0.42, -0.5, 0.08))


def indices(dimensions, dtype=onp.int32, ctx=None):
    """A (len(dimensions), *dimensions) grid of indices (int32 by default, as MXNet)."""
    dims = tuple(int(d) for d in dimensions)
    ctx = _core.ctx_arg(ctx)
    dt = onp.dtype(dtype)
    if 0 in dims or not dims:
        return empty((len(dims),) + dims, dt, ctx=ctx)
    grids = []
    for i, d in enumerate(dims):
        shape = [1] * len(dims)
        shape[i] = d
        grids.append(broadcast_to(reshape_view(arange(d, dtype=dt, ctx=ctx), shape), dims))
    return stack(grids)


def diag_indices_from(arr):
    """The indices of the main diagonal of an n-d array whose dimensions are all equal."""
    a = _arr(arr)
    if a.ndim < 2:
        raise ValueError("diag_indices_from: input array must be at least 2-d")
    if len(set(a.shape)) != 1:
        raise ValueError("diag_indices_from: all dimensions of input must be of equal length")
    idx = arange(a.shape[0], dtype="int64", ctx=a._ctx)
    return (idx,) * a.ndim


def unravel_index(indices, shape, order="C"):
    """Flat indices into `shape` as a tuple of coordinate arrays (int64)."""
    if order != "C":
        raise NotImplementedError("unravel_index: only order='C' is supported")
    if is_scalar(indices):
        return onp.unravel_index(int(indices), tuple(int(d) for d in shape))
    idx = _arr(indices)
    if idx._dtype.kind not in "iu":
        raise TypeError(f"unravel_index: only int indices permitted, got {idx._dtype}")
    shape = tuple(int(d) for d in shape)
    size = 1
    for d in shape:
        size *= d
    if idx._size and (int(max(idx).item()) >= size or int(min(idx).item()) < 0):
        raise ValueError(f"unravel_index: an index is out of bounds for array with size {size}")
    rest = cast(idx, onp.int64)
    coords = []
    for d in reversed(shape):
        coords.append(mod(rest, d))
        rest = floor_divide(rest, d)
    return tuple(reversed(coords))


def polyval(p, x):
    """p[0] * x**(N-1) + ... + p[N-1], by Horner's rule on the device (autograd records it)."""
    p, x = _arr(p), _arr(x)
    if p.ndim != 1:
        raise ValueError("polyval: p must be a 1-d array of coefficients")
    dt = _core.result_type(p._dtype, x._dtype)
    res = zeros(x.shape, dtype=dt, ctx=x._ctx)
    for i in range(p.shape[0]):
        res = add(multiply(res, x), p[i])
    return res


def resize(a, new_shape):
    """`a` repeated (flat, in order) to fill `new_shape` (numpy's resize, not ndarray.resize)."""
    a = _arr(a)
    if isinstance(new_shape, (numbers.Integral, onp.integer)):
        new_shape = (int(new_shape),)
    new_shape = tuple(int(d) for d in new_shape)
    if _pyany(d < 0 for d in new_shape):
        raise ValueError("resize: all elements of `new_shape` must be non-negative")
    n = 1
    for d in new_shape:
        n *= d
    if n == 0 or a._size == 0:
        return zeros(new_shape, dtype=a._dtype, ctx=a._ctx)
    flat = ravel(a)
    reps = -(-n // a._size)
    flat = tile(flat, reps) if reps > 1 else flat
    return reshape_view(flat[:n] if flat.shape[0] != n else flat, new_shape)
