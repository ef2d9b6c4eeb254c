"""``mxnet.util``: the numpy-semantics switches used by ``mx.np`` / ``mx.npx`` and Gluon.

Two per-thread flags, as in MXNet 1.9.1:

* numpy *shape* semantics (``is_np_shape``): ``()`` is the shape of a scalar tensor and
  zero-size shapes such as ``(0, 3)`` are real shapes (in legacy mode a 0 is "unknown").
  ``.params`` files written with it on are the V3 variant (``mx.npx.save``).
* numpy *array* semantics (``is_np_array``): Gluon creates and returns ``mx.np.ndarray``
  instead of ``mx.nd.NDArray``. It needs shape semantics: turning shape semantics off while
  array semantics is on raises ValueError.

A new thread starts with both off. ``use_np`` / ``use_np_shape`` / ``use_np_array`` decorate a
function (the call runs with the semantics on) or a class: then every method, property,
static and class method the class has (its own and inherited, ``__init__`` and ``__call__``
included) runs with them on, which is how a Gluon Block class is made to work on np arrays.
"""
import functools
import inspect
import logging
import os
import threading
from .context import num_gpus
from .base import MXNetError

__all__ = ["is_np_array", "is_np_shape", "set_np_shape", "np_shape", "use_np_shape",
           "np_array", "use_np_array", "set_np", "reset_np", "use_np", "getenv", "setenv",
           "is_np_default_dtype", "set_module", "wrap_np_unary_func", "wrap_np_binary_func",
           "np_ufunc_legal_option", "get_gpu_count", "get_gpu_memory",
           "get_cuda_compute_capability"]


class _State(threading.local):
    np_shape = False
    np_array = False
    np_dtype = False


_S = _State()
_logged = {"shape": False, "array": False}


def is_np_shape():
    """Whether numpy shape semantics is on in this thread."""
    return _S.np_shape


def is_np_array():
    """Whether numpy array semantics is on in this thread (Gluon makes mx.np.ndarray)."""
    return _S.np_array


def is_np_default_dtype():
    """Whether numpy's default dtype (float64) is on (``set_np(dtype=True)``)."""
    return _S.np_dtype


def _log_once(kind, text):
    if not _logged[kind]:
        _logged[kind] = True
        logging.info(text)


def set_np_shape(active):
    """Turn numpy shape semantics on or off in this thread; returns the previous state.

    Raises ValueError when turning it off while numpy array semantics is on (that needs
    shape semantics; ``reset_np()`` turns both off)."""
    active = bool(active)
    if active:
        _log_once("shape", "NumPy-shape semantics has been activated in your code: () is the "
                           "shape of a scalar tensor and shapes with 0 are zero-size tensors.")
    elif _S.np_array:
        raise ValueError("Deactivating NumPy shape semantics while NumPy array semantics is "
                         "still active is not allowed. Please consider calling "
                         "`npx.reset_np()` to deactivate both of them.")
    prev, _S.np_shape = _S.np_shape, active
    return prev


def _set_np_array(active):
    active = bool(active)
    if active:
        if not _S.np_shape:
            raise ValueError("NumPy Shape semantics is required in using NumPy array "
                             "semantics: turn on numpy shape semantics first "
                             "(npx.set_np() turns on both).")
        _log_once("array", "NumPy array semantics has been activated in your code: Gluon "
                           "creates and returns mxnet.numpy.ndarray.")
    prev, _S.np_array = _S.np_array, active
    return prev


class _NumpyShapeScope:
    """``with np_shape(active):`` (enter/exit restore the previous state, nestable). Named as
    MXNet names it (client code imports mxnet.util._NumpyShapeScope)."""

    def __init__(self, active):
        self._active = None if active is None else bool(active)
        self._prev = None

    def __enter__(self):
        if self._active is not None:
            self._prev = set_np_shape(self._active)
        return self

    def __exit__(self, *exc):
        if self._active is not None and self._prev != self._active:
            set_np_shape(self._prev)


class _NumpyArrayScope:
    """``with np_array(active):``. Unlike the shape flag, array semantics may be turned on in a
    scope where shape semantics is off (MXNet allows it: only Gluon's array type changes).
    Named as MXNet names it; ``_is_np_array`` is the state it sets, as there."""

    def __init__(self, is_np_array):
        self._is_np_array = bool(is_np_array)
        self._prev = None

    def __enter__(self):
        self._prev, _S.np_array = _S.np_array, self._is_np_array
        return self

    def __exit__(self, *exc):
        _S.np_array = self._prev


def np_shape(active=True):
    """A ``with`` scope with numpy shape semantics on (or off with ``active=False``)."""
    return _NumpyShapeScope(active)


def np_array(active=True):
    """A ``with`` scope with numpy array semantics on (or off with ``active=False``)."""
    return _NumpyArrayScope(active)


# ---- decorators ------------------------------------------------------------------------------
_SKIP = frozenset(["__new__", "__init_subclass__", "__class_getitem__", "__getattribute__",
                   "__del__", "__subclasshook__", "__getstate__", "__reduce__",
                   "__reduce_ex__", "__dict__", "__weakref__", "__module__", "__doc__",
                   "__qualname__", "__slots__"])


def _scoped_function(func, scope):
    @functools.wraps(func)
    def scoped(*args, **kwargs):
        with scope():
            return func(*args, **kwargs)
    return scoped


def _decorate_class(cls, scope):
    """Wrap, on `cls` itself, every function-like attribute reachable through its MRO (the
    nearest definition of each name), keeping staticmethod/classmethod/property kinds."""
    seen = set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        for name, attr in list(vars(klass).items()):
            if name in seen:
                continue
            seen.add(name)
            if name in _SKIP:
                continue
            if isinstance(attr, staticmethod):
                new = staticmethod(_scoped_function(attr.__func__, scope))
            elif isinstance(attr, classmethod):
                new = classmethod(_scoped_function(attr.__func__, scope))
            elif isinstance(attr, property):
                new = property(None if attr.fget is None else _scoped_function(attr.fget, scope),
                               None if attr.fset is None else _scoped_function(attr.fset, scope),
                               None if attr.fdel is None else _scoped_function(attr.fdel, scope),
                               attr.__doc__)
            elif inspect.isfunction(attr):
                new = _scoped_function(attr, scope)
            else:
                continue
            setattr(cls, name, new)
    return cls


def _decorator(scope, what):
    def use(func):
        if inspect.isclass(func):
            return _decorate_class(func, scope)
        if callable(func):
            return _scoped_function(func, scope)
        raise TypeError(f"{what} can only decorate classes and callable objects, while "
                        f"received a {type(func)}")
    return use


use_np_shape = _decorator(np_shape, "use_np_shape")
use_np_shape.__doc__ = ("Decorate a function or class so that it runs with numpy shape "
                        "semantics on.")
use_np_array = _decorator(np_array, "use_np_array")
use_np_array.__doc__ = ("Decorate a function or class (a Gluon Block) so that it runs with "
                        "numpy array semantics on.")


class _BothScope:
    def __init__(self):
        self._shape, self._array = _NumpyShapeScope(True), _NumpyArrayScope(True)

    def __enter__(self):
        self._shape.__enter__()
        self._array.__enter__()
        return self

    def __exit__(self, *exc):
        self._array.__exit__(*exc)
        self._shape.__exit__(*exc)


def use_np(func):
    """Decorate a function or class so that it runs with numpy shape and array semantics on
    (``use_np_shape(use_np_array(func))``, with a single wrapper per method)."""
    return _decorator(_BothScope, "use_np")(func)


def set_np(shape=True, array=True, dtype=False):
    """Turn numpy shape and array semantics on (or off) in this thread.

    ``array=True`` needs ``shape=True`` (ValueError otherwise). ``dtype=True`` (MXNet 2.x's
    float64 default) is recorded in ``is_np_default_dtype()``."""
    if array and not shape:
        raise ValueError("NumPy Shape semantics is required in using NumPy array semantics.")
    if not shape:
        _S.np_array = False          # array off first, so that shape may go off
        set_np_shape(False)
    else:
        set_np_shape(True)
        _set_np_array(array)
    _S.np_dtype = bool(dtype)


def reset_np():
    """Turn numpy shape and array semantics off in this thread."""
    set_np(shape=False, array=False)


def set_module(module):
    """Decorator setting a function's or class's ``__module__`` (``None`` leaves it)."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


# ---- numpy ufunc keyword checks (used by mx.np's ufuncs) -------------------------------------
_NP_UFUNC_DEFAULTS = {"where": True, "casting": "same_kind", "order": "K", "dtype": None,
                      "subok": True}
_NP_UFUNC_LEGAL = {"where": (True,),
                   "casting": ("no", "equiv", "safe", "same_kind", "unsafe"),
                   "order": ("C", "F", "A", "K"),
                   "subok": (True,)}


def np_ufunc_legal_option(key, value):
    """Whether `value` is a value numpy accepts for ufunc keyword `key`."""
    if key == "dtype":
        import numpy as _onp
        try:
            _onp.dtype(value)
            return True
        except TypeError:
            return False
    legal = _NP_UFUNC_LEGAL.get(key)
    return legal is not None and value in legal


def _check_ufunc_kwargs(name, kwargs):
    for key, value in kwargs.items():
        if key not in _NP_UFUNC_DEFAULTS:
            raise TypeError(f"{key} is an invalid keyword to function '{name}'")
        if value != _NP_UFUNC_DEFAULTS[key]:
            if np_ufunc_legal_option(key, value):
                raise NotImplementedError(f"{key}={value} is not implemented yet for operator "
                                          f"{name}")
            raise TypeError(f"{key}={value} not understood for operator {name}")


def wrap_np_unary_func(func):
    """Accept numpy's ufunc keywords on a unary function: defaults pass, other legal values
    raise NotImplementedError, anything else TypeError."""
    @functools.wraps(func)
    def wrapped(x, out=None, **kwargs):
        _check_ufunc_kwargs(func.__name__, kwargs)
        return func(x, out=out)
    return wrapped


def wrap_np_binary_func(func):
    """As wrap_np_unary_func for binary functions."""
    @functools.wraps(func)
    def wrapped(x1, x2, out=None, **kwargs):
        _check_ufunc_kwargs(func.__name__, kwargs)
        return func(x1, x2, out=out)
    return wrapped


# ---- devices and environment -----------------------------------------------------------------
def get_gpu_count():
    """Number of GPUs mxc can use (mxc runs on CPU: 0)."""
    return num_gpus()


def get_gpu_memory(gpu_dev_id):
    raise MXNetError(f"get_gpu_memory: gpu({gpu_dev_id}) is not available (mxc runs on CPU)")


def get_cuda_compute_capability(ctx):
    if getattr(ctx, "device_type", None) != "gpu":
        raise ValueError("Expecting a gpu context to get cuda compute capability, while "
                         f"received ctx {ctx}")
    raise MXNetError(f"get_cuda_compute_capability: {ctx} is not available (mxc runs on CPU)")


def getenv(name):
    """The value of environment variable `name` (None if unset)."""
    return os.environ.get(name)


def setenv(name, value):
    """Set environment variable `name` (``None`` unsets it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
