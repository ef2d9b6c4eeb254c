"""``mxnet.util``: the numpy-semantics switches (their front end, mx.np, is a later part of mxc)."""
import functools
import threading

__all__ = ["is_np_array", "is_np_shape", "set_np_shape", "np_shape", "use_np_shape",
           "np_array", "use_np_array", "set_np", "reset_np", "use_np", "getenv", "setenv"]


class _State(threading.local):
    np_shape = False
    np_array = False


_S = _State()


def is_np_shape():
    return _S.np_shape


def is_np_array():
    return _S.np_array


def set_np_shape(active):
    """Turn numpy shape semantics (zero-dim and zero-size shapes) on or off; returns the old value."""
    prev, _S.np_shape = _S.np_shape, bool(active)
    return prev


class _Scope:
    def __init__(self, attr, active):
        self._attr, self._active, self._prev = attr, active, None

    def __enter__(self):
        self._prev = getattr(_S, self._attr)
        setattr(_S, self._attr, self._active)
        return self

    def __exit__(self, *exc):
        setattr(_S, self._attr, self._prev)


def np_shape(active=True):
    return _Scope("np_shape", active)


def np_array(active=True):
    return _Scope("np_array", active)


def _decorator(attr):
    def use(func):
        if isinstance(func, type):
            return func

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _Scope(attr, True):
                return func(*args, **kwargs)
        return wrapper
    return use


use_np_shape = _decorator("np_shape")
use_np_array = _decorator("np_array")


def use_np(func):
    return use_np_shape(use_np_array(func))


def set_np(shape=True, array=True):
    if array and not shape:
        raise ValueError("set_np: numpy array semantics need numpy shape semantics")
    _S.np_shape = bool(shape)
    _S.np_array = bool(array)


def reset_np():
    set_np(shape=False, array=False)


def getenv(name):
    import os
    return os.environ.get(name)


def setenv(name, value):
    import os
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
