"""``mx.npx.random``: seeding and the batch samplers of MXNet's numpy extension."""
import numbers

import numpy as onp

from ..context import current_context
from ..ndarray.ndarray import NDArray
from ._op import as_np
from .. import ndarray, random as _random

__all__ = ["seed", "bernoulli", "uniform_n", "normal_n"]


def _nd():
    return ndarray


def seed(seed, ctx="all"):
    """Seed mxc's random generators (``mx.random.seed``)."""
    _random.seed(seed, ctx=ctx)


def _shape_of(v):
    return tuple(v.shape) if isinstance(v, NDArray) else ()


def _batch(batch_shape):
    if batch_shape is None or batch_shape == ():
        return ()
    if isinstance(batch_shape, numbers.Integral):
        return (int(batch_shape),)
    return tuple(int(d) for d in batch_shape)


def _param(v, shape, dtype, ctx):
    """A distribution parameter broadcast to the sample shape (NDArray), or a float."""
    if isinstance(v, NDArray):
        v = v.astype(dtype, copy=False)
        if tuple(v.shape) != shape:
            v = _nd().broadcast_to(v.reshape((1,) * (len(shape) - v.ndim) + v.shape)
                                   if v.ndim else v.reshape((1,) * len(shape)), shape=shape)
        return v
    return float(v)


def _draw(kind, a, b, batch_shape, dtype, ctx):
    dtype = onp.dtype("float32" if dtype is None else dtype).name
    ctx = current_context() if ctx is None else ctx
    pshape = onp.broadcast_shapes(_shape_of(a), _shape_of(b))
    shape = _batch(batch_shape) + tuple(pshape)
    n = _nd()
    draw_shape = shape if shape else (1,)
    if kind == "uniform":
        base = n.random.uniform(0.0, 1.0, shape=draw_shape, dtype=dtype, ctx=ctx)
    else:
        base = n.random.normal(0.0, 1.0, shape=draw_shape, dtype=dtype, ctx=ctx)
    if not shape:
        base = base.reshape(())
    if not isinstance(a, NDArray) and not isinstance(b, NDArray):
        a, b = float(a), float(b)
        res = base * (b - a) + a if kind == "uniform" else base * b + a
    else:
        pa, pb = _param(a, shape, dtype, ctx), _param(b, shape, dtype, ctx)
        if kind == "uniform":
            res = base * (pb - pa) + pa
        else:
            res = base * pb + pa
    return res


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    """Samples from U[low, high) of shape ``batch_shape + broadcast(low, high).shape``."""
    return as_np(_draw("uniform", low, high, batch_shape, dtype, ctx))


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    """Samples from N(loc, scale**2) of shape ``batch_shape + broadcast(loc, scale).shape``."""
    return as_np(_draw("normal", loc, scale, batch_shape, dtype, ctx))


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """1 with probability `prob` (or ``sigmoid(logit)``), else 0; exactly one of the two."""
    if (prob is None) == (logit is None):
        raise ValueError("Either `prob` or `logit` must be specified, but not both. Received "
                         f"prob={prob}, logit={logit}")
    dtype = onp.dtype("float32" if dtype is None else dtype)
    p = prob
    if logit is not None:
        p = _nd().sigmoid(logit) if isinstance(logit, NDArray) else 1.0 / (1.0 + onp.exp(-logit))
    u = _draw("uniform", 0.0, 1.0, size if size is not None else None, "float32", ctx)
    if isinstance(p, NDArray):
        shape = onp.broadcast_shapes(tuple(u.shape), tuple(p.shape))
        u = _draw("uniform", 0.0, 1.0, shape, "float32", ctx) if tuple(u.shape) != shape else u
        pb = _param(p, shape, "float32", ctx)
        res = _nd().broadcast_lesser(u, pb)
    else:
        res = u < float(p)
    res = _nd().cast(res, dtype=dtype.name)
    if out is not None:
        _nd()._copyto(res, out=out)
        return out
    return as_np(res)
