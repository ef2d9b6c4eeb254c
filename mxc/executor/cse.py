"""Common subexpression elimination over a symbol's graph (MXNET_ELIMINATE_COMMON_EXPR).

Two operator nodes compute the same thing when they run the same operator with the same
attribute strings on the same input entries; the later one is dropped and its readers read the
earlier one. Working in topological order with inputs already rewritten merges whole repeated
subgraphs in one pass (``((a+b)+c)`` twice), which is the fixed point MXNet's iterated pairwise
pass reaches. Never merged, as in MXNet: variables, nodes without inputs (creation operators),
operators that mutate inputs (BatchNorm's moving statistics), that draw random numbers
(Dropout, samplers) or run Python or carry state (Custom, RNN). Graph outputs that end up on
one entry are separated again by ``_copy`` nodes named ``<node>_<k>_copy``, so every output of
the executor is its own array.

The user's symbol is left alone: merged graphs are built from fresh node objects.
"""
import os

from ..ops import registry
from ..symbol.symbol import Symbol, _Node, _topo

__all__ = ["enabled", "eliminate_common_expr"]

# operators MXNet runs with per-node state (FCreateOpState): never merged
_STATEFUL = frozenset(("Custom", "RNN", "_CachedOp"))


def enabled():
    return os.environ.get("MXNET_ELIMINATE_COMMON_EXPR", "1").strip().lower() \
        not in ("0", "false")


def _mergeable(node):
    op = node.op
    if op is None or not node.inputs or node.subgraphs:
        return False
    if op.mutate or op.name in _STATEFUL or op.open_params:
        return False
    return all(r == "temp_space" for r in op.resources)


def eliminate_common_expr(sym):
    """`sym` with repeated computations merged; `sym` itself when nothing merges."""
    nodes = _topo(sym._outputs)
    canon = {}          # id(node) -> node that replaces it (merged or rewritten copy)
    seen = {}           # merge key -> node
    changed = False
    for n in nodes:
        if n.op is None:
            canon[id(n)] = n
            continue
        inputs = [(canon[id(e[0])],) + tuple(e[1:]) for e in n.inputs]
        if any(a[0] is not e[0] for a, e in zip(inputs, n.inputs)):
            m = _Node(n.op, n.name, dict(n.attrs), inputs, n.subgraphs)
            m.version = n.version
            m._parsed = n._parsed
        else:
            m = n
        if _mergeable(m):
            key = (m.op.name, tuple(sorted(m.attrs.items())),
                   tuple((id(e[0]), e[1]) for e in m.inputs))
            first = seen.get(key)
            if first is not None:
                canon[id(n)] = first
                changed = True
                continue
            seen[key] = m
        canon[id(n)] = m
    if not changed:
        return sym
    outputs, copies, taken = [], {}, set()
    copy_op = registry.get("_copy")
    for e in sym._outputs:
        src = canon[id(e[0])]
        entry = (src,) + tuple(e[1:])
        key = (id(src), e[1])
        if key in taken:
            k = copies.get(key, 0)
            copies[key] = k + 1
            entry = (_Node(copy_op, f"{src.name}_{k}_copy", {}, [entry]), 0, 0)
        taken.add(key)
        outputs.append(entry)
    return Symbol(outputs)
