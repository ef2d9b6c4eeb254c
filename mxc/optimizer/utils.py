"""Helpers several optimizers share."""
import warnings

import numpy

from .. import ndarray as _nd
from ..ops import registry
from ..ndarray import NDArray, array


def _flatten_list(nested_list):
    return [item for sublist in nested_list for item in sublist]


def _lazy_rows_update(opname, weight, grad, states, **kwargs):
    """MXNet's lazy update for a row_sparse gradient on a dense weight: only the rows the
    gradient holds are touched (weight decay and momentum included). Runs the dense fused
    operator on those rows and writes them back. Returns False where it does not apply."""
    if getattr(grad, "stype", "default") != "row_sparse" \
            or weight.stype not in ("default", "row_sparse"):
        return False
    # the sparse kernels update the gradient's rows in place (mxc/ndarray/sparse_impls.py);
    # the host path below only runs for combinations they decline
    impl = _nd.sparse.IMPLS.get(opname)
    if impl is not None:
        op = registry.names()[opname]
        kw = dict(kwargs)
        if any(p.name == "lazy_update" for p in op.params):
            kw["lazy_update"] = True
        if impl(op, op.parse(kw), [weight, grad] + list(states), weight) is not NotImplemented:
            return True
    idx = grad.indices.asnumpy().astype(numpy.int64)
    if idx.size == 0:
        return True
    w_np = (weight.tostype("default") if weight.stype != "default" else weight).asnumpy()
    w_rows = array(w_np[idx], ctx=weight.context, dtype=weight.dtype)
    s_nps, s_rows = [], []
    for s in states:
        s_np = (s.tostype("default") if s.stype != "default" else s).asnumpy()
        s_nps.append(s_np)
        s_rows.append(array(s_np[idx], ctx=s.context, dtype=s.dtype))
    g_rows = grad.data
    if g_rows.dtype != weight.dtype:
        g_rows = g_rows.astype(weight.dtype)
    kwargs.pop("lazy_update", None)
    getattr(_nd, opname)(w_rows, g_rows, *s_rows, out=w_rows, **kwargs)
    w_np[idx] = w_rows.asnumpy()
    weight[:] = w_np
    for s, s_np, rows in zip(states, s_nps, s_rows):
        s_np[idx] = rows.asnumpy()
        s[:] = array(s_np, ctx=s.context, dtype=s.dtype)
    return True


def _check_nd(weight, grad):
    if not isinstance(weight, NDArray):
        raise AssertionError(f"weight must be an NDArray, got {type(weight).__name__}")
    if not isinstance(grad, NDArray):
        raise AssertionError(f"grad must be an NDArray, got {type(grad).__name__}")


def _mp_state_first(opt, index, weight, label):
    # SGD/NAG/LARS keep (state, weight32) for multi_precision float16 weights
    if opt.multi_precision and weight.dtype == numpy.float16:
        weight_master_copy = weight.astype(numpy.float32)
        return (opt.create_state(index, weight_master_copy), weight_master_copy)
    if weight.dtype == numpy.float16 and not opt.multi_precision:
        warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                      "slow convergence. Consider using multi_precision=True option of the "
                      f"{label} optimizer")
    return opt.create_state(index, weight)
