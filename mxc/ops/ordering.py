"""Ordering operators: sort, argsort, topk (MXNet 1.9.1's parameters and output dtypes).

One kernel ("ordering:topk", mxc/ops/cpu/ordering.pyx) serves the three: the data is viewed as
(pre, n, post) around the axis (or as one row when axis is None). Equal values keep their input
order. Gradients of the value outputs scatter the head gradient back to the chosen positions
(``_backward_pick`` of mxc/ops/gather.py); indices and masks have zero gradient."""
import numpy as np

from .params import Param
from .registry import OpDef, register, kernel_forward

_RET = {"value": 0, "indices": 1, "mask": 2, "both": 3}
_IDX_DTYPES = ("uint8", "int32", "int64", "float16", "float32", "float64")


def _plan(op, shape, axis, k, ret):
    """(pre, n, post, k, out_shape, axis or None)."""
    size = int(np.prod(shape, dtype=np.int64))
    if axis is None:
        pre, n, post, ax = 1, size, 1, None
    else:
        nd = len(shape)
        if not -nd <= axis < nd:
            raise ValueError(f"{op}: axis {axis} is out of range for an array of {nd} dimensions")
        ax = axis % nd
        n = shape[ax]
        pre = int(np.prod(shape[:ax], dtype=np.int64))
        post = int(np.prod(shape[ax + 1:], dtype=np.int64))
    if k <= 0:
        k = n
    if k > n:
        raise ValueError(f"{op}: k must be at most the {n} elements of the axis, got k = {k}")
    if ret == "mask":
        out = tuple(shape)
    elif ax is None:
        out = (k,)
    else:
        out = tuple(shape[:ax]) + (k,) + tuple(shape[ax + 1:])
    return pre, n, post, k, out, ax


def _check_idx_dtype(op, dtype):
    if dtype not in _IDX_DTYPES:
        raise ValueError(f"{op}: dtype must be one of {_IDX_DTYPES}, got {dtype}")


def _topk_infer(a, s, d):
    _check_idx_dtype("topk", a["dtype"])
    if not s[0]:
        raise ValueError("topk: data must have at least one dimension")
    *_, out, _ = _plan("topk", s[0], a["axis"], a["k"], a["ret_typ"])
    return [out] * (2 if a["ret_typ"] == "both" else 1), _topk_dtypes(a, d)


def _topk_dtypes(a, d):
    ret = a["ret_typ"]
    if ret == "both":
        return [d[0], np.dtype(a["dtype"])]
    if ret == "indices":
        return [np.dtype(a["dtype"])]
    return [d[0]]


# the topk kernel's slots (csrc/kernels/ordering.h): the data as (pre, n, post) around the axis,
# k, what it returns (0 values, 1 indices, 2 the mask, 3 both) and the order
TOPK_INTS = ("pre", "n", "post", "k", "ret", "ascend")


def _kernel_fill(op, ret_of, k_of, asc_of):
    def view(a, i, o):
        return _plan(op, i[0].shape, a["axis"], k_of(a), ret_of(a))[:4]
    return {("pre", "n", "post", "k"): view, "ret": lambda a, i, o: _RET[ret_of(a)],
            "ascend": lambda a, i, o: 1 if asc_of(a) else 0}


def _put_back(F, x, axis, og, idx):
    """Gradient of x from the head gradient og of values picked at idx along axis."""
    if axis is None:
        flat = x.reshape((-1,))
        return F._backward_pick(og, idx, flat, axis=0).reshape(x.shape)
    return F._backward_pick(og, idx, x, axis=axis)


def _topk_grad(F, a, i, o, g):
    x = i[0]
    ret = a["ret_typ"]
    if ret in ("indices", "mask"):
        return [F.zeros_like(x)]
    idx = F.topk(x, axis=a["axis"], k=a["k"], ret_typ="indices", is_ascend=a["is_ascend"],
                 dtype="int64")
    return [_put_back(F, x, a["axis"], g[0], idx)]


register(OpDef("topk", params=(Param("axis", int, -1, optional=True), Param("k", int, 1),
                               Param("ret_typ", str, "indices", choices=tuple(_RET)),
                               Param("is_ascend", bool, False),
                               Param("dtype", "dtype", "float32")),
               infer=_topk_infer, infer_dtypes=_topk_dtypes,
               num_outputs=lambda a: 2 if a["ret_typ"] == "both" else 1,
               forward=kernel_forward("ordering", "topk", name="topk", ints=TOPK_INTS,
                                      fill=_kernel_fill("topk", lambda a: a["ret_typ"],
                                                          lambda a: a["k"], lambda a: a["is_ascend"])),
               grad=_topk_grad,
               doc="The top k values, indices (float32 by default), both, or a 0/1 mask along "
                   "`axis` (the flattened array when None); largest first unless is_ascend."))


def _sort_infer(a, s, d):
    if not s[0]:
        raise ValueError("sort: data must have at least one dimension")
    *_, out, _ = _plan("sort", s[0], a["axis"], 0, "value")
    return [out], [d[0]]


def _sort_grad(F, a, i, o, g):
    x = i[0]
    idx = F.argsort(x, axis=a["axis"], is_ascend=a["is_ascend"], dtype="int64")
    return [_put_back(F, x, a["axis"], g[0], idx)]


register(OpDef("sort", params=(Param("axis", int, -1, optional=True), Param("is_ascend", bool, True)),
               infer=_sort_infer,
               forward=kernel_forward("ordering", "topk", name="sort",
                                      fill=_kernel_fill("sort", lambda a: "value", lambda a: 0,
                                                          lambda a: a["is_ascend"])),
               grad=_sort_grad,
               doc="The values sorted along `axis` (the flattened array when None)."))


def _argsort_infer(a, s, d):
    _check_idx_dtype("argsort", a["dtype"])
    if not s[0]:
        raise ValueError("argsort: data must have at least one dimension")
    *_, out, _ = _plan("argsort", s[0], a["axis"], 0, "indices")
    return [out], [np.dtype(a["dtype"])]


register(OpDef("argsort", params=(Param("axis", int, -1, optional=True), Param("is_ascend", bool, True),
                                  Param("dtype", "dtype", "float32")),
               infer=_argsort_infer,
               forward=kernel_forward("ordering", "topk", name="argsort",
                                      fill=_kernel_fill("argsort", lambda a: "indices", lambda a: 0,
                                                          lambda a: a["is_ascend"])),
               grad=lambda F, a, i, o, g: [F.zeros_like(i[0])],
               doc="The indices that sort `axis` (float32 by default, as MXNet)."))
