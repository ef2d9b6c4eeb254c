"""Indexing operators: take, one_hot, and the scatter used by ``x[int_array] = v``.
Kernels: mxc/ops/cpu/shape.pyx ("take", "one_hot", "scatter_rows")."""
import numpy as np

from .params import Param
from .registry import OpDef, register, kernel_forward, copy_then_inplace

_MODES = {"clip": 0, "wrap": 1, "raise": 2}


def _take_infer(a, s, d):
    data, idx = s
    if not data:
        raise ValueError("take: data must have at least one dimension")
    ax = a["axis"]
    if not -len(data) <= ax < len(data):
        raise ValueError(f"take: axis {ax} out of range for shape {data}")
    ax %= len(data)
    return [data[:ax] + tuple(idx) + data[ax + 1:]], [d[0]]


def _take_grad(F, a, i, o, g):
    data, idx = i
    ax = a["axis"] % data.ndim
    n = data.shape[ax]
    # d out / d data = one_hot(idx) contracted with g over the index dimensions
    pos = idx
    if a["mode"] == "wrap":
        pos = F._mod_scalar(idx, scalar=n)
    else:
        pos = F.clip(idx, a_min=0, a_max=n - 1)
    oh = F.one_hot(pos.reshape((-1,)), depth=n, dtype=data.dtype.__name__)      # (I, n)
    pre, post = data.shape[:ax], data.shape[ax + 1:]
    P = int(np.prod(pre, dtype=np.int64))
    Q = int(np.prod(post, dtype=np.int64))
    I = idx.size
    if I == 0:      # nothing taken (reshape would read the 0 below as "copy this dimension")
        return [F.zeros_like(data), F.zeros_like(idx)]
    gg = g[0].reshape((P, I, 1, Q))
    acc = F.sum(F.broadcast_mul(gg, oh.reshape((1, I, n, 1))), axis=1)            # (P, n, Q)
    return [acc.reshape(data.shape), F.zeros_like(idx)]


register(OpDef("take", inputs=("a", "indices"),
               params=(Param("axis", int, 0), Param("mode", str, "clip", choices=tuple(_MODES))),
               infer=_take_infer,
               forward=kernel_forward("shape", "take",
                                      key=lambda a, i, o: (i[0]._dcode, i[1]._dcode),
                                      ints=("axis", "mode"),
                                      fill={"axis": lambda a, i, o: a["axis"] % i[0].ndim,
                                            "mode": lambda a, i, o: _MODES[a["mode"]]}),
               grad=_take_grad, doc="Elements of `a` at `indices` along `axis`."))


def _one_hot_infer(a, s, d):
    if a["depth"] < 0:
        raise ValueError(f"one_hot: depth must be >= 0, got {a['depth']}")
    return [tuple(s[0]) + (a["depth"],)], [np.dtype(a["dtype"])]


register(OpDef("one_hot", inputs=("indices",),
               params=(Param("depth", int, required=True), Param("on_value", float, 1.0),
                       Param("off_value", float, 0.0), Param("dtype", "dtype", "float32")),
               infer=_one_hot_infer,
               forward=kernel_forward("shape", "one_hot",
                                      key=lambda a, i, o: (i[0]._dcode, o[0]._dcode),
                                      ints=("depth",), floats=("on_value", "off_value")),
               grad=lambda F, a, i, o, g: [F.zeros_like(i[0])],
               doc="One-hot rows of length `depth` for each index."))


def _scatter_infer(a, s, d):
    dst, idx, val = s
    if tuple(val) != tuple(idx) + tuple(dst[1:]):
        raise ValueError(f"_scatter_set_rows: value shape {val} must be {tuple(idx) + tuple(dst[1:])}")
    return [dst], [d[0]]


def _scatter_forward():
    return copy_then_inplace(kernel_forward("shape", "scatter_rows", name="_scatter_set_rows",
                                            key=lambda a, i, o: (i[0]._dcode, i[1]._dcode),
                                            ints=(), floats=()),
                             "_scatter_set_rows")


register(OpDef("_scatter_set_rows", inputs=("data", "indices", "value"), infer=_scatter_infer,
               forward=_scatter_forward(), inplace=((0, 0),),
               grad=lambda F, a, i, o, g: [F._scatter_set_rows(g[0], i[1], F.zeros_like(i[2])),
                                           F.zeros_like(i[1]), F.take(g[0], i[1], axis=0)],
               doc="data with rows `indices` (axis 0) replaced by `value` (x[idx] = v)."))
