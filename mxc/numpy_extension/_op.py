"""``mx.npx`` operators: MXNet's neural-network and extension operators on ``mx.np.ndarray``.

Each function runs the registry operator ``mx.nd.<Op>`` runs (same kernels, same autograd
records) and hands its results back as ``mx.np.ndarray`` objects on the same storage (no copy).
Inputs may be ``mx.np.ndarray`` or ``mx.nd.NDArray``. Parameters, defaults and their meaning are
the operators' own (see ``mx.nd.<Op>``); the names are MXNet 1.9.1's ``npx`` names.
"""
import inspect

import numpy as onp

from .._core import handle as _h
from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from .. import ndarray, autograd

__all__ = ["activation", "arange_like", "batch_dot", "batch_flatten", "batch_norm", "cast",
           "constraint_check", "convolution", "deconvolution", "dropout", "embedding", "erf",
           "erfinv", "fully_connected", "gamma", "gammaln", "gather_nd", "layer_norm",
           "leaky_relu", "log_softmax", "masked_softmax", "multibox_detection", "multibox_prior",
           "multibox_target", "nonzero", "one_hot", "pick", "pooling", "relu",
           "reshape", "reshape_like", "rnn", "roi_pooling", "sequence_mask", "shape_array",
           "sigmoid", "slice", "smooth_l1", "softmax", "topk"]


def _nd():
    return ndarray


def _np_cls():
    # lazy: mx.npx loads without mx.np (0.1 s of imports) until an np array is made
    from ..numpy.multiarray import ndarray as np_ndarray
    return np_ndarray


def as_np(x):
    """`x` (an NDArray, or a list/tuple of them) as mx.np.ndarray: a new object on the same
    storage that shares the autograd entry (no copy); np arrays and non-arrays pass through."""
    if isinstance(x, NDArray):
        cls = _np_cls()
        if type(x) is cls or x._sparse:
            return x
        r = _h.make_array(cls, x._chunk, x._offset, x._shape, x._dtype, x._ctx)
        r._ag = x._ag
        return r
    if isinstance(x, (list, tuple)):
        return type(x)(as_np(v) for v in x)
    return x


def as_nd(x):
    """`x` (an mx.np.ndarray, or a list/tuple of them) as a plain NDArray view (no copy,
    same autograd entry); other values pass through."""
    if isinstance(x, NDArray):
        if type(x) is NDArray or x._sparse:
            return x
        r = _h.make_array(NDArray, x._chunk, x._offset, x._shape, x._dtype, x._ctx)
        r._ag = x._ag
        return r
    if isinstance(x, (list, tuple)):
        return type(x)(as_nd(v) for v in x)
    return x


def _check_array(fname, pname, x):
    if x is not None and not isinstance(x, NDArray):
        raise TypeError(f"npx.{fname}: {pname} must be an mx.np.ndarray, got "
                        f"{type(x).__name__}")


def _wrap_op(npx_name, op_name, doc=None):
    """npx.<npx_name> over mx.nd.<op_name>, with the nd function's signature."""
    def fn(*args, **kwargs):
        f = getattr(_nd(), op_name)
        for i, a in enumerate(args):
            if a is not None and not isinstance(a, (NDArray, int, float, str, tuple, list)):
                _check_array(npx_name, f"argument {i}", a)
        out = kwargs.get("out")
        res = f(*args, **kwargs)
        if out is not None:
            return out
        return as_np(res)
    fn.__name__ = fn.__qualname__ = npx_name
    fn.__module__ = "mxc.numpy_extension"
    try:
        fn.__signature__ = inspect.signature(getattr(_nd(), op_name))
    except (AttributeError, ValueError, TypeError):
        pass
    fn.__doc__ = doc or (f"``mx.npx.{npx_name}``: the ``{op_name}`` operator on mx.np arrays "
                         f"(parameters as ``mx.nd.{op_name}``).")
    return fn


activation = _wrap_op("activation", "Activation")
batch_dot = _wrap_op("batch_dot", "batch_dot")
batch_flatten = _wrap_op("batch_flatten", "Flatten",
                         "Flatten every axis after the first: shape (n, ...) -> (n, prod(...)).")
batch_norm = _wrap_op("batch_norm", "BatchNorm")
convolution = _wrap_op("convolution", "Convolution")
deconvolution = _wrap_op("deconvolution", "Deconvolution")
dropout = _wrap_op("dropout", "Dropout")
embedding = _wrap_op("embedding", "Embedding")
erf = _wrap_op("erf", "erf")
fully_connected = _wrap_op("fully_connected", "FullyConnected")
gamma = _wrap_op("gamma", "gamma")
gammaln = _wrap_op("gammaln", "gammaln")
gather_nd = _wrap_op("gather_nd", "gather_nd")
layer_norm = _wrap_op("layer_norm", "LayerNorm")
leaky_relu = _wrap_op("leaky_relu", "LeakyReLU")
log_softmax = _wrap_op("log_softmax", "log_softmax")
multibox_detection = _wrap_op("multibox_detection", "_contrib_MultiBoxDetection")
multibox_prior = _wrap_op("multibox_prior", "_contrib_MultiBoxPrior")
multibox_target = _wrap_op("multibox_target", "_contrib_MultiBoxTarget")
one_hot = _wrap_op("one_hot", "one_hot")
pick = _wrap_op("pick", "pick")
pooling = _wrap_op("pooling", "Pooling")
relu = _wrap_op("relu", "relu")
reshape_like = _wrap_op("reshape_like", "reshape_like")
rnn = _wrap_op("rnn", "RNN")
roi_pooling = _wrap_op("roi_pooling", "ROIPooling")
sequence_mask = _wrap_op("sequence_mask", "SequenceMask")
shape_array = _wrap_op("shape_array", "shape_array")
sigmoid = _wrap_op("sigmoid", "sigmoid")
slice = _wrap_op("slice", "slice")  # noqa: A001  (MXNet's name)
smooth_l1 = _wrap_op("smooth_l1", "smooth_l1")
softmax = _wrap_op("softmax", "softmax")
topk = _wrap_op("topk", "topk")


def cast(data, dtype, out=None, name=None):
    """``data`` converted to ``dtype`` (a new array)."""
    _check_array("cast", "data", data)
    res = _nd().cast(data, dtype=onp.dtype(dtype).name, out=out)
    return out if out is not None else as_np(res)


def erfinv(data, out=None, name=None):
    """The inverse error function, elementwise."""
    _check_array("erfinv", "data", data)
    f = getattr(_nd(), "erfinv", None)
    if f is None:
        raise MXNetError("npx.erfinv: the erfinv operator is not in mxc's operator registry")
    res = f(data, out=out)
    return out if out is not None else as_np(res)


def arange_like(data, start=0.0, step=1.0, repeat=1, ctx=None, axis=None, out=None, name=None):
    """``start, start + step, ...`` (each value `repeat` times) in the shape of `data`, or, with
    `axis`, along that axis only (a 1-d result of length ``data.shape[axis]``). The values are
    computed in `data`'s dtype (start and step are converted to it first), as MXNet does."""
    _check_array("arange_like", "data", data)
    if repeat < 1:
        raise ValueError(f"npx.arange_like: repeat must be >= 1, got {repeat}")
    shape = data.shape
    if axis is not None:
        if not -len(shape) <= axis < len(shape):
            raise ValueError(f"npx.arange_like: axis {axis} out of range for shape {shape}")
        shape = (shape[axis],)
    n = 1
    for d in shape:
        n *= d
    dt = onp.dtype(data.dtype)
    ctx = data.context if ctx is None else ctx
    # exact integer positions i // repeat, then start + pos * step in the data's dtype
    pos = (onp.arange(n, dtype=onp.int64) // int(repeat)).astype(dt)
    vals = (pos * dt.type(step) + dt.type(start)).astype(dt).reshape(shape)
    res = _h.from_numpy(_np_cls(), vals, ctx, dt)
    if out is not None:
        _nd()._copyto(res, out=out)
        return out
    return res


def masked_softmax(data, mask, axis=-1, temperature=1.0, normalize=True, out=None, name=None):
    """Softmax of `data` along `axis` over the positions where `mask` (broadcastable to `data`)
    is true; masked positions give 0, and so does a slice with nothing unmasked (MXNet 2.x's
    operator; mxc builds it from where + softmax, so it is differentiable). `normalize` is
    accepted for compatibility: the result is always the stable (max-subtracted) softmax."""
    _check_array("masked_softmax", "data", data)
    _check_array("masked_softmax", "mask", mask)
    n = _nd()
    x, m = as_nd(data), as_nd(mask)
    if tuple(m.shape) != tuple(x.shape):
        m = n.broadcast_to(m, shape=x.shape)
    m = n.cast(m, dtype=onp.dtype(x.dtype).name) if onp.dtype(m.dtype) != onp.dtype(x.dtype) else m
    neg = n.full(x.shape, float("-inf"), ctx=x.context, dtype=onp.dtype(x.dtype).name)
    sm = n.softmax(n.where(m, x, neg), axis=axis, temperature=temperature)
    res = n.where(m, sm, n.zeros_like(sm))
    if out is not None:
        n._copyto(res, out=out)
        return out
    return as_np(res)


def constraint_check(x, msg="Constraint violated!"):
    """True (a 0-d bool array) when every element of bool array `x` is true; raises ValueError
    with `msg` otherwise."""
    _check_array("constraint_check", "x", x)
    if onp.dtype(x.dtype) != onp.bool_:
        raise MXNetError(f"npx.constraint_check: x must be a bool array, got {x.dtype}")
    ok = bool(onp.all(x.asnumpy()))
    if not ok:
        raise ValueError(msg)
    return _h.from_numpy(_np_cls(), onp.array(True), x.context, onp.dtype(onp.bool_))


def nonzero(a):
    """The indices of the non-zero elements of `a` as an int64 array of shape (N, a.ndim)."""
    _check_array("nonzero", "a", a)
    idx = onp.ascontiguousarray(onp.argwhere(a.asnumpy()).astype(onp.int64))
    return _h.from_numpy(_np_cls(), idx, a.context, onp.dtype(onp.int64))


# ---- npx.reshape ------------------------------------------------------------------------------
def _reshape_infer(src, target, err):
    """MXNet's npx.reshape shape rule (codes -1 .. -6) for a known source shape."""
    if all(d >= 0 for d in target):
        size = 1
        for d in target:
            size *= d
        if size != _size(src):
            raise MXNetError(err)
        return tuple(target)
    out, unknown, known, si, i = [], -1, 1, 0, 0
    while i < len(target):
        d = target[i]
        if d < -6:
            raise MXNetError(f"{err}: dimension codes must be >= -6, got {d}")
        if d == -1:
            if unknown >= 0:
                raise MXNetError(f"{err}: one and only one dim can be inferred")
            unknown = len(out)
            out.append(-1)
            si += 1
        elif d == -2:
            if si >= len(src):
                raise MXNetError(f"{err}: -2 has no source dimension left to copy")
            known *= src[si]
            out.append(src[si])
            si += 1
        elif d == -3:
            if si >= len(src) or src[si] != 1:
                raise MXNetError(f"{err}: -3 should only be used to skip a dimension of size 1")
            si += 1
        elif d == -4:
            while si < len(src):
                known *= src[si]
                out.append(src[si])
                si += 1
        elif d == -5:
            if si >= len(src) - 1:
                raise MXNetError(f"{err}: -5 needs two source dimensions left")
            d1, d2 = src[si], src[si + 1]
            si += 2
            known *= d1 * d2
            out.append(d1 * d2)
        elif d == -6:
            if i + 2 >= len(target) or si >= len(src):
                raise MXNetError(f"{err}: -6 must be followed by two dimensions")
            d0 = src[si]
            si += 1
            d1, d2 = target[i + 1], target[i + 2]
            i += 2
            if d1 == -1 and d2 == -1:
                raise MXNetError(f"{err}: split dims cannot both be -1")
            if d1 == -1:
                d1 = d0 // d2 if d2 else 0
            if d2 == -1:
                d2 = d0 // d1 if d1 else 0
            if d1 * d2 != d0:
                raise MXNetError(f"{err}: split dims {d1}, {d2} do not divide original dim {d0}")
            known *= d0
            out.extend((d1, d2))
        else:
            known *= d
            out.append(d)
            si += 1
        i += 1
    if unknown >= 0:
        if known == 0 or _size(src) % known:
            raise MXNetError(err)
        out[unknown] = _size(src) // known
    if _size(out) != _size(src):
        raise MXNetError(err)
    return tuple(out)


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def reshape(a, newshape, reverse=False, order="C"):
    """`a` in a new shape, with MXNet's codes: -1 infers one dimension, -2 copies the next
    input dimension, -3 drops an input dimension of size 1, -4 copies all remaining input
    dimensions, -5 merges the next two input dimensions, -6 splits the next input dimension
    into the two sizes that follow it (one may be -1). ``reverse=True`` matches the codes from
    the right. A view of `a`'s storage (recorded under autograd)."""
    _check_array("reshape", "a", a)
    if order != "C":
        raise NotImplementedError(f"npx.reshape: order={order!r} is not supported, only 'C'")
    if isinstance(newshape, int):
        newshape = (newshape,)
    newshape = tuple(int(d) for d in newshape)
    err = (f"Cannot reshape array of shape {list(a.shape)} into shape {list(newshape)} , "
           f"reverse = {int(bool(reverse))}")
    if reverse:
        shape = _reshape_infer(tuple(reversed(a.shape)), tuple(reversed(newshape)), err)[::-1]
    else:
        shape = _reshape_infer(tuple(a.shape), newshape, err)
    if a._ag is not None and autograd.is_recording() and 0 not in shape:
        if shape:
            return as_np(_nd().Reshape(a, shape=shape))
        # a 0-d result: reshape to (1,) while recording, then view that as ()
        one = _nd().Reshape(a, shape=(1,))
        r = _h.make_array(_np_cls(), one._chunk, one._offset, (), one._dtype, one._ctx)
        r._ag = one._ag
        return r
    return _h.make_array(_np_cls(), a._chunk, a._offset, tuple(shape), a._dtype, a._ctx)
