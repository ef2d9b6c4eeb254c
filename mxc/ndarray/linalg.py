"""``mx.nd.linalg``: the ``_linalg_<name>`` operators as ``<name>`` (``mx.nd.linalg.gemm2``), as
MXNet's generated linalg namespace. The functions are the same objects as ``mx.nd._linalg_<name>``."""
import sys as _sys

from ..ops import registry as _registry

__all__ = []


def _populate():
    nd = _sys.modules["mxc.ndarray"]
    ns = globals()
    prefix = "_linalg_"
    for name in _registry.names():
        if name.startswith(prefix) and hasattr(nd, name):
            ns[name[len(prefix):]] = getattr(nd, name)
            __all__.append(name[len(prefix):])


_populate()
