"""``mx.npx.save`` / ``mx.npx.load``: ``.params`` files of ``mx.np.ndarray`` in the numpy-shape
variant of MXNet's format (entries with magic 0xF993FACA; zero-dim and zero-size arrays kept as
such). Byte-identical to what MXNet 1.9.1 writes; see mxc/ndarray/serialize.py for the layout."""
import os

from ..ndarray import serialize
from ..util import is_np_array, is_np_shape
from ._op import _np_cls, as_np
from ..ndarray.serialize_nd import _wrap

__all__ = ["save", "load"]


def _require_np(what):
    if not (is_np_shape() and is_np_array()):
        raise ValueError(f"Cannot {what} `mxnet.numpy.ndarray` in legacy mode. Please activate "
                         "numpy semantics by calling `npx.set_np()` in the global scope before "
                         "calling this function.")


def save(file, arr):
    """Save an mx.np.ndarray, a list of them or a dict str -> mx.np.ndarray to `file`
    (numpy semantics must be on: ``npx.set_np()``). The file loads with ``npx.load`` here and
    in MXNet 1.9.1."""
    _require_np("save")
    cls = _np_cls()
    if isinstance(arr, cls):
        arr = [arr]
    if isinstance(arr, dict):
        for k, v in arr.items():
            if not isinstance(k, str) or not isinstance(v, cls):
                raise TypeError("Only accepts dict str->ndarray or list of ndarrays (got "
                                f"{type(k).__name__} -> {type(v).__name__})")
        data = {k: v.asnumpy() for k, v in arr.items()}
    elif isinstance(arr, list):
        for i, v in enumerate(arr):
            if not isinstance(v, cls):
                raise TypeError("Only accepts dict str->ndarray or list of ndarrays (item "
                                f"{i} is {type(v).__name__})")
        data = [v.asnumpy() for v in arr]
    else:
        raise ValueError("data needs to either be a ndarray, dict of (str, ndarray) pairs or a "
                         f"list of ndarrays, got {type(arr).__name__}")
    serialize.save(file, data, np_shape=True)


def load(file):
    """Load what ``npx.save`` (or ``mx.nd.save`` under numpy shape semantics) wrote: a list of
    mx.np.ndarray, or a dict when the file has names. Numpy semantics must be on. A file written
    without numpy shape semantics raises MXNetError, as in MXNet (load it with ``mx.nd.load``
    outside numpy semantics)."""
    _require_np("load")
    if not isinstance(file, (str, os.PathLike)):
        raise TypeError(f"file required to be a string, got {type(file).__name__}")
    loaded = _wrap(serialize.load(file, np_shape=True))
    if isinstance(loaded, dict):
        return {k: as_np(v) for k, v in loaded.items()}
    return [as_np(v) for v in loaded]
