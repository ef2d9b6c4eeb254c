"""``mx.nd._internal``: the operators whose names start with an underscore (``_crop_assign``,
``_onehot_encode``, ``_copyto``...), as MXNet's generated ``mxnet.ndarray._internal``. The
functions are the same objects as ``mx.nd.<name>``."""
import sys as _sys

from ..ops import registry as _registry


def _populate():
    nd = _sys.modules["mxc.ndarray"]
    ns = globals()
    for name in _registry.names():
        if name.startswith("_") and hasattr(nd, name):
            ns[name] = getattr(nd, name)


_populate()
