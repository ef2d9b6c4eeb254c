"""``mx.nd.save`` / ``mx.nd.load`` on NDArrays, over the .params format in serialize.py."""
from . import serialize
from .._core.api_calls import api_call
from ..util import is_np_shape
from .ndarray import NDArray, _h, array
from ..context import Context
from .sparse import _make, _wrap_np


def _np_or_sparse(v):
    if v._sparse:
        p = [q.asnumpy() for q in v._parts]
        aux = [p[2], p[1]] if v.stype == "csr" else [p[1]]
        return serialize.SparseEntry(v.stype, v.shape, p[0], aux)
    return v.asnumpy()


def _to_numpy(data, fname):
    if isinstance(data, NDArray):
        return [_np_or_sparse(data)]
    if isinstance(data, dict):
        out = {}
        for k, v in data.items():
            if not isinstance(k, str) or not isinstance(v, NDArray):
                raise ValueError(f"save {fname}: a dict must map str to NDArray, got "
                                 f"{type(k).__name__} -> {type(v).__name__}")
            out[k] = _np_or_sparse(v)
        return out
    if isinstance(data, (list, tuple)):
        for i, v in enumerate(data):
            if not isinstance(v, NDArray):
                raise ValueError(f"save {fname}: item {i} is {type(v).__name__}, not NDArray")
        return [_np_or_sparse(v) for v in data]
    raise ValueError(f"save {fname}: data must be an NDArray, a list of NDArrays or a dict "
                     f"str -> NDArray, got {type(data).__name__}")


def _wrap(loaded):
    # an uninitialised entry (MXNet's "none" array) stays None
    def wrap(v):
        if v is None:
            return None
        if isinstance(v, serialize.SparseEntry):
            ctx = Context("cpu", 0)
            aux = [_wrap_np(a, ctx) for a in v.aux]
            parts = [_wrap_np(v.data, ctx)] + (aux[::-1] if v.stype == "csr" else aux)
            return _make(v.stype, v.shape, parts, ctx, v.data.dtype)
        if v.dtype in _h.DTYPE_CODE:        # fresh, C-contiguous: shared, not copied
            return _h.wrap_numpy(NDArray, v, Context("cpu", 0))
        return array(v, dtype=v.dtype)
    if isinstance(loaded, dict):
        return {k: wrap(v) for k, v in loaded.items()}
    return [wrap(v) for v in loaded]


@api_call("MXNDArraySave")
def save(fname, data):
    """Save NDArrays in MXNet's binary format (readable by MXNet 1.x's mx.nd.load). With numpy
    shape semantics on (``mx.np_shape()``) the entries are V3, as MXNet writes them."""
    serialize.save(fname, _to_numpy(data, fname), np_shape=is_np_shape())


@api_call("MXNDArrayLoad")
def load(fname):
    """Load a list or dict of NDArrays saved by mx.nd.save (mxc or MXNet). As MXNet, arrays
    saved with numpy shape semantics load only with them on, and the others only with them off
    (MXNetError otherwise)."""
    return _wrap(serialize.load(fname, np_shape=is_np_shape()))


def load_frombuffer(buf):
    return _wrap(serialize.load_bytes(buf, np_shape=is_np_shape()))
