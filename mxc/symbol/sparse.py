"""``mx.sym.sparse``: the operators MXNet 1.9.1 registers for sparse storage, by their short
names (``mx.sym.sparse.dot``, ``retain``, ``cast_storage``, ``elemwise_add``, ...).

Each function builds the same node as the plain ``mx.sym`` function of the operator it names
(``mx.sym.sparse.retain`` makes a ``_sparse_retain`` node, ``mx.sym.sparse.dot`` a ``dot``
node); automatic node names use the short name (``retain0``, ``dot0``) as MXNet's do. Storage
types are decided when the graph runs: an executor bound with sparse arrays runs its nodes
through the imperative dispatch, which uses the sparse implementation of an operator or the
storage fallback (see ``mxc/executor/sparse_bind.py``).
"""
from ..ops import registry as _registry
from . import register as _register

# the short names MXNet 1.9.1's mx.sym.sparse has (operators registered with a "_sparse_"
# alias); those the registry lacks are left out
_NAMES = (
    "ElementWiseSum", "Embedding", "FullyConnected", "LinearRegressionOutput",
    "LogisticRegressionOutput", "MAERegressionOutput", "_contrib_round_ste", "_contrib_sign_ste",
    "abs", "adagrad_update", "adam_update", "add_n", "arccos", "arccosh", "arcsin", "arcsinh",
    "arctan", "arctanh", "broadcast_add", "broadcast_div", "broadcast_minus", "broadcast_mul",
    "broadcast_plus", "broadcast_sub", "cast_storage", "cbrt", "ceil", "clip", "concat", "cos",
    "cosh", "degrees", "dot", "elemwise_add", "elemwise_div", "elemwise_mul", "elemwise_sub",
    "exp", "expm1", "fix", "floor", "ftrl_update", "gamma", "gammaln", "log", "log10", "log1p",
    "log2", "make_loss", "mean", "negative", "norm", "radians", "relu", "retain", "rint", "round",
    "rsqrt", "sgd_mom_update", "sgd_update", "sigmoid", "sign", "sin", "sinh", "slice", "sqrt",
    "square", "stop_gradient", "sum", "tan", "tanh", "trunc", "where", "zeros_like",
)

__all__ = []


def _populate():
    known = _registry.names()
    ns = globals()
    for short in _NAMES:
        # the "_sparse_" operator where the registry has one (retain, the sparse optimizer
        # updates), else the operator of that name
        op = known.get("_sparse_" + short) or known.get(short)
        if op is None:
            continue
        fn = _register.make_function(op, short)
        fn.__module__ = __name__
        ns[short] = fn
        __all__.append(short)


_populate()
del _populate
