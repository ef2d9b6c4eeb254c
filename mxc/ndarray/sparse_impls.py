"""Sparse implementations of existing operators, with MXNet 1.9.1's storage-type rules.

``IMPLS[op name](op, attrs, inputs, out)`` (kept in ``mxc.ndarray.sparse.IMPLS``) is run by
``mxc.ndarray.sparse.dispatch`` when an input or the output is sparse. It returns the result, or
NotImplemented for storage combinations it does not cover (then the dense kernel runs on dense
copies: MXNet's storage fallback). The sparse-only operators (cast_storage, _sparse_retain,
_contrib_getnnz) and the kernel push are in mxc/ops/sparse_ops.py.

Storage rules (MXNet's FInferStorageType):
  storage-preserving unaries (abs, square, sqrt, sign, relu, ... _mul_scalar, _div_scalar,
  cast): f(sparse) keeps the storage and applies f to the stored values only;
  dot(csr, dns|rsp) -> dns; dot(csr.T, dns|rsp) -> rsp (dns with forward_stype='default');
  dot(dns, rsp) -> dns; elemwise_add/sub: rsp,rsp -> rsp; csr,csr -> csr; with dns -> dns;
  elemwise_mul: rsp,rsp -> rsp; csr,csr -> csr; rsp,dns / dns,rsp -> rsp; csr,dns / dns,csr -> csr;
  sum/mean of a sparse array -> dns; zeros_like keeps the storage;
  sgd_update, sgd_mom_update, adam_update (lazy_update=True), _sparse_adagrad_update (weight
  and history dense or all row_sparse) and ftrl_update (everything row_sparse) with a row_sparse
  gradient update only the rows present in it;
  Embedding / _contrib_SparseEmbedding with a row_sparse weight -> dns (absent rows read zeros);
  take(csr, indices) along axis 0 (clip / wrap) -> csr.
Row bookkeeping that decides a result's size (unions and intersections of row sets, CSR
positions) runs on the host; values of row_sparse results are computed on the engine.
"""
import numpy as np

from .. import ndarray as nd
from ..ops.optimizer_ops import _f32
from ..ops.registry import declared_kernel
from ..ops.sparse_ops import push_sparse_kernel
from . import sparse as sp
from .register import run

IMPLS = sp.IMPLS
_FLOATS = ("float16", "float32", "float64")

PRESERVING = ("abs sign round rint ceil floor trunc fix square sqrt cbrt expm1 log1p sin tan arcsin "
              "arctan sinh tanh arcsinh arctanh degrees radians relu negative _copy "
              "_mul_scalar _div_scalar Cast cast amp_cast _contrib_round_ste "
              "_contrib_sign_ste").split()


def _unary_preserving(op, attrs, inputs, out):
    if len(inputs) != 1 or not sp.is_sparse(inputs[0]):
        return NotImplemented
    x = inputs[0]
    vals = run(op, [x.data], attrs)
    res = sp._make(x.stype, x.shape, [vals] + list(x._parts[1:]), x.context, vals._dtype)
    return sp._finish(res, out)


for _n in PRESERVING:
    IMPLS[_n] = _unary_preserving


def _copyto(op, attrs, inputs, out):
    src = inputs[0]
    if out is None:
        return src.copy()
    return sp._finish(src, out)


IMPLS["_copyto"] = _copyto


def _zeros_like(op, attrs, inputs, out):
    x = inputs[0]
    if not sp.is_sparse(x):
        return NotImplemented
    return sp._finish(sp.zeros(x.stype, x.shape, x.context, x._dtype), out)


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
        a, b = inputs
        if a.shape != b.shape or a._dtype != b._dtype:
            return NotImplemented
        sa, sb = a.stype, b.stype
        if sa == sb == "row_sparse":
            res = _rsp_rsp(kind, a, b)
        elif sa == sb == "csr":
            res = _csr_csr(kind, a, b)
        elif kind == "mul" and "default" in (sa, sb):
            s_, d_ = (a, b) if sb == "default" else (b, a)
            res = _rsp_mul_dns(s_, d_) if s_.stype == "row_sparse" else _csr_mul_dns(s_, d_)
        elif kind in ("add", "sub"):
            # any mix with dense, or csr with row_sparse: a dense result
            da = a if sa == "default" else a.tostype("default")
            db = b if sb == "default" else b.tostype("default")
            res = nd.elemwise_add(da, db) if kind == "add" else nd.elemwise_sub(da, db)
        else:
            return NotImplemented
        return sp._finish(res, out)
    return impl


def _rsp_rsp(kind, a, b):
    """row_sparse (op) row_sparse: add/sub keep the union of the rows (MXNet keeps rows whose
    values cancel), mul the intersection. Row bookkeeping on the host, values on the engine."""
    ctx, dt = a.context, a._dtype
    (va, ia), (vb, ib) = a._parts, b._parts
    ra, rb = ia.asnumpy(), ib.asnumpy()
    if kind == "mul":
        rows, pa, pb = np.intersect1d(ra, rb, assume_unique=True, return_indices=True)
        if rows.size == 0:
            return sp.zeros("row_sparse", a.shape, ctx, dt)
        vals = nd.elemwise_mul(_take_rows(va, pa, ra.size), _take_rows(vb, pb, rb.size))
        return sp._make("row_sparse", a.shape, [vals, sp._wrap_np(rows, ctx)], ctx, dt)
    if ra.size == rb.size and np.array_equal(ra, rb):
        rows, xa, xb = ra, va, vb
    else:
        rows = np.union1d(ra, rb)
        if rows.size == 0:
            return sp.zeros("row_sparse", a.shape, ctx, dt)
        xa = _expand_rows(va, ra, rows)
        xb = _expand_rows(vb, rb, rows)
    vals = nd.elemwise_add(xa, xb) if kind == "add" else nd.elemwise_sub(xa, xb)
    return sp._make("row_sparse", a.shape, [vals, sp._wrap_np(rows.astype(np.int64), ctx)],
                    ctx, dt)


def _take_rows(vals, pos, n):
    if pos.size == n and np.array_equal(pos, np.arange(n)):
        return vals
    return nd.take(vals, nd.array(pos.astype(np.int64), ctx=vals.context, dtype=np.int64),
                   axis=0)


def _expand_rows(vals, have, rows):
    """The (len(rows), ...) values of a row_sparse array holding `have` (a subset of rows)."""
    if have.size == rows.size:
        return vals
    ctx = vals.context
    pos = np.searchsorted(rows, have).astype(np.int64)
    out = nd.zeros((rows.size,) + tuple(vals.shape[1:]), ctx, vals.dtype)
    if have.size == 0:
        return out
    return nd._scatter_set_rows(out, nd.array(pos, ctx=ctx, dtype=np.int64), vals)


def _rsp_mul_dns(s_, d_):
    vals, idx = s_._parts
    if idx.shape[0] == 0:
        return sp.zeros("row_sparse", s_.shape, s_.context, s_._dtype)
    rows = nd.take(d_, idx, axis=0)
    return sp._make("row_sparse", s_.shape, [nd.elemwise_mul(vals, rows), idx.copy()],
                    s_.context, s_._dtype)


def _csr_coo(x):
    data, idx, ptr = (p.asnumpy() for p in x._parts)
    rows = np.repeat(np.arange(x.shape[0], dtype=np.int64), np.diff(ptr))
    return data, rows * x.shape[1] + idx


def _csr_from_keys(shape, keys, vals, ctx, dt):
    rows, cols = np.divmod(keys, shape[1])
    ptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=ptr[1:])
    return sp._make("csr", shape, [sp._wrap_np(vals.astype(dt, copy=False), ctx),
                                   sp._wrap_np(cols.astype(np.int64), ctx),
                                   sp._wrap_np(ptr, ctx)], ctx, dt)


def _csr_csr(kind, a, b):
    """csr (op) csr on the host: add/sub over the union of the stored positions, mul over the
    intersection (MXNet's ElemwiseBinaryOp::CsrCsrOp)."""
    da, ka = _csr_coo(a)
    db, kb = _csr_coo(b)
    if kind == "mul":
        keys, pa, pb = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
        vals = da[pa] * db[pb]
    else:
        keys = np.union1d(ka, kb)
        vals = np.zeros(keys.size, dtype=a._dtype)
        vals[np.searchsorted(keys, ka)] += da
        pb = np.searchsorted(keys, kb)
        if kind == "add":
            vals[pb] += db
        else:
            vals[pb] -= db
    return _csr_from_keys(a.shape, keys, vals, a.context, a._dtype)


def _csr_mul_dns(s_, d_):
    data, keys = _csr_coo(s_)
    rows, cols = np.divmod(keys, s_.shape[1])
    vals = data * d_.asnumpy()[rows, cols]
    return _csr_from_keys(s_.shape, keys, vals, s_.context, s_._dtype)


IMPLS["elemwise_add"] = _binary("add")
IMPLS["elemwise_sub"] = _binary("sub")
IMPLS["elemwise_mul"] = _binary("mul")


def _reduce(op, attrs, inputs, out):
    """sum/mean of a sparse array (a dense result, MXNet's rule): the stored values are summed
    (over rows, columns or all) without building the dense array."""
    if len(inputs) != 1 or sp.is_sparse(out) or attrs.get("exclude"):
        return NotImplemented
    x = inputs[0]
    axis = attrs.get("axis")
    nd_ = x.ndim
    if axis is None or len(axis) == 0:
        axes = tuple(range(nd_))
    else:
        axes = tuple(sorted({int(ax) + nd_ if ax < 0 else int(ax) for ax in axis}))
        if any(not 0 <= ax < nd_ for ax in axes):
            raise ValueError(f"{op.name}: axis {axis} out of range for {nd_} dimensions")
    keep = attrs.get("keepdims", False)
    ctx, dt = x.context, x._dtype
    acc = np.float64 if dt == np.float64 else np.float32
    if x.stype == "csr":
        data, idx, ptr = (p.asnumpy() for p in x._parts)
        M, N = x.shape
        if axes == (0, 1):
            r = np.array(data.astype(acc).sum(), dtype=acc)
        elif axes == (0,):
            r = np.bincount(idx, weights=data.astype(np.float64), minlength=N).astype(acc)
        else:
            rows = np.repeat(np.arange(M), np.diff(ptr))
            r = np.bincount(rows, weights=data.astype(np.float64), minlength=M).astype(acc)
    else:
        vals, idx = x._parts
        if 0 not in axes:
            # the rows present reduce on the engine; absent rows are zero
            v = nd.sum(vals, axis=axes)
            full = np.zeros((x.shape[0],) + tuple(d for i, d in enumerate(x.shape)
                                                  if i not in axes and i != 0), dtype=dt)
            if idx.shape[0]:
                full[idx.asnumpy()] = v.asnumpy()
            r = full
        else:
            v = vals.asnumpy().astype(acc)
            r = v.sum(axis=axes) if v.shape[0] else np.zeros(
                tuple(d for i, d in enumerate(x.shape) if i not in axes), dtype=acc)
    r = np.asarray(r)
    if op.name == "mean":
        cnt = 1
        for a_ in axes:
            cnt *= x.shape[a_]
        r = r / acc(cnt)
    if keep:
        r = r.reshape(tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    if r.ndim == 0:
        r = r.reshape((1,))
    res = sp._wrap_np(r.astype(dt), ctx)
    return sp._finish(res, out)


IMPLS["sum"] = IMPLS["mean"] = _reduce


def _retain(op, attrs, inputs, out):
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


def _embedding(op, attrs, inputs, out):
    """Embedding with a row_sparse weight (MXNet's SparseEmbedding forward): rows the weight
    does not hold look up zeros. A dense result."""
    data, weight = inputs
    if sp.is_sparse(data) or weight.stype != "row_sparse" or len(weight.shape) != 2:
        return NotImplemented
    n_in = attrs["input_dim"]
    if tuple(weight.shape) != (n_in, attrs["output_dim"]):
        raise ValueError(f"{op.name}: weight has shape {weight.shape}, expected "
                         f"{(n_in, attrs['output_dim'])}")
    vals, idx = weight._parts
    have = idx.asnumpy()
    ids = np.clip(data.asnumpy().astype(np.int64), 0, n_in - 1)
    R = have.size
    pos = np.searchsorted(have, ids) if R else np.zeros(ids.shape, np.int64)
    pos = np.minimum(pos, max(R - 1, 0))
    hit = have[pos] == ids if R else np.zeros(ids.shape, bool)
    pos = np.where(hit, pos, R).astype(np.int64)
    ctx = weight.context
    ext = nd.concat(vals, nd.zeros((1, vals.shape[1]), ctx, vals.dtype), dim=0) if R else \
        nd.zeros((1, attrs["output_dim"]), ctx, weight._dtype)
    res = nd.take(ext, nd.array(pos, ctx=ctx, dtype=np.int64), axis=0)
    return sp._finish(res, out)


IMPLS["Embedding"] = IMPLS["_contrib_SparseEmbedding"] = _embedding


def _getnnz(op, attrs, inputs, out):
    x = inputs[0]
    if x.stype != "csr":
        raise ValueError(f"_contrib_getnnz: data must be a csr array, got {x.stype}")
    data, idx, ptr = x._parts
    axis = attrs.get("axis")
    if axis is None:
        r = np.array([idx.shape[0]], dtype=np.int64)
    elif axis in (1, -1):
        r = np.diff(ptr.asnumpy()).astype(np.int64)
    elif axis in (0, -2):
        r = np.bincount(idx.asnumpy(), minlength=x.shape[1]).astype(np.int64)
    else:
        raise ValueError(f"_contrib_getnnz: axis must be None, 0 or 1, got {axis}")
    return sp._finish(sp._wrap_np(r, x.context), out)


IMPLS["_contrib_getnnz"] = _getnnz


def _take(op, attrs, inputs, out):
    """take(csr, indices) along axis 0 -> csr (MXNet's TakeOpForwardCsrImpl), clip or wrap."""
    a, ind = inputs
    if a.stype != "csr" or sp.is_sparse(ind) or attrs.get("axis", 0) != 0 \
            or attrs.get("mode", "clip") not in ("clip", "wrap"):
        return NotImplemented
    M = a.shape[0]
    ids = ind.asnumpy().reshape(-1).astype(np.int64)
    if ind.ndim != 1:
        return NotImplemented
    ids = np.clip(ids, 0, M - 1) if attrs.get("mode", "clip") == "clip" else np.mod(ids, M)
    data, idx, ptr = (p.asnumpy() for p in a._parts)
    lens = (ptr[1:] - ptr[:-1])[ids]
    nptr = np.zeros(ids.size + 1, dtype=np.int64)
    np.cumsum(lens, out=nptr[1:])
    pos = np.repeat(ptr[ids] - nptr[:-1], lens) + np.arange(nptr[-1], dtype=np.int64)
    ctx = a.context
    res = sp._make("csr", (ids.size, a.shape[1]),
                   [sp._wrap_np(data[pos], ctx), sp._wrap_np(idx[pos], ctx),
                    sp._wrap_np(nptr, ctx)], ctx, a._dtype)
    return sp._finish(res, out)


IMPLS["take"] = _take


# ---- dot -------------------------------------------------------------------------------------
def _dot(op, attrs, inputs, out):
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
            push_sparse_kernel("sp:csr_dns", [data, idx, ptr, r], [res], name="dot")
            if fstype in ("csr", "row_sparse"):
                res = res.tostype(fstype)
            return sp._finish(res, out)
        if M != r.shape[0]:
            raise ValueError(f"dot: shape error: {lhs.shape}^T X {rhs.shape}")
        if fstype == "default" or (out is not None and not sp.is_sparse(out)):
            rowmap = nd.arange(0, K, dtype="int64")
            res = nd.empty((K, N), ctx, lhs._dtype)
            push_sparse_kernel("sp:csrT_dns", [data, idx, ptr, r, rowmap], [res], name="dot")
            return sp._finish(res, out)
        cols = np.unique(idx.asnumpy())
        if cols.size == 0:
            res = sp.zeros("row_sparse", (K, N), ctx, lhs._dtype)
        else:
            rm = np.full(K, -1, dtype=np.int64)
            rm[cols] = np.arange(cols.size)
            vals = nd.empty((cols.size, N), ctx, lhs._dtype)
            push_sparse_kernel("sp:csrT_dns", [data, idx, ptr, r, sp._wrap_np(rm, ctx)], [vals], name="dot")
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
    if not sp.is_sparse(x):
        return x
    if x.stype != "row_sparse" or x.data.shape[0] != x.shape[0]:
        return None
    return x.data


def _lazy(kname, nstate, needs_lazy_flag=True, all_rsp=False):
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
            # MXNet's float parameters are C floats: rounded to float32
            slots = {n: _f32(attrs[n]) for n in declared_kernel("sparse_ops", kname).floats}
            push_sparse_kernel(kname, [gdata, gidx], [w] + st, slots, name=op.name)
        if out is None and target is weight:
            return weight
        return target
    return impl


IMPLS["sgd_update"] = _lazy("sp:lazy_sgd", 0)
IMPLS["sgd_mom_update"] = _lazy("sp:lazy_msgd", 1)
IMPLS["adam_update"] = _lazy("sp:lazy_adam", 2)
IMPLS["ftrl_update"] = _lazy("sp:lazy_ftrl", 2, needs_lazy_flag=False, all_rsp=True)
IMPLS["_sparse_adagrad_update"] = _lazy("sp:lazy_adagrad", 1, needs_lazy_flag=False)


# ---- scatter operators and storage-preserving special cases ----------------------------------
def _scatter(op, attrs, inputs, out):
    """The dense result taken at sparse lhs's stored rows (row_sparse) or entries (CSR, scalar
    operators only); the positions lhs does not store stay unstored."""
    lhs = inputs[0]
    if not sp.is_sparse(lhs) or (lhs.stype == "csr" and len(inputs) > 1):
        return NotImplemented
    dense = run(op, [x.tostype("default") if sp.is_sparse(x) else x for x in inputs], attrs)
    if lhs.stype == "row_sparse":
        rows = lhs.indices
        vals = nd.take(dense, rows, axis=0)
        res = sp._make("row_sparse", lhs.shape, [vals, rows], lhs.context, dense._dtype)
    else:
        data, idx, ptr = lhs._parts
        counts = np.diff(ptr.asnumpy())
        row_of = np.repeat(np.arange(lhs.shape[0], dtype=np.int64), counts)
        where = nd.stack(sp._wrap_np(row_of, lhs.context), idx, axis=0)
        vals = nd.gather_nd(dense, where)
        res = sp._make("csr", lhs.shape, [vals, idx, ptr], lhs.context, dense._dtype)
    return sp._finish(res, out)


for _n in ("_scatter_elemwise_div", "_scatter_plus_scalar", "_scatter_minus_scalar"):
    IMPLS[_n] = _scatter


def _quadratic(op, attrs, inputs, out):
    # a*x^2 + b*x + c keeps zeros (and so sparse storage) only when c is 0
    if attrs["c"] != 0:
        return NotImplemented
    return _unary_preserving(op, attrs, inputs, out)


IMPLS["_contrib_quadratic"] = _quadratic


def _square_sum(op, attrs, inputs, out):
    # the per-row sum of squares of a row_sparse array, keeping its dims, is row_sparse over
    # the same rows (MXNet's sparse kernel); the other reductions give dense arrays
    x = inputs[0]
    axis = attrs["axis"]
    if (x.stype != "row_sparse" or x.ndim != 2 or not attrs["keepdims"] or attrs["exclude"]
            or axis is None or tuple(axis) not in ((1,), (-1,))):
        return NotImplemented
    vals = run(op, [x.data], attrs)
    res = sp._make("row_sparse", (x.shape[0], 1), [vals, x.indices], x.context, vals._dtype)
    return sp._finish(res, out)


IMPLS["_square_sum"] = _square_sum
