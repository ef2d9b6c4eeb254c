"""``mx.contrib``: MXNet 1.x's experimental namespaces: ``nd``/``ndarray`` and ``sym``/``symbol``
(the ``_contrib_`` operators), ``amp`` (mixed precision), ``horovod`` (the horovod.mxnet-style
facade over MPI). amp and horovod load on first use: amp wraps operator lists (40 ms) and horovod
needs mpi4py."""
import importlib as _importlib

from ..ndarray import contrib as ndarray  # noqa: F401
from ..ndarray import contrib as nd  # noqa: F401
from ..symbol import contrib as symbol  # noqa: F401
from ..symbol import contrib as sym  # noqa: F401

_LAZY = ("amp", "horovod")


def __getattr__(name):
    if name in _LAZY:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'mxc.contrib' has no attribute {name!r}")
