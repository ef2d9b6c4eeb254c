"""Running an official numpy function on mx.np arrays on the host, as MXNet 1.9.1's "fallback"
operators do: the arrays are copied to numpy, numpy computes, and array results come back as
mx.np arrays on the inputs' device (numpy's dtype kept: ``cov`` of float32 data is float64, as
in MXNet). There is no operator behind such a call, so autograd cannot record it; MXNet refuses
it while recording and so does mxc."""
import functools

import numpy as onp

from .._core import handle as _h
from .._core import modes as _modes
from ..context import current_context
from ..ndarray.ndarray import NDArray
from . import _core

__all__ = []


def _recording():
    return _modes._M.recording


def to_host(obj):
    """(obj with every mx array, also inside lists/tuples, as a numpy array; their device)."""
    if isinstance(obj, NDArray):
        return obj.asnumpy(), obj.context
    if isinstance(obj, (list, tuple)):
        ctx, items = None, []
        for v in obj:
            v, c = to_host(v)
            items.append(v)
            ctx = ctx or c
        return type(obj)(items) if not hasattr(obj, "_fields") else type(obj)(*items), ctx
    return obj, None


def from_host(obj, ctx, what):
    """numpy results as mx.np arrays on `ctx` (lists/tuples element-wise); scalars stay."""
    if isinstance(obj, onp.ndarray):
        if obj.dtype not in _h.DTYPE_CODE:
            raise TypeError(f"{what}: numpy's result has dtype {obj.dtype}, which mx.np arrays "
                            "cannot hold")
        return _h.from_numpy(_core.NP, onp.ascontiguousarray(obj), ctx, obj.dtype)
    if isinstance(obj, (list, tuple)):
        items = [from_host(v, ctx, what) for v in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    return obj


def call(func, args, kwargs, what):
    """func(*args, **kwargs) on host copies of the mx arrays among them."""
    if _recording():
        raise ValueError(f"Falling back to NumPy operator {what} with autograd active is not "
                         "supported. Please consider moving the operator to the outside of the "
                         "autograd scope.")
    hargs, ctx = to_host(tuple(args))
    hkw = {}
    for k, v in kwargs.items():
        hkw[k], c = to_host(v)
        ctx = ctx or c
    return from_host(func(*hargs, **hkw), ctx or current_context(), what)


def host_function(func, name):
    """mx.np.`name`: numpy's `func` run on the host (see the module's docstring)."""
    @functools.wraps(func)
    def run(*args, **kwargs):
        return call(func, args, kwargs, f"mx.np.{name}")
    run.__name__ = name.rpartition(".")[2]
    run.__qualname__ = run.__name__
    run.__module__ = "mxc.numpy"
    return run
