"""MXNet 1.9.1's ``mxnet.numpy.fallback``: the numpy functions it has no operator for, run by
official numpy on the host (see ``_host``); results come back as mx.np arrays. Where mxc has
an operator version of one of these names, that version is the one exported here (it runs on
the device and autograd records it).

numpy 2 removed some of these names; they are computed here with numpy 2's equivalents. The
financial functions (``mirr``, ``npv``, ``ppmt``, ``pv``, ``rate``) were already removed from
numpy 1.20 (NEP 32): under MXNet 1.9.1 they raise RuntimeError, and so they do here."""
import numpy as onp

from . import _op
from ._host import host_function

__all__ = [
    "allclose", "alltrue", "apply_along_axis", "apply_over_axes", "argpartition", "argwhere",
    "array_equal", "array_equiv", "choose", "compress", "corrcoef", "correlate",
    "count_nonzero", "cov", "digitize", "divmod", "extract", "flatnonzero", "float_power",
    "frexp", "heaviside", "histogram2d", "histogram_bin_edges", "histogramdd", "i0", "in1d",
    "interp", "intersect1d", "isclose", "isin", "ix_", "lexsort", "min_scalar_type", "mirr",
    "modf", "msort", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax",
    "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "ndim", "npv",
    "partition", "piecewise", "packbits", "poly", "polyadd", "polydiv", "polyfit", "polyint",
    "polymul", "polysub", "positive", "ppmt", "promote_types", "ptp", "pv", "rate", "real",
    "result_type", "rollaxis", "roots", "searchsorted", "select", "setdiff1d", "setxor1d",
    "signbit", "size", "spacing", "take_along_axis", "trapz", "tril_indices_from",
    "trim_zeros", "triu_indices_from", "union1d", "unpackbits", "unwrap", "vander",
]


def _alltrue(a, axis=None, out=None, keepdims=False):
    return onp.all(a, axis=axis, out=out, keepdims=keepdims)


def _msort(a):
    return onp.sort(a, axis=0)


def _trapz(y, x=None, dx=1.0, axis=-1):
    return onp.trapezoid(y, x=x, dx=dx, axis=axis)


def _in1d(ar1, ar2, assume_unique=False, invert=False):
    return onp.isin(onp.ravel(ar1), ar2, assume_unique=assume_unique, invert=invert)


# numpy 1.x names numpy 2 no longer has
_REMOVED_IN_NUMPY2 = {"alltrue": _alltrue, "msort": _msort, "trapz": _trapz, "in1d": _in1d}
_FINANCIAL = ("mirr", "npv", "ppmt", "pv", "rate")


def _expired(name):
    def removed(*args, **kwargs):
        raise RuntimeError(f"mx.np.{name}: in accordance with NEP 32, the function {name} was "
                           "removed from NumPy version 1.20 (MXNet 1.9.1 raises this too). A "
                           "replacement is available in the numpy_financial library.")
    removed.__name__ = removed.__qualname__ = name
    return removed


def _build():
    names = {}
    for name in __all__:
        if name in _FINANCIAL:
            names[name] = _expired(name)
        elif hasattr(_op, name) and name in _op.__all__:
            names[name] = getattr(_op, name)
        else:
            names[name] = host_function(_REMOVED_IN_NUMPY2.get(name) or getattr(onp, name), name)
    return names


globals().update(_build())
