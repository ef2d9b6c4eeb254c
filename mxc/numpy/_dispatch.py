"""numpy functions called on mx.np arrays (NEP 18 ``__array_function__``, NEP 13
``__array_ufunc__``), as MXNet 1.9.1 dispatches them: the functions and ufuncs MXNet lists run
as the mx.np function of the same name (on the device, recorded by autograd); any other numpy
function runs on host copies (``_host``) and its array results come back as mx.np arrays.

The lists are MXNet's (``mxnet.numpy_dispatch_protocol``), less the names numpy 2 no longer
has (``sometrue``, ``product``, ``round_``): a numpy without the function cannot call it."""
import numpy as onp

from . import _host
from .multiarray import ndarray

__all__ = []

NUMPY_ARRAY_FUNCTION_NAMES = [
    "all", "any", "sometrue", "argmin", "argmax", "around", "round", "round_", "argsort", "sort",
    "append", "broadcast_arrays", "broadcast_to", "clip", "concatenate", "copy", "cumsum",
    "diag", "diagonal", "diagflat", "dot", "expand_dims", "fix", "flip", "flipud", "fliplr",
    "inner", "insert", "max", "amax", "mean", "min", "amin", "nonzero", "ones_like",
    "atleast_1d", "atleast_2d", "atleast_3d", "prod", "product", "ravel", "repeat", "reshape",
    "roll", "split", "array_split", "hsplit", "vsplit", "dsplit", "squeeze", "stack", "std",
    "sum", "swapaxes", "take", "tensordot", "tile", "transpose", "unique", "unravel_index",
    "diag_indices_from", "delete", "var", "vdot", "vstack", "column_stack", "hstack", "dstack",
    "zeros_like", "linalg.norm", "linalg.cholesky", "linalg.inv", "linalg.solve",
    "linalg.tensorinv", "linalg.tensorsolve", "linalg.pinv", "linalg.eigvals", "linalg.eig",
    "linalg.eigvalsh", "linalg.eigh", "shape", "trace", "tril", "meshgrid", "outer", "einsum",
    "polyval", "shares_memory", "may_share_memory", "quantile", "percentile", "diff", "ediff1d",
    "resize", "where", "full_like", "bincount", "empty_like", "nan_to_num", "isnan", "isfinite",
    "isposinf", "isneginf", "isinf", "pad",
]

NUMPY_ARRAY_UFUNC_NAMES = [
    "abs", "fabs", "add", "arctan2", "copysign", "degrees", "hypot", "lcm", "subtract",
    "multiply", "true_divide", "negative", "power", "mod", "matmul", "absolute", "rint", "sign",
    "exp", "log", "log2", "log10", "expm1", "sqrt", "square", "cbrt", "reciprocal", "invert",
    "bitwise_not", "remainder", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos",
    "arctan", "arcsinh", "arccosh", "arctanh", "maximum", "minimum", "ceil", "trunc", "floor",
    "bitwise_and", "bitwise_xor", "bitwise_or", "logical_not", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal",
]


def _lookup(module, dotted):
    for part in dotted.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


def _tables():
    from .. import numpy as mx_np
    functions, names = {}, []
    for name in NUMPY_ARRAY_FUNCTION_NAMES:
        onp_func, mx_func = _lookup(onp, name), _lookup(mx_np, name)
        if onp_func is not None and mx_func is not None:
            functions[onp_func] = mx_func
            names.append(name)
    # metadata MXNet would fetch through a host copy of the whole array
    for name in ("ndim", "size"):
        functions[getattr(onp, name)] = getattr(mx_np, name)
    ufuncs = {name: _lookup(mx_np, name) for name in NUMPY_ARRAY_UFUNC_NAMES
              if _lookup(mx_np, name) is not None}
    # numpy 2 calls the ufunc behind abs/absolute "absolute", behind mod/remainder "remainder"
    # and behind true_divide "divide"
    for name in NUMPY_ARRAY_UFUNC_NAMES:
        uf = getattr(onp, name, None)
        if isinstance(uf, onp.ufunc) and uf.__name__ not in ufuncs:
            ufuncs[uf.__name__] = ufuncs[name]
    return functions, names, ufuncs


def __array_function__(self, func, types, args, kwargs):
    mx_func = ARRAY_FUNCTIONS.get(func)
    if mx_func is None:
        return _host.call(func, args, kwargs, f"numpy.{func.__name__}")
    if not all(issubclass(t, ndarray) for t in types):
        return NotImplemented
    return mx_func(*args, **kwargs)


def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
    if method != "__call__":
        return NotImplemented
    if "out" in kwargs:
        out = kwargs["out"]
        if len(out) != 1:
            raise ValueError("The `out` parameter must have exactly one ndarray")
        kwargs["out"] = out[0]
    mx_func = ARRAY_UFUNCS.get(ufunc.__name__)
    if mx_func is None:
        return _host.call(ufunc, inputs, kwargs, f"numpy.{ufunc.__name__}")
    return mx_func(*inputs, **kwargs)


ARRAY_FUNCTIONS, ARRAY_FUNCTION_NAMES, ARRAY_UFUNCS = _tables()
ndarray.__array_function__ = __array_function__
ndarray.__array_ufunc__ = __array_ufunc__
