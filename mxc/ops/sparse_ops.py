"""The sparse-only operators, with MXNet 1.9.1's storage-type rules: ``cast_storage`` (any
storage to any other), ``_sparse_retain`` (the rows of a row_sparse array listed in an index
array) and ``_contrib_getnnz`` (stored values of a csr array, in all / per row / per column);
and ``push_sparse_kernel``, which the sparse implementations of other operators
(mxc/ndarray/sparse_impls.py, working on the CSR/row_sparse classes) use to push a kernel.
Kernels: csrc/kernels/sparse_ops.h (mxc/ops/cpu/sparse_ops.pyx).
"""

from . import services
from ..base import OperatorInputError
from .params import Param
from .registry import OpDef, register, kernel_forward, kernel, declared_kernel

_STYPES = ("default", "row_sparse", "csr")
_FORWARDS = {}      # (kernel, op name) -> registry forward


# the kernels' slots (csrc/kernels/sparse_ops.h): the products have none; each lazy update has
# the float slots of its dense optimizer kernel (ops/optimizer_ops.py declares them)
for _k in ("sp:csr_dns", "sp:csrT_dns"):
    kernel("sparse_ops", _k, ints=(), floats=())
_LAZY = {"sp:lazy_sgd": "sgd", "sp:lazy_msgd": "msgd", "sp:lazy_adam": "adam",
         "sp:lazy_ftrl": "ftrl", "sp:lazy_adagrad": "adagrad"}
for _k, _dense in _LAZY.items():
    kernel("sparse_ops", _k, ints=(), floats=declared_kernel("optimizer_ops", "opt:" + _dense).floats)


def push_sparse_kernel(kname, inputs, outputs, slots=None, name=None):
    """Push sparse kernel `kname` (keyed by the output's dtype) with its slots' values."""
    fwd = _FORWARDS.get((kname, name))
    if fwd is None:
        fwd = _FORWARDS[kname, name] = kernel_forward(
            "sparse_ops", kname, name=name or kname, key=lambda a, i, o: o[0]._dcode)
    fwd(slots or {}, list(inputs), list(outputs))


# ---- OpDefs ------------------------------------------------------------------------------------
def _cast_storage(F, attrs, data):
    stype = attrs["stype"]
    if F is services.ndarray:
        return services.sparse.cast_storage(data, stype)
    raise ValueError("cast_storage: only mx.nd supports sparse storage in mxc")


def _cast_storage_grad(F, attrs, inputs, outputs, out_grads):
    return [out_grads[0]]


register(OpDef("cast_storage", inputs=("data",),
               params=(Param("stype", str, required=True, choices=_STYPES),),
               composite=_cast_storage, grad=_cast_storage_grad,
               doc="The array in storage type stype ('default', 'row_sparse' or 'csr')."))


def _retain_infer(attrs, shapes, dtypes):
    # shapes are storage-blind (a graph's shape inference sees the variables' shapes only);
    # the storage is checked when it runs: only the sparse implementation takes it
    if len(shapes[1]) != 1:
        raise ValueError(f"_sparse_retain: indices must be 1-D, got shape {tuple(shapes[1])}")
    return [tuple(shapes[0])], [dtypes[0]]


def _retain_forward(attrs, inputs, outputs):
    raise OperatorInputError("_sparse_retain: data must be a row_sparse array (got dense "
                             "storage)")


def _retain_grad(F, attrs, inputs, outputs, out_grads):
    data, idx = inputs
    g = out_grads[0]
    if getattr(g, "stype", "row_sparse") == "default":
        # a dense head gradient (a dense consumer downstream): its retained rows, as MXNet's
        # _backward_sparse_retain
        g = F.cast_storage(g, stype="row_sparse")
    return [F._sparse_retain(g, idx), None]


register(OpDef("_sparse_retain", aliases=("sparse_retain",), inputs=("data", "indices"),
               infer=_retain_infer, forward=_retain_forward, grad=_retain_grad,
               doc="The rows of a row_sparse array whose indices are listed in `indices`; "
                   "other rows are dropped."))


def _getnnz_infer(attrs, shapes, dtypes):
    raise ValueError("_contrib_getnnz: data must be a csr array (got dense storage)")


register(OpDef("_contrib_getnnz", inputs=("data",), differentiable=False,
               params=(Param("axis", int, None, optional=True),),
               infer=_getnnz_infer, forward=_retain_forward,
               doc="The number of stored values of a csr array: in all (axis=None), per column "
                   "(axis=0) or per row (axis=1); int64."))
