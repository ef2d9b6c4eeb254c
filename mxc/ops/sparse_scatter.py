"""MXNet 1.9.1's scatter operators: ``_scatter_elemwise_div``, ``_scatter_plus_scalar`` and
``_scatter_minus_scalar`` (in ``mx.nd._internal`` / ``mx.sym._internal``).

On dense arrays they are lhs / rhs, data + scalar and data - scalar. Their point is sparse
storage: with a row_sparse (or, for the scalar ones, CSR) left operand the result keeps that
operand's stored rows (or entries) and computes only there, so the zeros it does not store stay
unstored (not ``0 + scalar``); see ``mxc/ndarray/sparse_impls.py``. Gradients are those of the
dense operations.
"""
from .params import Param
from .registry import OpDef, register

register(OpDef("_scatter_elemwise_div", inputs=("lhs", "rhs"),
               composite=lambda F, a, lhs, rhs: F.elemwise_div(lhs, rhs),
               grad=lambda F, a, i, o, g: [g[0] / i[1], -g[0] * o[0] / i[1]],
               doc="lhs / rhs, computed only where a sparse lhs stores values."))

_SCALAR = (Param("scalar", float, 1.0), Param("is_int", bool, True))
register(OpDef("_scatter_plus_scalar", params=_SCALAR,
               composite=lambda F, a, x: F._plus_scalar(x, scalar=a["scalar"]),
               grad=lambda F, a, i, o, g: [F._copy(g[0])],
               doc="data + scalar, computed only where a sparse data stores values."))
register(OpDef("_scatter_minus_scalar", params=_SCALAR,
               composite=lambda F, a, x: F._minus_scalar(x, scalar=a["scalar"]),
               grad=lambda F, a, i, o, g: [F._copy(g[0])],
               doc="data - scalar, computed only where a sparse data stores values."))
