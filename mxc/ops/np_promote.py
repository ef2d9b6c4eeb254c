"""dtype promotion of mx.np arithmetic: MXNet 1.9.1's numpy rules where they differ from numpy's.

One source for the imperative front (mxc/numpy) and for the ``_npi_*`` operators that apply the
same rules inside hybridized graphs (mxc/ops/np_arith.py), so a block gives the same dtypes
hybridized or not."""
import numbers

import numpy as onp

_FLOAT_DEFAULT = onp.dtype(onp.float32)    # MXNet's np: float32 unless is_np_default_dtype()
_INT_DEFAULT = onp.dtype(onp.int64)        # integer results numpy gives as int64 (argmax ...)
_BOOL = onp.dtype(onp.bool_)


def is_np_default_dtype():
    """MXNet 1.9.1's switch for float64 defaults; off (and not settable) in mxc."""
    return False


def default_float():
    return onp.dtype(onp.float64) if is_np_default_dtype() else _FLOAT_DEFAULT


def result_type(d1, d2):
    """Promotion of two array dtypes: bool gives way to anything, an integer meeting a float
    gives that float (MXNet: int32 + float16 -> float16, numpy would say float64), floats and
    integers among themselves as numpy, except that mixed-sign integers never widen past int64
    (uint64 + int64 -> int64, as MXNet)."""
    d1, d2 = onp.dtype(d1), onp.dtype(d2)
    if d1 == d2:
        return d1
    if d1 == _BOOL:
        return d2
    if d2 == _BOOL:
        return d1
    k1, k2 = d1.kind, d2.kind
    if k1 == "f" and k2 != "f":
        return d1
    if k2 == "f" and k1 != "f":
        return d2
    r = onp.promote_types(d1, d2)
    if r.kind == "f" and k1 != "f":        # uint64 with a signed int
        return onp.dtype(onp.int64)
    return r


def scalar_result_type(adtype, scalar):
    """Array dtype `adtype` meeting a Python scalar (numpy's weak scalars): the array's kind
    wins unless the scalar is of a higher kind (a float with an integer array gives float32,
    an int with a bool array gives int64)."""
    adtype = onp.dtype(adtype)
    if isinstance(scalar, (bool, onp.bool_)):
        return adtype
    if isinstance(scalar, onp.generic):
        sd = scalar.dtype
        if sd.kind == "f" and adtype.kind != "f":
            return sd if sd != onp.dtype(onp.float64) else default_float()
        if sd.kind in "iu" and adtype == _BOOL:
            return sd
        return adtype
    if isinstance(scalar, numbers.Integral):
        return _INT_DEFAULT if adtype == _BOOL else adtype
    if isinstance(scalar, numbers.Real):
        return adtype if adtype.kind == "f" else default_float()
    raise TypeError(f"mx.np: unsupported scalar {scalar!r}")
