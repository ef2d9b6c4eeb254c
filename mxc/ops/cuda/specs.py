"""Launch specs of mxc's GPU operators: which CUDA kernel (a template instantiation of
mxc/ops/cuda/<family>.cu), how grid and block follow from the output size, and the argument
list, as plain Python (kind, value) pairs that the device launcher (mxc/_core/cuda.pyx
``push_launch``) packs: ("in", i) / ("out", i) the device pointer of input / output i, ("ptr",
0) a null pointer, ("bytes", b) a struct by value (here always int64 arrays, see common.cuh),
and scalars "i32", "i64", "u64", "f32", "f64".

``launch_spec(opname, attrs, inputs, outputs, family=, kernel=)`` is keyed by the CPU kernel
that the operator's ``kernel_forward`` names (family, kernel), so every operator that shares a
CPU kernel shares its GPU launch. It returns one launch dict (family, name, grid, block, args),
``{"launches": [...]}`` for operators that need several in order on one stream,
``"workspace": nbytes`` beside "launches" when the launches need scratch device memory for the
duration of the operation (args ("ws", byte offset) point into it: two-stage reductions, sort),
``{"cublas": run}`` for GEMMs (run through CuPy on the engine's stream), or None when the
operator has no GPU kernel (the caller raises naming it).

``instantiations(family)`` lists every name expression of a family: what the offline check
compiles and the only names ``loader.kernel`` accepts.
"""
import struct

import numpy as np

DTYPES = ("float32", "float64", "float16", "uint8", "int8", "int32", "int64")
FLOATS = ("float32", "float64", "float16")
CTYPE = {"float32": "float", "float64": "double", "float16": "__half", "uint8": "unsigned char",
         "int8": "signed char", "int32": "int", "int64": "long long", "bool": "bool"}
UNARY = ("negative abs sign round rint ceil floor trunc fix square sqrt rsqrt cbrt exp expm1 log "
         "log10 log2 log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh "
         "arctanh degrees radians sigmoid relu softsign erf erfinv gamma gammaln reciprocal "
         "logical_not").split()
BINARY = ("add sub mul div mod power maximum minimum hypot equal not_equal greater greater_equal "
          "lesser lesser_equal logical_and logical_or logical_xor tanh_grad sigmoid_grad relu_grad "
          "sqrt_grad").split()
def inst_elemwise():
    out = []
    for dt in DTYPES:
        c = CTYPE[dt]
        out += ["mxc_unary<mxc::op_%s, %s>" % (op, c) for op in UNARY]
        out += ["mxc_binary<mxc::op_%s, %s>" % (op, c) for op in BINARY]
        out += ["mxc_scalar<mxc::op_%s, %s>" % (op, c) for op in BINARY]
        out += ["mxc_clip<%s>" % c, "mxc_clip_grad<%s>" % c, "mxc_add_n<%s>" % c]
    for a in DTYPES + ("bool",):
        for b in DTYPES + ("bool",):
            out.append("mxc_cast<%s, %s>" % (CTYPE[a], CTYPE[b]))
        for c in DTYPES + ("bool",):
            out.append("mxc_where<%s, %s>" % (CTYPE[a], CTYPE[c]))
            out.append("mxc_where_grad<%s, %s>" % (CTYPE[a], CTYPE[c]))
    out += ["mxc_copy<%s>" % t for t in ("unsigned char", "unsigned short", "unsigned int", "unsigned long long")]
    return out


def _c(dts):
    return [CTYPE[d] for d in dts]


IDX = ("float32", "float64", "int32", "int64", "uint8", "int8", "float16")
BYTES = ("unsigned char", "unsigned short", "unsigned int", "unsigned long long")
REDUCERS = ("sum", "mean", "prod", "nansum", "nanprod", "max", "min", "norm1", "norm2")


def inst_broadcast():
    out = []
    for dt in DTYPES:
        out += ["mxc_bcast_binary<mxc::op_%s, %s>" % (op, CTYPE[dt]) for op in BINARY]
    for a in DTYPES + ("bool",):
        for c in DTYPES + ("bool",):
            out.append("mxc_bcast_where<%s, %s>" % (CTYPE[a], CTYPE[c]))
    return out


def inst_reduce():
    out = []
    for dt in DTYPES + ("bool",):
        c = CTYPE[dt]
        acc = "double" if dt in FLOATS else "long long"
        for r in REDUCERS:
            out += ["mxc_reduce_rows<mxc::r_%s, %s, %s>" % (r, c, c),
                    "mxc_reduce_cols<mxc::r_%s, %s, %s>" % (r, c, c),
                    "mxc_reduce_parts<mxc::r_%s, %s, %s>" % (r, acc, c)]
        for m in ("true", "false"):
            # MXNet 1.9.1's argmax/argmin give the index in the input's dtype
            out.append("mxc_argreduce<%s, %s, %s>" % (m, c, c))
    return out


def inst_shape():
    return (["mxc_gather_map<%s>" % t for t in BYTES] + ["mxc_scatter_map<%s>" % t for t in BYTES]
            + ["mxc_scatter_value<%s>" % t for t in BYTES]
            + ["mxc_transpose2d<%s>" % t for t in BYTES])


def inst_gather():
    out = []
    for dt in DTYPES:
        for it in IDX:
            a, b = CTYPE[dt], CTYPE[it]
            out += ["mxc_take<%s, %s>" % (a, b), "mxc_one_hot<%s, %s>" % (a, b),
                    "mxc_pick<%s, %s>" % (a, b), "mxc_pick_grad<%s, %s>" % (a, b),
                    "mxc_gather_nd<%s, %s>" % (a, b), "mxc_scatter_nd<%s, %s, false>" % (a, b)]
            if dt in FLOATS:
                out += ["mxc_take_grad<%s, %s>" % (a, b), "mxc_scatter_nd<%s, %s, true>" % (a, b)]
    return out


def inst_ordering():
    out = ["mxc_bitonic_step"]
    for dt in DTYPES:
        out.append("mxc_sort_prepare<%s>" % CTYPE[dt])
        out.append("mxc_sort_mask<%s>" % CTYPE[dt])
        for it in DTYPES:
            out.append("mxc_sort_finish<%s, %s>" % (CTYPE[dt], CTYPE[it]))
    return out


def inst_init():
    out = []
    for dt in DTYPES + ("bool",):
        c = CTYPE[dt]
        out += ["mxc_fill<%s>" % c, "mxc_arange<%s>" % c, "mxc_linspace<%s>" % c,
                "mxc_eye<%s>" % c]
    return out


MULTINOMIAL_SAMPLES = ("uint8", "int32", "int64", "float16", "float32", "float64")


def inst_random():
    out = ["mxc_random64<%d>" % d for d in range(3)]
    for dt in ("float32", "float16"):
        out += ["mxc_random32<%s, %d>" % (CTYPE[dt], d) for d in range(3)]
    out += ["mxc_randint32", "mxc_randint64"]
    for dt in FLOATS:
        out += ["mxc_random_reject<%s, %d>" % (CTYPE[dt], d) for d in range(4)]
        for st in MULTINOMIAL_SAMPLES:
            out += ["mxc_multinomial<%s, %s>" % (CTYPE[dt], CTYPE[st]),
                    "mxc_multinomial_grad<%s, %s>" % (CTYPE[dt], CTYPE[st])]
    out += ["mxc_dropout<%s>" % CTYPE[dt] for dt in FLOATS]
    return out


def inst_activation():
    out = []
    for c in _c(FLOATS):
        out += ["mxc_activation<%s>" % c, "mxc_activation_grad<%s>" % c,
                "mxc_leaky_relu<%s>" % c, "mxc_leaky_relu_grad<%s>" % c,
                "mxc_prelu_gamma_grad<%s>" % c]
    return out


def inst_softmax():
    # <log, input dtype, output dtype (softmax's dtype=), length dtype (use_length; int when
    # there is none: a null pointer)>; the gradient's <log, output dtype, input dtype, length>
    out = []
    for lg in ("false", "true"):
        for a in _c(FLOATS):
            for b in _c(FLOATS):
                for L in ("int", "long long"):
                    out += ["mxc_softmax_rows<%s, %s, %s, %s>" % (lg, a, b, L),
                            "mxc_softmax_cols<%s, %s, %s, %s>" % (lg, a, b, L),
                            "mxc_softmax_grad<%s, %s, %s, %s>" % (lg, a, b, L)]
    return out


OPTIMIZERS = ("sgd", "sgd_mom", "nag_mom", "adam", "adamw", "rmsprop", "rmspropalex", "ftrl",
              "ftml", "signsgd", "signum")


def inst_optimizer_ops():
    out = []
    for c in _c(FLOATS):
        out += ["mxc_%s_update<%s>" % (o, c) for o in OPTIMIZERS]
        out += ["mxc_mp_%s_update<%s>" % (o, c) for o in ("sgd", "sgd_mom", "nag_mom", "adamw")]
        out += ["mxc_%s_update<%s>" % (o, c) for o in ("lamb1", "mp_lamb1", "lamb2", "mp_lamb2",
                                                       "adagrad")]
        out.append("mxc_sum_sq<%s>" % c)
    return out


_INST = {}


def instantiations(family):
    """Every template instantiation of a family's .cu (the name expressions NVRTC compiles), as
    a tuple; memoised."""
    if family not in _INST:
        _INST[family] = tuple(globals()["inst_" + family]())
    return _INST[family]


# ---- launch geometry ------------------------------------------------------------------------
BLOCK = 256
MAX_GRID = 132 * 16   # H100: 132 SMs; grid-stride loops need no more blocks to fill the GPU


def grid_for(n, per_thread=1, block=BLOCK):
    return (max(1, min(MAX_GRID, -(-int(n) // (block * per_thread)))),)


def ctype(dtype):
    name = np.dtype(dtype).name
    try:
        return CTYPE[name]
    except KeyError:
        raise TypeError("no CUDA kernels for dtype %s" % name) from None


def i64s(*vals):
    return ("bytes", struct.pack("<%dq" % len(vals), *[int(v) for v in vals]))


def _pad(vals, fill=0):
    vals = [int(v) for v in vals]
    return vals + [fill] * (8 - len(vals))


def _size(a):
    n = 1
    for d in a.shape:
        n *= int(d)
    return n


def _launch(family, name, n, args, per_thread=1, block=BLOCK, grid=None):
    if name not in instantiations(family):
        return None
    return {"family": family, "name": name, "grid": grid or grid_for(n, per_thread, block),
            "block": (block,), "args": list(args)}


def _vec(dtype):
    """elements per thread of the vectorised elementwise loops (common.cuh vec4)"""
    return min(4, 16 // np.dtype(dtype).itemsize)


def bcast_strides(ishape, oshape):
    """Per-output-dim element strides of an input broadcast to oshape (0 on broadcast dims)."""
    ishape = (1,) * (len(oshape) - len(ishape)) + tuple(ishape)
    st, acc = [0] * len(oshape), 1
    for d in range(len(oshape) - 1, -1, -1):
        st[d] = 0 if ishape[d] == 1 and oshape[d] != 1 else acc
        acc *= ishape[d]
    return st


def collapse(oshape, *strides):
    """Merge neighbouring output dims where every operand is contiguous across them; drop
    size-1 dims. Returns (shape, [strides per operand])."""
    shp, sts = [], [[] for _ in strides]
    for d, n in enumerate(oshape):
        if n == 1:
            continue
        if shp and all(s[d] * n == sts[k][-1] or (s[d] == 0 and sts[k][-1] == 0)
                       for k, s in enumerate(strides)):
            shp[-1] *= n
            for k, s in enumerate(strides):
                sts[k][-1] = s[d]
            continue
        shp.append(n)
        for k, s in enumerate(strides):
            sts[k].append(s[d])
    if not shp:
        shp, sts = [1], [[1] for _ in strides]
    return shp, sts


# ---- elemwise ---------------------------------------------------------------------------------
def _elemwise(kernel, attrs, inputs, outputs, iattr, fattr):
    y = outputs[0]
    n, c = _size(y), ctype(y.dtype)
    kind, _, op = kernel.partition(":")
    if kernel == "unary:copy":
        es = np.dtype(y.dtype).itemsize
        t = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}[es]
        return _launch("elemwise", "mxc_copy<%s>" % t, n, [("in", 0), ("out", 0), ("i64", n)],
                       per_thread=max(1, 16 // es))
    if kind == "unary":
        return _launch("elemwise", "mxc_unary<mxc::op_%s, %s>" % (op, c), n,
                       [("in", 0), ("out", 0), ("i64", n)], per_thread=_vec(y.dtype))
    if kind == "binary":
        a, b = inputs
        if tuple(a.shape) == tuple(y.shape) and tuple(b.shape) == tuple(y.shape):
            return _launch("elemwise", "mxc_binary<mxc::op_%s, %s>" % (op, c), n,
                           [("in", 0), ("in", 1), ("out", 0), ("i64", n)],
                           per_thread=_vec(y.dtype))
        shp, (sa, sb) = collapse(tuple(y.shape), bcast_strides(a.shape, y.shape),
                                 bcast_strides(b.shape, y.shape))
        return _launch("broadcast", "mxc_bcast_binary<mxc::op_%s, %s>" % (op, c), n,
                       [("in", 0), ("in", 1), ("out", 0), ("i64", n),
                        i64s(len(shp), *(_pad(shp, 1) + _pad(sa) + _pad(sb)))])
    if kind in ("scalar", "rscalar"):
        return _launch("elemwise", "mxc_scalar<mxc::op_%s, %s>" % (op, c), n,
                       [("in", 0), ("out", 0), ("i64", n),
                        ("f64", float(fattr[0] if fattr else attrs["scalar"])),
                        ("i32", 1 if kind == "rscalar" else 0)])
    if kernel == "cast":
        return _launch("elemwise", "mxc_cast<%s, %s>" % (ctype(inputs[0].dtype), c), n,
                       [("in", 0), ("out", 0), ("i64", n)])
    if kernel == "clip":
        return _launch("elemwise", "mxc_clip<%s>" % c, n,
                       [("in", 0), ("out", 0), ("i64", n),
                        ("f64", float(fattr[0] if fattr else attrs["a_min"])),
                        ("f64", float(fattr[1] if fattr else attrs["a_max"]))])
    if kernel == "where":
        cond = inputs[0]
        cc = ctype(cond.dtype)
        if all(tuple(t.shape) == tuple(y.shape) for t in inputs) or \
                (cond.ndim == 1 and cond.shape[0] == y.shape[0]):
            return _launch("elemwise", "mxc_where<%s, %s>" % (c, cc), n,
                           [("in", 0), ("in", 1), ("in", 2), ("out", 0), ("i64", n),
                            ("i64", n // max(1, _size(cond)))])
        shp, st = collapse(tuple(y.shape), *[bcast_strides(t.shape, y.shape) for t in inputs])
        return _launch("broadcast", "mxc_bcast_where<%s, %s>" % (c, cc), n,
                       [("in", 0), ("in", 1), ("in", 2), ("out", 0), ("i64", n),
                        i64s(len(shp), *(_pad(shp, 1) + _pad(st[0]) + _pad(st[1]) + _pad(st[2])))])
    return None


# ---- reduce -----------------------------------------------------------------------------------
_REDUCER = {"sum": "sum", "mean": "mean", "prod": "prod", "nansum": "nansum",
            "nanprod": "nanprod", "max": "max", "min": "min"}


def reduce_map(shape, mask):
    """(nout, count, packed reduce_map) for reducing `shape` over the dims where mask is 1."""
    strides, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = acc
        acc *= shape[d]
    keep = [(n, s) for n, s, m in zip(shape, strides, mask) if not m and n != 1]
    red = [(n, s) for n, s, m in zip(shape, strides, mask) if m and n != 1]
    nout = int(np.prod([n for n, _ in keep])) if keep else 1
    count = int(np.prod([n for n, _ in red])) if red else 1
    packed = i64s(len(keep), *(_pad([n for n, _ in keep], 1) + _pad([s for _, s in keep]) +
                               [len(red)] + _pad([n for n, _ in red], 1) +
                               _pad([s for _, s in red])))
    return nout, count, packed, (red[-1][1] == 1 if red else True)


def _reduce(kernel, attrs, inputs, outputs, iattr, fattr):
    name = kernel.split(":", 1)[1]
    x, y = inputs[0], outputs[0]
    mask = tuple(iattr[:x.ndim]) if iattr else (attrs.get("_mask") or (1,) * x.ndim)
    nout, count, packed, inner_red = reduce_map(tuple(x.shape), mask)
    c, co = ctype(x.dtype), ctype(y.dtype)
    if name in ("argmax", "argmin"):
        return _launch("reduce", "mxc_argreduce<%s, %s, %s>" % (
            "true" if name == "argmax" else "false", c, co), nout,
            [("in", 0), ("out", 0), ("i64", nout), ("i64", count), packed],
            grid=(max(1, min(nout, 65535)),))
    if name == "norm":
        r = "norm1" if int(attrs.get("ord", 2)) == 1 else "norm2"
    else:
        r = _REDUCER.get(name)
        if r is None:
            return None
    if inner_red and count >= 65536 and nout < 2 * 132:
        # few long rows: stage 1 spreads each row over `nparts` blocks writing accumulators
        # into a workspace, stage 2 folds them (one pass over the data at full bandwidth)
        nparts = max(2, min(1024, -(-count // (BLOCK * 16)), -(-4 * 132 // nout)))
        acc = "double" if np.dtype(x.dtype).kind == "f" else "long long"
        stage1 = _launch("reduce", "mxc_reduce_rows<mxc::r_%s, %s, %s>" % (r, c, co), nout,
                         [("in", 0), ("out", 0), ("ws", 0), ("i64", nout), ("i64", count),
                          ("i64", nparts), packed], grid=(min(nout * nparts, 65535),))
        stage2 = _launch("reduce", "mxc_reduce_parts<mxc::r_%s, %s, %s>" % (r, acc, co), nout,
                         [("ws", 0), ("out", 0), ("i64", nout), ("i64", nparts), ("i64", count)],
                         grid=(max(1, min(nout, 65535)),))
        return {"launches": [stage1, stage2], "workspace": 8 * nout * nparts}
    if inner_red and count >= 32:
        # one block per output row
        return _launch("reduce", "mxc_reduce_rows<mxc::r_%s, %s, %s>" % (r, c, co), nout,
                       [("in", 0), ("out", 0), ("ptr", 0), ("i64", nout), ("i64", count),
                        ("i64", 1), packed], grid=(max(1, min(nout, 65535)),))
    return _launch("reduce", "mxc_reduce_cols<mxc::r_%s, %s, %s>" % (r, c, co), nout,
                   [("in", 0), ("out", 0), ("i64", nout), ("i64", count), packed])


# ---- softmax ----------------------------------------------------------------------------------
def _axis_view(shape, axis):
    axis = axis % len(shape)
    outer = int(np.prod(shape[:axis])) if axis else 1
    inner = int(np.prod(shape[axis + 1:])) if axis + 1 < len(shape) else 1
    return outer, int(shape[axis]), inner


_LEN_T = {"int32": "int", "int64": "long long"}


def _softmax(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    """CPU attributes: iattr (outer, n, inner, log, negate, use_length), fattr (temperature,).
    Forward inputs (x[, length]) -> y in the dtype= output dtype; backward inputs (dy, y[,
    length]) -> dx in the forward input's dtype."""
    if not iattr or len(iattr) < 6:
        return None
    outer, n, inner, logm, neg, use_len = (int(v) for v in iattr[:6])
    # softmin(x) = softmax(-x): the kernels scale by 1/t, so a negated temperature negates x
    # (and the backward's final 1/t carries the sign of the chain rule)
    t = float(fattr[0]) if fattr else 1.0
    t = -t if neg else t
    log = "true" if logm else "false"
    nin = 2 if kernel == "softmax" else 3
    if len(inputs) != nin - 1 + (1 if use_len else 0):
        return None
    if use_len:
        L = _LEN_T.get(np.dtype(inputs[-1].dtype).name)
        if L is None:
            return None
        lenarg = ("in", len(inputs) - 1)
    else:
        L, lenarg = "int", ("ptr", 0)
    if kernel == "softmax":
        tname = "%s, %s, %s, %s" % (log, ctype(inputs[0].dtype), ctype(outputs[0].dtype), L)
        if inner == 1:
            return _launch("softmax", "mxc_softmax_rows<%s>" % tname, outer,
                           [("in", 0), lenarg, ("out", 0), ("i64", outer), ("i64", n),
                            ("f64", t)], grid=(max(1, min(outer, 65535)),))
        return _launch("softmax", "mxc_softmax_cols<%s>" % tname, outer * inner,
                       [("in", 0), lenarg, ("out", 0), ("i64", outer), ("i64", n),
                        ("i64", inner), ("f64", t)])
    if kernel == "softmax_bwd":
        tname = "%s, %s, %s, %s" % (log, ctype(inputs[1].dtype), ctype(outputs[0].dtype), L)
        return _launch("softmax", "mxc_softmax_grad<%s>" % tname, outer * inner,
                       [("in", 1), ("in", 0), lenarg, ("out", 0), ("i64", outer), ("i64", n),
                        ("i64", inner), ("f64", t)])
    return None


# ---- activation -------------------------------------------------------------------------------
ACT_TYPES = {"relu": 0, "sigmoid": 1, "tanh": 2, "softrelu": 3, "softsign": 4}
# LeakyReLU's CPU kernels -> the act code of activation.cu's leaky_fwd / leaky_bwd
LEAKY_TYPES = {"xelu": 0, "xelu_arr": 0, "elu": 1, "selu": 2, "gelu": 3, "prelu": 4}


def prelu_view(iattr):
    """(inner, channels) of activation.cu's gamma lookup gamma[(i / inner) % channels] for the
    CPU's prelu view iattr (d0, d1, rest, g0, g1): data (d0, d1, rest), gamma (g0, g1) with g0 in
    {1, d0} and g1 in {1, d1}."""
    d0, d1, rest, g0, g1 = (int(v) for v in iattr[:5])
    if g1 > 1:
        return rest, g0 * g1
    return d1 * rest, g0


def _leaky(kind, t, inputs, outputs, iattr, fattr):
    y = outputs[0]
    n, c = _size(y), ctype(y.dtype)
    act = LEAKY_TYPES[t]
    slope = float(fattr[0]) if fattr else 0.0
    inner, channels = 1, 1
    gamma = ("ptr", 0)
    if t == "xelu_arr":          # rrelu's per-element slopes: input 1 (forward) or 2 (backward)
        gamma, channels = ("in", 1 if kind == "fwd" else 2), max(1, n)
    elif t == "prelu":
        if not iattr or len(iattr) < 5:
            return None
        inner, channels = prelu_view(iattr)
        gamma = ("in", 1 if kind == "fwd" else 2)
    tail = [("i64", n), ("i32", act), ("f64", slope), ("i64", max(1, inner)),
            ("i64", max(1, channels))]
    if kind == "fwd":
        return _launch("activation", "mxc_leaky_relu<%s>" % c, n,
                       [("in", 0), gamma, ("out", 0)] + tail)
    # backward inputs (dy, output) for leaky/elu/selu/rrelu, (dy, x) for gelu and prelu: the
    # second decides the branch; elu and selu also read the output's value
    value = ("in", 1) if t in ("elu", "selu") else ("ptr", 0)
    dx = _launch("activation", "mxc_leaky_relu_grad<%s>" % c, n,
                 [("in", 0), ("in", 1), value, gamma, ("out", 0)] + tail)
    if t != "prelu":
        return dx
    x = inputs[1]
    outer = _size(x) // max(1, inner * channels)
    dgamma = _launch("activation", "mxc_prelu_gamma_grad<%s>" % c, channels,
                     [("in", 0), ("in", 1), ("out", 1), ("i64", outer), ("i64", channels),
                      ("i64", inner)], grid=(max(1, min(channels, 65535)),))
    return {"launches": [dx, dgamma]}


def _activation(kernel, attrs, inputs, outputs, iattr, fattr):
    kind, _, t = kernel.partition(":")
    if t in LEAKY_TYPES and kind in ("fwd", "bwd"):
        return _leaky(kind, t, inputs, outputs, iattr, fattr)
    if t not in ACT_TYPES:
        return None
    y = outputs[0]
    n, c = _size(y), ctype(y.dtype)
    if kind == "fwd":
        return _launch("activation", "mxc_activation<%s>" % c, n,
                       [("in", 0), ("out", 0), ("i64", n), ("i32", ACT_TYPES[t])])
    if kind == "bwd":   # inputs (dy, y[, x])
        return _launch("activation", "mxc_activation_grad<%s>" % c, n,
                       # (head, data): data is the output y, or the input x for softsign
                       [("in", 0), ("in", 1), ("in", 1) if t == "softsign" else ("ptr", 0),
                        ("out", 0), ("i64", n), ("i32", ACT_TYPES[t])])
    return None


# ---- optimizers -------------------------------------------------------------------------------
# CPU kernel -> (template, state outputs in order); the float attributes are passed in the CPU
# kernel's fattr order, which is the order of the step functions in kernels/hd_math.h
_OPT = {
    "sgd": ("mxc_sgd_update", (), 4),
    "signsgd": ("mxc_signsgd_update", (), 2),
    "adam": ("mxc_adam_update", (1, 2), 7),
    "rmsprop": ("mxc_rmsprop_update", (1,), 7),
    "rmspropalex": ("mxc_rmspropalex_update", (1, 2, 3), 8),
    "ftrl": ("mxc_ftrl_update", (1, 2), 6),
    "ftml": ("mxc_ftml_update", (1, 2, 3), 8),
    "signum": ("mxc_signum_update", (1,), 6),
    "nag": ("mxc_nag_mom_update", (1,), 5),
}


def _optimizer(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    """One launch per weight (the multi_ forms push one operator call per weight). CPU inputs
    and outputs (csrc/kernels/optimizer_ops.h): msgd (w, g[, mom][, lrs, wds]) -> (w[, mom]);
    mp_sgd (w, g, w32) -> (w, w32); mp_msgd (w, g[, mom], w32[, lrs, wds]) -> (w[, mom], w32);
    mp_nag (w, g, mom, w32) -> (w, mom, w32); adamw (w, g, mean, var, scale) -> (w, mean,
    var); mp_adamw (w, g, mean, var, w32, scale) -> (w, mean, var, w32)."""
    if fattr is None:
        return None
    k = kernel.split(":", 1)[1]
    w = inputs[0]
    n, c = _size(w), ctype(w.dtype)
    fs = [("f64", float(v)) for v in fattr]
    ia = tuple(int(v) for v in (iattr or ()))
    if k in ("msgd", "mp_msgd"):
        # iattr (has_mom, preloaded index): preloaded_ forms read lr and wd from the last two
        # inputs (float32 arrays) at that index
        has_mom = bool(ia[0]) if ia else len(outputs) > (2 if k == "mp_msgd" else 1)
        li = ia[1] if len(ia) > 1 else -1
        if li >= 0:
            lrwd = [("in", len(inputs) - 2), ("in", len(inputs) - 1)]
        else:
            lrwd = [("ptr", 0), ("ptr", 0)]
        mom = ("out", 1) if has_mom else ("ptr", 0)
        if len(fs) < 5:
            return None
        if k == "msgd":
            return _launch("optimizer_ops", "mxc_sgd_mom_update<%s>" % c, n,
                           [("in", 0), ("in", 1), mom] + lrwd +
                           [("out", 0), ("i64", n), ("i64", max(li, 0))] + fs[:5])
        w32 = ("out", 2 if has_mom else 1)
        return _launch("optimizer_ops", "mxc_mp_sgd_mom_update<%s>" % c, n,
                       [("in", 1), mom, w32] + lrwd +
                       [("out", 0), ("i64", n), ("i64", max(li, 0))] + fs[:5])
    if k == "mp_sgd" and len(fs) >= 4:
        return _launch("optimizer_ops", "mxc_mp_sgd_update<%s>" % c, n,
                       [("in", 1), ("out", 1), ("out", 0), ("i64", n)] + fs[:4])
    if k == "mp_nag" and len(fs) >= 5:
        return _launch("optimizer_ops", "mxc_mp_nag_mom_update<%s>" % c, n,
                       [("in", 1), ("out", 1), ("out", 2), ("out", 0), ("i64", n)] + fs[:5])
    if k in ("adamw", "mp_adamw") and len(fs) >= 7:
        if np.dtype(inputs[-1].dtype) != np.float32:
            return None
        multi = ("i32", ia[0] if ia else 0)
        if k == "adamw":
            return _launch("optimizer_ops", "mxc_adamw_update<%s>" % c, n,
                           [("in", 0), ("in", 1), ("out", 1), ("out", 2), ("in", 4), ("out", 0),
                            ("i64", n)] + fs[:7] + [multi])
        return _launch("optimizer_ops", "mxc_mp_adamw_update<%s>" % c, n,
                       [("in", 0), ("in", 1), ("out", 1), ("out", 2), ("out", 3), ("in", 5),
                        ("out", 0), ("i64", n)] + fs[:7] + [multi])
    if k in ("lamb1", "mp_lamb1") and len(fs) >= 8:
        # (w, g, mean, var[, w32]) -> (direction, mean, var); the mp_ form reads w32
        src = ("in", 4) if k == "mp_lamb1" else ("in", 0)
        return _launch("optimizer_ops", "mxc_%s_update<%s>" % (k, c), n,
                       [src, ("in", 1), ("out", 1), ("out", 2), ("out", 0), ("i64", n)] +
                       fs[:8] + [("i32", ia[0] if ia else 1)])
    if k in ("lamb2", "mp_lamb2") and len(fs) >= 3:
        # (w, g, r1, r2[, w32]) -> w
        src = ("in", 4) if k == "mp_lamb2" else ("in", 0)
        return _launch("optimizer_ops", "mxc_%s_update<%s>" % (k, c), n,
                       [src, ("in", 1), ("in", 2), ("in", 3), ("out", 0), ("i64", n)] + fs[:3])
    if k == "adagrad" and len(fs) >= 4:
        return _launch("optimizer_ops", "mxc_adagrad_update<%s>" % c, n,
                       [("in", 0), ("in", 1), ("out", 1), ("out", 0), ("i64", n)] + fs[:4])
    spec = _OPT.get(k)
    if spec is None or len(fs) < spec[2]:
        return None
    tmpl, states, nf = spec
    args = [("in", 0), ("in", 1)] + [("out", s) for s in states] + [("out", 0), ("i64", n)]
    return _launch("optimizer_ops", "%s<%s>" % (tmpl, c), n, args + fs[:nf])


# ---- init, random -----------------------------------------------------------------------------
def _init(kernel, attrs, inputs, outputs, iattr, fattr):
    y = outputs[0]
    n, c = _size(y), ctype(y.dtype)
    if kernel == "fill" and fattr:
        return _launch("init", "mxc_fill<%s>" % c, n, [("out", 0), ("i64", n), ("f64", float(fattr[0]))])
    if kernel == "arange" and fattr and len(fattr) >= 2:
        return _launch("init", "mxc_arange<%s>" % c, n,
                       [("out", 0), ("i64", n), ("f64", float(fattr[0])), ("f64", float(fattr[1])),
                        ("i64", int(attrs.get("repeat", 1) or 1))])
    if kernel == "eye":
        rows = int(y.shape[0])
        return _launch("init", "mxc_eye<%s>" % c, n,
                       [("out", 0), ("i64", rows), ("i64", n // max(1, rows)),
                        ("i64", int(iattr[0]) if iattr else int(attrs.get("k", 0)))])
    return None


_FIXED_DISTS = {"uniform": 0, "normal": 1, "exponential": 2}
_REJECT_DISTS = {"gamma": 0, "poisson": 1, "negative_binomial": 2,
                 "generalized_negative_binomial": 3}


def _random(kernel, attrs, inputs, outputs, iattr, fattr):
    """CPU attributes: iattr (key, counter base, ...), fattr (distribution parameters). The
    _sample_* forms pass one or two parameter arrays as inputs instead: they are cast to double
    into the workspace first (the kernels read double parameters, as the CPU's)."""
    if kernel == "multinomial_backward" and len(inputs) == 3:
        g, p, smp = inputs                 # (grad of log p (N * M), p (N, K), samples (N * M))
        K = int(p.shape[-1]) if p.ndim else 1
        N = _size(p) // K if K else 0
        M = _size(smp) // N if N else 0
        return _launch("random", "mxc_multinomial_grad<%s, %s>" % (ctype(p.dtype),
                                                                   ctype(smp.dtype)), N,
                       [("in", 0), ("in", 1), ("in", 2), ("out", 0), ("i64", N), ("i64", K),
                        ("i64", M)])
    if not iattr or len(iattr) < 2:
        return None
    key, base = int(iattr[0]) & (2**64 - 1), int(iattr[1]) & (2**64 - 1)
    y = outputs[-1]
    n, c = _size(y), ctype(y.dtype)
    if kernel == "dropout":
        if len(inputs) == 1 and len(outputs) == 2:
            xs = [("in", 0), ("out", 0), ("out", 1)]
        elif not inputs and len(outputs) == 1:
            xs = [("ptr", 0), ("ptr", 0), ("out", 0)]
        else:
            return None
        return _launch("random", "mxc_dropout<%s>" % c, -(-n // 4),
                       xs + [("i64", n), ("u64", key), ("u64", base), ("f32", float(fattr[0]))])
    if kernel in _FIXED_DISTS or kernel in _REJECT_DISTS:
        launches, ws = [], 0
        pargs = [("ptr", 0), ("ptr", 0)]
        nbatch = 1
        if inputs:
            if len(inputs) > 2:
                return None
            np_ = _size(inputs[0])
            if np_ < 1 or any(_size(t) != np_ for t in inputs):
                return None
            nbatch = max(1, n // np_)
            for j, t in enumerate(inputs):
                launches.append(_launch("elemwise", "mxc_cast<%s, double>" % ctype(t.dtype), np_,
                                        [("in", j), ("ws", ws), ("i64", np_)]))
                pargs[j] = ("ws", ws)
                ws += 8 * np_
        p = [float(v) for v in (fattr or ())] + [0.0, 0.0]
        args = [("out", 0), ("i64", n), ("u64", key), ("u64", base)] + pargs + \
            [("f64", p[0]), ("f64", p[1]), ("i64", nbatch)]
        if kernel in _REJECT_DISTS:
            gen = _launch("random", "mxc_random_reject<%s, %d>" % (c, _REJECT_DISTS[kernel]), n,
                          args)
        elif c == "double":
            gen = _launch("random", "mxc_random64<%d>" % _FIXED_DISTS[kernel], -(-n // 2), args)
        else:
            gen = _launch("random", "mxc_random32<%s, %d>" % (c, _FIXED_DISTS[kernel]),
                          -(-n // 4), args)
        if not launches:
            return gen
        return {"launches": launches + [gen], "workspace": ws}
    if kernel == "multinomial" and len(inputs) == 1:
        p = inputs[0]
        K = int(p.shape[-1]) if p.ndim else 1
        N = _size(p) // K if K else 0
        M = _size(outputs[0]) // N if N else 0
        logp = ("out", 1) if len(outputs) > 1 else ("ptr", 0)
        return _launch("random", "mxc_multinomial<%s, %s>" % (ctype(p.dtype),
                                                              ctype(outputs[0].dtype)), N * M,
                       [("in", 0), ("out", 0), logp, ("i64", N), ("i64", K), ("i64", M),
                        ("u64", key), ("u64", base)])
    if kernel == "randint" and len(iattr) >= 4:
        low, rng = int(iattr[2]), (int(iattr[3]) - int(iattr[2])) & (2**64 - 1)
        if c == "int":
            return _launch("random", "mxc_randint32", -(-n // 4),
                           [("out", 0), ("i64", n), ("u64", key), ("u64", base), ("i64", low), ("u64", rng)])
        if c == "long long":
            return _launch("random", "mxc_randint64", -(-n // 2),
                           [("out", 0), ("i64", n), ("u64", key), ("u64", base), ("i64", low), ("u64", rng)])
    return None


# ---- shape ------------------------------------------------------------------------------------
_BYTES_T = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}


def index_map_bytes(begin, shape, stride, div=None, mod=None):
    nd = len(shape)
    if nd > 8:
        raise TypeError("index maps hold at most 8 dims")   # launch_spec: no GPU launch
    div = div or [1] * nd
    mod = mod or [1 << 62] * nd
    return i64s(nd, begin, *(_pad(shape, 1) + _pad(stride) + _pad(div, 1) + _pad(mod, 1 << 62)))


def _cstrides(shape):
    st, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        st[d] = acc
        acc *= shape[d]
    return st


def _shape(kernel, attrs, inputs, outputs, iattr, fattr):
    x, y = inputs[0], outputs[0]
    n = _size(y)
    t = _BYTES_T[np.dtype(y.dtype).itemsize]
    xs, ys = tuple(x.shape), tuple(y.shape)
    st = _cstrides(xs)
    if kernel == "transpose":
        axes = attrs.get("axes") or tuple(range(len(xs)))[::-1]
        m = index_map_bytes(0, ys, [st[a] for a in axes])
    elif kernel == "broadcast_to":
        m = index_map_bytes(0, ys, bcast_strides(xs, ys))
    elif kernel == "flip":
        axes = attrs.get("axis")
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
        axes = [a % len(xs) for a in axes]
        begin = sum((xs[a] - 1) * st[a] for a in axes)
        m = index_map_bytes(begin, ys, [-st[d] if d in axes else st[d] for d in range(len(xs))])
    elif kernel == "slice" and iattr and len(iattr) == 2 * len(xs):
        # iattr: per-axis start then per-axis step (mxc/ops/shape.py slice_plan)
        starts, steps = iattr[:len(xs)], iattr[len(xs):]
        m = index_map_bytes(sum(int(b) * st[d] for d, b in enumerate(starts)), ys,
                            [int(k) * st[d] for d, k in enumerate(steps)])
    elif kernel in ("slice_assign", "slice_assign_scalar") and iattr and \
            len(iattr) >= 2 * len(xs):
        # inputs (dst, value) or (dst,), output dst's buffer (copy_then_inplace copied dst into
        # it): write the value (or the scalar) at the slice's positions
        nd = len(xs)
        starts, steps = iattr[:nd], iattr[nd:2 * nd]
        begin = sum(int(b) * st[d] for d, b in enumerate(starts))
        stride = [int(k) * st[d] for d, k in enumerate(steps)]
        if kernel == "slice_assign":
            if len(inputs) < 2:
                return None
            vs = tuple(inputs[1].shape)
            nv = _size(inputs[1])
            return _launch("shape", "mxc_scatter_map<%s>" % t, nv,
                           [("in", 1), ("out", 0), ("i64", nv), index_map_bytes(begin, vs, stride)])
        if len(iattr) < 3 * nd:
            return None
        lens = [int(v) for v in iattr[2 * nd:3 * nd]]
        nv = int(np.prod(lens)) if lens else 1
        kind, bits = scalar_bits(float(fattr[0]) if fattr else 0.0, y.dtype)
        return _launch("shape", "mxc_scatter_value<%s>" % t, nv,
                       [("out", 0), ("i64", nv), index_map_bytes(begin, lens, stride),
                        (kind, bits)])
    elif kernel in ("concat", "split") and iattr:
        # one gather per part: concat copies input j into its slab of the output; split copies
        # the slab of output j out of the input
        axis = int(iattr[0])
        parts = inputs if kernel == "concat" else outputs
        whole = ys if kernel == "concat" else xs
        wst = _cstrides(whole)
        launches, off = [], 0
        for j, part in enumerate(parts):
            ps = tuple(part.shape)
            if len(ps) != len(whole):
                return None   # squeezed split outputs: the front end passes them with the axis kept
            pn = _size(part)
            if pn:
                if kernel == "concat":
                    # out[slab] = in_j: scatter in_j's elements to the slab offsets
                    m = index_map_bytes(off * wst[axis], ps, wst)
                    launches.append(_launch("shape", "mxc_scatter_map<%s>" % t, pn,
                                            [("in", j), ("out", 0), ("i64", pn), m]))
                else:
                    m = index_map_bytes(off * wst[axis], ps, wst)
                    launches.append(_launch("shape", "mxc_gather_map<%s>" % t, pn,
                                            [("in", 0), ("out", j), ("i64", pn), m]))
            off += ps[axis]
        return {"launches": launches}
    elif kernel == "take" and iattr and len(iattr) >= 2 and iattr[1] in (0, 1, 2):
        axis, mode = int(iattr[0]) % len(xs), int(iattr[1])
        idx = inputs[1]
        outer = int(np.prod(xs[:axis])) if axis else 1
        inner = int(np.prod(xs[axis + 1:])) if axis + 1 < len(xs) else 1
        N = int(xs[axis])
        if n and not N:
            return {"launches": [], "check": _fail(
                "take: cannot take from axis %d of size 0" % axis)}
        spec = _launch("gather", "mxc_take<%s, %s>" % (ctype(x.dtype), ctype(idx.dtype)), n,
                       [("in", 0), ("in", 1), ("out", 0), ("i64", outer), ("i64", N),
                        ("i64", inner), ("i64", _size(idx)), ("i32", 0 if mode == 2 else mode)])
        if mode != 2 or spec is None:
            return spec
        # raise: the indices are checked on the device first (a failed check skips the launch
        # and the error reaches the next wait), then taken with clip, which leaves them alone
        return {"launches": [spec], "check": _bounds_check(
            1, [(0, N)], "take: index {v} is out of bounds for axis %d with size %d" % (axis, N))}
    elif kernel == "scatter_rows" and len(inputs) == 3:
        # x[int_array] = v: inputs (dst, idx, value), output dst's buffer; scatter_nd's set with
        # one index dimension (negative rows count from the end; the range is checked first)
        idx = inputs[1]
        N, m = int(xs[0]), _size(idx)
        row = _size(x) // N if N else 0
        if not m * row:
            return {"launches": []}
        spec = _launch("gather", "mxc_scatter_nd<%s, %s, false>" % (ctype(y.dtype),
                                                                   ctype(idx.dtype)), m * row,
                       [("in", 2), ("in", 1), ("out", 0), ("i64", m), ("i64", 1), ("i64", row),
                        index_map_bytes(0, [N], [0]), ("i32", 0)])
        if spec is None:
            return None
        return {"launches": [spec], "check": _bounds_check(
            1, [(-N, N)], "scatter_rows: index {v} is out of bounds for axis 0 with size {d}")}
    elif kernel == "one_hot" and iattr and fattr:
        depth = int(iattr[0])
        return _launch("gather", "mxc_one_hot<%s, %s>" % (ctype(y.dtype), ctype(x.dtype)), n,
                       [("in", 0), ("out", 0), ("i64", _size(x)), ("i64", depth),
                        ("f64", float(fattr[0])), ("f64", float(fattr[1]))])
    else:
        return None
    return _launch("shape", "mxc_gather_map<%s>" % t, n, [("in", 0), ("out", 0), ("i64", n), m])


# ---- ordering: sort / argsort / topk through a padded bitonic sort --------------------------
def _ordering(kernel, attrs, inputs, outputs, iattr, fattr):
    """CPU attributes iattr (pre, n, post, k, ret, ascend); ret 0 values, 1 indices, 2 the 0/1
    mask (data-shaped, the data's dtype), 3 both."""
    if kernel != "topk" or not iattr or len(iattr) < 6 or int(iattr[4]) not in (0, 1, 2, 3):
        return None
    pre, n, post, k, ret, ascend = (int(v) for v in iattr[:6])
    x = inputs[0]
    rows = pre * post
    p = 1
    while p < n:
        p *= 2
    keys_bytes = 8 * rows * p
    c = ctype(x.dtype)
    if ret in (0, 2):
        vals, idx, ci = ("out", 0), ("ptr", 0), c
    elif ret == 1:
        vals, idx, ci = ("ptr", 0), ("out", 0), ctype(outputs[0].dtype)
    else:
        vals, idx, ci = ("out", 0), ("out", 1), ctype(outputs[1].dtype)
    launches = [_launch("ordering", "mxc_sort_prepare<%s>" % c, rows * p,
                        [("in", 0), ("ws", 0), ("ws", keys_bytes), ("i64", pre), ("i64", n),
                         ("i64", post), ("i64", p), ("i32", ascend)])]
    size = 2
    while size <= p:
        step = size // 2
        while step >= 1:
            launches.append(_launch("ordering", "mxc_bitonic_step", rows * p,
                                    [("ws", 0), ("ws", keys_bytes), ("i64", rows), ("i64", p),
                                     ("i64", size), ("i64", step)]))
            step //= 2
        size *= 2
    if ret == 2:
        total = pre * n * post
        launches.insert(0, _launch("init", "mxc_fill<%s>" % c, total,
                                   [("out", 0), ("i64", total), ("f64", 0.0)]))
        launches.append(_launch("ordering", "mxc_sort_mask<%s>" % c, rows * k,
                                [("ws", keys_bytes), ("out", 0), ("i64", pre), ("i64", n),
                                 ("i64", post), ("i64", p), ("i64", k)]))
    else:
        launches.append(_launch("ordering", "mxc_sort_finish<%s, %s>" % (c, ci), rows * k,
                                [("in", 0), ("ws", keys_bytes), vals, idx, ("i64", pre),
                                 ("i64", n), ("i64", post), ("i64", p), ("i64", k)]))
    return {"launches": launches, "workspace": 2 * keys_bytes}


# ---- checks on the device before a launch ---------------------------------------------------
# A spec may carry "check": check(xp, inputs) -> None or an error message, run on the device's
# worker with xp = CuPy and the inputs as CuPy views (on the engine's stream, reading back one
# flag), before the spec's launches; a message fails the operator (its outputs get the error,
# its launches are skipped). Tests call the same checks with xp = numpy.
def _fail(message):
    def check(xp, inputs):
        return message
    return check


def _bounds_check(j, bounds, message):
    """Input j holds len(bounds) rows of indices (one row per bound when there are several:
    gather_nd's (M, N)); row m must lie in [lo, hi) after the CPU's conversion (floats truncate
    toward zero, NaN is out). message: a format with {v} (the first bad index), {m} (its row),
    {d} (that row's hi)."""
    def check(xp, inputs):
        idx = inputs[j]
        rows = idx.reshape((len(bounds), -1)) if len(bounds) > 1 else idx.reshape((1, -1))
        for m, (lo, hi) in enumerate(bounds):
            v = rows[m].astype(xp.float64)
            # trunc(v) in [lo, hi) <=> lo - 1 < v < hi for integer bounds; NaN fails both
            bad = ~((v > lo - 1) & (v < hi))
            if bool(bad.any()):
                first = float(v[int(xp.argmax(bad))])
                shown = str(int(first)) if np.isfinite(first) else "%r (NaN or too large)" % first
                return message.format(v=shown, m=m, d=hi)
        return None
    return check


def scalar_bits(value, dtype):
    """(kind, value) of a launch argument holding `value` converted to `dtype`'s storage bits as
    the CPU's slice_assign_scalar converts it: floats round to nearest, integers truncate toward
    zero through int64 and wrap, NaN -> 0, bool = value != 0."""
    dt = np.dtype(dtype)
    size = dt.itemsize
    kind = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}[size]
    v = float(value)
    if dt.kind == "f":
        with np.errstate(over="ignore"):
            raw = np.array(v, dtype=np.float64).astype(dt).tobytes()
    elif dt.kind == "b":
        raw = bytes([1 if v != 0 else 0])
    else:
        i = 0 if v != v else (2**63 - 1 if v >= 9.2e18 else (-2**63 if v <= -9.2e18 else int(v)))
        raw = (i & (2**(8 * size) - 1)).to_bytes(size, "little")
    return kind, int.from_bytes(raw, "little")


# ---- gather family (csrc/kernels/gather.h's kernels) ------------------------------------------
def _gather(kernel, attrs, inputs, outputs, iattr, fattr):
    """take_along (pick, _take_along_axis): in (x, idx), iattr (pre, n, post, k, mode);
    put_along (_backward_pick): in (g, idx[, data]), out (pre, n, post), iattr as take_along;
    gather_nd: in (x, idx (M, N)), iattr (M,); scatter_nd: in (data, idx) or (dst, data, idx),
    iattr (M, add, has_dst, clip)."""
    if not iattr:
        return None
    ia = [int(v) for v in iattr]
    y = outputs[0]
    if kernel in ("take_along", "put_along") and len(ia) >= 5:
        pre, n, post, k, mode = ia[:5]
        idx = inputs[1]
        tname = "%s, %s" % (ctype(y.dtype), ctype(idx.dtype))
        if kernel == "take_along":
            total = pre * k * post
            if total and not n:
                return {"launches": [], "check": _fail("pick: cannot pick from an axis of size 0")}
            return _launch("gather", "mxc_pick<%s>" % tname, total,
                           [("in", 0), ("in", 1), ("out", 0), ("i64", pre), ("i64", n),
                            ("i64", post), ("i64", k), ("i32", mode)])
        return _launch("gather", "mxc_pick_grad<%s>" % tname, pre * post,
                       [("in", 0), ("in", 1), ("out", 0), ("i64", pre), ("i64", n),
                        ("i64", post), ("i64", k if n else 0), ("i32", mode)])
    if kernel == "gather_nd":
        x, idx = inputs[0], inputs[1]
        M = ia[0]
        N = _size(idx) // M if M else 0
        dims = [int(d) for d in tuple(x.shape)[:M]]
        K = _size(x) // max(1, int(np.prod(dims))) if dims else _size(x)
        spec = _launch("gather", "mxc_gather_nd<%s, %s>" % (ctype(x.dtype), ctype(idx.dtype)),
                       N * K, [("in", 0), ("in", 1), ("out", 0), ("i64", N), ("i64", M),
                               ("i64", K), index_map_bytes(0, dims, [0] * M)])
        if spec is None or not N * K:
            return {"launches": []} if spec is not None else None
        return {"launches": [spec], "check": _bounds_check(
            1, [(-d, d) for d in dims],
            "gather_nd: index {v} is out of bounds for dimension {m} with size {d}")}
    if kernel == "scatter_nd" and len(ia) >= 4:
        M, add, has_dst, clip = ia[:4]
        vi, ii = (1, 2) if has_dst else (0, 1)
        if len(inputs) <= ii:
            return None
        idx = inputs[ii]
        N = _size(idx) // M if M else 0
        dims = [int(d) for d in tuple(y.shape)[:M]]
        K = _size(y) // max(1, int(np.prod(dims))) if dims else _size(y)
        c = ctype(y.dtype)
        launches = []
        if not has_dst:
            total = _size(y)
            launches.append(_launch("init", "mxc_fill<%s>" % c, total,
                                    [("out", 0), ("i64", total), ("f64", 0.0)]))
        if N * K:
            launches.append(_launch(
                "gather", "mxc_scatter_nd<%s, %s, %s>" % (c, ctype(idx.dtype),
                                                          "true" if add else "false"),
                N * K, [("in", vi), ("in", ii), ("out", 0), ("i64", N), ("i64", M), ("i64", K),
                        index_map_bytes(0, dims, [0] * M), ("i32", 1 if clip else 0)]))
        spec = {"launches": launches}
        if N * K and not clip:
            spec["check"] = _bounds_check(
                ii, [(-d, d) for d in dims],
                "scatter_nd: index {v} is out of bounds for dimension {m} with size {d}")
        return spec
    return None


# ---- add_n ------------------------------------------------------------------------------------
def _shape_extra(kernel, attrs, inputs, outputs, iattr, fattr):
    """add_n / ElementWiseSum: eight inputs per launch, later launches add into the output (the
    output must then not be one of those later inputs: add_n's outputs are fresh arrays)."""
    if kernel != "add_n" or not inputs:
        return None
    y = outputs[0]
    n, c = _size(y), ctype(y.dtype)
    launches = []
    for g0 in range(0, len(inputs), 8):
        group = [("in", j) for j in range(g0, min(g0 + 8, len(inputs)))]
        group += [("ptr", 0)] * (8 - len(group))
        launches.append(_launch("elemwise", "mxc_add_n<%s>" % c, n,
                                group + [("out", 0), ("i64", n), ("i32", 1 if g0 else 0)]))
    return launches[0] if len(launches) == 1 else {"launches": launches}


# ---- GEMM (cuBLAS through CuPy) ---------------------------------------------------------------
# The "gemm" CPU kernel (csrc/kernels/dot.h) behind dot, batch_dot, FullyConnected and
# linalg_gemm/gemm2: O[b] = alpha op(A[b]) op(B[b]) (+ bias row | + beta C[b]), row-major
# matrices with row pitch ld, matrix b = bo * ninner + bi at bo * so + bi * si of its tensor.
# cuBLAS is column-major: a row-major M x N matrix with pitch ld is, to cuBLAS, its N x M
# transpose with leading dimension ld. So O^T = op(B)^T op(A)^T is one column-major GEMM with
# the operands swapped: m = N, n = M, k = K, A' = B (op 'T' iff transB, lda = B's ld),
# B' = A (op 'T' iff transA, ldb = A's ld), C' = O (ldc = O's ld). No data moves.
OP_N, OP_T = 0, 1          # cublasOperation_t
CUDA_R_32F, CUDA_R_64F, CUDA_R_16F = 0, 1, 2
CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F, CUBLAS_COMPUTE_32F_FAST_TF32 = 68, 70, 77
CUBLAS_GEMM_DEFAULT = -1


def float32_compute():
    """cuBLAS compute type of float32 GEMMs: exact float32 (the CPU's results) unless both
    MXNET_CUDA_ALLOW_TENSOR_CORE and MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION are 1 (MXNet's
    switches for letting tensor cores convert float32), which selects TF32."""
    import os
    on = all(os.environ.get(k, "0") == "1" for k in ("MXNET_CUDA_ALLOW_TENSOR_CORE",
                                                      "MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION"))
    return CUBLAS_COMPUTE_32F_FAST_TF32 if on else CUBLAS_COMPUTE_32F


def gemm_plan(iattr, fattr, dtype):
    """The cuBLAS calls of one "gemm" kernel call, in elements: a dict with "calls" (each:
    transa, transb, m, n, k, a_off, lda, stride_a, b_off, ldb, stride_b, c_off, ldc, stride_c,
    batch; "a" is the cuBLAS A operand, i.e. mxc's B), "alpha", "beta", and "prep": None,
    "bias" (copy the bias row into every row of O first) or "copy_c" (copy C into O first).
    None when the layout is not one cuBLAS can take."""
    ia = [int(v) for v in iattr]
    nouter, ninner, M, N, K, ta, tb, cmode = ia[:8]
    la, lb, lc, lo = ia[8:11], ia[11:14], ia[14:17], ia[17:20]
    alpha = float(fattr[0]) if fattr else 1.0
    beta = float(fattr[1]) if fattr and len(fattr) > 1 else 0.0
    if np.dtype(dtype).name not in FLOATS:
        return None
    prep = None
    if cmode == 1:
        # FullyConnected's bias: O must be dense rows of N for the row copy
        if lo[2] != N:
            return None
        prep, beta = "bias", 1.0
    elif cmode == 2:
        if tuple(lc) != tuple(lo):
            return None
        prep = "copy_c"
    else:
        beta = 0.0
    calls = []
    if M and N:
        # one strided-batched call over the longer batch index; a loop over the other
        if ninner == 1 or nouter == 1:
            groups = [(0, nouter * ninner, 2 if ninner == 1 else 3)]
        else:
            groups = [(bo, ninner, 3) for bo in range(nouter)]
        for bo, count, which in groups:
            def off(l):
                return bo * l[0]

            def stride(l):
                return l[0] if which == 2 else l[1]
            calls.append({"transa": OP_T if tb else OP_N, "transb": OP_T if ta else OP_N,
                          "m": N, "n": M, "k": K,
                          "a_off": off(lb), "lda": max(1, lb[2]), "stride_a": stride(lb),
                          "b_off": off(la), "ldb": max(1, la[2]), "stride_b": stride(la),
                          "c_off": off(lo), "ldc": max(1, lo[2]), "stride_c": stride(lo),
                          "batch": count})
    return {"calls": calls, "alpha": alpha, "beta": beta, "prep": prep, "M": M, "N": N}


def _gemm_run(plan, dtype):
    """The device-side run(cupy_inputs, cupy_outputs) of a plan: on the engine's stream (the
    caller made it CuPy's current stream; CuPy's cuBLAS wrappers set it on the handle)."""
    dt = np.dtype(dtype)

    def run(cin, cout):
        import cupy
        from cupy.cuda import device
        try:
            from cupy_backends.cuda.libs import cublas
        except ImportError:          # CuPy before the cupy_backends split
            from cupy.cuda import cublas
        a, b, o = cin[0], cin[1], cout[0]
        if plan["prep"] == "bias":
            o.reshape((-1, plan["N"]))[...] = cin[2].reshape((1, plan["N"]))
        elif plan["prep"] == "copy_c" and o.data.ptr != cin[2].data.ptr:
            cupy.copyto(o, cin[2].reshape(o.shape))
        if dt == np.float64:
            ctype_, comp, scal = CUDA_R_64F, CUBLAS_COMPUTE_64F, np.float64
        elif dt == np.float32:
            ctype_, comp, scal = CUDA_R_32F, float32_compute(), np.float32
        else:
            # float16 multiplies with float32 accumulation and scalars, as the CPU's sgemm path
            ctype_, comp, scal = CUDA_R_16F, CUBLAS_COMPUTE_32F, np.float32
        alpha = np.array(plan["alpha"], dtype=scal)
        beta = np.array(plan["beta"], dtype=scal)
        es = dt.itemsize
        handle = device.get_cublas_handle()
        for c in plan["calls"]:
            cublas.gemmStridedBatchedEx(
                handle, c["transa"], c["transb"], c["m"], c["n"], c["k"], alpha.ctypes.data,
                b.data.ptr + es * c["a_off"], ctype_, c["lda"], c["stride_a"],
                a.data.ptr + es * c["b_off"], ctype_, c["ldb"], c["stride_b"],
                beta.ctypes.data, o.data.ptr + es * c["c_off"], ctype_, c["ldc"], c["stride_c"],
                c["batch"], comp, CUBLAS_GEMM_DEFAULT)
    return run


def _dot(kernel, attrs, inputs, outputs, iattr, fattr):
    if kernel != "gemm" or not iattr or len(iattr) < 20:
        return None
    plan = gemm_plan(iattr, fattr, outputs[0].dtype)
    if plan is None:
        return None
    return {"cublas": _gemm_run(plan, outputs[0].dtype), "plan": plan}


_BUILDERS = {"elemwise": _elemwise, "reduce": _reduce, "activation": _activation, "init": _init,
             "random": _random, "shape": _shape, "ordering": _ordering, "gather": _gather,
             "shape_extra": _shape_extra, "dot": _dot}


def launch_spec(opname, attrs, inputs, outputs, family=None, kernel=None, iattr=None,
                fattr=None):
    """The GPU launch of operator `opname` whose CPU kernel is (family, kernel), given the
    integer and float attributes (iattr, fattr) that the operator's kernel_forward computes for
    the CPU kernel (the GPU kernels read the same values: scalars, axis masks, random key and
    counter, optimizer hyper-parameters in the CPU's order). None: no GPU kernel yet."""
    attrs = attrs if isinstance(attrs, dict) else {}
    iattr = None if iattr is None else tuple(iattr)
    fattr = None if fattr is None else tuple(fattr)
    try:
        if family in _BUILDERS:
            return _BUILDERS[family](kernel, attrs, inputs, outputs, iattr, fattr)
        if family == "softmax":
            return _softmax(opname, kernel, attrs, inputs, outputs, iattr, fattr)
        if family == "optimizer_ops":
            return _optimizer(opname, kernel, attrs, inputs, outputs, iattr, fattr)
    except TypeError:   # a dtype without kernels, or more dims than an index map holds
        return None
    return None
