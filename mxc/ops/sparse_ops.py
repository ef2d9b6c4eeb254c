"""Operators on sparse storage (CSR, row_sparse) with MXNet 1.9.1's storage-type rules.

Two kinds of entries:

- OpDefs for the sparse-only operators: ``cast_storage`` (any storage to any other) and
  ``_sparse_retain`` (the rows of a row_sparse array listed in an index array).
- ``IMPLS[op name](op, attrs, inputs, out)``: the sparse implementation of an existing operator,
  run by ``mxc.ndarray.sparse.dispatch`` when an input or the output is sparse. It returns the
  result, or NotImplemented for storage combinations it does not cover (then the dense kernel
  runs on dense copies: MXNet's storage fallback).

Storage rules (MXNet's FInferStorageType):
  storage-preserving unaries (abs, square, sqrt, sign, relu, ... _mul_scalar, _div_scalar,
  cast): f(sparse) keeps the storage and applies f to the stored values only;
  dot(csr, dns|rsp) -> dns; dot(csr.T, dns|rsp) -> rsp (dns with forward_stype='default');
  dot(dns, rsp) -> dns; elemwise_add/sub: rsp,rsp -> rsp; csr,csr -> csr; with dns -> dns;
  elemwise_mul: rsp,rsp -> rsp; csr,csr -> csr; rsp,dns / dns,rsp -> rsp; csr,dns / dns,csr -> csr;
  sum/mean of a sparse array -> dns; zeros_like keeps the storage;
  sgd_update, sgd_mom_update, adam_update (lazy_update=True), ftrl_update and
  _sparse_adagrad_update with a row_sparse gradient update only the rows present in it.
Kernels: csrc/kernels/sparse_ops.h (mxc/ops/cpu/sparse_ops.pyx).
"""

import numpy as np

from .params import Param
from .registry import OpDef, register, kernel_forward
from .optimizer_ops import _f32

_STYPES = ("default", "row_sparse", "csr")
_FLOATS = ("float16", "float32", "float64")
_FORWARDS = {}      # (kernel, op name) -> registry forward


def _push(kname, inputs, outputs, fattr=(), name=None):
    """Push sparse kernel `kname` (keyed by the output's dtype) with float attributes `fattr`."""
    fwd = _FORWARDS.get((kname, name))
    if fwd is None:
        fwd = _FORWARDS[kname, name] = kernel_forward(
            "sparse_ops", kname, name=name or kname, key=lambda a, i, o: o[0]._dcode,
            attrs=lambda a, i, o: ((), a))
    fwd(tuple(float(f) for f in fattr), list(inputs), list(outputs))


def _sp():
    from ..ndarray import sparse
    return sparse


def _nd():
    from .. import ndarray
    return ndarray


# ---- OpDefs ------------------------------------------------------------------------------------
def _cast_storage(F, attrs, data):
    stype = attrs["stype"]
    if F is _nd():
        return _sp().cast_storage(data, stype)
    raise ValueError("cast_storage: only mx.nd supports sparse storage in mxc")


def _cast_storage_grad(F, attrs, inputs, outputs, out_grads):
    return [out_grads[0]]


register(OpDef("cast_storage", inputs=("data",),
               params=(Param("stype", str, required=True, choices=_STYPES),),
               composite=_cast_storage, grad=_cast_storage_grad,
               doc="The array in storage type stype ('default', 'row_sparse' or 'csr')."))


def _retain_infer(attrs, shapes, dtypes):
    raise ValueError("_sparse_retain: data must be a row_sparse array (got dense storage)")


def _retain_forward(attrs, inputs, outputs):   # pragma: no cover  (infer refuses dense input)
    raise ValueError("_sparse_retain: data must be a row_sparse array")


def _retain_grad(F, attrs, inputs, outputs, out_grads):
    data, idx = inputs
    return [F._sparse_retain(out_grads[0], idx), None]


register(OpDef("_sparse_retain", aliases=("sparse_retain",), inputs=("data", "indices"),
               infer=_retain_infer, forward=_retain_forward, grad=_retain_grad,
               doc="The rows of a row_sparse array whose indices are listed in `indices`; "
                   "other rows are dropped."))


# ---- sparse implementations --------------------------------------------------------------------
IMPLS = {}

PRESERVING = ("abs sign round rint ceil floor trunc fix square sqrt expm1 log1p sin tan arcsin "
              "arctan sinh tanh arcsinh arctanh degrees radians relu negative _copy "
              "_mul_scalar _div_scalar Cast cast amp_cast").split()


def _unary_preserving(op, attrs, inputs, out):
    sp = _sp()
    from ..ndarray.register import run
    if len(inputs) != 1 or not sp.is_sparse(inputs[0]):
        return NotImplemented
    x = inputs[0]
    vals = run(op, [x.data], attrs)
    res = sp._make(x.stype, x.shape, [vals] + list(x._parts[1:]), x.context, vals._dtype)
    return sp._finish(res, out)


for _n in PRESERVING:
    IMPLS[_n] = _unary_preserving


def _copyto(op, attrs, inputs, out):
    sp = _sp()
    src = inputs[0]
    if out is None:
        return src.copy()
    return sp._finish(src, out)


IMPLS["_copyto"] = _copyto


def _zeros_like(op, attrs, inputs, out):
    x = inputs[0]
    if not _sp().is_sparse(x):
        return NotImplemented
    return _sp()._finish(_sp().zeros(x.stype, x.shape, x.context, x._dtype), out)


IMPLS["zeros_like"] = _zeros_like


def _reshape(op, attrs, inputs, out):
    x = inputs[0]
    shape = attrs.get("shape")
    if out is None and shape is not None and tuple(shape) == tuple(x.shape) \
            and not attrs.get("reverse", False):
        return x
    return NotImplemented


IMPLS["Reshape"] = _reshape


def _binary(kind):
    def impl(op, attrs, inputs, out):
        sp = _sp()
        a, b = inputs
        if a.shape != b.shape:
            return NotImplemented
        sa, sb = a.stype, b.stype
        if kind in ("add", "sub"):
            target = sa if sa == sb else "default"
        else:
            if sa == sb:
                target = sa
            elif "default" in (sa, sb):
                target = sa if sb == "default" else sb
            else:
                return NotImplemented
        an, bn = a.asnumpy(), b.asnumpy()
        r = an + bn if kind == "add" else an - bn if kind == "sub" else an * bn
        r = r.astype(a._dtype, copy=False)
        if target == "default":
            res = sp._wrap_np(r, a.context)
        else:
            res = sp._from_dense_np(r, target, a.context, a._dtype)
        return sp._finish(res, out)
    return impl


IMPLS["elemwise_add"] = _binary("add")
IMPLS["elemwise_sub"] = _binary("sub")
IMPLS["elemwise_mul"] = _binary("mul")


def _reduce(op, attrs, inputs, out):
    from ..ndarray.register import run
    if len(inputs) != 1 or _sp().is_sparse(out):
        return NotImplemented
    return run(op, [inputs[0].tostype("default")], attrs, out)


IMPLS["sum"] = IMPLS["mean"] = _reduce


def _retain(op, attrs, inputs, out):
    sp = _sp()
    data, idx = inputs
    if data.stype != "row_sparse" or sp.is_sparse(idx):
        raise ValueError("_sparse_retain: data must be row_sparse and indices dense")
    # as MXNet: the result's rows are the requested ones (zeros where data has none)
    have = data.indices.asnumpy()
    want = np.unique(idx.asnumpy().astype(np.int64).reshape(-1))
    if want.size and (want[0] < 0 or want[-1] >= data.shape[0]):
        raise ValueError(f"_sparse_retain: index out of range for {data.shape[0]} rows")
    ctx = data.context
    vals = np.zeros((want.size,) + tuple(data.shape[1:]), dtype=data._dtype)
    if have.size and want.size:
        pos = np.minimum(np.searchsorted(have, want), have.size - 1)
        hit = have[pos] == want
        vals[hit] = data.data.asnumpy()[pos[hit]]
    res = sp._make("row_sparse", data.shape, [sp._wrap_np(vals, ctx), sp._wrap_np(want, ctx)],
                   ctx, data._dtype)
    return sp._finish(res, out)


IMPLS["_sparse_retain"] = _retain


# ---- dot -------------------------------------------------------------------------------------
def _dot(op, attrs, inputs, out):
    sp = _sp()
    nd = _nd()
    lhs, rhs = inputs
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    fstype = attrs.get("forward_stype")
    if tb or lhs.ndim != 2 or rhs.ndim != 2 or lhs._dtype != rhs._dtype \
            or lhs._dtype.name not in _FLOATS:
        return NotImplemented
    ctx = lhs.context
    if lhs.stype == "csr" and rhs.stype in ("default", "row_sparse"):
        r = rhs if rhs.stype == "default" else rhs.tostype("default")
        M, K = lhs.shape
        N = r.shape[1]
        data, idx, ptr = lhs._parts
        if not ta:
            if K != r.shape[0]:
                raise ValueError(f"dot: shape error: {lhs.shape} X {rhs.shape}")
            res = nd.empty((M, N), ctx, lhs._dtype)
            _push("sp:csr_dns", [data, idx, ptr, r], [res], name="dot")
            if fstype in ("csr", "row_sparse"):
                res = res.tostype(fstype)
            return sp._finish(res, out)
        if M != r.shape[0]:
            raise ValueError(f"dot: shape error: {lhs.shape}^T X {rhs.shape}")
        if fstype == "default" or (out is not None and not sp.is_sparse(out)):
            rowmap = nd.arange(0, K, dtype="int64")
            res = nd.empty((K, N), ctx, lhs._dtype)
            _push("sp:csrT_dns", [data, idx, ptr, r, rowmap], [res], name="dot")
            return sp._finish(res, out)
        cols = np.unique(idx.asnumpy())
        if cols.size == 0:
            res = sp.zeros("row_sparse", (K, N), ctx, lhs._dtype)
        else:
            rm = np.full(K, -1, dtype=np.int64)
            rm[cols] = np.arange(cols.size)
            vals = nd.empty((cols.size, N), ctx, lhs._dtype)
            _push("sp:csrT_dns", [data, idx, ptr, r, sp._wrap_np(rm, ctx)], [vals], name="dot")
            res = sp._make("row_sparse", (K, N), [vals, sp._wrap_np(cols, ctx)], ctx,
                           lhs._dtype)
        return sp._finish(res, out)
    if lhs.stype == "default" and rhs.stype == "row_sparse" and not ta:
        M, K = lhs.shape
        if K != rhs.shape[0]:
            raise ValueError(f"dot: shape error: {lhs.shape} X {rhs.shape}")
        vals, ridx = rhs._parts
        if ridx.shape[0] == 0:
            res = nd.zeros((M, rhs.shape[1]), ctx, lhs._dtype)
        else:
            res = nd.dot(nd.take(lhs, ridx, axis=1), vals)
        return sp._finish(res, out)
    return NotImplemented


IMPLS["dot"] = _dot


# ---- lazy optimizer updates ------------------------------------------------------------------
def _rows_full(x):
    """The dense (rows, ...) values of a weight or state: itself, or a row_sparse array's data
    when every row is present (MXNet requires that for sparse weights and states)."""
    sp = _sp()
    if not sp.is_sparse(x):
        return x
    if x.stype != "row_sparse" or x.data.shape[0] != x.shape[0]:
        return None
    return x.data


def _lazy(kname, nstate, fattr, needs_lazy_flag=True, all_rsp=False):
    """MXNet's storage rules: a row_sparse gradient and states stored like the weight (dense
    weight and states, or all row_sparse); ftrl and adagrad need everything row_sparse. Other
    combinations (and lazy_update=False) run the dense update on dense copies."""
    def impl(op, attrs, inputs, out):
        weight, grad = inputs[0], inputs[1]
        states = list(inputs[2:2 + nstate])
        if grad.stype != "row_sparse" or (needs_lazy_flag and not attrs.get("lazy_update", True)):
            return NotImplemented
        if any(s.stype != weight.stype for s in states) or \
                (all_rsp and weight.stype != "row_sparse"):
            return NotImplemented
        w = _rows_full(weight)
        st = [_rows_full(s) for s in states]
        if w is None or any(s is None for s in st) or w._dtype.name not in _FLOATS \
                or grad._dtype != w._dtype or any(s._dtype != w._dtype for s in st):
            return NotImplemented
        if grad.shape != weight.shape or any(s.shape != weight.shape for s in states):
            raise ValueError(f"{op.name}: weight, grad and states must share one shape")
        target = weight
        if out is not None and out is not weight:
            if isinstance(out, (list, tuple)):
                return NotImplemented
            weight.copyto(out)
            target = out
            w = _rows_full(out)
            if w is None:
                return NotImplemented
        gdata, gidx = grad._parts
        if gidx.shape[0] > 0:
            _push(kname, [gdata, gidx], [w] + st, fattr(attrs), name=op.name)
        if out is None and target is weight:
            return weight
        return target
    return impl


IMPLS["sgd_update"] = _lazy("sp:lazy_sgd", 0, lambda a: tuple(
    _f32(a[k]) for k in ("lr", "wd", "rescale_grad", "clip_gradient")))
IMPLS["sgd_mom_update"] = _lazy("sp:lazy_msgd", 1, lambda a: tuple(
    _f32(a[k]) for k in ("lr", "wd", "momentum", "rescale_grad", "clip_gradient")))
IMPLS["adam_update"] = _lazy("sp:lazy_adam", 2, lambda a: tuple(
    _f32(a[k]) for k in ("lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad",
                         "clip_gradient")))
IMPLS["ftrl_update"] = _lazy("sp:lazy_ftrl", 2, lambda a: tuple(
    _f32(a[k]) for k in ("lr", "lamda1", "beta", "wd", "rescale_grad", "clip_gradient")),
    needs_lazy_flag=False, all_rsp=True)
IMPLS["_sparse_adagrad_update"] = _lazy("sp:lazy_adagrad", 1, lambda a: tuple(
    _f32(a[k]) for k in ("lr", "epsilon", "rescale_grad", "clip_gradient")),
    needs_lazy_flag=False, all_rsp=True)
