"""``mx.nd.contrib``: MXNet's contrib functions for NDArrays.

The ``_contrib_<name>`` operators of the registry appear here as ``<name>`` (as MXNet's generated
contrib namespace), next to the Python functions MXNet writes in ``mxnet/ndarray/contrib.py``:
``isinf``, ``isfinite`` and ``isnan`` (elementwise, 1.0 where true, in the input's dtype)."""
import sys as _sys

import numpy as _np

from ..ops import registry as _registry

__all__ = ["isinf", "isfinite", "isnan"]


def _nd():
    return _sys.modules["mxc.ndarray"]


def isinf(data):
    """1 where `data` is +inf or -inf, else 0."""
    return data.abs() == _np.inf


def isfinite(data):
    """1 where `data` is neither infinite nor NaN, else 0."""
    is_not_nan = data == data          # NaN != NaN
    is_not_inf = data.abs() != _np.inf
    return _nd().logical_and(is_not_inf, is_not_nan)


def isnan(data):
    """1 where `data` is NaN, else 0."""
    return data != data


def _populate():
    nd = _nd()
    ns = globals()
    prefix = "_contrib_"
    for name in _registry.names():
        if name.startswith(prefix) and hasattr(nd, name):
            short = name[len(prefix):]
            if short not in ns:
                ns[short] = getattr(nd, name)
                __all__.append(short)


_populate()
