"""numpy-semantics arithmetic for graphs: MXNet 1.9.1's ``_npi_add`` ... ``_npi_rpower_scalar``.

A HybridBlock traced under ``npx.set_np()`` builds these nodes for ``+ - * / % **`` (and
``F.np.add`` ...), as MXNet's numpy symbols do, so its JSON is MXNet's and MXNet's np models
load. Each is a composite over the legacy operators: the operands are cast to the promoted
dtype (mxc/ops/np_promote.py, the rules mx.np applies imperatively) and the legacy broadcast or
scalar operator runs on them. A float32 graph therefore runs exactly the legacy kernels, and a
bool or integer operand gives the dtype and values the same code gives without hybridize():
``(a > b) * 10`` is int64, ``int_array * 1.5`` and ``int_array / 2`` are float32 (the legacy
operators kept the array's dtype: int32 ``[1, 2, 3] * 1.5`` gave ``[1, 2, 3]``).

Where MXNet's own hybridized np arithmetic differs, mxc follows its imperative np front, so that
hybridizing never changes a result: an integer or bool array with a float scalar is float32
(MXNet's graphs: float64)."""
import numpy as onp

from .elemwise import broadcast_shape
from .np_promote import _BOOL, default_float, result_type, scalar_result_type
from .params import Param
from .registry import OpDef, register

_INT8 = onp.dtype(onp.int8)
_UINT8 = onp.dtype(onp.uint8)

# numpy name: (legacy broadcast operator, legacy scalar operator, reflected scalar operator,
#              logical operator used on two bools or None)
_ARITH = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar", "broadcast_logical_or"),
    "subtract": ("broadcast_sub", "_minus_scalar", "_rminus_scalar", None),
    "multiply": ("broadcast_mul", "_mul_scalar", "_mul_scalar", "broadcast_logical_and"),
    "true_divide": ("broadcast_div", "_div_scalar", "_rdiv_scalar", None),
    "mod": ("broadcast_mod", "_mod_scalar", "_rmod_scalar", None),
    "power": ("broadcast_power", "_power_scalar", "_rpower_scalar", None),
}
_SCALAR_PARAMS = (Param("scalar", float, 1.0, doc="The scalar operand."),
                  Param("is_int", bool, True, doc="Whether the scalar is a Python int."))


def _cast(F, x, dt):
    return x if x._dtype == dt else F.cast(x, dtype=dt.name)


def binary_dtype(name, d1, d2):
    """The result dtype of numpy `name` on arrays of dtypes d1 and d2; the dtype the operands
    are computed in is the same except for two bools (computed as int8, or as logical ops)."""
    dt = result_type(d1, d2)
    if name == "true_divide" and dt.kind != "f":
        return default_float()
    if dt == _BOOL and _ARITH[name][3] is None:
        if name == "subtract":
            raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the "
                            "bitwise_xor, the `^` operator, or the logical_xor function instead.")
        return _INT8
    return dt


def scalar_dtype(name, dtype, attrs):
    """The result dtype of numpy `name` on an array of `dtype` and the scalar of `attrs`."""
    s = int(attrs["scalar"]) if attrs["is_int"] else float(attrs["scalar"])
    dt = scalar_result_type(dtype, s)
    if name == "true_divide" and dt.kind != "f":
        return default_float()
    return dt


def _binary(name):
    bop, _, _, logical = _ARITH[name]
    op = f"_npi_{name}"

    def dtypes(attrs, in_dtypes):
        return None if None in in_dtypes[:2] else [binary_dtype(name, *in_dtypes[:2])]

    def infer(attrs, shapes, in_dtypes):
        return [broadcast_shape(op, shapes[0], shapes[1])], dtypes(attrs, in_dtypes)

    def composite(F, attrs, a, b):
        broadcast_shape(op, a.shape, b.shape)     # the error names this operator
        dt = binary_dtype(name, a._dtype, b._dtype)
        if dt == _BOOL:         # add and multiply of two bools: logical or / and, as numpy
            r = getattr(F, logical)(_cast(F, a, _UINT8), _cast(F, b, _UINT8))
            return F.cast(r, dtype="bool")
        return getattr(F, bop)(_cast(F, a, dt), _cast(F, b, dt))

    register(OpDef(op, inputs=("lhs", "rhs"), infer=infer, infer_dtypes=dtypes,
                   composite=composite,
                   doc=f"numpy {name} with broadcasting and numpy dtype promotion."))


def _scalar(name, reflected):
    sop = _ARITH[name][2 if reflected else 1]
    op = f"_npi_r{name}_scalar" if reflected else f"_npi_{name}_scalar"

    def dtypes(attrs, in_dtypes):
        return None if in_dtypes[0] is None else [scalar_dtype(name, in_dtypes[0], attrs)]

    def infer(attrs, shapes, in_dtypes):
        return [tuple(shapes[0])], dtypes(attrs, in_dtypes)

    def composite(F, attrs, x):
        dt = scalar_dtype(name, x._dtype, attrs)
        return getattr(F, sop)(_cast(F, x, dt), scalar=attrs["scalar"], is_int=attrs["is_int"])

    register(OpDef(op, inputs=("data",), params=_SCALAR_PARAMS, infer=infer,
                   infer_dtypes=dtypes, composite=composite,
                   doc=f"numpy {name} of an array and a scalar"
                       + (" (the scalar on the left)" if reflected else "")
                       + ", with numpy dtype promotion."))


for _name in _ARITH:
    _binary(_name)
    _scalar(_name, False)
    if _name != "add" and _name != "multiply":
        _scalar(_name, True)
del _name
