"""MXNet's generated operator sub-namespaces (``mx.nd.linalg``, ``mx.nd.image``): the operators
registered as ``<prefix><name>`` offered as ``<name>``, the same function objects as
``mx.nd.<prefix><name>``."""
import sys

from ..ops import registry


def populate(namespace, prefix):
    """Fill the module dict `namespace` (and its ``__all__``) from mxc.ndarray."""
    nd = sys.modules["mxc.ndarray"]
    exported = namespace.setdefault("__all__", [])
    for name in registry.names():
        if name.startswith(prefix) and hasattr(nd, name):
            namespace[name[len(prefix):]] = getattr(nd, name)
            exported.append(name[len(prefix):])
