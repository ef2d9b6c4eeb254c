"""MXNet 1.x's legacy NDArray functions, as operators built from others (no kernels of their own):

- ``choose_element_0index(data, index)``: ``data[i, index[i]]`` per row, MXNet's alias of
  ``pick`` (same parameters; differentiable through pick).
- ``fill_element_0index(lhs, mhs, rhs)``: a copy of 2-d `lhs` with ``out[i, rhs[i]] = mhs[i]``
  (MXNet's MXNET_REGISTER_NDARRAY_FUN; differentiable here through one_hot and where).
- ``_onehot_encode(lhs, rhs)``: one-hot rows of `lhs`'s indices, shaped like `rhs` (the output
  array ``mx.nd.onehot_encode(indices, out)`` writes; only its shape and dtype are read).

fill_element_0index and _onehot_encode read their inputs' shapes (NDArray functions in MXNet
too, with no symbol form)."""
import numpy as np

from . import registry
from .registry import OpDef, register

_pick = registry.get("pick")


register(OpDef("choose_element_0index", inputs=("data", "index"), params=_pick.params,
               infer=_pick.infer,
               composite=lambda F, a, data, index: F.pick(data, index, **a),
               doc="Elements of `data` at `index` along `axis` (MXNet's alias of pick)."))


def _check_fill(s):
    lhs, mhs, rhs = (tuple(x) for x in s)
    if len(lhs) != 2:
        raise ValueError(f"fill_element_0index: lhs must be 2-d, got shape {lhs}")
    if mhs != (lhs[0],) or rhs != (lhs[0],):
        raise ValueError(f"fill_element_0index: mhs and rhs must have shape ({lhs[0]},) for lhs "
                         f"{lhs}, got {mhs} and {rhs}")
    return lhs


def _fill_infer(a, s, d):
    return [_check_fill(s)], [d[0]]


def _fill(F, a, lhs, mhs, rhs):
    _check_fill([lhs.shape, mhs.shape, rhs.shape])
    mask = F.one_hot(rhs, depth=lhs.shape[1], dtype=np.dtype(lhs.dtype).name)
    vals = F.broadcast_like(F.expand_dims(mhs.astype(lhs.dtype), axis=1), lhs)
    return F.where(mask, vals, lhs)


register(OpDef("fill_element_0index", inputs=("lhs", "mhs", "rhs"), infer=_fill_infer,
               composite=_fill,
               doc="A copy of 2-d `lhs` with element rhs[i] of row i set to mhs[i]."))


def _check_onehot(s):
    idx, out = tuple(s[0]), tuple(s[1])
    if len(out) != 2 or idx != (out[0],):
        raise ValueError(f"_onehot_encode: indices of shape (n,) and an output of shape "
                         f"(n, depth) needed, got {idx} and {out}")
    return out


def _onehot_infer(a, s, d):
    return [_check_onehot(s)], [d[1]]


def _onehot(F, a, lhs, rhs):
    _check_onehot([lhs.shape, rhs.shape])
    return F.one_hot(lhs, depth=rhs.shape[1], dtype=np.dtype(rhs.dtype).name)


register(OpDef("_onehot_encode", inputs=("lhs", "rhs"), infer=_onehot_infer, composite=_onehot,
               doc="One-hot rows for `lhs`'s indices, shaped like `rhs`."))
