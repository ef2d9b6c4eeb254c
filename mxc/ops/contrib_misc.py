"""MXNet 1.9.1 contrib operators without a family of their own: ``_contrib_allclose``,
``_contrib_arange_like``, ``_contrib_index_copy`` and the interleaved multi-head attention
products ``_contrib_interleaved_matmul_*`` (``mx.nd.contrib.<name>`` / ``mx.sym.contrib.<name>``;
the quantization operators are ops/quantization.py's).

allclose, arange_like and index_copy run numpy on the host (``_host``); the
attention products are composites of reshape/transpose/batch_dot, so their gradients come from
those operators.

Interleaved layouts (as MXNet's transformer.cc): self-attention's ``queries_keys_values`` is
(seq, batch, heads * 3 * head_dim) with the last axis laid out as (heads, 3 [q, k, v], head_dim);
encoder-decoder's ``keys_values`` is (seq, batch, heads * 2 * head_dim) laid out as
(heads, 2 [k, v], head_dim) and ``queries`` (seq, batch, heads * head_dim). Attention scores
are (batch * heads, q_seq, kv_seq), row b * heads + h; q is scaled by 1/sqrt(head_dim).
"""
import math

import numpy as np

from ..base import OperatorInputError
from . import services
from ._host import host_forward
from .params import Param
from .registry import OpDef, kernel_forward, register


def _nd(shape):
    return tuple(int(d) for d in shape)


# ---- allclose ----------------------------------------------------------------------------------
def _allclose_infer(a, shapes, dtypes):
    if _nd(shapes[0]) != _nd(shapes[1]):
        raise OperatorInputError(f"_contrib_allclose: a has shape {_nd(shapes[0])} but b has shape "
                         f"{_nd(shapes[1])}")
    return [()], [np.uint8]


def _allclose(a, x, y):
    if x.size == 0:
        return np.ones((), np.uint8)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    close = (x64 == y64) | (np.abs(x64 - y64) <= a["atol"] + a["rtol"] * np.abs(y64))
    if a["equal_nan"]:
        close |= np.isnan(x64) & np.isnan(y64)
    return np.array(1 if close.all() else 0, np.uint8)


_allclose_host = host_forward("_contrib_allclose", _allclose)
# iattr: equal_nan, then the rule for infinities: MXNet's for the operator, numpy's for
# all_close_numpy (an attrs key no operator parameter can set)
_allclose_kernel = kernel_forward("contrib_misc", "allclose", name="_contrib_allclose",
                                  ints=("equal_nan", "numpy_inf"), floats=("rtol", "atol"),
                                  fill={"equal_nan": lambda a, i, o: int(a["equal_nan"]),
                                        "numpy_inf": lambda a, i, o: int(a.get("_numpy_inf", 0))})


def _kernel_applies(x, y):
    """The CPU kernel compares two non-empty host arrays of one dtype it has a loop for
    (MXNet's dtypes); numpy does the rest (mixed dtypes, int16, uint16-64)."""
    from .cpu.contrib_misc import KERNELS
    return (x.dtype == y.dtype and x.size == y.size and x.size > 0
            and x._ctx.device_typeid != 2 and y._ctx.device_typeid != 2
            and x._dcode in KERNELS["allclose"])


def all_close_numpy(x, y, rtol, atol, equal_nan):
    """numpy's ``isclose(x, y, rtol, atol, equal_nan).all()`` for two NDArrays, in one pass of
    the allclose kernel (numpy's rule for infinities); None where the kernel does not apply
    (see _kernel_applies). Waits for the answer."""
    if not _kernel_applies(x, y):
        return None
    out = services.ndarray.empty((), dtype=np.uint8)
    _allclose_kernel({"rtol": float(rtol), "atol": float(atol), "equal_nan": equal_nan,
                      "_numpy_inf": 1}, [x, y], [out])
    return bool(out.asnumpy())


def _allclose_forward(a, inputs, outputs):
    if _kernel_applies(*inputs):
        return _allclose_kernel(a, inputs, outputs)
    return _allclose_host(a, inputs, outputs)


register(OpDef("_contrib_allclose", inputs=("a", "b"), differentiable=False,
               params=(Param("rtol", float, 1e-05), Param("atol", float, 1e-08),
                       Param("equal_nan", bool, True)),
               infer=_allclose_infer, forward=_allclose_forward,
               grad=lambda F, a, i, o, g: [F.zeros_like(x) for x in i],
               doc="1 (uint8, shape ()) when |a - b| <= atol + rtol * |b| everywhere, else 0."))


# ---- arange_like --------------------------------------------------------------------------------
def _arange_like_shape(a, shape):
    shape = _nd(shape)
    if a["axis"] is None:
        return shape
    ax = a["axis"]
    if not -len(shape) <= ax < len(shape):
        raise OperatorInputError(f"_contrib_arange_like: axis {ax} out of range for a "
                         f"{len(shape)}-d input")
    return (shape[ax % len(shape)],)


def _arange_like_infer(a, shapes, dtypes):
    if a["repeat"] < 1:
        raise OperatorInputError(f"_contrib_arange_like: repeat must be >= 1, got {a['repeat']}")
    return [_arange_like_shape(a, shapes[0])], [dtypes[0]]


def _arange_like(a, x):
    shape = _arange_like_shape(a, x.shape)
    n = int(np.prod(shape, dtype=np.int64))
    dt = x.dtype
    i = np.arange(n, dtype=np.int64) // a["repeat"]
    if np.issubdtype(dt, np.signedinteger) or np.issubdtype(dt, np.floating):
        vals = (np.asarray(a["start"], dt) + i.astype(dt) * np.asarray(a["step"], dt))
    else:       # unsigned: MXNet takes start and step as integers
        vals = (int(a["start"]) + i * int(a["step"])).astype(dt)
    return vals.astype(dt).reshape(shape)


def _zero_grad(F, a, inputs, outputs, out_grads):
    return [F.zeros_like(x) for x in inputs]


register(OpDef("_contrib_arange_like",
               params=(Param("start", float, 0.0), Param("step", float, 1.0),
                       Param("repeat", int, 1), Param("ctx", str, ""),
                       Param("axis", int, None, optional=True)),
               infer=_arange_like_infer, forward=host_forward("_contrib_arange_like", _arange_like),
               grad=_zero_grad,
               doc="start + step * (i // repeat) over the input's shape (or the length of "
                   "`axis`), in the input's dtype."))


# ---- index_copy ---------------------------------------------------------------------------------
def _index_copy_infer(a, shapes, dtypes):
    old, idx, new = (_nd(s) for s in shapes)
    name = "_contrib_index_copy"
    if len(idx) != 1:
        raise OperatorInputError(f"{name}: index_vector must be 1-D, got shape {idx}")
    if len(old) != len(new):
        raise OperatorInputError(f"{name}: old_tensor {old} and new_tensor {new} need the same number "
                         f"of dimensions")
    if not old or old[1:] != new[1:]:
        raise OperatorInputError(f"{name}: new_tensor {new} must match old_tensor {old} beyond the "
                         f"first axis")
    if idx[0] != new[0]:
        raise OperatorInputError(f"{name}: index_vector has {idx[0]} entries but new_tensor has "
                         f"{new[0]} rows")
    if np.dtype(dtypes[0]) != np.dtype(dtypes[2]):
        raise OperatorInputError(f"{name}: old_tensor is {np.dtype(dtypes[0]).name} but new_tensor is "
                         f"{np.dtype(dtypes[2]).name}")
    return [old], [dtypes[0]]


def _index_copy(a, old, idx, new):
    out = old.copy()
    rows = idx.astype(np.int64)
    n = old.shape[0]
    bad = (rows < 0) | (rows >= n)
    if bad.any():
        raise IndexError(f"index {int(rows[bad][0])} is out of range for old_tensor with "
                         f"{n} rows")
    out[rows] = new
    return out


def _index_copy_grad(F, a, inputs, outputs, out_grads):
    og = out_grads[0]
    old, idx, new = inputs
    g_old = F._contrib_index_copy(og, idx, F.zeros_like(new))
    g_new = F.take(og, idx, axis=0)
    return [g_old, None, g_new]


register(OpDef("_contrib_index_copy", inputs=("old_tensor", "index_vector", "new_tensor"),
               infer=_index_copy_infer, forward=host_forward("_contrib_index_copy", _index_copy),
               grad=_index_copy_grad,
               doc="A copy of old_tensor whose rows index_vector[i] are new_tensor[i]."))


# ---- interleaved multi-head attention -----------------------------------------------------------
_HEADS = (Param("heads", int, required=True),)


def _check3(name, what, x):
    if x.ndim != 3:
        raise OperatorInputError(f"{name}: {what} must be 3-D (seq_length, batch, dims), got shape "
                         f"{tuple(x.shape)}")


def _split_heads(F, x, heads, parts, which):
    """(S, B, heads * parts * D) -> part `which` as (B * heads, S, D)."""
    y = F.reshape(x, shape=(0, 0, heads, parts, -1))
    y = F.slice_axis(y, axis=3, begin=which, end=which + 1)
    y = F.reshape(y, shape=(0, 0, 0, -1))                # (S, B, H, D)
    y = F.transpose(y, axes=(1, 2, 0, 3))                 # (B, H, S, D)
    return F.reshape(y, shape=(-3, 0, 0))


def _merge_heads(F, y, heads):
    """(B * heads, S, D) -> (S, B, heads * D)."""
    y = F.reshape(y, shape=(-4, -1, heads, 0, 0))         # (B, H, S, D)
    y = F.transpose(y, axes=(2, 0, 1, 3))                 # (S, B, H, D)
    return F.reshape(y, shape=(0, 0, -3))


def _head_dim(name, dims, heads, parts):
    if heads < 1 or dims % (heads * parts):
        raise OperatorInputError(f"{name}: last axis of size {dims} does not split into {heads} heads "
                         f"x {parts} parts")
    return dims // (heads * parts)


def _selfatt_qk(F, a, qkv):
    name = "_contrib_interleaved_matmul_selfatt_qk"
    _check3(name, "queries_keys_values", qkv)
    d = _head_dim(name, qkv.shape[2], a["heads"], 3)
    q = _split_heads(F, qkv, a["heads"], 3, 0) * (1.0 / math.sqrt(d))
    k = _split_heads(F, qkv, a["heads"], 3, 1)
    return F.batch_dot(q, k, transpose_b=True)


def _selfatt_valatt(F, a, qkv, att):
    name = "_contrib_interleaved_matmul_selfatt_valatt"
    _check3(name, "queries_keys_values", qkv)
    _check3(name, "attention", att)
    _head_dim(name, qkv.shape[2], a["heads"], 3)
    if att.shape[1] != qkv.shape[0] or att.shape[2] != qkv.shape[0] or \
            att.shape[0] != qkv.shape[1] * a["heads"]:
        raise OperatorInputError(f"{name}: attention of shape {tuple(att.shape)} does not fit "
                         f"queries_keys_values of shape {tuple(qkv.shape)} with {a['heads']} heads")
    v = _split_heads(F, qkv, a["heads"], 3, 2)
    return _merge_heads(F, F.batch_dot(att, v), a["heads"])


def _encdec_qk(F, a, q, kv):
    name = "_contrib_interleaved_matmul_encdec_qk"
    _check3(name, "queries", q)
    _check3(name, "keys_values", kv)
    if kv.shape[2] != 2 * q.shape[2] or kv.shape[1] != q.shape[1]:
        raise OperatorInputError(f"{name}: keys_values of shape {tuple(kv.shape)} does not fit queries "
                         f"of shape {tuple(q.shape)}")
    d = _head_dim(name, q.shape[2], a["heads"], 1)
    qh = _split_heads(F, q, a["heads"], 1, 0) * (1.0 / math.sqrt(d))
    kh = _split_heads(F, kv, a["heads"], 2, 0)
    return F.batch_dot(qh, kh, transpose_b=True)


def _encdec_valatt(F, a, kv, att):
    name = "_contrib_interleaved_matmul_encdec_valatt"
    _check3(name, "keys_values", kv)
    _check3(name, "attention", att)
    _head_dim(name, kv.shape[2], a["heads"], 2)
    if att.shape[2] != kv.shape[0] or att.shape[0] != kv.shape[1] * a["heads"]:
        raise OperatorInputError(f"{name}: attention of shape {tuple(att.shape)} does not fit "
                         f"keys_values of shape {tuple(kv.shape)} with {a['heads']} heads")
    v = _split_heads(F, kv, a["heads"], 2, 1)
    return _merge_heads(F, F.batch_dot(att, v), a["heads"])


register(OpDef("_contrib_interleaved_matmul_selfatt_qk", inputs=("queries_keys_values",),
               params=_HEADS, composite=_selfatt_qk,
               doc="Self-attention scores q k^T / sqrt(head_dim) from interleaved q, k, v."))
register(OpDef("_contrib_interleaved_matmul_selfatt_valatt",
               inputs=("queries_keys_values", "attention"), params=_HEADS,
               composite=_selfatt_valatt,
               doc="attention x v from interleaved q, k, v; result (seq, batch, heads*head_dim)."))
register(OpDef("_contrib_interleaved_matmul_encdec_qk", inputs=("queries", "keys_values"),
               params=_HEADS, composite=_encdec_qk,
               doc="Encoder-decoder attention scores q k^T / sqrt(head_dim)."))
register(OpDef("_contrib_interleaved_matmul_encdec_valatt", inputs=("keys_values", "attention"),
               params=_HEADS, composite=_encdec_valatt,
               doc="Encoder-decoder attention x v from interleaved k, v."))
