"""A Symbol from a graph autograd recorded (``mx.autograd.get_symbol``, installed there: autograd
sits a layer below symbols)."""
from .. import autograd
from ..base import MXNetError
from ..ops import registry
from ..ops.params import attrs_to_strings
from .symbol import Symbol, _Node

__all__ = ["from_recorded"]


def from_recorded(x):
    """The recorded graph of `x` as a Symbol: recorded operators become operator nodes (a
    hybridized block's call one ``_CachedOp`` node unless it was inlined), marked variables and
    arrays outside the graph become variables ``var0``, ``var1``..."""
    if x._ag is None:
        raise MXNetError("autograd.get_symbol: the array is not in a recorded graph")
    nodes, variables, counters = {}, {}, {}

    def var_for(key):
        if key not in variables:
            variables[key] = _Node(None, f"var{len(variables)}")
        return variables[key]

    def entry(info, fallback_key):
        if info is None:
            return (var_for(fallback_key), 0, 0)
        if info.node is None:
            return (var_for(id(info)), 0, 0)
        return (build(info.node), info.index, 0)

    def build(tn):
        if id(tn) in nodes:
            return nodes[id(tn)]
        op = tn.op
        if not isinstance(op, registry.OpDef) and hasattr(op, "opdef"):
            op = op.opdef()     # a recorded CachedOp call: one _CachedOp node, as MXNet's
        if not isinstance(op, registry.OpDef):
            raise MXNetError(f"autograd.get_symbol: {getattr(op, 'name', op)} (a custom "
                             "Function) cannot be expressed as a symbol")
        hint = op.name.lower()
        k = counters.get(hint, 0)
        counters[hint] = k + 1
        # keys with a leading underscore are settings of the run (max Pooling's _keep_argmax),
        # no operator parameters
        attrs = {key: v for key, v in attrs_to_strings(tn.attrs or {}).items()
                 if not key.startswith("_")}
        n = _Node(op, f"{hint}{k}", attrs)
        nodes[id(tn)] = n
        n.inputs = [entry(info, (id(tn), i)) for i, info in enumerate(tn.in_info)]
        return n

    return Symbol([entry(x._ag, id(x))])


autograd.install_symbol_builder(from_recorded)
