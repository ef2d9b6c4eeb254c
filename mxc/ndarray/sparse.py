"""Sparse NDArrays as MXNet 1.9.1's ``mx.nd.sparse``: CSRNDArray (data, indices, indptr) and
RowSparseNDArray (data, indices), creation (csr_matrix, row_sparse_array, zeros, empty, array),
storage casts, and the storage dispatch that register.run calls when an operator gets a sparse
input or output.

Layout. A sparse array keeps its parts as dense NDArrays (ordered by the engine like any other);
they live in a ``_SparseState`` that the array carries in its base ``_ctx`` slot, so views made
by the C layer (autograd's detach copies the base fields) share them. The base fields describe
an empty uint16 array of shape (0,): dtype code 9 has no elementwise kernel, so the C fast paths
decline a sparse array and the operator takes the general path, where ``dispatch`` runs either a
sparse implementation (``_IMPLS``: storage-preserving unaries, dot with CSR / row_sparse, lazy
optimizer updates, retain, cast_storage, elementwise add/sub/mul, sum/mean) or MXNet's storage
fallback: dense copies, the dense kernel, and a one-time warning naming the operator. Python
reads ``shape``, ``dtype``, ``context`` ... through properties that report the sparse array's.

Index bookkeeping that decides output sizes (the union of two row sets, the columns present in
a CSR) runs on the host after waiting for the indices, as MXNet's does when it allocates the
output; the arithmetic on values is pushed to the engine.
"""
import ctypes  # noqa: F401  (MXNet's module has these names)
import operator
import sys
import warnings
from array import array as native_array  # noqa: F401

import numpy as np

from .._core import handle as _h
from .._core import tape as _tape
from .._core.handle import NDArrayBase
from .._core.modes import _M
from ..base import MXNetError
from ..base import (NotSupportedForSparseNDArray, NDArrayHandle, _LIB, c_array_buf,  # noqa: F401
                    check_call, integer_types, mx_real_t, numeric_types)
from ..context import Context, current_context
from .ndarray import NDArray, _nd, _shape, _dtype as _norm_dtype, mark_variables



def _is_scipy_sparse(x):
    """x is a scipy.sparse matrix (scipy is optional, as in MXNet, and costs 0.4 s to import:
    a scipy matrix can only exist once scipy.sparse has been imported by someone)."""
    m = sys.modules.get("scipy.sparse")
    return m is not None and m.issparse(x)

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "csr_matrix",
           "row_sparse_array", "zeros", "empty", "array", "cast_storage", "retain", "dot",
           "add", "subtract", "multiply", "divide"]

from .ndarray import (_STORAGE_TYPE_UNDEFINED, _STORAGE_TYPE_DEFAULT,  # noqa: F401,E402
                      _STORAGE_TYPE_ROW_SPARSE, _STORAGE_TYPE_CSR, _STORAGE_TYPE_STR_TO_ID,
                      _STORAGE_TYPE_ID_TO_STR)
# op name -> sparse implementation (filled by mxc/ndarray/sparse_impls.py)
IMPLS = {}
_STORAGE_AUX_TYPES = {"row_sparse": [np.int64], "csr": [np.int64, np.int64]}
_IDX = np.dtype(np.int64)
_BASE_DTYPE = np.dtype(np.uint16)     # code 9: no fast kernel takes it (see the module doc)
_BASE_CTX_FIELD = NDArrayBase.__dict__["_ctx"].__get__


class _SparseState(Context):
    """Storage type, dense shape, dtype and parts of a sparse array (shared by its views)."""
    __slots__ = ("stype", "sshape", "vdtype", "parts", "invalid")

    def __init__(self, ctx, stype, shape, dtype, parts):
        Context.__init__(self, ctx)
        self.stype, self.sshape, self.vdtype, self.parts = stype, shape, dtype, parts
        # why the parts do not form a valid array (None when they do): MXNet builds such an
        # array from user parts and only check_format() rejects it; here every operator and
        # conversion refuses it too (its indices would address memory out of range)
        self.invalid = None


def _state(x):
    return _BASE_CTX_FIELD(x)


def _plain(ctx):
    return Context(ctx.device_type, ctx.device_id)


def _ctx_of(ctx):
    ctx = current_context() if ctx is None else ctx
    if isinstance(ctx, str):
        ctx = Context(ctx)
    return _plain(ctx)


def _make(stype, shape, parts, ctx, dtype, invalid=None):
    cls = CSRNDArray if stype == "csr" else RowSparseNDArray
    ctx = _plain(ctx)
    anchor = _h.empty(NDArray, (0,), _BASE_DTYPE, ctx)
    st = _SparseState(ctx, stype, tuple(int(d) for d in shape), np.dtype(dtype), list(parts))
    st.invalid = invalid
    return _h.make_array(cls, anchor._chunk, 0, (0,), _BASE_DTYPE, st)


def _require_valid(x, what):
    msg = _state(x).invalid
    if msg is not None:
        raise MXNetError(f"{what}: the {x.stype} array is not in valid format ({msg}); "
                         "check_format() reports it")


def _wrap_np(a, ctx, dtype=None):
    a = np.ascontiguousarray(a, dtype=dtype)
    return _h.from_numpy(NDArray, a, ctx, a.dtype)


class BaseSparseNDArray(NDArray):
    """The base of CSRNDArray and RowSparseNDArray."""

    _sparse = True

    # ---- what Python sees (the base fields describe an empty placeholder) -----------------
    @property
    def stype(self):
        return _state(self).stype

    @property
    def shape(self):
        return _state(self).sshape

    _shape = shape

    @property
    def size(self):
        n = 1
        for d in _state(self).sshape:
            n *= d
        return n

    _size = size

    @property
    def ndim(self):
        return len(_state(self).sshape)

    @property
    def dtype(self):
        return _state(self).vdtype.type

    @property
    def _dtype(self):
        return _state(self).vdtype

    @property
    def _dcode(self):
        return _h.DTYPE_CODE[_state(self).vdtype]

    @property
    def _itemsize(self):
        return _state(self).vdtype.itemsize

    @property
    def context(self):
        return _plain(_state(self))

    ctx = context
    _ctx = context

    @property
    def _parts(self):
        return _state(self).parts

    @property
    def data(self):
        """The values (a dense NDArray sharing this array's storage)."""
        return _state(self).parts[0]

    @property
    def indices(self):
        return _state(self).parts[1]

    def _data(self):
        return self.data

    def _aux_data(self, i):
        return self._aux_list()[i]

    def _aux_list(self):
        p = _state(self).parts
        return [p[2], p[1]] if self.stype == "csr" else [p[1]]

    @property
    def _aux_types(self):
        return [np.int64] * len(self._aux_list())

    def __repr__(self):
        shape_info = "x".join(str(d) for d in self.shape)
        return f"\n<{type(self).__name__} {shape_info} @{self.context}>"

    __str__ = __repr__

    def __reduce__(self):
        return _rebuild, (self.stype, self.shape, [p.asnumpy() for p in self._parts],
                          self.dtype)

    def __len__(self):
        return self.shape[0]

    def __bool__(self):
        raise ValueError("The truth value of a sparse NDArray is ambiguous")

    def __iter__(self):
        raise NotImplementedError(f"iterating over a {type(self).__name__} is not supported")

    def wait_to_read(self):
        for p in _state(self).parts:
            p.wait_to_read()

    def wait_to_write(self):
        self.wait_to_read()

    def _numpy_view(self):
        raise MXNetError(f"{type(self).__name__} has no dense memory to share; use asnumpy() "
                         "or tostype('default')")

    def to_dlpack_for_read(self):
        raise MXNetError("DLPack needs dense storage: call tostype('default') first")

    to_dlpack_for_write = __dlpack__ = to_dlpack_for_read

    # ---- values -----------------------------------------------------------------------------
    def asnumpy(self):
        return _to_dense_np(self)

    def asscalar(self):
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(())[()]

    def astype(self, dtype, copy=True):
        dtype = np.dtype(dtype)
        if not copy and dtype == self._dtype:
            return self
        p = self._parts
        return _make(self.stype, self.shape, [p[0].astype(dtype)] + [q.copy() for q in p[1:]],
                     self.context, dtype, _state(self).invalid)

    def copy(self):
        return self.copyto(self.context)

    def copyto(self, other):
        if isinstance(other, Context):
            return _make(self.stype, self.shape, [p.copyto(other) for p in self._parts], other,
                         self._dtype, _state(self).invalid)
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other.shape != self.shape:
                raise ValueError(f"copyto: shape mismatch {self.shape} vs {other.shape}")
            if isinstance(other, BaseSparseNDArray):
                _assign(other, self)
            else:
                _nd()._copyto(self.tostype("default"), out=other)
            return other
        raise TypeError(f"copyto does not take {type(other).__name__}")

    def as_in_context(self, context):
        return self if context == self.context else self.copyto(context)

    as_in_ctx = as_in_context

    def tostype(self, stype):
        return cast_storage(self, stype)

    def check_format(self, full_check=True):
        _check_format(self.stype, self.shape, [p.asnumpy() for p in self._parts], full_check)
        if full_check and _state(self).invalid is not None:
            raise MXNetError(f"check_format: {_state(self).invalid}")

    @property
    def _num_aux(self):
        return len(self._aux_list())

    def detach(self):
        return _h.make_array(type(self), _NDBASE_CHUNK(self), 0, (0,), _BASE_DTYPE,
                             _state(self))

    def attach_grad(self, grad_req="write", stype=None):
        stype = self.stype if stype is None else stype
        mark_variables([self], [zeros(stype, self.shape, self.context, self._dtype)],
                                grad_req)

    def reshape(self, *shape, **kwargs):
        shp = shape[0] if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else shape
        shp = kwargs.get("shape", shp)
        if tuple(shp) == self.shape:
            return self
        raise MXNetError(f"reshape is not supported for {type(self).__name__}")

    def __setitem__(self, key, value):
        if not (isinstance(key, slice) and key == slice(None)):
            raise MXNetError(f"{type(self).__name__} only supports [:] for assignment")
        if isinstance(value, NDArray):
            if value.shape != self.shape:
                raise ValueError(f"cannot assign shape {value.shape} to {self.shape}")
            if value is not self:
                _assign(self, value)
        elif isinstance(value, (int, float, np.number)):
            if value == 0:
                _assign(self, zeros(self.stype, self.shape, self.context, self._dtype))
            elif self.stype == "row_sparse":
                # MXNet: every row becomes present, holding the scalar
                nd = _nd()
                _state(self).parts = [nd.full(self.shape, value, self.context, self._dtype),
                                      nd.arange(0, self.shape[0], dtype=_IDX.name,
                                                ctx=self.context)]
                _state(self).invalid = None
            else:
                raise MXNetError("assigning a non-zero scalar to a CSRNDArray is not "
                                 "supported (every element would be stored)")
        else:
            a = np.asarray(value, dtype=self._dtype)
            _assign(self, cast_storage(_nd().array(np.broadcast_to(a, self.shape),
                                                   ctx=self.context, dtype=self._dtype),
                                       self.stype))

    # ---- Python operators go through mx.nd (so through dispatch) -----------------------------
    def _binop(self, other, name, scalar_name, rscalar_name=None, reflected=False):
        nd = _nd()
        if isinstance(other, NDArray):
            a, b = (other, self) if reflected else (self, other)
            if a.shape == b.shape:
                return getattr(nd, name)(a, b)
            return getattr(nd, "broadcast_" + name.split("_", 1)[1])(a, b)
        if isinstance(other, (int, float, np.number)):
            opname = rscalar_name if reflected else scalar_name
            return getattr(nd, opname)(self, scalar=float(other))
        return NotImplemented

    def __add__(self, o):
        return self._binop(o, "elemwise_add", "_plus_scalar")

    def __radd__(self, o):
        return self._binop(o, "elemwise_add", "_plus_scalar", "_plus_scalar", True)

    def __sub__(self, o):
        return self._binop(o, "elemwise_sub", "_minus_scalar")

    def __rsub__(self, o):
        return self._binop(o, "elemwise_sub", "_minus_scalar", "_rminus_scalar", True)

    def __mul__(self, o):
        return self._binop(o, "elemwise_mul", "_mul_scalar")

    def __rmul__(self, o):
        return self._binop(o, "elemwise_mul", "_mul_scalar", "_mul_scalar", True)

    def __truediv__(self, o):
        return self._binop(o, "elemwise_div", "_div_scalar")

    def __rtruediv__(self, o):
        return self._binop(o, "elemwise_div", "_div_scalar", "_rdiv_scalar", True)

    __div__, __rdiv__ = __truediv__, __rtruediv__

    def __pow__(self, o):
        return self._binop(o, "_power", "_power_scalar")

    def __neg__(self):
        return _nd().negative(self)

    def __iadd__(self, o):
        res = self + o
        _assign(self, res)
        return self

    def __isub__(self, o):
        _assign(self, self - o)
        return self

    def __imul__(self, o):
        _assign(self, self * o)
        return self

    def __itruediv__(self, o):
        _assign(self, self / o)
        return self

    def _cmp(self, o, name):
        if isinstance(o, (int, float, np.number)):
            # MXNet's rule: where comparing a zero with the scalar is false, the result keeps
            # this array's storage (the comparison runs on the stored values only)
            import operator
            if not getattr(operator, name.strip("_"))(0.0, float(o)):
                vals = getattr(self.data, name)(o)
                return _make(self.stype, self.shape, [vals] + list(self._parts[1:]),
                             self.context, vals._dtype)
        return getattr(self.tostype("default"), name)(o.tostype("default")
                                                      if isinstance(o, BaseSparseNDArray) else o)

    def __eq__(self, o):
        return self._cmp(o, "__eq__")

    def __ne__(self, o):
        return self._cmp(o, "__ne__")

    def __gt__(self, o):
        return self._cmp(o, "__gt__")

    def __ge__(self, o):
        return self._cmp(o, "__ge__")

    def __lt__(self, o):
        return self._cmp(o, "__lt__")

    def __le__(self, o):
        return self._cmp(o, "__le__")

    __hash__ = object.__hash__


_NDBASE_CHUNK = NDArrayBase.__dict__["_chunk"].__get__


class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row format: row i holds data[indptr[i]:indptr[i+1]]
    at columns indices[indptr[i]:indptr[i+1]]."""

    @property
    def indptr(self):
        return _state(self).parts[2]

    def asscipy(self):
        try:
            import scipy.sparse as spsp
        except ImportError:
            raise ImportError("asscipy needs scipy") from None
        p = self._parts
        return spsp.csr_matrix((p[0].asnumpy(), p[1].asnumpy(), p[2].asnumpy()),
                               shape=self.shape)

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            n = self.shape[0]
            k = int(key) + (n if key < 0 else 0)
            if not 0 <= k < n:
                raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}")
            key = slice(k, k + 1)
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            begin, end, _ = key.indices(self.shape[0])
            end = max(begin, end)
            ip = self.indptr.asnumpy()
            lo, hi = int(ip[begin]), int(ip[end])
            nd = _nd()
            data = nd.slice_axis(self.data, axis=0, begin=lo, end=hi) if hi > lo else \
                nd.empty((0,), self.context, self._dtype)
            idx = nd.slice_axis(self.indices, axis=0, begin=lo, end=hi) if hi > lo else \
                nd.empty((0,), self.context, _IDX)
            return _make("csr", (end - begin, self.shape[1]),
                         [data, idx, _wrap_np(ip[begin:end + 1] - lo, self.context)],
                         self.context, self._dtype)
        if isinstance(key, tuple) and len(key) == 1:
            return self[key[0]]
        raise ValueError(f"CSRNDArray does not support indexing with {key!r}")


class RowSparseNDArray(BaseSparseNDArray):
    """An array whose rows indices[i] hold data[i]; every other row is zero."""

    def retain(self, indices):
        return retain(self, indices)

    def __getitem__(self, key):
        if isinstance(key, slice) and key == slice(None):
            return self
        if isinstance(key, tuple) and len(key) == 1:
            return self[key[0]]
        raise MXNetError("RowSparseNDArray only supports [:] for indexing")


NDArray._sparse = False


def _rebuild(stype, shape, parts, dtype):
    ctx = Context("cpu", 0)
    return _make(stype, shape, [_wrap_np(p, ctx) for p in parts], ctx, dtype,
                 _format_error(stype, shape, parts))


# ---- host conversions --------------------------------------------------------------------------
def _to_dense_np(x):
    _require_valid(x, "asnumpy")
    st = _state(x)
    p = [q.asnumpy() for q in st.parts]
    out = np.zeros(st.sshape, dtype=st.vdtype)
    if st.stype == "csr":
        data, idx, ptr = p
        if data.size:
            rows = np.repeat(np.arange(st.sshape[0]), np.diff(ptr))
            out[rows, idx] = data
    else:
        data, idx = p
        if idx.size:
            out[idx] = data
    return out


def _dense_to_parts_np(a, stype):
    if stype == "csr":
        if a.ndim != 2:
            raise ValueError(f"cast_storage: csr needs a 2-D array, got shape {a.shape}")
        nz = a != 0
        rows, cols = np.nonzero(nz)
        ptr = np.zeros(a.shape[0] + 1, dtype=_IDX)
        np.cumsum(nz.sum(axis=1), out=ptr[1:])
        return [a[rows, cols], cols.astype(_IDX), ptr]
    if a.ndim == 0:
        raise ValueError("cast_storage: row_sparse needs at least one dimension")
    a2 = a.reshape(a.shape[0], -1)
    rows = np.nonzero((a2 != 0).any(axis=1))[0].astype(_IDX)
    return [np.ascontiguousarray(a[rows]), rows]


def _from_dense_np(a, stype, ctx, dtype):
    a = np.asarray(a, dtype=dtype)
    parts = _dense_to_parts_np(a, stype)
    return _make(stype, a.shape, [_wrap_np(p, ctx) for p in parts], ctx, a.dtype)


def _check_format(stype, shape, parts, full_check=True):
    """MXNet's check_format: aux shapes and, with full_check, index ranges and order."""
    if stype == "csr":
        data, idx, ptr = parts
        if len(shape) != 2 or ptr.shape != (shape[0] + 1,) or idx.shape != data.shape[:1]:
            raise MXNetError("check_format: CSR aux shapes are inconsistent")
        if not full_check:
            return
        if ptr[0] != 0 or ptr[-1] != idx.size or np.any(np.diff(ptr) < 0):
            raise MXNetError("check_format: CSR indptr is not monotonic or does not end at nnz")
        if idx.size and (idx.min() < 0 or idx.max() >= shape[1]):
            raise MXNetError("check_format: CSR column index out of range")
        for i in range(shape[0]):
            seg = idx[ptr[i]:ptr[i + 1]]
            if seg.size > 1 and np.any(np.diff(seg) <= 0):
                raise MXNetError("check_format: CSR column indices are not sorted or repeat")
    else:
        data, idx = parts
        if idx.ndim != 1 or data.shape[:1] != idx.shape or tuple(data.shape[1:]) != tuple(shape[1:]):
            raise MXNetError("check_format: row_sparse aux shapes are inconsistent")
        if not full_check:
            return
        if idx.size and (idx.min() < 0 or idx.max() >= shape[0]):
            raise MXNetError("check_format: row_sparse index out of range")
        if idx.size > 1 and np.any(np.diff(idx) <= 0):
            raise MXNetError("check_format: row_sparse indices are not sorted or repeat")


# ---- creation --------------------------------------------------------------------------------
def _dtype_of(dtype, src=None):
    if dtype is not None:
        return _norm_dtype(dtype)
    if src is not None and getattr(src, "dtype", None) is not None:
        dt = np.dtype(src.dtype)
        if dt in _h.DTYPE_CODE:
            return dt
    return np.dtype(np.float32)


def _as_np(x, dtype=None):
    if isinstance(x, NDArray):
        x = x.asnumpy()
    return np.asarray(x, dtype=dtype)


def _is_shape(arg):
    return isinstance(arg, tuple) and all(isinstance(d, (int, np.integer)) for d in arg)


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage type `stype` ('default', 'csr' or 'row_sparse')."""
    if stype == "default":
        return _nd().zeros(shape, ctx=ctx, dtype=dtype, **kwargs)
    ctx = _ctx_of(ctx)
    shape = _shape(shape)
    dtype = _dtype_of(dtype)
    nd = _nd()
    if stype == "csr":
        if len(shape) != 2:
            raise ValueError(f"zeros: csr needs a 2-D shape, got {shape}")
        parts = [nd.empty((0,), ctx, dtype), nd.empty((0,), ctx, _IDX),
                 nd.zeros((shape[0] + 1,), ctx, _IDX)]
    elif stype == "row_sparse":
        parts = [nd.empty((0,) + shape[1:], ctx, dtype), nd.empty((0,), ctx, _IDX)]
    else:
        raise ValueError(f"zeros: unknown storage type {stype!r}")
    out = _make(stype, shape, parts, ctx, dtype)
    o = kwargs.get("out")
    if o is not None:
        _assign(o, out)
        return o
    return out


def empty(stype, shape, ctx=None, dtype=None):
    """An array with no stored values (sparse) or uninitialised values (default)."""
    if stype == "default":
        return _nd().empty(shape, ctx, dtype)
    return zeros(stype, shape, ctx, dtype)


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray from (data, indices, indptr), (data, (row, col)), a scipy.sparse matrix,
    a dense array (NDArray or numpy), another CSRNDArray, or a shape (M, N) for zeros."""
    ctx = _ctx_of(ctx)
    if isinstance(arg1, CSRNDArray):
        out = arg1.copyto(ctx)
        return out if dtype is None else out.astype(dtype)
    if _is_scipy_sparse(arg1):
        m = arg1.tocsr()
        m.sum_duplicates()
        m.sort_indices()
        dt = _dtype_of(dtype, m)
        shape = m.shape if shape is None else tuple(shape)
        return _csr_from_parts(m.data, m.indices, m.indptr, shape, ctx, dt)
    if isinstance(arg1, tuple) and len(arg1) == 2 and _is_shape(arg1) and arg1:
        if shape is not None and tuple(shape) != tuple(arg1):
            raise ValueError(f"csr_matrix: shape {tuple(shape)} differs from {tuple(arg1)}")
        return zeros("csr", arg1, ctx, dtype)
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = arg1
        dt = _dtype_of(dtype, data)
        data_np, idx_np, ptr_np = _as_np(data, dt), _as_np(indices, _IDX), _as_np(indptr, _IDX)
        if shape is None:
            if idx_np.size == 0:
                raise ValueError("csr_matrix: shape is needed when there are no indices")
            shape = (ptr_np.size - 1, int(idx_np.max()) + 1)
        return _csr_from_parts(data_np, idx_np, ptr_np, tuple(shape), ctx, dt)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        data, (row, col) = arg1
        dt = _dtype_of(dtype, data)
        row, col = _as_np(row, _IDX), _as_np(col, _IDX)
        if shape is None:
            shape = (int(row.max()) + 1, int(col.max()) + 1)
        dense = np.zeros(shape, dtype=dt)
        np.add.at(dense, (row, col), _as_np(data, dt))
        return _from_dense_np(dense, "csr", ctx, dt)
    if isinstance(arg1, BaseSparseNDArray):
        return cast_storage(arg1, "csr").as_in_context(ctx)
    dt = _dtype_of(dtype, arg1)
    a = _as_np(arg1, dt)
    if a.ndim != 2:
        raise ValueError(f"csr_matrix: expects a 2-D array, got shape {a.shape}")
    if shape is not None and tuple(shape) != a.shape:
        raise ValueError(f"csr_matrix: shape {tuple(shape)} differs from the array's {a.shape}")
    return _from_dense_np(a, "csr", ctx, dt)


def _csr_from_parts(data, indices, indptr, shape, ctx, dtype):
    data = np.asarray(data, dtype=dtype).reshape(-1)
    indices = np.asarray(indices, dtype=_IDX).reshape(-1)
    indptr = np.asarray(indptr, dtype=_IDX).reshape(-1)
    if len(shape) != 2:
        raise ValueError(f"csr_matrix: shape must be 2-D, got {shape}")
    if indptr.size != shape[0] + 1:
        raise ValueError(f"csr_matrix: indptr has {indptr.size} entries, expected {shape[0] + 1}")
    if data.size != indices.size:
        raise ValueError(f"csr_matrix: {data.size} values but {indices.size} indices")
    invalid = _format_error("csr", shape, [data, indices, indptr])
    return _make("csr", shape, [_wrap_np(data, ctx), _wrap_np(indices, ctx),
                                _wrap_np(indptr, ctx)], ctx, dtype, invalid)


def _format_error(stype, shape, parts):
    """Why `parts` do not form a valid array (None when they do). As MXNet, such an array can
    be built (check_format() reports it), but nothing else will read it."""
    try:
        _check_format(stype, shape, parts, True)
    except MXNetError as e:
        return str(e).replace("check_format: ", "")
    return None


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A RowSparseNDArray from (data, indices), a dense array (NDArray or numpy), another
    RowSparseNDArray, or a shape (D0, D1, ...) for zeros."""
    ctx = _ctx_of(ctx)
    if isinstance(arg1, RowSparseNDArray):
        out = arg1.copyto(ctx)
        return out if dtype is None else out.astype(dtype)
    if _is_shape(arg1) and arg1:
        if shape is not None and tuple(shape) != tuple(arg1):
            raise ValueError(f"row_sparse_array: shape {tuple(shape)} differs from "
                             f"{tuple(arg1)}")
        return zeros("row_sparse", arg1, ctx, dtype)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        data, indices = arg1
        dt = _dtype_of(dtype, data)
        data_np, idx_np = _as_np(data, dt), _as_np(indices, _IDX).reshape(-1)
        if data_np.ndim == 0 or data_np.shape[0] != idx_np.size:
            raise ValueError(f"row_sparse_array: {idx_np.size} indices for data of shape "
                             f"{data_np.shape}")
        if shape is None:
            if idx_np.size == 0:
                raise ValueError("row_sparse_array: shape is needed when there are no indices")
            shape = (int(idx_np.max()) + 1,) + data_np.shape[1:]
        shape = tuple(shape)
        if tuple(data_np.shape[1:]) != shape[1:]:
            raise ValueError(f"row_sparse_array: data rows of shape {data_np.shape[1:]} do not "
                             f"fit shape {shape}")
        invalid = _format_error("row_sparse", shape, [data_np, idx_np])
        return _make("row_sparse", shape, [_wrap_np(data_np, ctx), _wrap_np(idx_np, ctx)], ctx,
                     dt, invalid)
    if isinstance(arg1, BaseSparseNDArray):
        return cast_storage(arg1, "row_sparse").as_in_context(ctx)
    dt = _dtype_of(dtype, arg1)
    a = _as_np(arg1, dt)
    if shape is not None and tuple(shape) != a.shape:
        raise ValueError(f"row_sparse_array: shape {tuple(shape)} differs from the array's "
                         f"{a.shape}")
    return _from_dense_np(a, "row_sparse", ctx, dt)


def array(source_array, ctx=None, dtype=None):
    """A sparse array from a scipy.sparse matrix or a sparse NDArray (a copy)."""
    if isinstance(source_array, BaseSparseNDArray):
        out = source_array.copyto(_ctx_of(ctx))
        return out if dtype is None else out.astype(dtype)
    if _is_scipy_sparse(source_array):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise ValueError("mx.nd.sparse.array: expects a scipy.sparse matrix or a sparse NDArray, "
                     f"got {type(source_array).__name__}")


# ---- casts and assignment ------------------------------------------------------------------
def cast_storage(x, stype):
    """x in storage type `stype` (itself when it already is)."""
    if stype not in ("default", "csr", "row_sparse"):
        raise ValueError(f"cast_storage: unknown storage type {stype!r}")
    src = x.stype
    if src == stype:
        return x
    if stype == "default":
        return _wrap_np(_to_dense_np(x), x.context)
    a = x.asnumpy()
    return _from_dense_np(a, stype, x.context, a.dtype)


def _assign(dst, src):
    """Make sparse `dst` hold `src`'s values (any storage type; cast to dst's dtype)."""
    if src.shape != dst.shape:
        raise ValueError(f"cannot assign shape {src.shape} to {dst.shape}")
    if src.dtype != dst.dtype:
        src = src.astype(dst._dtype)
    s = cast_storage(src, dst.stype)
    if s is src and isinstance(src, BaseSparseNDArray):
        parts = [p.copy() for p in s._parts]      # dst must not alias src's parts
    else:
        parts = list(s._parts)
    _state(dst).parts = parts
    _state(dst).invalid = _state(s).invalid if isinstance(s, BaseSparseNDArray) else None


def retain(*args, **kwargs):
    """retain(data, indices): the rows of row_sparse `data` listed in `indices` (other rows
    dropped)."""
    unknown = sorted(set(kwargs) - {"data", "indices", "out", "name"})
    if unknown:
        raise MXNetError(f"_sparse_retain: unknown argument(s) {', '.join(unknown)}; it takes "
                         "data and indices")
    return _nd()._sparse_retain(*args, **kwargs)


def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    return _nd().dot(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b,
                     forward_stype=forward_stype)


def add(lhs, rhs):
    return _arith(lhs, rhs, "add")


def subtract(lhs, rhs):
    return _arith(lhs, rhs, "sub")


def multiply(lhs, rhs):
    return _arith(lhs, rhs, "mul")


def divide(lhs, rhs):
    return _arith(lhs, rhs, "div")


def _arith(lhs, rhs, name):
    f = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
         "div": operator.truediv}[name]
    if not isinstance(lhs, NDArray) and not isinstance(rhs, NDArray):
        return f(lhs, rhs)
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray) and lhs.shape == rhs.shape:
        return getattr(_nd(), "elemwise_" + name)(lhs, rhs)
    return f(lhs, rhs)


# ---- the storage dispatch (called by register.run) --------------------------------------------
_WARNED = set()


def _fallback_warn(name):
    if name in _WARNED:
        return
    _WARNED.add(name)
    import os
    if os.environ.get("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "1") == "0":
        return
    warnings.warn(f"Storage type fallback detected: operator {name} has no sparse "
                  "implementation for these storage types; its sparse inputs are converted to "
                  "dense (set MXNET_STORAGE_FALLBACK_LOG_VERBOSE=0 to silence)", stacklevel=4)


def is_sparse(x):
    return isinstance(x, BaseSparseNDArray)


def dispatch(op, inputs, attrs, out, ctx):
    """Run `op` where an input or `out` is sparse: its sparse implementation, or the dense
    kernel on dense copies (MXNet's storage fallback). Records for autograd with the original
    inputs, so gradients reach sparse variables."""
    from .register import run
    for x in inputs:
        if isinstance(x, BaseSparseNDArray):
            _require_valid(x, op.name)
    rec = _M.recording and any(x._ag is not None for x in inputs)
    prev = _M.recording
    _M.recording = False
    try:
        impl = IMPLS.get(op.name)
        res = NotImplemented
        if impl is not None:
            res = impl(op, attrs, inputs, out)
        if res is NotImplemented:
            _fallback_warn(op.name)
            dense = [x.tostype("default") if is_sparse(x) else x for x in inputs]
            if isinstance(out, NDArray) and not is_sparse(out):
                res = run(op, dense, attrs, out, ctx)
            else:
                res = run(op, dense, attrs, None, ctx)
            for i in op.mutate:
                if i < len(inputs) and is_sparse(inputs[i]):
                    _assign(inputs[i], dense[i])
            if out is not None:
                res = _finish(res, out)
    finally:
        _M.recording = prev
    if rec and out is None:
        outs = [res] if isinstance(res, NDArray) else list(res)
        _tape.record(op, attrs, inputs, outs, op.mutate)
    return res


def _finish(res, out):
    """Write result(s) `res` into `out` (NDArray or list); returns out."""
    if out is None:
        return res
    outs = [out] if isinstance(out, NDArray) else list(out)
    ress = [res] if isinstance(res, NDArray) else list(res)
    for o, r in zip(outs, ress):
        if o is r:
            continue
        if is_sparse(o):
            _assign(o, r)
        elif is_sparse(r):
            _nd()._copyto(r.tostype("default"), out=o)
        else:
            _nd()._copyto(r, out=o)
    return out


# The operators MXNet 1.9.1 registers for sparse storage (a sparse implementation, or the
# storage fallback that runs the dense kernel), by the short names of its mx.nd.sparse and
# mx.sym.sparse. Each is the "_sparse_" operator where there is one (retain, the lazy optimizer
# updates), else the operator of that name; those the registry lacks are left out.
OP_NAMES = (
    "ElementWiseSum", "Embedding", "FullyConnected", "LinearRegressionOutput",
    "LogisticRegressionOutput", "MAERegressionOutput", "_contrib_round_ste", "_contrib_sign_ste",
    "abs", "adagrad_update", "adam_update", "add_n", "arccos", "arccosh", "arcsin", "arcsinh",
    "arctan", "arctanh", "broadcast_add", "broadcast_div", "broadcast_minus", "broadcast_mul",
    "broadcast_plus", "broadcast_sub", "cast_storage", "cbrt", "ceil", "clip", "concat", "cos",
    "cosh", "degrees", "dot", "elemwise_add", "elemwise_div", "elemwise_mul", "elemwise_sub",
    "exp", "expm1", "fix", "floor", "ftrl_update", "gamma", "gammaln", "log", "log10", "log1p",
    "log2", "make_loss", "mean", "negative", "norm", "radians", "relu", "retain", "rint", "round",
    "rsqrt", "sgd_mom_update", "sgd_update", "sigmoid", "sign", "sin", "sinh", "slice", "sqrt",
    "square", "stop_gradient", "sum", "tan", "tanh", "trunc", "where", "zeros_like",
)
py_slice, py_sum = slice, sum       # MXNet keeps the builtins its operator names shadow


def op_name(short):
    """The registry operator behind mx.nd.sparse.<short> / mx.sym.sparse.<short> (None when
    mxc lacks it)."""
    from ..ops import registry
    known = registry.names()
    for name in ("_sparse_" + short, short):
        if name in known:
            return name
    return None


def __getattr__(name):
    # the operators are mx.nd's functions, which exist only once mx.nd is populated (after
    # this module is imported): looked up on first use
    if name in OP_NAMES and op_name(name) is not None:
        return getattr(_nd(), op_name(name))
    if name == "gs_retain":
        return retain
    if name == "spsp":          # scipy.sparse, or None without scipy (as MXNet)
        try:
            import scipy.sparse as spsp
        except ImportError:
            spsp = None
        return spsp
    raise AttributeError(f"module 'mxc.ndarray.sparse' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {n for n in OP_NAMES if op_name(n) is not None}
                  | {"gs_retain", "spsp"})


def adagrad_update(*args, **kwargs):
    """MXNet's mx.nd.sparse.adagrad_update (the _sparse_adagrad_update operator)."""
    return _nd()._sparse_adagrad_update(*args, **kwargs)
