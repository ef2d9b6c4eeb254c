"""``mx.np.ndarray`` and the creation functions of ``mx.np``.

``ndarray`` is an NDArray subclass with numpy's semantics: zero-dim and zero-size arrays,
indexing that returns arrays (a scalar element is a zero-dim array, as MXNet's np), numpy's dtype
promotion in its operators, comparisons giving bool arrays. It shares storage with NDArray:
``as_nd_ndarray()`` and ``NDArray.as_np_ndarray()`` are views, not copies. Every operation runs a
registry operator, so autograd records it as it does for NDArray."""
import numbers
import re

import numpy as onp

from .._core import handle as _h

from ..context import Context, check_available
from ..ndarray.ndarray import NDArray, _nd
from . import _core
from ._core import wrap, view_as, default_float, ctx_arg
from .. import autograd

__all__ = ["ndarray", "array", "asarray", "empty", "zeros", "ones", "full", "arange", "linspace",
           "logspace", "eye", "identity", "zeros_like", "ones_like", "full_like", "empty_like",
           "meshgrid", "tril", "triu", "tri"]


class ndarray(NDArray):  # noqa: N801  (numpy's class name)
    """An array with numpy semantics on an mxc device (``mx.np.ndarray``)."""

    __slots__ = ()
    __array_priority__ = 1000.0

    # ---- description ------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def T(self):
        return self.transpose()

    @property
    def device(self):
        return self._ctx

    def __repr__(self):
        a = self.asnumpy()
        r = repr(a)
        if self._dtype in (_core._FLOAT_DEFAULT, _core._BOOL):
            r = re.sub(r",\s*dtype=[a-z0-9]+\)$", ")", r)
        elif "dtype=" not in r:
            r = r[:-1] + f", dtype={self._dtype.name})"
        if self._ctx.device_type != "cpu":
            r = r[:-1] + f", ctx={self._ctx})"
        return r

    def __str__(self):
        return str(self.asnumpy())

    def __format__(self, spec):
        # numpy's rule: a format spec applies to 0-d arrays only
        return format(self.asnumpy()[()] if self.ndim == 0 else self.asnumpy(), spec)

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of unsized object")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._shape[0]):
            yield self[i]

    def __bool__(self):
        if self._size == 1:
            return bool(self.asnumpy().reshape(-1)[0])
        if self._size == 0:
            return False
        raise ValueError("The truth value of an array with more than one element is ambiguous. "
                         "Use a.any() or a.all()")

    def __float__(self):
        if self._size != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return float(self.item())

    def __int__(self):
        if self._size != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return int(self.item())

    def __index__(self):
        if self._size != 1 or self._dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    __hash__ = object.__hash__

    def __reduce__(self):
        return _unpickle, (self.asnumpy(), self._ctx.device_type, self._ctx.device_id)

    # ---- values -----------------------------------------------------------------------------
    def item(self, *args):
        a = self.asnumpy()
        return a.item(*args)

    def tolist(self):
        return self.asnumpy().tolist()

    def asscalar(self):
        if self._size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(())[()]

    # ---- conversions (views: no copies) ------------------------------------------------------
    def as_nd_ndarray(self):
        """The same storage as a classic NDArray (MXNet shape semantics)."""
        return view_as(self, NDArray)

    def as_np_ndarray(self):
        return self

    def detach(self):
        return _h.make_array(ndarray, self._chunk, self._offset, self._shape, self._dtype,
                             self._ctx)

    def copy(self, order="C"):
        if order != "C":
            raise NotImplementedError(f"ndarray.copy: order={order!r} is not supported; mx.np "
                                      "arrays are C-contiguous")
        return self.copyto(self._ctx)

    def copyto(self, other):
        if isinstance(other, NDArray):
            return NDArray.copyto(self, other)
        if isinstance(other, (Context, str)):
            other = ctx_arg(other)
            check_available(other)
            out = _h.empty(ndarray, self._shape, self._dtype, other)
            return wrap(_nd()._copyto(self, out=out))
        raise TypeError(f"copyto does not take {type(other).__name__}")

    def as_in_context(self, context):
        context = ctx_arg(context)
        return self if context == self._ctx else self.copyto(context)

    as_in_ctx = as_in_context
    to_device = as_in_context

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = onp.dtype(default_float() if dtype is None else dtype)
        if casting != "unsafe" and not onp.can_cast(self._dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from dtype('{self._dtype}') to "
                            f"dtype('{dtype}') according to the rule '{casting}'")
        if dtype == self._dtype:
            return self.copy() if copy else self
        if dtype not in _h.DTYPE_CODE:
            raise TypeError(f"mx.np does not support dtype {dtype}")
        return wrap(_nd().cast(self, dtype=dtype.name))

    def tostype(self, stype):
        if stype != "default":
            raise ValueError("mx.np.ndarray only has the default (dense) storage")
        return self

    # ---- autograd -----------------------------------------------------------------------------
    def attach_grad(self, grad_req="write", stype=None):
        if stype not in (None, "default"):
            raise ValueError("mx.np.ndarray gradients are dense (stype='default')")
        grad = _h.empty(ndarray, self._shape, self._dtype, self._ctx)
        _nd()._full(shape=self._shape, value=0.0, dtype=self._dtype.name, out=grad)
        autograd.mark_variables([self], [grad], grad_req)

    @property
    def grad(self):
        ag = self._ag
        if ag is None or ag.node is not None:
            return None
        g = ag.grad
        return g if g is None or type(g) is ndarray else view_as(g, ndarray)

    # ---- shape ------------------------------------------------------------------------------
    def reshape(self, *shape, order="C", **kwargs):
        if order != "C":
            raise NotImplementedError("reshape: only order='C' is supported")
        if "newshape" in kwargs:
            shape = (kwargs.pop("newshape"),)
        if kwargs:
            raise TypeError(f"reshape: unexpected arguments {sorted(kwargs)}")
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        return _core.reshape_view(self, _core.numpy_reshape_shape(self._size, shape))

    def reshape_like(self, other):
        return self.reshape(other.shape)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (list, tuple))):
            axes = axes[0]
        return _F.transpose(self, axes if axes else None)

    def swapaxes(self, axis1, axis2):
        return _F.swapaxes(self, axis1, axis2)

    def flatten(self, order="C"):
        return self.reshape(-1).copy() if self._ag is None else _F.reshape(self, (-1,))

    def ravel(self, order="C"):
        return _F.ravel(self, order)

    def squeeze(self, axis=None):
        return _F.squeeze(self, axis)

    def expand_dims(self, axis):
        return _F.expand_dims(self, axis)

    def broadcast_to(self, shape):
        return _F.broadcast_to(self, shape)

    def broadcast_like(self, other):
        return _F.broadcast_to(self, other.shape)

    def repeat(self, repeats, axis=None):
        return _F.repeat(self, repeats, axis)

    def tile(self, reps):
        return _F.tile(self, reps)

    def flip(self, axis=None):
        return _F.flip(self, axis)

    def split(self, indices_or_sections, axis=0):
        return _F.split(self, indices_or_sections, axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return _F.diagonal(self, offset, axis1, axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return _F.trace(self, offset, axis1, axis2, dtype, out)

    # ---- indexing -----------------------------------------------------------------------------
    def __getitem__(self, key):
        return _F._getitem(self, key)

    def __setitem__(self, key, value):
        _F._setitem(self, key, value)

    # ---- arithmetic -------------------------------------------------------------------------
    def __add__(self, other): return _F.add(self, other)
    def __radd__(self, other): return _F.add(other, self)
    def __sub__(self, other): return _F.subtract(self, other)
    def __rsub__(self, other): return _F.subtract(other, self)
    def __mul__(self, other): return _F.multiply(self, other)
    def __rmul__(self, other): return _F.multiply(other, self)
    def __truediv__(self, other): return _F.true_divide(self, other)
    def __rtruediv__(self, other): return _F.true_divide(other, self)
    def __floordiv__(self, other): return _F.floor_divide(self, other)
    def __rfloordiv__(self, other): return _F.floor_divide(other, self)
    def __mod__(self, other): return _F.mod(self, other)
    def __rmod__(self, other): return _F.mod(other, self)
    def __pow__(self, other, modulo=None): return _F.power(self, other)
    def __rpow__(self, other, modulo=None): return _F.power(other, self)
    def __matmul__(self, other): return _F.matmul(self, other)
    def __rmatmul__(self, other): return _F.matmul(other, self)
    def __and__(self, other): return _F.bitwise_and(self, other)
    def __rand__(self, other): return _F.bitwise_and(other, self)
    def __or__(self, other): return _F.bitwise_or(self, other)
    def __ror__(self, other): return _F.bitwise_or(other, self)
    def __xor__(self, other): return _F.bitwise_xor(self, other)
    def __rxor__(self, other): return _F.bitwise_xor(other, self)
    def __eq__(self, other): return _F.equal(self, other)
    def __ne__(self, other): return _F.not_equal(self, other)
    def __gt__(self, other): return _F.greater(self, other)
    def __ge__(self, other): return _F.greater_equal(self, other)
    def __lt__(self, other): return _F.less(self, other)
    def __le__(self, other): return _F.less_equal(self, other)
    def __neg__(self): return _F.negative(self)
    def __pos__(self): return self.copy()
    def __abs__(self): return _F.absolute(self)
    def __invert__(self): return _F.invert(self)

    def _inplace(self, fn, other):
        r = fn(self, other)
        if r._dtype != self._dtype and not onp.can_cast(r._dtype, self._dtype, "same_kind"):
            raise TypeError(f"Cannot cast ufunc '{fn.__name__}' output from dtype('{r._dtype}') "
                            f"to dtype('{self._dtype}') with casting rule 'same_kind'")
        if r.shape != self._shape:
            raise ValueError(f"non-broadcastable output operand with shape {self._shape} doesn't "
                             f"match the broadcast shape {r.shape}")
        r = _core.cast(r, self._dtype)
        _nd()._copyto(r, out=self)
        return self

    def __iadd__(self, other): return self._inplace(_F.add, other)
    def __isub__(self, other): return self._inplace(_F.subtract, other)
    def __imul__(self, other): return self._inplace(_F.multiply, other)
    def __itruediv__(self, other): return self._inplace(_F.true_divide, other)
    def __ifloordiv__(self, other): return self._inplace(_F.floor_divide, other)
    def __imod__(self, other): return self._inplace(_F.mod, other)
    def __ipow__(self, other): return self._inplace(_F.power, other)

    # ---- reductions and friends as methods ----------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _F.sum(self, axis, dtype, out, keepdims, **kw)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return _F.mean(self, axis, dtype, out, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _F.prod(self, axis, dtype, out, keepdims, **kw)

    def max(self, axis=None, out=None, keepdims=False):
        return _F.amax(self, axis, out, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return _F.amin(self, axis, out, keepdims)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return _F.std(self, axis, dtype, out, ddof, keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return _F.var(self, axis, dtype, out, ddof, keepdims)

    def argmax(self, axis=None, out=None):
        return _F.argmax(self, axis, out)

    def argmin(self, axis=None, out=None):
        return _F.argmin(self, axis, out)

    def all(self, axis=None, out=None, keepdims=False):
        return _F.all(self, axis, out, keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        return _F.any(self, axis, out, keepdims)

    def cumsum(self, axis=None, dtype=None, out=None):
        return _F.cumsum(self, axis, dtype, out)

    def clip(self, min=None, max=None, out=None):  # noqa: A002  (numpy's names)
        return _F.clip(self, min, max, out)

    def round(self, decimals=0, out=None):
        return _F.round(self, decimals, out)

    def sort(self, axis=-1, kind=None, order=None):
        return _F.sort(self, axis, kind, order)

    def argsort(self, axis=-1, kind=None, order=None):
        return _F.argsort(self, axis, kind, order)

    def dot(self, b, out=None):
        return _F.dot(self, b, out)

    def nonzero(self):
        return _F.nonzero(self)

    def take(self, indices, axis=None, mode="raise", out=None):
        return _F.take(self, indices, axis, mode, out)

    def abs(self):
        return _F.absolute(self)

    def sign(self):
        return _F.sign(self)

    def exp(self):
        return _F.exp(self)

    def log(self):
        return _F.log(self)

    def sqrt(self):
        return _F.sqrt(self)

    def square(self):
        return _F.square(self)

    def sin(self):
        return _F.sin(self)

    def cos(self):
        return _F.cos(self)

    def tanh(self):
        return _F.tanh(self)

    def sigmoid(self):
        return wrap(_nd().sigmoid(self))

    def relu(self):
        return wrap(_nd().relu(self))

    def softmax(self, axis=-1):
        return wrap(_nd().softmax(self, axis=axis))

    def log_softmax(self, axis=-1):
        return wrap(_nd().log_softmax(self, axis=axis))

    def zeros_like(self):
        return zeros_like(self)

    def ones_like(self):
        return ones_like(self)

    def slice_axis(self, axis, begin, end):
        return wrap(_nd().slice_axis(self, axis=axis, begin=begin, end=end))

    def pick(self, index, axis=-1, keepdims=False, mode="clip"):
        return wrap(_nd().pick(self, index, axis=axis, keepdims=keepdims, mode=mode))

    def one_hot(self, depth, on_value=1.0, off_value=0.0, dtype="float32"):
        return wrap(_nd().one_hot(self, depth=depth, on_value=on_value, off_value=off_value,
                                  dtype=dtype))

    def topk(self, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
        return wrap(_nd().topk(self, axis=axis, k=k, ret_typ=ret_typ, is_ascend=is_ascend,
                               dtype=dtype))


_core.NP = ndarray


def _unpickle(values, device_type, device_id):
    return _h.from_numpy(ndarray, onp.asarray(values), Context(device_type, device_id),
                         values.dtype)


# ---- creation -----------------------------------------------------------------------------------
def _dt(dtype, default=None):
    if dtype is None:
        return default_float() if default is None else onp.dtype(default)
    dt = onp.dtype(dtype)
    if dt not in _h.DTYPE_CODE:
        raise TypeError(f"mx.np does not support dtype {dt}")
    return dt


def _shape(shape):
    if isinstance(shape, (numbers.Integral, onp.integer)):
        shape = (int(shape),)
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


def array(object, dtype=None, ctx=None, device=None, copy=True):  # noqa: A002  (numpy's name)
    """An mx.np.ndarray holding a copy of `object` (array, numpy array, nested list, scalar).

    As MXNet's np: an NDArray or numpy array keeps its dtype, Python data becomes float32
    unless `dtype` says otherwise."""
    ctx = ctx_arg(ctx, device)
    check_available(ctx)
    if isinstance(object, NDArray):
        if object._sparse:
            object = object.tostype("default")
        src = view_as(object, ndarray) if type(object) is not ndarray else object
        out = src if dtype is None else src.astype(dtype, copy=False)
        if out._ctx != ctx:
            return out.copyto(ctx)
        return out.copy() if (out is src and copy) else out
    if isinstance(object, onp.ndarray):
        a = object if dtype is None else object.astype(_dt(dtype))
    elif isinstance(object, (list, tuple)) and any(isinstance(v, NDArray) for v in object):
        a = onp.array([v.asnumpy() if isinstance(v, NDArray) else v for v in object])
        if dtype is None and any(isinstance(v, NDArray) for v in object):
            dtype = object[[isinstance(v, NDArray) for v in object].index(True)]._dtype
        a = a.astype(_dt(dtype))
    else:
        if isinstance(object, onp.generic) and dtype is None:
            a = onp.asarray(object)
        else:
            a = _host_array(object, _dt(dtype))
    if a.dtype not in _h.DTYPE_CODE:
        if a.dtype.kind == "f":
            a = a.astype(onp.float64)
        else:
            raise TypeError(f"mx.np.array: dtype {a.dtype} is not supported")
    return _h.from_numpy(ndarray, a, ctx, a.dtype)


def _host_array(obj, dt):
    """Python data as a numpy array of dtype `dt`. An integer out of `dt`'s range wraps around
    as a C cast does (numpy 1.x, under which MXNet 1.9.1 runs, did this; numpy 2 raises)."""
    try:
        return onp.asarray(obj, dtype=dt)
    except OverflowError:
        return onp.asarray(obj).astype(dt)


def asarray(a, dtype=None, ctx=None, device=None):
    if isinstance(a, ndarray) and (dtype is None or onp.dtype(dtype) == a._dtype):
        return a
    return array(a, dtype=dtype, ctx=ctx, device=device, copy=False)


def empty(shape, dtype=None, order="C", ctx=None, device=None):
    """An uninitialised array (float32 unless `dtype`)."""
    if order != "C":
        raise NotImplementedError("empty: only order='C' is supported")
    ctx = ctx_arg(ctx, device)
    check_available(ctx)
    return _h.empty(ndarray, _shape(shape), _dt(dtype), ctx)


def full(shape, fill_value, dtype=None, order="C", ctx=None, device=None, out=None):
    """An array of `shape` filled with `fill_value` (float32 unless `dtype`; an array
    `fill_value` is broadcast and keeps its dtype)."""
    if order != "C":
        raise NotImplementedError("full: only order='C' is supported")
    shape = _shape(shape)
    if isinstance(fill_value, NDArray):
        res = _F.broadcast_to(_core.asarray_like(fill_value), shape)
        res = res.astype(dtype) if dtype is not None else res.copy()
        return _core.check_out(out, res, "full")
    if isinstance(fill_value, onp.ndarray) and fill_value.ndim:
        return _core.check_out(out, array(onp.broadcast_to(fill_value, shape), dtype=dtype,
                                          ctx=ctx, device=device), "full")
    if out is not None:
        _nd()._full(shape=out.shape, value=float(fill_value), dtype=out._dtype.name, out=out)
        return out
    if dtype is None and isinstance(fill_value, (bool, onp.bool_)):
        dtype = onp.bool_
    dt = _dt(dtype)
    ctx = ctx_arg(ctx, device)
    check_available(ctx)
    res = _h.empty(ndarray, shape, dt, ctx)
    if res._size:
        _nd()._full(shape=shape, value=float(fill_value), dtype=dt.name, out=res)
    return res


def zeros(shape, dtype=None, order="C", ctx=None, device=None):
    return full(shape, 0.0, _dt(dtype), order, ctx, device)


def ones(shape, dtype=None, order="C", ctx=None, device=None):
    return full(shape, 1.0, _dt(dtype), order, ctx, device)


def _like(a, dtype, shape):
    a = _core.asarray_like(a)
    return (a.shape if shape is None else shape), (a._dtype if dtype is None else _dt(dtype)), a._ctx


def zeros_like(a, dtype=None, order="C", ctx=None, out=None, shape=None):
    shp, dt, c = _like(a, dtype, shape)
    res = full(shp, 0.0, dt, ctx=ctx or c)
    return _core.check_out(out, res, "zeros_like")


def ones_like(a, dtype=None, order="C", ctx=None, out=None, shape=None):
    shp, dt, c = _like(a, dtype, shape)
    res = full(shp, 1.0, dt, ctx=ctx or c)
    return _core.check_out(out, res, "ones_like")


def full_like(a, fill_value, dtype=None, order="C", ctx=None, out=None, shape=None):
    shp, dt, c = _like(a, dtype, shape)
    res = full(shp, fill_value, dt, ctx=ctx or c)
    return _core.check_out(out, res, "full_like")


def empty_like(prototype, dtype=None, order="C", subok=False, shape=None):
    shp, dt, c = _like(prototype, dtype, shape)
    return empty(shp, dt, ctx=c)


def arange(start, stop=None, step=1, dtype=None, ctx=None, device=None):
    """Evenly spaced values in [start, stop) (float32 unless `dtype`, as MXNet's np)."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ZeroDivisionError("arange: step must not be 0")
    dt = _dt(dtype)
    n = max(int(onp.ceil((stop - start) / step)), 0)
    ctx = ctx_arg(ctx, device)
    if n == 0:
        return empty((0,), dt, ctx=ctx)
    return _arange_n(start, step, n, dt, ctx)


def _arange_n(start, step, n, dt, ctx):
    r = _nd()._arange(start=float(start), stop=float(start) + n * float(step), step=float(step),
                      ctx=ctx, dtype=dt.name)
    if r.shape[0] != n:     # rounding at the end of the range
        r = _nd().slice_axis(r, axis=0, begin=0, end=n)
    return wrap(r)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None,
             device=None):
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    ctx = ctx_arg(ctx, device)
    dt = _dt(dtype)
    if isinstance(start, NDArray) or isinstance(stop, NDArray) or onp.ndim(start) or onp.ndim(stop):
        raise NotImplementedError("linspace: array start/stop are not supported")
    div = (num - 1) if endpoint else num
    step = (float(stop) - float(start)) / div if div > 0 else float("nan")
    if num == 0:
        res = empty((0,), dt, ctx=ctx)
    else:
        res = wrap(_nd()._linspace(start=float(start), stop=float(stop), num=num,
                                   endpoint=endpoint, ctx=ctx, dtype="float64"))
        res = _core.cast(res, dt)
    if axis not in (0, -1):
        raise ValueError("linspace: scalar start/stop give 1-d results (axis 0)")
    return (res, step) if retstep else res


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None,
             device=None):
    y = linspace(start, stop, num, endpoint, dtype="float64", axis=axis, ctx=ctx, device=device)
    return _core.cast(_F.power(float(base), y), _dt(dtype))


def eye(N, M=None, k=0, dtype=None, ctx=None, device=None, order="C"):
    ctx = ctx_arg(ctx, device)
    N = int(N)
    M = N if M is None else int(M)
    dt = _dt(dtype)
    if N == 0 or M == 0:
        return empty((N, M), dt, ctx=ctx)
    return wrap(_nd()._eye(N=N, M=M, k=int(k), ctx=ctx, dtype=dt.name))


def identity(n, dtype=None, ctx=None, device=None):
    return eye(n, dtype=dtype, ctx=ctx, device=device)


def tri(N, M=None, k=0, dtype=None, ctx=None, device=None):
    """Ones at and below diagonal `k` of an N x M array."""
    M = N if M is None else M
    ctx = ctx_arg(ctx, device)
    r = arange(N, dtype="int64", ctx=ctx).reshape(N, 1)
    c = arange(M, dtype="int64", ctx=ctx).reshape(1, M)
    return _core.cast(_F.less_equal(_F.subtract(c, r), int(k)), _dt(dtype))


def _tri_mask(m, k, lower):
    m = _core.asarray_like(m)
    if m.ndim < 2:
        if m.ndim == 1:      # numpy: a 1-d input is broadcast against the mask
            m = _F.broadcast_to(m, (m.shape[0], m.shape[0]))
        else:
            raise ValueError("tril/triu: the input must have at least 1 dimension")
    n, mm = m.shape[-2], m.shape[-1]
    mask = tri(n, mm, k if lower else k - 1, dtype="bool", ctx=m._ctx)
    if not lower:
        mask = _F.logical_not(mask)
    return _F.where(mask, m, _core.cast(zeros((), dtype=m._dtype, ctx=m._ctx), m._dtype))


def tril(m, k=0):
    return _tri_mask(m, k, True)


def triu(m, k=0):
    return _tri_mask(m, k, False)


def meshgrid(*xi, **kwargs):
    indexing = kwargs.pop("indexing", "xy")
    sparse = kwargs.pop("sparse", False)
    copy = kwargs.pop("copy", True)
    if kwargs:
        raise TypeError(f"meshgrid: unexpected arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xs = [_core.asarray_like(x).reshape(-1) for x in xi]
    nd = len(xs)
    shapes = [1] * nd
    out = []
    for i, x in enumerate(xs):
        s = list(shapes)
        s[i] = x.shape[0]
        if indexing == "xy" and nd > 1 and i < 2:
            s[0], s[1] = s[1], s[0]
        out.append(x.reshape(s))
    if sparse:
        return tuple(o.copy() if copy else o for o in out)     # numpy 2: a tuple
    full_shape = [x.shape[0] for x in xs]
    if indexing == "xy" and nd > 1:
        full_shape[0], full_shape[1] = full_shape[1], full_shape[0]
    return tuple(_F.broadcast_to(o, tuple(full_shape)).copy() for o in out)


from . import _op as _F  # noqa: E402  (the functions; they need the class above)
