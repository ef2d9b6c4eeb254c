"""Errors and environment flags shared by every layer of mxc."""
import os


class MXNetError(RuntimeError):
    """The error mxc raises for failures inside operators, files and the engine.

    Named as in MXNet so ``except mx.base.MXNetError`` keeps working.
    """


class OperatorInputError(MXNetError, ValueError):
    """An operator refused its inputs (shapes, dtypes, parameters): MXNet raised MXNetError
    there, Python code expects ValueError; this is both."""


# An operator failing on an engine worker reports a message; MXNet's C++ names the Python type
# of such an error by a prefix ("IndexError: index 3 is out of bounds ...") and its Python
# front raises that type. mxc's kernels do the same, and a wait raises error_from(message).
_TYPED = {}
for _base in (IndexError, ValueError, TypeError, AttributeError, NotImplementedError):
    _TYPED[_base.__name__] = type(f"MXNet{_base.__name__}", (MXNetError, _base),
                                  {"__doc__": f"MXNetError that is also {_base.__name__}"})


def error_from(message):
    """The exception for an operator's error message: MXNetError, also of the builtin type
    that a "<Type>: " part of the message names ("gather_nd: IndexError: index 3 ...")."""
    for part in message.split(": "):
        cls = _TYPED.get(part)
        if cls is not None:
            return cls(message)
    return MXNetError(message)


def env_int(name, default):
    """Integer environment flag; a malformed value is a clear error, not a silent default."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"environment variable {name}={raw!r} is not an integer") from None


def env_str(name, default):
    raw = os.environ.get(name)
    return default if raw is None or raw.strip() == "" else raw.strip()


# ---- names MXNet code imports from mxnet.base ----------------------------------------------
import ctypes as _ctypes
import numbers as _numbers

import ml_dtypes as _ml_dtypes     # about 5 ms on top of numpy's import (import mxc: ~650 ms)
import numpy as _np

# bfloat16 arrays hold ml_dtypes' numpy dtype (MXNet's type flag 12). MXNet 1.9's Python names
# bfloat16 by a stand-in, a structured dtype of one uint16 field (mx.contrib.amp.bfloat16);
# np_dtype takes either.
bfloat16 = _np.dtype(_ml_dtypes.bfloat16)
MXNET_BFLOAT16 = _np.dtype([("bfloat16", _np.uint16)])


def np_dtype(dtype):
    """np.dtype(dtype), where MXNet's bfloat16 stand-in (and the name 'bfloat16') is bfloat16."""
    dt = _np.dtype(dtype)
    return bfloat16 if dt == MXNET_BFLOAT16 else dt


integer_types = (int, _np.integer)
numeric_types = (float, int, _np.generic)
string_types = (str,)
mx_real_t = _np.float32          # MXNet's default real type (tests import it)
py_str = lambda x: x.decode("utf-8") if isinstance(x, bytes) else str(x)  # noqa: E731
_Null = None


class _NotForKind(MXNetError):
    """A function called on a kind of array it does not take (MXNet's message layout)."""

    _tail = ""

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = function.__name__ if callable(function) else str(function)
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = f"Function {self.function}"
        if self.alias:
            msg += f" (namely operator \"{self.alias}\")"
        if self.args:
            msg += " with arguments (" + ", ".join(self.args) + ")"
        return msg + self._tail


class NotImplementedForSymbol(_NotForKind):
    """An NDArray-only function was called on a Symbol."""

    _tail = " is not implemented for Symbol and only available in NDArray."


def _as_list(obj):
    """A list holding obj, or obj itself when it is already a list or tuple."""
    if isinstance(obj, (list, tuple)):
        return obj
    return [obj]


def data_dir():
    """Where datasets and model files go (MXNET_HOME, else ~/.mxnet)."""
    return os.path.expanduser(os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet")))


def check_call(ret):
    """MXNet's C-API return check; mxc has no C API, so any nonzero value is an error."""
    if ret != 0:
        raise MXNetError(f"call failed with code {ret}")


def data_dir_default():
    """The default of data_dir() when MXNET_HOME is unset."""
    return os.path.join(os.path.expanduser("~"), ".mxnet")


class NotSupportedForSparseNDArray(_NotForKind):
    """A dense-only function was called on a sparse NDArray."""

    _tail = " is not supported for SparseNDArray and only available in NDArray."


error_types = {}


def register_error(func_name=None, cls=None):
    """Record an error class under a name (``error_types``), as MXNet's decorator does; usable
    as ``@register_error``, ``@register_error("Name")`` or ``register_error("Name", cls)``."""
    if callable(func_name):
        cls, func_name = func_name, func_name.__name__

    def register(klass):
        error_types[func_name if isinstance(func_name, str) else klass.__name__] = klass
        return klass
    return register if cls is None else register(cls)


# ---- MXNet's C-API names -------------------------------------------------------------------
# Client libraries import these from mxnet.base (GluonNLP: NDArrayHandle, py_str; plugins:
# _LIB, c_str, mx_uint). mxc has no C library: the ctypes types and helpers are real, the
# handles are plain void pointers, and _LIB refuses every call with an error naming it.
mx_int = _ctypes.c_int
mx_uint = _ctypes.c_uint
mx_int64 = _ctypes.c_int64
mx_float = _ctypes.c_float
mx_float_p = _ctypes.POINTER(mx_float)
NDArrayHandle = FunctionHandle = OpHandle = CachedOpHandle = _ctypes.c_void_p
SymbolHandle = ExecutorHandle = DataIterCreatorHandle = DataIterHandle = _ctypes.c_void_p
KVStoreHandle = RecordIOHandle = RtcHandle = CudaModuleHandle = _ctypes.c_void_p
CudaKernelHandle = ProfileHandle = DLPackHandle = _ctypes.c_void_p


def c_str(string):
    """A ctypes char pointer holding the UTF-8 bytes of string."""
    return _ctypes.c_char_p(string.encode("utf-8"))


def c_str_array(strings):
    """A ctypes array of char pointers, one per string (UTF-8)."""
    arr = (_ctypes.c_char_p * len(strings))()
    arr[:] = [s.encode("utf-8") for s in strings]
    return arr


def c_array(ctype, values):
    """A ctypes array of ctype holding values."""
    out = (ctype * len(values))()
    out[:] = values
    return out


def c_array_buf(ctype, buf):
    """A ctypes array of ctype viewing a buffer (no copy)."""
    return (ctype * len(buf)).from_buffer(buf)


def ctypes2buffer(cptr, length):
    """A bytearray copy of length bytes at a ctypes char pointer."""
    if not isinstance(cptr, _ctypes.POINTER(_ctypes.c_char)):
        raise TypeError("expected char pointer")
    res = bytearray(length)
    rptr = (_ctypes.c_char * length).from_buffer(res)
    if not _ctypes.memmove(rptr, cptr, length):
        raise RuntimeError("memmove failed")
    return res


def ctypes2numpy_shared(cptr, shape):
    """A float32 numpy array sharing the memory a ctypes float pointer points to."""
    if not isinstance(cptr, _ctypes.POINTER(mx_float)):
        raise RuntimeError("expected float pointer")
    size = 1
    for s in shape:
        size *= s
    dbuffer = (mx_float * size).from_address(_ctypes.addressof(cptr.contents))
    return _np.frombuffer(dbuffer, dtype=_np.float32).reshape(shape)


class _NoCLibrary:
    """Stands where MXNet has its loaded libmxnet (``_LIB``): any function looked up on it is
    an MXNetError naming the function, since mxc implements MXNet's API in Python, not its C
    ABI."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise MXNetError(f"mxc has no C library: MXNet's C API function {name} is not "
                         "available (use the Python API it backs)")

    def __repr__(self):
        return "<mxc: no C library>"


_LIB = _NoCLibrary()


def c_handle_array(objs):
    """A ctypes array of the objects' handles. mxc's objects have none: an MXNetError."""
    raise MXNetError("mxc objects have no C handles (c_handle_array needs MXNet's C API)")


del _numbers
