"""Partial shapes as the symbol front's shape inference holds them: None for an unknown shape,
0 for an unknown dimension. Shared by the operators' ``infer_back`` rules."""


def complete(s):
    return s is not None and 0 not in s


def fill_unknown(partial, full):
    """`partial` completed from the known shape `full` where they agree on rank and on every
    known dimension; None when nothing can be learnt."""
    if full is None or not complete(full):
        return None
    if partial is None:
        return tuple(full)
    if len(partial) != len(full) or any(p not in (0, f) for p, f in zip(partial, full)):
        return None
    return tuple(full)


# two sizes an unknown dimension stands in as while an operator's full ``infer`` runs: an output
# dimension that differs between the two runs depends on an unknown one and stays unknown (0)
_PROBE_SIZES = (4099, 8209)


def probe_partial(infer):
    """An ``infer_partial`` rule from an operator's full ``infer``: outputs with unknown (0)
    dimensions where they depend on unknown input dimensions, the rest computed as MXNet's
    shape functions compute them (FullyConnected of (0, 20) is (0, num_hidden)). Unknown
    dimensions that would have to equal a known one (a matrix product's inner size) teach
    nothing: the rule then fails and the outputs stay unknown."""
    def rule(attrs, in_shapes):
        runs = []
        for size in _PROBE_SIZES:
            filled = [tuple(size if x == 0 else x for x in s) for s in in_shapes]
            shapes, _ = infer(attrs, filled, ["float32"] * len(filled))
            runs.append([tuple(s) for s in shapes])
        return [tuple(x if x == y else 0 for x, y in zip(a, b)) if len(a) == len(b) else None
                for a, b in zip(*runs)]
    return rule
