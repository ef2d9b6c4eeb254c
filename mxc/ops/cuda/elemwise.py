"""Launches of the elementwise CPU kernels (ops/elemwise.py, csrc/kernels/elemwise*.h) on
the GPU: elemwise.cu's unary, binary, scalar, cast, clip and where kernels, and
broadcast.cu's for operands of different shapes. The operator names instantiated are
those of the registry's elemwise kernels (``registry.kernel_names``): adding a unary
operator to ops/elemwise.py and its math to csrc/kernels/unary_math.h is all it takes."""
import numpy as np

from ._launch import (BYTES_T, DTYPES, CTYPE, TRAIN_FLOATS, ctype, i64s, pad, nelem, launch, vec,
                      bcast_strides, collapse)


def ops_of(kind):
    """The <op> of every "<kind>:<op>" elemwise kernel that a registered operator pushes
    ("unary", "binary", "scalar"): the functors elemwise.cu instantiates come from the registry,
    not from a list of their own."""
    from .. import registry
    return registry.kernel_names("elemwise", kind)


def instantiations():
    """Every name expression of elemwise.cu."""
    UNARY = [op for op in ops_of("unary") if op != "copy"]
    BINARY = ops_of("binary")
    SCALAR = sorted(set(ops_of("scalar")) | set(ops_of("rscalar")))
    out = []
    # bfloat16 arrays (ml_dtypes') run the float math of float16's, rounded to nearest even
    for dt in DTYPES + ("bfloat16",):
        c = CTYPE[dt]
        out += ["mxc_unary<mxc::op_%s, %s>" % (op, c) for op in UNARY]
        out += ["mxc_binary<mxc::op_%s, %s>" % (op, c) for op in BINARY]
        out += ["mxc_scalar<mxc::op_%s, %s>" % (op, c) for op in SCALAR]
        out += ["mxc_clip<%s>" % c, "mxc_clip_grad<%s>" % c, "mxc_add_n<%s>" % c]
    for a in DTYPES + ("bool", "bfloat16"):
        for b in DTYPES + ("bool", "bfloat16"):
            out.append("mxc_cast<%s, %s>" % (CTYPE[a], CTYPE[b]))
    for a in DTYPES + ("bool", "bfloat16"):
        for c in DTYPES + ("bool", "bfloat16"):
            out.append("mxc_where<%s, %s>" % (CTYPE[a], CTYPE[c]))
            out.append("mxc_where_grad<%s, %s>" % (CTYPE[a], CTYPE[c]))
    out += ["mxc_copy<%s>" % t for t in BYTES_T.values()]
    return out


# ---- elemwise ---------------------------------------------------------------------------------
def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    y = outputs[0]
    n, c = nelem(y), ctype(y.dtype)
    kind, _, op = kernel.partition(":")
    if kernel == "unary:copy":
        es = np.dtype(y.dtype).itemsize
        t = BYTES_T[es]
        return launch("elemwise", "mxc_copy<%s>" % t, n, [("in", 0), ("out", 0), ("i64", n)],
                       per_thread=max(1, 16 // es))
    if kind == "unary":
        return launch("elemwise", "mxc_unary<mxc::op_%s, %s>" % (op, c), n,
                       [("in", 0), ("out", 0), ("i64", n)], per_thread=vec(y.dtype))
    if kind == "binary":
        a, b = inputs
        if tuple(a.shape) == tuple(y.shape) and tuple(b.shape) == tuple(y.shape):
            return launch("elemwise", "mxc_binary<mxc::op_%s, %s>" % (op, c), n,
                           [("in", 0), ("in", 1), ("out", 0), ("i64", n)],
                           per_thread=vec(y.dtype))
        shp, (sa, sb) = collapse(tuple(y.shape), bcast_strides(a.shape, y.shape),
                                 bcast_strides(b.shape, y.shape))
        return launch("broadcast", "mxc_bcast_binary<mxc::op_%s, %s>" % (op, c), n,
                       [("in", 0), ("in", 1), ("out", 0), ("i64", n),
                        i64s(len(shp), *(pad(shp, 1) + pad(sa) + pad(sb)))])
    if (kernel == "scalar:power" and np.dtype(y.dtype).name in TRAIN_FLOATS
            and np.dtype(y.dtype).type(fattr.scalar) == 2):
        # x ** 2 is x * x, bit for bit as on the CPU (elemwise_binary.h MXC_POWER_SQUARE), where
        # CUDA's pow may be off by an ulp or two
        return launch("elemwise", "mxc_binary<mxc::op_mul, %s>" % c, n,
                       [("in", 0), ("in", 0), ("out", 0), ("i64", n)], per_thread=vec(y.dtype))
    if kind in ("scalar", "rscalar"):
        return launch("elemwise", "mxc_scalar<mxc::op_%s, %s>" % (op, c), n,
                       [("in", 0), ("out", 0), ("i64", n),
                        ("f64", float(fattr.scalar)),
                        ("i32", 1 if kind == "rscalar" else 0)])
    if kernel == "cast":
        return launch("elemwise", "mxc_cast<%s, %s>" % (ctype(inputs[0].dtype), c), n,
                       [("in", 0), ("out", 0), ("i64", n)])
    if kernel == "clip":
        return launch("elemwise", "mxc_clip<%s>" % c, n,
                       [("in", 0), ("out", 0), ("i64", n),
                        ("f64", float(fattr.a_min)), ("f64", float(fattr.a_max))])
    if kernel == "where":
        cond = inputs[0]
        cc = ctype(cond.dtype)
        if all(tuple(t.shape) == tuple(y.shape) for t in inputs) or \
                (cond.ndim == 1 and cond.shape[0] == y.shape[0]):
            return launch("elemwise", "mxc_where<%s, %s>" % (c, cc), n,
                           [("in", 0), ("in", 1), ("in", 2), ("out", 0), ("i64", n),
                            ("i64", n // max(1, nelem(cond)))])
        shp, st = collapse(tuple(y.shape), *[bcast_strides(t.shape, y.shape) for t in inputs])
        return launch("broadcast", "mxc_bcast_where<%s, %s>" % (c, cc), n,
                       [("in", 0), ("in", 1), ("in", 2), ("out", 0), ("i64", n),
                        i64s(len(shp), *(pad(shp, 1) + pad(st[0]) + pad(st[1]) + pad(st[2])))])
    return None


