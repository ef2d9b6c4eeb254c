"""Plumbing shared by the ``mx.np`` modules: turning operator results into ``mx.np.ndarray``
without copies, operand conversion, dtype promotion and numpy-style shapes.

Every function of ``mx.np`` runs the registry operators of ``mx.nd`` (so autograd records them as
the NDArray ones) and hands back its results re-classed as ``mx.np.ndarray``: same object, same
storage, same autograd state."""
import numbers

import numpy as onp

from .._core import handle as _h
from .._core import modes as _modes
from ..base import MXNetError, OperatorInputError
from ..context import Context, current_context
from ..ndarray.ndarray import NDArray, _nd

__all__ = []

# dtype promotion lives with the operators that apply it inside graphs (mxc/ops/np_promote.py)
from ..ops.np_promote import (_FLOAT_DEFAULT, _INT_DEFAULT, _BOOL, is_np_default_dtype,  # noqa: F401
                              default_float, result_type, scalar_result_type)
_UINT8 = onp.dtype(onp.uint8)
_SUPPORTED = frozenset(_h.DTYPE_CODE) if hasattr(_h, "DTYPE_CODE") else None

# the ndarray class; multiarray.py sets it when it is defined
NP = None


def nd():
    return _nd()


def wrap(x):
    """An NDArray produced by an operator (fresh object) as an mx.np.ndarray: same object."""
    if x is None:
        return None
    t = type(x)
    if t is NP:
        return x
    if t is NDArray:
        x.__class__ = NP
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(wrap(v) for v in x)
    return x


def view_as(x, cls, dtype=None, shape=None):
    """A new array object of class `cls` on x's storage (no copy), sharing its autograd state."""
    dt = x._dtype if dtype is None else onp.dtype(dtype)
    shp = x._shape if shape is None else tuple(shape)
    r = _h.make_array(cls, x._chunk, x._offset, shp, dt, x._ctx)
    if dtype is None or dt == x._dtype:
        r._ag = x._ag
    return r


def as_bits(x):
    """A bool array reinterpreted as uint8 (no copy): most kernels have no bool version."""
    if x._dtype == _BOOL:
        return view_as(x, type(x), _UINT8)
    return x


def to_bool(x):
    """0/1 results (any dtype) as a bool mx.np.ndarray."""
    if x._dtype == _BOOL:
        return wrap(x)
    if x._dtype != _UINT8:
        x = nd().cast(x, dtype="uint8")
    return view_as(x, NP, _BOOL)


def is_scalar(v):
    return isinstance(v, (numbers.Number, onp.generic)) and not isinstance(v, onp.ndarray)


def ctx_of(*arrays):
    for a in arrays:
        if isinstance(a, NDArray):
            return a.context
    return current_context()


def asarray_like(v, ctx=None, dtype=None):
    """An operand as an mx.np.ndarray: arrays pass through (NDArray viewed as np), numpy arrays
    keep their dtype, Python sequences become float32 unless they hold only bools/ints of an
    explicit `dtype`."""
    if isinstance(v, NDArray):
        if type(v) is not NP:
            if v._sparse:
                raise TypeError("mx.np functions take dense arrays; call tostype('default') first")
            v = view_as(v, NP)
        return v if dtype is None or v._dtype == onp.dtype(dtype) else wrap(v.astype(dtype))
    if ctx is None:
        ctx = current_context()
    if isinstance(v, onp.ndarray):
        a = v if dtype is None else v.astype(dtype)
    elif is_scalar(v) and isinstance(v, onp.generic):
        a = onp.asarray(v, dtype=dtype)
    else:
        a = onp.asarray(v, dtype=dtype if dtype is not None else None)
        if dtype is None:
            if a.dtype.kind == "f" or a.dtype.kind in "iub":
                a = a.astype(default_float())
    a = supported(a)
    return _h.from_numpy(NP, a, ctx, a.dtype)


def supported(a):
    """A host numpy array in a dtype mxc stores (float128, complex ... are refused)."""
    if a.dtype not in _h.DTYPE_CODE:
        raise TypeError(f"mx.np does not support dtype {a.dtype}")
    return a


def cast(x, dtype):
    dtype = onp.dtype(dtype)
    if x._dtype == dtype:
        return x
    return wrap(nd().cast(x, dtype=dtype.name))


def reshape_view(x, shape):
    """x in a new numpy shape (sizes must match); a view, or a recorded Reshape under autograd."""
    shape = tuple(int(d) for d in shape)
    if shape == x._shape:
        return x
    if x._ag is not None and _modes._M.recording and 0 not in shape:
        return wrap(nd().Reshape(x, shape=shape if shape else (1,))) if shape else \
            _recorded_to_scalar(x)
    return view_as(x, NP, shape=shape)


def _recorded_to_scalar(x):
    r = wrap(nd().Reshape(x, shape=(1,)))
    # a (1,) result whose view as shape () keeps the autograd entry of the reshape
    return view_as(r, NP, shape=())


def numpy_reshape_shape(size, newshape, what="reshape"):
    """numpy's target shape with at most one -1. A bad shape is OperatorInputError: MXNet's
    operator raises MXNetError, numpy ValueError, and it is both."""
    if isinstance(newshape, (numbers.Integral, onp.integer)):
        newshape = (int(newshape),)
    newshape = tuple(int(d) for d in newshape)
    unknown = [i for i, d in enumerate(newshape) if d == -1]
    if len(unknown) > 1:
        raise OperatorInputError(f"{what}: can only specify one unknown dimension (-1), got "
                                 f"{newshape}")
    if any(d < -1 for d in newshape):
        raise OperatorInputError(f"{what}: negative dimension in {newshape} (mx.np takes numpy "
                                 "shapes; MXNet's special codes are in mx.npx.reshape)")
    known = 1
    for d in newshape:
        if d != -1:
            known *= d
    if unknown:
        if known == 0 or size % known:
            raise OperatorInputError(f"cannot reshape array of size {size} into shape {newshape}")
        newshape = tuple(size // known if d == -1 else d for d in newshape)
    elif known != size:
        raise OperatorInputError(f"cannot reshape array of size {size} into shape {newshape}")
    return newshape


def norm_axis(axis, ndim, what):
    """One axis in [0, ndim)."""
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise ValueError(f"{what}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def norm_axes(axis, ndim, what):
    """None -> all axes; an int or a tuple -> sorted tuple of axes in [0, ndim)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (numbers.Integral, onp.integer)):
        axis = (int(axis),)
    out = []
    for a in axis:
        if not -ndim <= a < ndim:
            raise ValueError(f"{what}: axis {a} is out of bounds for array of dimension {ndim}")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: repeated axis in {axis}")
    return tuple(sorted(out))


def ctx_arg(ctx=None, device=None):
    c = device if device is not None else ctx
    if c is None:
        return current_context()
    if isinstance(c, str):
        name, _, rest = c.partition("(")
        return Context(name, int(rest.rstrip(")")) if rest else 0)
    return c


def check_out(out, res, what):
    """Copy `res` into `out=` (an mx.np.ndarray of the result's shape); returns out."""
    if out is None:
        return res
    if not isinstance(out, NDArray):
        raise TypeError(f"{what}: out= must be an mx.np.ndarray, got {type(out).__name__}")
    if out.shape != res.shape:
        raise ValueError(f"{what}: out= has shape {out.shape}, the result has shape {res.shape}")
    if out._dtype != res._dtype:
        res = cast(res, out._dtype)
    nd()._copyto(res, out=out)
    return out


def unsupported(name, why=""):
    raise MXNetError(f"mx.np.{name} is not supported by mxc{': ' + why if why else ''}")


def is_basic_key(key):
    """Whether an index is numpy "basic" (ints, slices, None, Ellipsis only)."""
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (slice, numbers.Integral))
               and not isinstance(k, bool) for k in keys)


def basic_index(F, a, key):
    """a[key] for a basic index without Ellipsis, built from F's (mx.nd's or mx.sym's) slice,
    squeeze and expand_dims: one slice over the indexed axes, squeeze for the integer ones,
    expand_dims for None. Used where a recorded or traced graph must hold the indexing."""
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if not (k is None or isinstance(k, (slice, numbers.Integral))):
            raise IndexError(f"only basic indices (ints, slices, None) are supported here, got "
                             f"{type(k).__name__}")
    real = [k for k in key if k is not None]
    out = a
    if real:
        begin, end, step = [], [], []
        for k in real:
            if isinstance(k, slice):
                begin.append(k.start)
                end.append(k.stop)
                step.append(k.step)
            else:
                k = int(k)
                begin.append(k)
                end.append(k + 1 if k != -1 else None)
                step.append(1)
        out = F.slice(out, begin=tuple(begin), end=tuple(end), step=tuple(step))
        ints = tuple(i for i, k in enumerate(real) if not isinstance(k, slice))
        if ints:
            out = F.squeeze(out, axis=ints)
    pos = 0
    for k in key:               # new axes at their places in the result
        if k is None:
            out = F.expand_dims(out, axis=pos)
            pos += 1
        elif isinstance(k, slice):
            pos += 1
    return out
