"""Straight-through estimators from MXNet 1.9.1's contrib: ``_contrib_round_ste`` and
``_contrib_sign_ste`` round (or take the sign of) their input in the forward pass and pass the
head gradient through unchanged in the backward pass (as if the forward were the identity),
the usual way to train through quantisation. Sparse inputs keep their storage (see
``mxc/ndarray/sparse_impls.py``)."""
from .registry import OpDef, register

for _name, _fn in (("round", "round"), ("sign", "sign")):
    register(OpDef(f"_contrib_{_name}_ste",
                   composite=lambda F, a, x, _fn=_fn: getattr(F, _fn)(x),
                   grad=lambda F, a, i, o, g: [F._copy(g[0])],
                   doc=f"{_fn}(x) forward; the gradient passes through unchanged."))
del _name, _fn
