"""``mx.sym.sparse``: the operators MXNet 1.9.1 registers for sparse storage, by their short
names (``mx.sym.sparse.dot``, ``retain``, ``cast_storage``, ``elemwise_add``, ...).

Each function builds the same node as the plain ``mx.sym`` function of the operator it names
(``mx.sym.sparse.retain`` makes a ``_sparse_retain`` node, ``mx.sym.sparse.dot`` a ``dot``
node); automatic node names use the short name (``retain0``, ``dot0``) as MXNet's do. Storage
types are decided when the graph runs: an executor bound with sparse arrays runs its nodes
through the imperative dispatch, which uses the sparse implementation of an operator or the
storage fallback (see ``mxc/executor/sparse_bind.py``).
"""
from ..ndarray.sparse import OP_NAMES as _NAMES, op_name as _op_name
from ..ops import registry as _registry
from . import register as _register

__all__ = []


def _populate():
    ns = globals()
    for short in _NAMES:
        name = _op_name(short)
        if name is None:
            continue
        fn = _register.make_function(_registry.get(name), short)
        fn.__module__ = __name__
        ns[short] = fn
        __all__.append(short)


_populate()
del _populate
