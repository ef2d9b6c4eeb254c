"""NDArray methods that forward to ``mx.nd`` operators (``x.exp()``, ``x.sum(axis=1)``)."""

from .. import ndarray as nd
from ..ops.registry import METHODS as _METHODS


def _method(name):
    def method(self, *args, **kwargs):
        return getattr(nd, name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Same as ``mx.nd.{name}(self, ...)``."
    return method


def attach(cls):
    for name in _METHODS:
        if name not in cls.__dict__:
            setattr(cls, name, _method(name))
