"""Devices, as in MXNet: ``mx.cpu(0)``, ``mx.gpu(1)``, ``mx.cpu_pinned()``, ``with ctx:``."""
import threading
import warnings

from .base import MXNetError

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus",
           "gpu_memory_info"]


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
        set_current_context(value)


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
        if self.device_typeid == 2:
            check_available(self)
            _device.release_all(2, self.device_id)
        else:
            _device.release_all(self.device_typeid)


class _NoDevice:
    """Stands in until mxc._core has loaded (it does so with mxc.ndarray, before any caller)."""

    def __getattr__(self, name):
        raise MXNetError(f"context: the device layer (mxc._core) is not loaded; {name} needs it")


# What Context needs of the storage pools and the CUDA driver: release_all, device_count,
# mem_info, ensure_device. mxc._core sits a layer above and installs them when it loads
# (install_device), so this module imports nothing of mxc but base.
_device = _NoDevice()


def install_device(device):
    """Called by mxc._core with an object holding release_all, device_count, mem_info and
    ensure_device."""
    global _device
    _device = device


def _stack():
    loc = Context._local
    if not hasattr(loc, "stack"):
        loc.stack = [Context("cpu", 0)]
    return loc.stack


def current_context():
    """The innermost ``with ctx:`` of this thread, ``cpu(0)`` by default."""
    return _stack()[-1]


def set_current_context(ctx):
    """Make ctx this thread's current context until the enclosing ``with`` scope ends (MXNet's
    thread-local default context: ``Context.default_ctx = ctx``, test_utils'
    ``set_default_context``); other threads keep theirs."""
    _stack()[-1] = Context(ctx)


def cpu(device_id=0):
    return Context("cpu", device_id)


def gpu(device_id=0):
    return Context("gpu", device_id)


def cpu_pinned(device_id=0):
    return Context("cpu_pinned", device_id)


def num_gpus():
    """Number of visible CUDA devices (through the CUDA driver, opened at run time); 0 when the
    driver or a device is missing."""
    return _device.device_count()


def gpu_memory_info(device_id=0):
    """(free, total) bytes of gpu(device_id), as MXNet's ``mx.context.gpu_memory_info``."""
    return _device.mem_info(int(device_id))


def check_available(ctx):
    """Raise a clear MXNetError for a GPU that does not exist (no driver, no device, an id past
    num_gpus()); initialise the device otherwise (and CUDA, for cpu_pinned, where it exists)."""
    if ctx.device_typeid == 2:
        _device.ensure_device(ctx.device_id)
    elif ctx.device_typeid == 3:
        # cpu_pinned: page-locked memory (cuMemHostAlloc) once CUDA is up; plain memory without
        if _device.device_count() > 0:
            _device.ensure_device(0)
