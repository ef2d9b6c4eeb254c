"""Devices, as in MXNet: ``mx.cpu(0)``, ``mx.gpu(1)``, ``mx.cpu_pinned()``, ``with ctx:``."""
import threading
import warnings

from .base import MXNetError

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus"]


class _ContextMeta(type):
    """``Context.default_ctx``: MXNet 1.x's deprecated class-level property (get and set)."""

    @property
    def default_ctx(cls):
        warnings.warn("Context.default_ctx has been deprecated. Please use "
                      "Context.current_context() instead.", DeprecationWarning, stacklevel=2)
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, value):
        warnings.warn("Context.default_ctx has been deprecated. Please use "
                      "Context.current_context() instead.", DeprecationWarning, stacklevel=2)
        _stack()[-1] = Context(value)


class Context(metaclass=_ContextMeta):
    """A device and its id. ``devtype2str``/``devstr2type`` use MXNet's codes (cpu 1, gpu 2,
    cpu_pinned 3), which the .params format and the storage allocator share."""

    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}
    _local = threading.local()
    __slots__ = ("device_typeid", "device_id", "_old")

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            self.device_typeid, self.device_id = device_type.device_typeid, device_type.device_id
        else:
            if device_type not in self.devstr2type:
                raise ValueError(f"unknown device type {device_type!r}; expected one of "
                                 f"{sorted(self.devstr2type)}")
            self.device_typeid = self.devstr2type[device_type]
            self.device_id = int(device_id)
        self._old = None

    @property
    def device_type(self):
        return self.devtype2str[self.device_typeid]

    def __hash__(self):
        return hash((self.device_typeid, self.device_id))

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_typeid == other.device_typeid
                and self.device_id == other.device_id)

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self):
        stack = _stack()
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()

    def empty_cache(self):
        """Return this device's pooled memory to the system (MXNet: GPU only; here every pool)."""
        from ._core import storage
        storage.release_all(self.device_typeid)


def _stack():
    loc = Context._local
    if not hasattr(loc, "stack"):
        loc.stack = [Context("cpu", 0)]
    return loc.stack


def current_context():
    """The innermost ``with ctx:`` of this thread, ``cpu(0)`` by default."""
    return _stack()[-1]


def cpu(device_id=0):
    return Context("cpu", device_id)


def gpu(device_id=0):
    return Context("gpu", device_id)


def cpu_pinned(device_id=0):
    return Context("cpu_pinned", device_id)


def num_gpus():
    """Number of visible CUDA devices; 0 when CuPy or a device is missing."""
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def check_available(ctx):
    """Raise a clear error for devices whose backend this build cannot run yet."""
    if ctx.device_typeid == 2:
        raise MXNetError(
            f"{ctx}: arrays on GPU need mxc's CUDA backend, which is not part of this release yet "
            f"(num_gpus()={num_gpus()}); use mx.cpu()")
