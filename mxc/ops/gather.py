"""Gather/scatter operators: pick (+ _backward_pick), gather_nd (+ _backward_gather_nd),
scatter_nd, _scatter_set_nd, _contrib_boolean_mask, _ravel_multi_index, _unravel_index,
_histogram, argmax_channel, Embedding (+ _backward_Embedding).

Kernels: mxc/ops/cpu/gather.pyx (csrc/kernels/gather.h); Embedding's forward is the "take" kernel
of mxc/ops/cpu/shape.pyx with clipped indices. Index inputs may be any numeric dtype."""
import ast

import numpy as np

from . import services
from .params import Param
from ._partial_shape import probe_partial
from .registry import OpDef, register, kernel_forward, copy_then_inplace
from .shape import empty_along

_PICK_MODES = {"clip": 0, "wrap": 1}


def _prod(shape):
    return int(np.prod(shape, dtype=np.int64))


# ---- pick ------------------------------------------------------------------------------------------
def _pick_axis(op, nd, axis):
    if axis is None:
        raise ValueError(f"{op}: axis=None is not supported (as MXNet 1.9.1); give an axis")
    if not -nd <= axis < nd:
        raise ValueError(f"{op}: axis {axis} is out of range for an array of {nd} dimensions")
    return axis % nd


def _pick_infer(a, s, d):
    data, idx = tuple(s[0]), tuple(s[1])
    if not data:
        raise ValueError("pick: data must have at least one dimension")
    ax = _pick_axis("pick", len(data), a["axis"])
    keep = data[:ax] + (1,) + data[ax + 1:]
    drop = data[:ax] + data[ax + 1:]
    if idx not in (keep, drop) and not (not drop and idx == (1,)):
        raise ValueError(f"pick: index shape {idx} must be {drop} or {keep} for data {data} "
                         f"and axis {ax}")
    out = keep if a["keepdims"] else drop
    return [out if out else (1,)], [d[0]]


# take_along / put_along's slots (csrc/kernels/gather.h): the data as (pre, n, post) around the
# axis, k positions per row in the index, the out-of-range mode
ALONG_INTS = ("pre", "n", "post", "k", "mode")


def _index_rows(j):
    """The fill of slot M: the rows of input j (the index: M coordinates per position)."""
    return lambda a, i, o: i[j].shape[0]


def _const(v):
    return lambda a, i, o: v


def _pick_infer_inputs(a, s):
    """The index's shape from data's (unknown dimensions stay 0), as MXNet's PickOpShape."""
    data, idx = s[0], s[1]
    if data is None or idx is not None or not data:
        return list(s)
    ax = _pick_axis("pick", len(data), a["axis"])
    keep = tuple(data[:ax]) + (1,) + tuple(data[ax + 1:])
    drop = tuple(data[:ax]) + tuple(data[ax + 1:])
    return [data, (keep if a["keepdims"] else drop) or (1,)]


def _pick_view(a, i, o):
    x = i[0]
    ax = a["axis"] % x.ndim
    return (_prod(x.shape[:ax]), x.shape[ax], _prod(x.shape[ax + 1:]), 1,
            _PICK_MODES[a["mode"]])


def _pick_grad(F, a, i, o, g):
    data, idx = i
    return [F._backward_pick(g[0], idx, data, axis=a["axis"], keepdims=a["keepdims"], mode=a["mode"]),
            F.zeros_like(idx)]


_PICK_PARAMS = (Param("axis", int, -1, optional=True), Param("keepdims", bool, False),
                Param("mode", str, "clip", choices=tuple(_PICK_MODES)))

register(OpDef("pick", inputs=("data", "index"), params=_PICK_PARAMS, infer=_pick_infer,
               infer_inputs=_pick_infer_inputs, infer_partial=probe_partial(_pick_infer),
               forward=kernel_forward("gather", "take_along", name="pick", ints=ALONG_INTS,
                                      fill={ALONG_INTS: _pick_view}),
               grad=_pick_grad,
               doc="Elements of `data` at `index` along `axis` (clip or wrap out-of-range)."))


def _bpick_k(data, idx, ax):
    """How many positions per (pre, post) the index holds: 1 (pick) or idx.shape[ax]."""
    if len(idx) == len(data) and all(idx[j] == data[j] for j in range(len(data)) if j != ax):
        return idx[ax]
    return 1


def _bpick_infer(a, s, d):
    og, idx, data = (tuple(x) for x in s)
    ax = _pick_axis("_backward_pick", len(data), a["axis"])
    k = _bpick_k(data, idx, ax)
    if k == 1 and _prod(idx) != _prod(data) // max(data[ax], 1) or _prod(og) != _prod(idx):
        raise ValueError(f"_backward_pick: gradient {og} and index {idx} do not fit data {data} "
                         f"along axis {ax}")
    return [data], [d[0]]


def _bpick_view(a, i, o):
    data, idx = i[2], i[1]
    ax = a["axis"] % data.ndim
    k = _bpick_k(data.shape, idx.shape, ax)
    return (_prod(data.shape[:ax]), data.shape[ax], _prod(data.shape[ax + 1:]), k,
            _PICK_MODES[a["mode"]])


def _bpick_grad(F, a, i, o, g):
    og, idx, data = i
    ax = a["axis"] % data.ndim
    k = _bpick_k(data.shape, idx.shape, ax)
    if k == 1:
        gg = F.pick(g[0], idx.reshape(og.shape) if idx.shape == og.shape else idx, axis=ax,
                    keepdims=og.ndim == data.ndim, mode=a["mode"])
    else:
        gg = F._take_along_axis(g[0], idx, axis=ax, mode=a["mode"])
    return [gg.reshape(og.shape), F.zeros_like(idx), F.zeros_like(data)]


register(OpDef("_backward_pick", inputs=("ograd", "index", "data"), params=_PICK_PARAMS,
               infer=_bpick_infer,
               forward=kernel_forward("gather", "put_along", name="_backward_pick",
                                      ints=ALONG_INTS, fill={ALONG_INTS: _bpick_view}),
               grad=_bpick_grad,
               doc="Gradient of pick (and of topk/sort values): zeros shaped like `data` with "
                   "`ograd` added at `index` along `axis` (`data` gives only the shape). An "
                   "index with data's ndim holds several positions per row."))


def _tal_infer(a, s, d):
    data, idx = tuple(s[0]), tuple(s[1])
    ax = _pick_axis("_take_along_axis", len(data), a["axis"])
    if len(idx) != len(data) or any(idx[j] != data[j] for j in range(len(data)) if j != ax):
        raise ValueError(f"_take_along_axis: index {idx} must match data {data} but on axis {ax}")
    return [idx], [d[0]]


def _tal_view(a, i, o):
    x, idx = i
    ax = a["axis"] % x.ndim
    return (_prod(x.shape[:ax]), x.shape[ax], _prod(x.shape[ax + 1:]), idx.shape[ax],
            _PICK_MODES[a["mode"]])


register(OpDef("_take_along_axis", inputs=("data", "index"),
               params=(Param("axis", int, -1), Param("mode", str, "clip", choices=tuple(_PICK_MODES))),
               infer=_tal_infer,
               forward=kernel_forward("gather", "take_along", name="_take_along_axis",
                                      fill={ALONG_INTS: _tal_view}),
               grad=lambda F, a, i, o, g: [F._backward_pick(g[0], i[1], i[0], axis=a["axis"],
                                                            mode=a["mode"]), F.zeros_like(i[1])],
               doc="numpy's take_along_axis (several positions per row); the inverse of "
                   "_backward_pick, used by its gradient."))


# ---- gather_nd / scatter_nd ----------------------------------------------------------------------
def _nd_index(op, idx, target):
    if len(idx) < 2:
        raise ValueError(f"{op}: indices must have at least 2 dimensions, got shape {idx}")
    M = idx[0]
    if M > len(target):
        raise ValueError(f"{op}: indices address {M} dimensions, more than the {len(target)} of "
                         f"{target}")
    if M > 10:
        raise ValueError(f"{op}: indexing along more than 10 dimensions is not supported")
    return M


def _gather_nd_infer(a, s, d):
    data, idx = tuple(s[0]), tuple(s[1])
    M = _nd_index("gather_nd", idx, data)
    return [idx[1:] + data[M:]], [d[0]]


def _gather_nd_grad(F, a, i, o, g):
    data, idx = i
    return [F._backward_gather_nd(g[0], idx, shape=data.shape), F.zeros_like(idx)]


register(OpDef("gather_nd", inputs=("data", "indices"), infer=_gather_nd_infer,
               forward=kernel_forward("gather", "gather_nd", name="gather_nd", ints=("M",),
                                      fill={"M": _index_rows(1)}),
               grad=_gather_nd_grad,
               doc="Gather slices of `data` at the index tuples in the first axis of `indices` "
                   "(negative indices count from the end; others out of range are an error)."))


def _scatter_nd_check(op, data, idx, shape):
    M = _nd_index(op, idx, shape)
    want = idx[1:] + tuple(shape[M:])
    if tuple(data) != want:
        raise ValueError(f"{op}: data of shape {data} does not fit indices {idx} and output "
                         f"shape {tuple(shape)} (expected {want})")


def _scatter_nd_infer(op):
    def infer(a, s, d):
        shape = tuple(a["shape"])
        _scatter_nd_check(op, s[0], s[1], shape)
        return [shape], [d[0]]
    return infer


# scatter_nd's slots: M index rows, add (not set), has_dst (inputs (dst, data, idx)), clip
SCATTER_INTS = ("M", "add", "has_dst", "clip")


def _scatter_nd_forward(name, add):
    return kernel_forward("gather", "scatter_nd", name=name, ints=SCATTER_INTS,
                          fill={"M": _index_rows(1), "add": _const(add), "has_dst": _const(0),
                                "clip": _const(0)})


register(OpDef("scatter_nd", inputs=("data", "indices"), params=(Param("shape", "shape", required=True),),
               infer=_scatter_nd_infer("scatter_nd"), forward=_scatter_nd_forward("scatter_nd", 0),
               grad=lambda F, a, i, o, g: [F.gather_nd(g[0], i[1]), F.zeros_like(i[1])],
               doc="Zeros of `shape` with `data` written at the index tuples of `indices` "
                   "(for duplicates the last one wins)."))
register(OpDef("_backward_gather_nd", inputs=("data", "indices"),
               params=(Param("shape", "shape", required=True),),
               infer=_scatter_nd_infer("_backward_gather_nd"),
               forward=_scatter_nd_forward("_backward_gather_nd", 1),
               grad=lambda F, a, i, o, g: [F.gather_nd(g[0], i[1]), F.zeros_like(i[1])],
               doc="Like scatter_nd, but duplicate index tuples add up (gather_nd's gradient)."))


def _scatter_set_nd_infer(a, s, d):
    lhs, rhs, idx = (tuple(x) for x in s)
    if tuple(a["shape"]) not in ((), lhs):
        raise ValueError(f"_scatter_set_nd: shape {a['shape']} differs from lhs {lhs}")
    _scatter_nd_check("_scatter_set_nd", rhs, idx, lhs)
    return [lhs], [d[0]]


def _scatter_set_nd_grad(F, a, i, o, g):
    lhs, rhs, idx = i
    keep = F._scatter_set_nd(g[0], F.zeros_like(rhs), idx, shape=lhs.shape)
    return [keep, F.gather_nd(g[0], idx), F.zeros_like(idx)]


register(OpDef("_scatter_set_nd", inputs=("lhs", "rhs", "indices"), differentiable=False,
               params=(Param("shape", "shape", ()),), infer=_scatter_set_nd_infer,
               forward=copy_then_inplace(
                   kernel_forward("gather", "scatter_nd", name="_scatter_set_nd",
                                  fill={"M": _index_rows(2), "add": _const(0),
                                        "has_dst": _const(1), "clip": _const(0)}),
                   "_scatter_set_nd"),
               inplace=((0, 0),), grad=_scatter_set_nd_grad,
               doc="lhs with the elements at the index tuples of `indices` set to rhs."))


# ---- Embedding ---------------------------------------------------------------------------------
def _emb_check(a):
    if a["input_dim"] < 1 or a["output_dim"] < 1:
        raise ValueError(f"Embedding: input_dim and output_dim must be >= 1, got {a['input_dim']} "
                         f"and {a['output_dim']}")


def _emb_infer_inputs(a, s):
    _emb_check(a)
    s = list(s)
    if len(s) > 1 and s[1] is None:
        s[1] = (a["input_dim"], a["output_dim"])
    return s


def _emb_infer(a, s, d):
    _emb_check(a)
    data, w = tuple(s[0]), tuple(s[1])
    if w != (a["input_dim"], a["output_dim"]):
        raise ValueError(f"Embedding: weight has shape {w}, expected "
                         f"{(a['input_dim'], a['output_dim'])}")
    if np.dtype(d[1]) != np.dtype(a["dtype"]):
        raise ValueError(f"Embedding: weight has dtype {np.dtype(d[1]).name}, but dtype is {a['dtype']}")
    return [data + (a["output_dim"],)], [d[1]]


def _emb_forward():
    take = kernel_forward("shape", "take", name="Embedding",
                          key=lambda a, i, o: (i[0]._dcode, i[1]._dcode),
                          fill={"axis": _const(0), "mode": _const(0)})

    def forward(a, inputs, outputs):
        data, weight = inputs
        take(a, [weight, data], outputs)
    return forward


def _emb_grad(F, a, i, o, g):
    data, weight = i
    if a.get("sparse_grad") and _is_nd(F):
        return [None, _emb_sparse_grad(F, a, data, g[0])]
    return [None, F._backward_Embedding(g[0], data, input_dim=a["input_dim"],
                                        output_dim=a["output_dim"])]


# Embedding(sparse_grad=True) under mx.nd: a row_sparse weight gradient holding only
# the rows the batch looked up (MXNet's storage rule); graphs (symbol/executor) keep it dense.
def _is_nd(F):
    return F is services.ndarray


def _emb_sparse_grad(F, a, data, og):
    sparse = services.sparse
    n_in, n_out = a["input_dim"], a["output_dim"]
    # the row ids decide the result's size, so they are read on the host (as MXNet does when it
    # allocates the gradient); values are cast and clipped as the forward's lookup
    ids = np.clip(data.asnumpy().reshape(-1).astype(np.int64), 0, n_in - 1)
    rows, inv = np.unique(ids, return_inverse=True)
    ctx = og.context
    if rows.size == 0:
        return sparse.zeros("row_sparse", (n_in, n_out), ctx, og.dtype)
    pos = F.array(inv.astype(np.int64).reshape(data.shape), ctx=ctx, dtype=np.int64)
    vals = F._backward_Embedding(og, pos, input_dim=int(rows.size), output_dim=n_out)
    return sparse._make("row_sparse", (n_in, n_out),
                        [vals, F.array(rows, ctx=ctx, dtype=np.int64)], ctx, vals.dtype)


_EMB_PARAMS = (Param("input_dim", int, required=True), Param("output_dim", int, required=True),
               Param("dtype", "dtype", "float32"), Param("sparse_grad", bool, False))

register(OpDef("Embedding", inputs=("data", "weight"), params=_EMB_PARAMS, infer=_emb_infer,
               infer_dtypes=lambda a, d: [d[1]],
               # an unknown weight takes `dtype` whatever the indices' dtype (int32 data)
               infer_input_dtypes=lambda a, d: [None, np.dtype(a["dtype"]).name],
               infer_inputs=_emb_infer_inputs, infer_partial=probe_partial(_emb_infer),
               forward=_emb_forward(), grad=_emb_grad,
               doc="Rows of `weight` (input_dim x output_dim) at the indices in `data` (clipped "
                   "into range). With sparse_grad=True the weight's gradient is row_sparse (only "
                   "the rows looked up), under mx.nd; graphs keep it dense."))


# MXNet's contrib.SparseEmbedding: Embedding whose weight gradient is always row_sparse
def _sparse_emb_grad(F, a, i, o, g):
    return _emb_grad(F, dict(a, sparse_grad=True), i, o, g)


register(OpDef("_contrib_SparseEmbedding", inputs=("data", "weight"),
               params=_EMB_PARAMS[:3] + (Param("deterministic", bool, False),),
               infer=_emb_infer, infer_inputs=_emb_infer_inputs, forward=_emb_forward(),
               grad=_sparse_emb_grad,
               doc="Embedding with a row_sparse weight gradient (MXNet's "
                   "contrib.SparseEmbedding)."))


def _bemb_infer(a, s, d):
    og, data = tuple(s[0]), tuple(s[1])
    if og != data + (a["output_dim"],):
        raise ValueError(f"_backward_Embedding: gradient {og} does not fit data {data} and "
                         f"output_dim {a['output_dim']}")
    return [(a["input_dim"], a["output_dim"])], [d[0]]


def _bemb_forward():
    scat = kernel_forward("gather", "scatter_nd", name="_backward_Embedding",
                          fill={"M": _const(1), "add": _const(1), "has_dst": _const(0),
                                "clip": _const(1)})

    def forward(a, inputs, outputs):
        og, data = inputs
        n = data.size
        scat(a, [og.reshape((n, a["output_dim"])), data.reshape((1, n))], outputs)
    return forward


register(OpDef("_backward_Embedding", inputs=("ograd", "data"), params=_EMB_PARAMS,
               infer=_bemb_infer, forward=_bemb_forward(),
               grad=lambda F, a, i, o, g: [F.Embedding(i[1], g[0], input_dim=a["input_dim"],
                                                       output_dim=a["output_dim"],
                                                       dtype=np.dtype(g[0].dtype).name),
                                           None],
               doc="Embedding's weight gradient: the rows of `ograd` added at the (clipped) "
                   "indices of `data`."))


# ---- boolean_mask ----------------------------------------------------------------------------
def _boolean_mask(F, a, data, index):
    if a["axis"] != 0:
        raise ValueError(f"_contrib_boolean_mask: only axis 0 is supported (as MXNet), got {a['axis']}")
    if index.ndim != 1 or not data.ndim or index.shape[0] != data.shape[0]:
        raise ValueError(f"_contrib_boolean_mask: index must be 1-D of length {data.shape[:1]}, "
                         f"got shape {index.shape}")
    rows = np.flatnonzero(index.asnumpy()).astype(np.int64)      # the result's shape needs them
    n = data.shape[0]
    if not len(rows):       # nothing selected (its gradient is zero)
        return empty_along(F, data, 0)
    rest = data.shape[1:]
    w = data.reshape((n, max(_prod(rest), 1) if rest else 1))
    pos = F.array(rows, ctx=data.context, dtype=np.int64)
    out = F.Embedding(pos, w, input_dim=n, output_dim=w.shape[1], dtype=np.dtype(data.dtype).name)
    return out.reshape((len(rows),) + tuple(rest))


register(OpDef("_contrib_boolean_mask", aliases=("_npi_boolean_mask",), inputs=("data", "index"),
               params=(Param("axis", int, 0),), composite=_boolean_mask,
               doc="The rows of `data` where `index` is non-zero (shape (0, ...) when none is); "
                   "the result's shape depends on the values, so this waits for `index`."))


# ---- ravel / unravel ---------------------------------------------------------------------------
def _ravel_shape(op, a):
    shape = tuple(a["shape"])
    if not shape:
        raise ValueError(f"{op}: empty shape parameter")
    if len(shape) > 30:
        raise ValueError(f"{op}: at most 30 dimensions, got {len(shape)}")
    return shape


def _ravel_infer(a, s, d):
    shape = _ravel_shape("ravel_multi_index", a)
    x = tuple(s[0])
    if len(x) != 2 or x[0] != len(shape):
        raise ValueError(f"ravel_multi_index: input must be 2-D with {len(shape)} rows, got {x}")
    return [(x[1],)], [d[0]]


def _unravel_infer(a, s, d):
    shape = _ravel_shape("unravel_index", a)
    x = tuple(s[0])
    if len(x) != 1:
        raise ValueError(f"unravel_index: input must be 1-D, got {x}")
    return [(len(shape), x[0])], [d[0]]


# ravel / unravel's slots: the array's ndim and shape
_RAVEL_FILL = {"ndim": lambda a, i, o: len(a["shape"]), "shape": lambda a, i, o: a["shape"]}
for _name, _alias, _infer, _k in [("_ravel_multi_index", "ravel_multi_index", _ravel_infer, "ravel"),
                                  ("_unravel_index", "unravel_index", _unravel_infer, "unravel")]:
    register(OpDef(_name, aliases=(_alias,), params=(Param("shape", "shape", ()),), infer=_infer,
                   forward=kernel_forward("gather", _k, name=_name, ints=("ndim", "shape*"),
                                          floats=(), fill=_RAVEL_FILL),
                   grad=lambda F, a, i, o, g: [F.zeros_like(i[0])],
                   doc="Flat indices from multi-indices (rows of the input) in an array of `shape`."
                   if _k == "ravel" else "Multi-indices (rows of the result) from flat indices "
                                          "in an array of `shape`."))


# ---- histogram ---------------------------------------------------------------------------------
def _hist_range(a):
    r = a["range"]
    if r is None:
        return None
    try:
        v = ast.literal_eval(r) if isinstance(r, str) else r
        lo, hi = (float(x) for x in v)
    except (ValueError, SyntaxError, TypeError):
        raise ValueError(f"_histogram: range must be a pair of numbers, got {r!r}") from None
    if lo > hi:
        raise ValueError(f"_histogram: range {r} must have min <= max")
    return lo, hi


def _hist_infer(a, s, d):
    has_cnt, rng = a["bin_cnt"] is not None, _hist_range(a)
    if has_cnt != (rng is not None):
        raise ValueError("_histogram: bin_cnt and range must both be given or neither")
    if has_cnt:
        if len(s) != 1:
            raise ValueError("_histogram: with bin_cnt, give no bins input")
        if a["bin_cnt"] < 1:
            raise ValueError(f"_histogram: bin_cnt must be >= 1, got {a['bin_cnt']}")
        B = a["bin_cnt"]
        return [(B,), (B + 1,)], [np.dtype(np.int64), d[0]]
    if len(s) != 2:
        raise ValueError("_histogram: give a bins input (bin edges) or bin_cnt and range")
    b = tuple(s[1])
    if len(b) != 1 or b[0] < 2:
        raise ValueError(f"_histogram: bins must be 1-D with at least 2 edges, got shape {b}")
    if np.dtype(d[1]) != np.dtype(d[0]):
        raise ValueError(f"_histogram: bins dtype {np.dtype(d[1]).name} differs from data "
                         f"{np.dtype(d[0]).name}")
    return [(b[0] - 1,), b], [np.dtype(np.int64), d[0]]


# histogram's slots: whether the bins are an input (edges), their count; the range of
# bin_cnt equal bins (unread with edges)
def _hist_range_slots(a, i, o):
    return (0.0, 0.0) if len(i) == 2 else _hist_range(a)


register(OpDef("_histogram", aliases=("_npi_histogram",), inputs=("data", "bins"),
               input_names=lambda a: ("data",) if a["bin_cnt"] is not None else ("data", "bins"),
               params=(Param("bin_cnt", int, None, optional=True), Param("range", str, None, optional=True)),
               infer=_hist_infer, num_outputs=2, differentiable=False,
               infer_dtypes=lambda a, d: [np.dtype(np.int64), d[0]],
               forward=kernel_forward("gather", "histogram", name="_histogram",
                                      ints=("has_bins", "nbins"), floats=("low", "high"),
                                      fill={"has_bins": lambda a, i, o: int(len(i) == 2),
                                            "nbins": lambda a, i, o: o[0].shape[0],
                                            ("low", "high"): _hist_range_slots}),
               doc="Counts (int64) of `data` in bins given as edges (`bins` input) or as "
                   "`bin_cnt` equal bins over `range`; also returns the edges. The last bin is "
                   "closed; values outside are ignored."))


# ---- argmax_channel ----------------------------------------------------------------------------
register(OpDef("argmax_channel", composite=lambda F, a, x: F.argmax(x, axis=1),
               differentiable=False,
               doc="argmax along axis 1 (in the input's dtype, as MXNet 1.9.1)."))
