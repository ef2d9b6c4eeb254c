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
