"""NDArray: MXNet's asynchronous n-dimensional array.

Every operation is queued on the dependency engine and returns at once; reading values
(`asnumpy`, `asscalar`, `wait_to_read`, printing) waits for the work that writes them.
Basic slicing returns views that share storage wherever the selected region is contiguous
(as MXNet 1.x); writes through a view are ordered by the engine like any other write.
"""
import ctypes as _ctypes
import numbers
import sys
import weakref

import numpy as np

from .._core import handle as _h, engine
from .._core import modes as _modes
from .._core.api_calls import api_call
from .._core import tape as _tape
from .._core.handle import NDArrayBase
from ..base import MXNetError, np_dtype
from ..util import is_np_shape
from ..context import Context, current_context, check_available
from ..ops.shape import infer_reshape
from . import serialize, _dlpack_gpu

__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "linspace", "eye",
           "zeros_like", "ones_like", "waitall", "from_numpy", "concatenate", "moveaxis",
           "histogram", "split_v2", "onehot_encode", "to_dlpack_for_read", "to_dlpack_for_write"]

_DEFAULT_DTYPE = np.dtype(np.float32)

# storage types by MXNet's ids (where MXNet defines them; mxc.ndarray.sparse uses them)
_STORAGE_TYPE_UNDEFINED = -1
_STORAGE_TYPE_DEFAULT = 0
_STORAGE_TYPE_ROW_SPARSE = 1
_STORAGE_TYPE_CSR = 2
_STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}
py_slice = slice      # MXNet's name for Python's slice (its ndarray module shadows `slice`)


def _ctx(ctx):
    ctx = current_context() if ctx is None else (ctx if isinstance(ctx, Context) else Context(ctx))
    check_available(ctx)
    return ctx


def _dtype(dtype, default=_DEFAULT_DTYPE):
    if dtype is None:
        return default
    dt = np_dtype(dtype)
    if dt not in _h.DTYPE_CODE:
        raise TypeError(f"mxc does not support dtype {dt}")
    return dt


def _shape(shape):
    if isinstance(shape, (numbers.Integral, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _new_shape(shape, what):
    """The shape of a new array: every dimension known (MXNet refuses zeros((-1,)), where -1
    would mean a dimension left to inference)."""
    shape = _shape(shape)
    if any(d < 0 for d in shape):
        raise MXNetError(f"{what}: shape {shape} has a negative dimension")
    return shape


# ---- handles: MXNet's NDArray(handle) round trip ------------------------------------------------
# MXNet code passes arrays through C handles: a monitor callback or a custom Function casts what it
# is given (``ctypes.cast(arr, NDArrayHandle)``) and wraps it again (``NDArray(handle)``). mxc has
# no C API: an array converts to a c_void_p whose value is a key in this registry of live arrays
# (NDArray._as_parameter_, which ctypes reads), and NDArray(handle) looks the key up. The value is
# never an address, and a key whose array is gone is refused.
_LIVE = weakref.WeakValueDictionary()


def _live(handle):
    if not isinstance(handle, _ctypes.c_void_p):
        raise TypeError("NDArray: handle must be an NDArrayHandle (ctypes.c_void_p), got "
                        f"{type(handle).__name__}")
    arr = _LIVE.get(handle.value)
    if arr is None:
        raise MXNetError(f"NDArray: handle {handle.value} names no live array (mxc has no C API: "
                         "a handle comes from ctypes.cast(array, NDArrayHandle))")
    return arr


class NDArray(NDArrayBase):
    """An array on a device whose values are produced asynchronously by the engine."""

    __slots__ = ()
    # numpy defers to NDArray's reflected operators (np_array + nd -> NDArray)
    __array_priority__ = 1000.0
    _sparse = False     # CSRNDArray / RowSparseNDArray (ndarray/sparse.py) say True

    # ---- description -------------------------------------------------------------------
    @property
    def stype(self):
        return "default"

    @property
    def T(self):
        if self.ndim < 2:
            return self
        return _nd().transpose(self)

    def __init__(self, handle, writable=True):
        """MXNet's constructor from a handle (see _LIVE): another view of the array `handle`
        names, sharing its storage and autograd state; writable=False: a read-only view. Arrays
        made inside mxc never come here (handle.make_array makes them with __new__)."""
        arr = _live(handle)
        if arr._sparse:
            raise MXNetError("NDArray(handle): the handle names a sparse array; use it directly")
        _h.adopt(self, arr)
        self._ag = arr._ag
        if not writable:
            self.__class__ = _ReadOnlyNDArray

    @property
    def writable(self):
        return True

    @property
    def _as_parameter_(self):
        """This array as a ctypes handle (see _LIVE): ``ctypes.cast(arr, NDArrayHandle)``."""
        _LIVE[id(self)] = self
        return _ctypes.c_void_p(id(self))

    def __repr__(self):
        shape_info = "x".join(str(d) for d in self.shape)
        return f"\n{self.asnumpy()}\n<{type(self).__name__} {shape_info} @{self.context}>"

    def __str__(self):
        return self.__repr__()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d NDArray")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        if self.size == 0:
            return False
        if self.size == 1:
            return bool(self.asnumpy().reshape(-1)[0])
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    __hash__ = object.__hash__

    def __reduce__(self):
        # as MXNet: an NDArray pickles by value (multiprocessing, deepcopy); files should use
        # mx.nd.save, which never pickles
        return _unpickle, (self.asnumpy(), self.context.device_type, self.context.device_id)

    def __deepcopy__(self, memo):
        # what pickling by value gives (a new array on the same device, no gradient), as one
        # engine copy instead of a round trip through a numpy array
        return self.copy()

    # ---- values --------------------------------------------------------------------------
    def asscalar(self):
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(())[()]

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def wait_to_write(self):
        self.wait_to_read()

    # ---- autograd --------------------------------------------------------------------------
    def attach_grad(self, grad_req="write", stype=None):
        """Give this array a gradient buffer (zeros) and mark it as a variable for autograd."""
        if stype not in (None, "default"):
            from . import sparse
            grad = sparse.zeros(stype, self.shape, self.context, self._dtype)
        else:
            grad = zeros(self.shape, self.context, self.dtype)
        mark_variables([self], [grad], grad_req)

    @property
    def grad(self):
        """The gradient buffer of a variable (None if attach_grad was not called)."""
        ag = self._ag
        return None if ag is None or ag.node is not None else ag.grad

    @property
    def _fresh_grad(self):
        """Whether a backward wrote this variable's gradient since it was last cleared."""
        ag = self._ag
        return bool(ag is not None and ag.node is None and ag.fresh)

    @_fresh_grad.setter
    def _fresh_grad(self, state):
        ag = self._ag
        if ag is None or ag.node is not None:
            raise MXNetError("_fresh_grad: this array is not an autograd variable")
        ag.fresh = bool(state)

    def detach(self):
        """The same values, cut from the computational graph (shares storage)."""
        return _h.make_array(type(self), self._chunk, self._offset, self._shape, self._dtype,
                             self._ctx)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Differentiate this array's graph; gradients go to the variables' ``.grad``."""
        backward([self], None if out_grad is None else [out_grad],
                          retain_graph=retain_graph, train_mode=train_mode)

    # ---- copies and conversions ----------------------------------------------------------
    def copy(self):
        return self.copyto(self.context)

    def copyto(self, other):
        """Copy into `other` (an NDArray of the same shape) or onto a new array on a Context."""
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other.shape != self.shape:
                raise ValueError(f"copyto: shape mismatch {self.shape} vs {other.shape}")
            return _nd()._copyto(self, out=other)
        if isinstance(other, Context):
            check_available(other)
            out = _h.empty(NDArray, self.shape, self._dtype, other)
            return _nd()._copyto(self, out=out)
        raise TypeError(f"copyto does not take {type(other).__name__}")

    def as_in_context(self, context):
        return self if context == self.context else self.copyto(context)

    as_in_ctx = as_in_context

    # views between the classic and the numpy-semantics array (mx.np), no copies
    def as_np_ndarray(self):
        """This array's storage as an ``mx.np.ndarray`` (no copy; same autograd entry)."""
        if self._sparse:
            raise ValueError("as_np_ndarray: mx.np arrays are dense; call tostype('default')")
        from ..numpy._core import view_as
        from ..numpy.multiarray import ndarray as np_ndarray
        return view_as(self, np_ndarray)

    def as_nd_ndarray(self):
        return self

    def astype(self, dtype, copy=True):
        dtype = np_dtype(dtype)
        if not copy and dtype == self._dtype:
            return self
        return _nd().cast(self, dtype=dtype.name)

    def reshape(self, *shape, **kwargs):
        """A view with a new shape; MXNet's codes 0, -1, -2, -3, -4 and ``reverse=True``."""
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        shape = kwargs.pop("shape", shape)
        reverse = kwargs.pop("reverse", False)
        if kwargs:
            raise TypeError(f"reshape: unknown arguments {sorted(kwargs)}")
        new = infer_reshape(self.shape, tuple(shape), reverse)
        if self._ag is not None and _modes._M.recording:
            return _nd().Reshape(self, shape=new)     # recorded (a copy), as MXNet's ReshapeWithRecord
        return _h.make_array(NDArray, self._chunk, self._offset, new, self._dtype, self.context)

    def reshape_like(self, *args, **kwargs):
        """Same as ``mx.nd.reshape_like(self, ...)``: this array's data in `rhs`'s shape."""
        return _nd().reshape_like(self, *args, **kwargs)

    # ---- shape methods with MXNet's Python-side options (inplace= returns a view) ------------
    def flatten(self, inplace=False):
        """(d1, d2*...*dk); a copy, or with ``inplace=True`` a view sharing this array's data."""
        return _nd().flatten(self) if not inplace else self.reshape((0, -1))

    def expand_dims(self, axis, inplace=False):
        """Insert a size-1 axis at `axis`; ``inplace=True`` returns a view."""
        if not inplace:
            return _nd().expand_dims(self, axis=axis)
        new_shape = list(self.shape)
        if not -len(new_shape) - 1 <= axis <= len(new_shape):
            raise ValueError(f"expand_dims: axis {axis} is out of range for a "
                             f"{len(new_shape)}-d array")
        if axis < 0:
            axis += len(new_shape) + 1
        new_shape.insert(axis, 1)
        return self.reshape(new_shape)

    def squeeze(self, axis=None, inplace=False):
        """Remove size-1 axes (all, or those in `axis`); ``inplace=True`` returns a view.
        A result with no axes left has shape (1,), as MXNet 1.x."""
        if not inplace:
            return _nd().squeeze(self, axis=axis)
        new_shape = list(self.shape)
        axes = [axis] if isinstance(axis, (numbers.Integral, np.integer)) else axis
        if axes:
            if len(axes) != len(set(axes)):
                raise ValueError(f"squeeze: axis {axes} contains duplicates")
            resolved = []
            for ax in axes:
                if not -len(new_shape) <= ax < len(new_shape):
                    raise ValueError(f"squeeze: axis {ax} is out of range for a "
                                     f"{len(new_shape)}-d array")
                r = ax % len(new_shape)
                if new_shape[r] != 1:
                    raise ValueError(f"squeeze: target axis {ax} must have size 1, "
                                     f"got {new_shape[r]}")
                resolved.append(r)
            for r in sorted(resolved, reverse=True):
                del new_shape[r]
        else:
            new_shape = [d for d in new_shape if d != 1]
        return self.reshape(new_shape or [1])

    def broadcast_to(self, shape):
        """Broadcast to `shape` (any sequence of ints); leading axes are added as size 1, as
        MXNet's NDArray.broadcast_to does. Always a new array."""
        shape = _shape(shape)
        cur = self.shape
        err = (f"operands could not be broadcast together with remapped shapes "
               f"[original->remapped]: {cur} and requested shape {shape}")
        if len(shape) < len(cur):
            raise ValueError(err)
        cur = (1,) * (len(shape) - len(cur)) + cur
        if any(c != s and c != 1 for c, s in zip(cur, shape)):
            raise ValueError(err)
        src = self.reshape(cur) if cur != self.shape else self
        return _nd().broadcast_to(src, shape=shape)

    def broadcast_like(self, other):
        """Broadcast to `other`'s shape (see broadcast_to)."""
        return self.broadcast_to(other.shape)

    def split_v2(self, indices_or_sections, axis=0, squeeze_axis=False):
        return split_v2(self, indices_or_sections, axis, squeeze_axis)

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether indexing with a tuple of slices (one per axis) selects one contiguous run of
        memory. From the last axis to the first: once an axis is sliced to a proper subset,
        every axis before it must select at most one element."""
        if len(slc_key) != len(shape):
            raise ValueError("_basic_indexing_slice_is_contiguous: one slice per axis needed")
        lens = [len(range(*slc.indices(n))) for slc, n in zip(slc_key, shape)]
        if int(np.prod(lens)) in (0, 1):
            return True
        is_subset = False
        for slc, n, num in zip(reversed(slc_key), reversed(shape), reversed(lens)):
            step = slc.indices(n)[2]
            if num == 0:
                return True
            if num > 1 and step != 1:
                return False
            if is_subset:
                if num > 1:
                    return False
            elif num < n:
                is_subset = True
        return True

    # ---- MXNet's raw-bytes state (NDArray::Save of one array) ------------------------------
    def __getstate__(self):
        parts = serialize._entry_parts("0", self.asnumpy(), serialize.V2_MAGIC)
        return {"handle": bytearray(b"".join(bytes(p) for p in parts))}

    def __setstate__(self, state):
        """Load MXNet's ``__getstate__`` bytes (any device: arrays saved on a GPU load onto the
        CPU, as MXNet without GPUs does) into this array. mxc arrays cannot be re-bound to new
        storage, so the state must have this array's shape; its values are copied in."""
        handle = state["handle"] if isinstance(state, dict) else state
        if handle is None:
            return
        r = serialize._BufferReader(memoryview(bytes(handle)), "<NDArray state>")
        a = serialize._read_entry(r, 0)
        if a is None:
            raise MXNetError("__setstate__: the state holds an uninitialised array")
        if r.pos != r.end:
            r.fail(f"{r.end - r.pos} trailing bytes after the array")
        if a.shape != self.shape:
            raise MXNetError(f"__setstate__: state of shape {a.shape} cannot be loaded into an "
                             f"mxc array of shape {self.shape}")
        self[...] = a.astype(self._dtype, copy=False)

    def tostype(self, stype):
        """This array in storage type `stype`: itself for 'default', else a CSRNDArray or
        RowSparseNDArray holding its non-zero entries (see mxc/ndarray/sparse.py)."""
        if stype == "default":
            return self
        from . import sparse
        return sparse.cast_storage(self, stype)

    def slice_assign(self, rhs, begin, end, step):
        """self[begin:end:step] = rhs, in place (MXNet's NDArray.slice_assign)."""
        return _nd()._slice_assign(self, rhs, begin=begin, end=end, step=step, out=self)

    def slice_assign_scalar(self, value, begin, end, step):
        """self[begin:end:step] = value, in place."""
        return _nd()._slice_assign_scalar(self, scalar=float(value), begin=begin, end=end,
                                          step=step, out=self)

    def _sync_copyfrom(self, source_array):
        """Copy a numpy array (or anything numpy accepts) into this array and wait for it."""
        src = np.asarray(source_array, dtype=self._dtype)
        if src.shape != self.shape:
            raise ValueError(f"_sync_copyfrom: shape {src.shape} does not match {self.shape}")
        self[...] = src
        self.wait_to_read()

    def _flat_view(self, begin, end, shape):
        """A view over elements [begin, end) of this (contiguous) array, with `shape`."""
        return _h.make_array(NDArray, self._chunk, self._offset + begin * self._dtype.itemsize,
                             shape, self._dtype, self.context)

    # ---- DLPack --------------------------------------------------------------------------
    def to_dlpack_for_read(self):
        """A DLPack capsule sharing this array's memory, after pending writes finished."""
        if self._ctx.device_typeid == 2:
            return _dlpack_gpu.to_dlpack(self)
        self.wait_to_read()
        return self._numpy_view().__dlpack__()

    def to_dlpack_for_write(self):
        """A DLPack capsule for writing: waits for every pending read and write first."""
        if self._ctx.device_typeid == 2:
            return _dlpack_gpu.to_dlpack(self)
        self.wait_to_read()
        return self._numpy_view().__dlpack__()

    def __dlpack__(self, stream=None, **kwargs):
        if self._ctx.device_typeid == 2:
            return _dlpack_gpu.to_dlpack(self)
        self.wait_to_read()
        return self._numpy_view().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        if self._ctx.device_typeid == 2:
            return (2, self._ctx.device_id)           # kDLCUDA
        return (1, 0)

    # ---- indexing -------------------------------------------------------------------------
    def __getitem__(self, key):
        from . import indexing
        return indexing.getitem(self, key)

    def __setitem__(self, key, value):
        from . import indexing
        indexing.setitem(self, key, value)

    # ---- arithmetic ------------------------------------------------------------------------
    def __neg__(self):
        return _nd().negative(self)

    def __abs__(self):
        return _nd().abs(self)

    def __pos__(self):
        return self

    def __invert__(self):
        return _nd().logical_not(self)


# ---- autograd variables and backward (mx.autograd re-exports them) ----------------------------
def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark arrays as variables whose gradients ``backward`` computes into `gradients`."""
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not len(variables) == len(gradients) == len(grad_reqs):
        raise ValueError("mark_variables: variables, gradients and grad_reqs differ in length")
    for v, g, r in zip(variables, gradients, grad_reqs):
        if r not in ("write", "add", "null", "inplace", "to"):
            raise ValueError(f"mark_variables: grad_req must be 'write', 'add' or 'null', got {r!r}")
        if r == "inplace" or r == "to":
            r = "write"
        if g is not None and g.shape != v.shape:
            raise ValueError(f"mark_variables: gradient shape {g.shape} != variable shape {v.shape}")
        v._ag = _tape.AGInfo(None, 0, g, r)


def run_backward(heads, head_grads, retain_graph, create_graph, train_mode, into_grads=False):
    """{id: (AGInfo of a variable, its gradient)} for every variable the heads reach
    (`into_grads`: see tape.run_backward; a gradient may then be the variable's .grad)."""
    heads = [heads] if isinstance(heads, NDArray) else list(heads)
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    else:
        head_grads = list(head_grads)
    if len(head_grads) != len(heads):
        raise ValueError("backward: heads and head_grads differ in length")
    # MXNet reads a head gradient as the head's shape from the start of the given buffer: a
    # larger one gives its leading elements (MXNet's foreach test passes such gradients);
    # a smaller one is refused below
    head_grads = [g.reshape((-1,))[:h.size].reshape(h.shape)
                  if isinstance(g, NDArray) and not g._sparse and g.size > h.size > 0 else g
                  for h, g in zip(heads, head_grads)]
    # an empty head adds nothing to any gradient; mx.np makes some empty results without an
    # operator (so outside the graph), and MXNet's backward through them is a no-op
    keep = [i for i, h in enumerate(heads) if not (h.size == 0 and h._ag is None)]
    if not keep:
        return {}
    if len(keep) < len(heads):
        heads, head_grads = [heads[i] for i in keep], [head_grads[i] for i in keep]
    return _tape.run_backward(_nd(), heads, head_grads, retain_graph, create_graph, train_mode,
                              into_grads)


@api_call("MXAutogradBackwardEx")
def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Compute the gradients of `heads` and store them in the marked variables' ``.grad``
    (overwritten for grad_req 'write', accumulated for 'add', skipped for 'null')."""
    nd = _nd()
    for info, g in run_backward(heads, head_grads, retain_graph, False, train_mode,
                                True).values():
        if info.grad_req == "null" or info.grad is None:
            continue
        dst = info.grad
        if g._chunk is dst._chunk and g._offset == dst._offset and g.shape == dst.shape \
                and g.dtype == dst.dtype:
            info.fresh = True           # written in place by the kernel that made it
            continue
        if g.dtype != info.grad.dtype:
            g = g.astype(info.grad.dtype)
        if info.grad_req == "add":
            nd.elemwise_add(info.grad, g, out=info.grad)
        else:
            nd._copyto(g, out=info.grad)
        info.fresh = True


def _unpickle(values, device_type, device_id):
    return array(values, ctx=Context(device_type, device_id), dtype=values.dtype)


def _nd():
    """The ``mx.nd`` namespace (operator functions are generated into it after import)."""
    return sys.modules["mxc.ndarray"]


# Python operators: +, -, *, /, %, ** and comparisons live in handle.pyx (C fast path with a
# Python fallback installed by mxc.ndarray); floor division is composed here.
def _floordiv(reflected=False, inplace=False):
    def method(self, other):
        f = _nd().floor_divide
        if inplace:
            return f(self, other, out=self)
        return f(other, self) if reflected else f(self, other)
    return method


NDArray.__floordiv__ = _floordiv()
NDArray.__rfloordiv__ = _floordiv(reflected=True)
NDArray.__ifloordiv__ = _floordiv(inplace=True)
NDArray.__div__ = NDArray.__truediv__
NDArray.__rdiv__ = NDArray.__rtruediv__
NDArray.__idiv__ = NDArray.__itruediv__


# ---- creation --------------------------------------------------------------------------------
def empty(shape, ctx=None, dtype=None, stype=None):
    """An uninitialised array (a sparse one, with nothing stored, for stype 'csr' or
    'row_sparse')."""
    if stype not in (None, "default"):
        from . import sparse
        return sparse.empty(stype, shape, ctx, dtype)
    return _h.empty(NDArray, _new_shape(shape, "empty"), _dtype(dtype), _ctx(ctx))


def array(source_array, ctx=None, dtype=None):
    """A new array holding a copy of `source_array` (NDArray, numpy array, list, scalar).

    dtype defaults to the source's for an NDArray and to float32 otherwise (numpy sources
    included), as MXNet 1.x."""
    ctx = _ctx(ctx)
    if isinstance(source_array, NDArray):
        out = source_array if dtype is None else source_array.astype(dtype)
        out = out.as_in_context(ctx)
        return out.copy() if out is source_array else out
    dt = _dtype(dtype)
    if not isinstance(source_array, np.ndarray):
        from .sparse import _is_scipy_sparse
        if _is_scipy_sparse(source_array):      # MXNet: a scipy.sparse matrix -> CSRNDArray
            from .sparse import array as _sparse_array
            return _sparse_array(source_array, ctx=ctx, dtype=dtype)
        source_array = np.asarray(source_array, dtype=dt)
    if dt not in _h.DTYPE_CODE:
        raise TypeError(f"mx.nd.array: dtype {dt} is not supported")
    return _h.from_numpy(NDArray, source_array, ctx, dt)


def from_numpy(ndarray, zero_copy=True):
    """An NDArray from a numpy array: a copy, or with ``zero_copy=True`` (the default) sharing
    the memory of a C-contiguous array, which is then marked read-only on the numpy side, as
    MXNet does (writes go through the NDArray). A non-contiguous array with zero_copy raises
    ValueError."""
    if not zero_copy:
        return array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags.c_contiguous:
        raise ValueError("Only c-contiguous arrays are supported for zero-copy")
    if ndarray.dtype not in _h.DTYPE_CODE:
        raise ValueError(f"from_numpy: dtype {ndarray.dtype} is not supported")
    shared = ndarray.view()          # the chunk's owner; it keeps `ndarray` alive
    if ndarray.flags.writeable or id(ndarray) in _READONLY:
        # read-only while an NDArray shares the memory (MXNet leaves it read-only for good;
        # mxc gives writes back once the last sharing NDArray is gone, so reused host buffers
        # such as a data iterator's stay usable)
        key = id(ndarray)
        _READONLY[key] = _READONLY.get(key, 0) + 1
        ndarray.flags.writeable = False
        weakref.finalize(shared, _release_readonly, ndarray, key)
    return _h.wrap_numpy(NDArray, shared, Context("cpu", 0))


_READONLY = {}     # id(numpy array) -> how many live from_numpy views made it read-only


def _release_readonly(arr, key):
    n = _READONLY.pop(key, 1) - 1
    if n > 0:
        _READONLY[key] = n
    else:
        arr.flags.writeable = True


def from_dlpack(dlpack):
    """An NDArray sharing the memory of a DLPack capsule or an object with ``__dlpack__``."""
    if _dlpack_gpu.is_cuda_producer(dlpack):
        return _dlpack_gpu.from_dlpack(dlpack, NDArray)
    if hasattr(dlpack, "__dlpack__"):
        a = np.from_dlpack(dlpack)
    else:
        class _Capsule:  # numpy takes producers, MXNet users hand over raw capsules
            def __dlpack__(self, **kwargs):
                return dlpack

            def __dlpack_device__(self):
                return (1, 0)
        try:
            a = np.from_dlpack(_Capsule())
        except Exception as e:
            if _dlpack_gpu.cupy_available():        # a capsule of a CUDA tensor
                return _dlpack_gpu.from_dlpack(dlpack, NDArray)
            raise MXNetError(f"from_dlpack: cannot import this tensor: {e}") from None
    if not a.flags.c_contiguous or a.dtype not in _h.DTYPE_CODE:
        return array(a, dtype=a.dtype)
    return _h.wrap_numpy(NDArray, a, Context("cpu", 0))


def full(shape, val, ctx=None, dtype=None, out=None):
    return _filled("_full", shape, ctx, dtype, out, value=val)


def _filled(opname, shape, ctx, dtype, out, **value):
    # zeros and ones run MXNet's _zeros and _ones (the names the profiler shows)
    op = getattr(_nd(), opname)
    if out is not None:
        return op(shape=out.shape, dtype=out._dtype.name, out=out, **value)
    return op(shape=_new_shape(shape, opname.strip("_")), ctx=ctx, dtype=_dtype(dtype).name,
              **value)


def _op_kwargs(fn, kwargs):
    """What MXNet's generated creation functions accept and ignore here: the symbol-only `name`
    and dunder attributes (``__layout__``); anything else is an error naming the function."""
    out = kwargs.pop("out", None)
    bad = [k for k in kwargs if k != "name" and not (k.startswith("__") and k.endswith("__"))]
    if bad:
        raise TypeError(f"{fn}() got unexpected keyword argument(s) {bad}")
    return out


def _known_shape(shape, what):
    """zeros and ones refuse the shape () as MXNet 1.x's legacy shape semantics reads it: an
    unknown shape (under np_shape it is a scalar). MXNet refuses 0 dimensions there too; mxc
    allows them (its own code makes empty arrays with zeros, and dynamic shapes reach 0)."""
    shape = _shape(shape)
    if shape == () and not is_np_shape():
        raise MXNetError(f"{what}: shape () is unknown unless numpy shape semantics is on "
                         f"(mx.np_shape()); a one-element array is shape (1,)")
    return shape


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    if stype not in (None, "default"):
        from . import sparse
        return sparse.zeros(stype, shape, ctx, dtype, **kwargs)
    return _filled("_zeros", _known_shape(shape, "zeros"), ctx, dtype,
                   _op_kwargs("zeros", kwargs))


def ones(shape, ctx=None, dtype=None, **kwargs):
    return _filled("_ones", _known_shape(shape, "ones"), ctx, dtype, _op_kwargs("ones", kwargs))


# zeros_like/ones_like take dtype= and keep data's dtype: MXNet 1.9.1's operators accept the
# argument and ignore it (GluonCV's CenterNet decoder passes it)
# the operators themselves (mx.nd.op): recorded under autograd as MXNet's, so a gradient written
# with them stays in the graph of `data`
def zeros_like(data, dtype=None, **kwargs):
    out = _op_kwargs("zeros_like", kwargs)
    if data._sparse and out is None:
        from . import sparse
        return sparse.zeros(data.stype, data.shape, data.context, data._dtype)
    return _nd().op.zeros_like(data, out=out)


def ones_like(data, dtype=None, **kwargs):
    return _nd().op.ones_like(data, out=_op_kwargs("ones_like", kwargs))


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=None):
    """Evenly spaced values in [start, stop), as MXNet (float32 by default)."""
    if stop is None:
        start, stop = 0, start
    out = _nd()._arange(start=start, stop=stop, step=step, ctx=ctx, dtype=_dtype(dtype).name)
    if repeat != 1:
        out = _nd().repeat(out, repeats=int(repeat))
    return out


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None):
    return _nd()._linspace(start=start, stop=stop, num=num, endpoint=endpoint, ctx=ctx,
                           dtype=_dtype(dtype).name)


def eye(N, M=0, k=0, ctx=None, dtype=None):
    return _nd()._eye(N=N, M=M, k=k, ctx=ctx, dtype=_dtype(dtype).name)


def concatenate(arrays, axis=0, always_copy=True):
    return _nd().concat(*arrays, dim=axis)


def _normalize_axes(axes, ndim, what):
    if isinstance(axes, (numbers.Integral, np.integer)):
        axes = [axes]
    out = []
    for ax in axes:
        ax = int(ax)
        if not -ndim <= ax < ndim:
            raise ValueError(f"moveaxis: {what} axis {ax} is out of bounds for an array of "
                             f"dimension {ndim}")
        out.append(ax % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"moveaxis: repeated axis in `{what}` argument")
    return out


def moveaxis(tensor, source, destination):
    """Move axes `source` (int or sequence) to positions `destination`, keeping the order of
    the others (numpy's moveaxis)."""
    source = _normalize_axes(source, tensor.ndim, "source")
    destination = _normalize_axes(destination, tensor.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError("moveaxis: `source` and `destination` arguments must have the same "
                         "number of elements")
    order = [n for n in range(tensor.ndim) if n not in source]
    for dst, src in sorted(zip(destination, source)):
        order.insert(dst, src)
    return _nd().transpose(tensor, axes=tuple(order))


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split along `axis` into equal sections (an int) or at the given indices (a tuple),
    as MXNet's mx.nd.split_v2; returns a list (one array when there is one section)."""
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (numbers.Integral, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ValueError("array split does not result in an equal division")
        size = n // sections
        bounds = [(i * size, (i + 1) * size) for i in range(sections)]
    elif isinstance(indices_or_sections, tuple):
        idx = [0] + [int(i) for i in indices_or_sections] + [n]
        bounds = [(min(b, n), min(max(e, b), n)) for b, e in zip(idx[:-1], idx[1:])]
    else:
        raise ValueError("indices_or_sections must either int or tuple of ints")
    nd = _nd()
    outs = []
    for b, e in bounds:
        if e > b:
            part = nd.slice_axis(ary, axis=axis, begin=b, end=e)
        else:       # an empty section (MXNet gives it; slice_axis refuses begin == end)
            from ..ops.shape import empty_along
            part = empty_along(nd, ary, axis % ary.ndim)
        if squeeze_axis:
            if e - b != 1:
                raise ValueError("split_v2: squeeze_axis needs sections of size 1")
            part = nd.squeeze(part, axis=axis)
        outs.append(part)
    return outs[0] if len(outs) == 1 else outs


def onehot_encode(indices, out):
    """One-hot encode `indices` into `out` (rows x depth), in place. Deprecated in MXNet:
    use one_hot."""
    return _nd()._onehot_encode(indices, out, out=out)


def to_dlpack_for_read(data):
    """A DLPack capsule sharing `data`'s memory once its pending writes are done."""
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data):
    """A DLPack capsule sharing `data`'s memory once its pending reads and writes are done."""
    return data.to_dlpack_for_write()


@api_call("MXNDArrayWaitAll")
def waitall():
    """Wait for every queued operation; raise the first error since the last waitall."""
    engine.wait_for_all()


def histogram(a, bins=10, range=None):  # noqa: A002  (MXNet's parameter name)
    """Counts of `a`'s values per bin: `bins` edges as an NDArray, or a bin count with `range`
    (without a range the edges come from the data, computed on the host as MXNet does).
    Returns (counts as int64, edges)."""
    if isinstance(bins, NDArray):
        return _nd()._histogram(a, bins)
    if range is None:
        counts, edges = np.histogram(a.asnumpy(), bins=bins)
        return array(counts, ctx=a.context, dtype="int64"), array(edges, ctx=a.context, dtype=a.dtype)
    return _nd()._histogram(a, bin_cnt=bins, range=range)


def _readonly(what):
    def refuse(self, other):
        raise ValueError(f"trying to {what} a readonly NDArray")
    return refuse


class _ReadOnlyNDArray(NDArray):
    """``NDArray(handle, writable=False)``: a view that refuses in-place arithmetic, as MXNet's
    read-only arrays do (a monitor's or a custom Function's output gradients)."""

    __slots__ = ()
    writable = property(lambda self: False)
    __iadd__ = _readonly("add to")
    __isub__ = _readonly("subtract from")
    __imul__ = _readonly("multiply to")
    __idiv__ = __itruediv__ = _readonly("divide from")
    __imod__ = _readonly("take modulo from")
