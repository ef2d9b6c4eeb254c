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


def inst_random():
    out = ["mxc_random64<%d>" % d for d in range(3)]
    for dt in ("float32", "float16"):
        out += ["mxc_random32<%s, %d>" % (CTYPE[dt], d) for d in range(3)]
    out += ["mxc_randint32", "mxc_randint64"]
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
    out = []
    for c in _c(FLOATS):
        for lg in ("false", "true"):
            out += ["mxc_softmax_rows<%s, %s>" % (lg, c), "mxc_softmax_cols<%s, %s>" % (lg, c),
                    "mxc_softmax_grad<%s, %s>" % (lg, c)]
    return out


OPTIMIZERS = ("sgd", "sgd_mom", "nag_mom", "adam", "adamw", "rmsprop", "rmspropalex", "ftrl",
              "ftml", "signsgd", "signum")


def inst_optimizer_ops():
    out = []
    for c in _c(FLOATS):
        out += ["mxc_%s_update<%s>" % (o, c) for o in OPTIMIZERS]
        out += ["mxc_mp_%s_update<%s>" % (o, c) for o in ("sgd", "sgd_mom", "nag_mom")]
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


def _softmax(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    """CPU attributes: iattr (outer, n, inner, log, negate, use_length), fattr (temperature,)."""
    if not iattr or len(iattr) < 6 or iattr[5]:
        return None   # use_length: not on the GPU yet
    outer, n, inner, logm, neg = (int(v) for v in iattr[:5])
    # softmin(x) = softmax(-x): the kernels scale by 1/t, so a negated temperature negates x
    # (and the backward's final 1/t carries the sign of the chain rule)
    t = float(fattr[0]) if fattr else 1.0
    t = -t if neg else t
    log = "true" if logm else "false"
    y = outputs[0]
    c = ctype(y.dtype)
    if ctype(inputs[-1].dtype) != c:
        return None   # the dtype= output cast: not on the GPU yet
    if kernel == "softmax":
        if inner == 1:
            return _launch("softmax", "mxc_softmax_rows<%s, %s>" % (log, c), outer,
                           [("in", 0), ("out", 0), ("i64", outer), ("i64", n), ("f64", t)],
                           grid=(max(1, min(outer, 65535)),))
        return _launch("softmax", "mxc_softmax_cols<%s, %s>" % (log, c), outer * inner,
                       [("in", 0), ("out", 0), ("i64", outer), ("i64", n), ("i64", inner),
                        ("f64", t)])
    if kernel == "softmax_bwd" and len(inputs) == 2:   # inputs (dy, y)
        return _launch("softmax", "mxc_softmax_grad<%s, %s>" % (log, c), outer * inner,
                       [("in", 1), ("in", 0), ("out", 0), ("i64", outer), ("i64", n),
                        ("i64", inner), ("f64", t)])
    return None


# ---- activation -------------------------------------------------------------------------------
ACT_TYPES = {"relu": 0, "sigmoid": 1, "tanh": 2, "softrelu": 3, "softsign": 4}


def _activation(kernel, attrs, inputs, outputs, iattr, fattr):
    kind, _, t = kernel.partition(":")
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
    if fattr is None:
        return None
    k = kernel.split(":", 1)[1]
    w = inputs[0]
    n, c = _size(w), ctype(w.dtype)
    fs = [("f64", float(v)) for v in fattr]
    if k == "msgd":
        # iattr (has_mom, preloaded index): preloaded lr/wd arrays are not on the GPU yet
        if iattr and len(iattr) > 1 and iattr[1] >= 0:
            return None
        mom = ("out", 1) if len(outputs) > 1 else ("ptr", 0)
        return _launch("optimizer_ops", "mxc_sgd_mom_update<%s>" % c, n,
                       [("in", 0), ("in", 1), mom, ("out", 0), ("i64", n)] + fs[:5])
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


def _random(kernel, attrs, inputs, outputs, iattr, fattr):
    """CPU attributes: iattr (key, counter base, ...), fattr (distribution parameters)."""
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
    dist = {"uniform": 0, "normal": 1, "exponential": 2}.get(kernel)
    if dist is not None and not inputs:
        p = [float(v) for v in (fattr or ())] + [0.0, 0.0]
        args = [("out", 0), ("i64", n), ("u64", key), ("u64", base), ("ptr", 0), ("ptr", 0),
                ("f64", p[0]), ("f64", p[1]), ("i64", 1)]
        if c == "double":
            return _launch("random", "mxc_random64<%d>" % dist, -(-n // 2), args)
        return _launch("random", "mxc_random32<%s, %d>" % (c, dist), -(-n // 4), args)
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
    elif kernel == "take" and iattr and len(iattr) >= 2 and iattr[1] in (0, 1):
        axis, mode = int(iattr[0]), int(iattr[1])   # mode 2 (raise) checks on the host: CPU
        idx = inputs[1]
        outer = int(np.prod(xs[:axis])) if axis else 1
        inner = int(np.prod(xs[axis + 1:])) if axis + 1 < len(xs) else 1
        return _launch("gather", "mxc_take<%s, %s>" % (ctype(x.dtype), ctype(idx.dtype)), n,
                       [("in", 0), ("in", 1), ("out", 0), ("i64", outer), ("i64", xs[axis]),
                        ("i64", inner), ("i64", _size(idx)), ("i32", mode)])
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
    """CPU attributes iattr (pre, n, post, k, ret, ascend); ret 0 values, 1 indices, 3 both
    (2, the 0/1 mask, is not on the GPU yet)."""
    if kernel != "topk" or not iattr or len(iattr) < 6 or int(iattr[4]) not in (0, 1, 3):
        return None
    pre, n, post, k, ret, ascend = (int(v) for v in iattr[:6])
    x = inputs[0]
    rows = pre * post
    p = 1
    while p < n:
        p *= 2
    keys_bytes = 8 * rows * p
    c = ctype(x.dtype)
    if ret == 0:
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
    launches.append(_launch("ordering", "mxc_sort_finish<%s, %s>" % (c, ci), rows * k,
                            [("in", 0), ("ws", keys_bytes), vals, idx, ("i64", pre), ("i64", n),
                             ("i64", post), ("i64", p), ("i64", k)]))
    return {"launches": launches, "workspace": 2 * keys_bytes}


# ---- dot (cuBLAS through CuPy) ----------------------------------------------------------------
def _gemm_run(cin, cout, attrs):
    import cupy
    a, b = cin[0], cin[1]
    if attrs.get("transpose_a"):
        a = cupy.swapaxes(a, -1, -2)
    if attrs.get("transpose_b"):
        b = cupy.swapaxes(b, -1, -2)
    cupy.matmul(a, b, out=cout[0])


def launch_spec(opname, attrs, inputs, outputs, family=None, kernel=None, iattr=None,
                fattr=None):
    """The GPU launch of operator `opname` whose CPU kernel is (family, kernel), given the
    integer and float attributes (iattr, fattr) that the operator's kernel_forward computes for
    the CPU kernel (the GPU kernels read the same values: scalars, axis masks, random key and
    counter, optimizer hyper-parameters in the CPU's order). None: no GPU kernel yet."""
    attrs = attrs or {}
    iattr = None if iattr is None else tuple(iattr)
    fattr = None if fattr is None else tuple(fattr)
    builders = {"elemwise": _elemwise, "reduce": _reduce, "activation": _activation,
                "init": _init, "random": _random, "shape": _shape, "ordering": _ordering}
    try:
        if family in builders:
            return builders[family](kernel, attrs, inputs, outputs, iattr, fattr)
        if family == "softmax":
            return _softmax(opname, kernel, attrs, inputs, outputs, iattr, fattr)
        if family == "optimizer_ops":
            return _optimizer(opname, kernel, attrs, inputs, outputs, iattr, fattr)
        if family == "dot" and kernel == "gemm" and opname in ("dot", "batch_dot", "FullyConnected"):
            return {"cublas": _gemm_run} if opname != "FullyConnected" else None
    except TypeError:   # a dtype without kernels
        return None
    return None
