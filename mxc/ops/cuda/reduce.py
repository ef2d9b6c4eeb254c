"""Launches of the reductions (ops/reduce.py, csrc/kernels/reduce.h) on the GPU: reduce.cu."""
import numpy as np

from ._launch import DTYPES, TRAIN_FLOATS, CTYPE, BLOCK, ctype, i64s, pad, launch, nelem


_ARG = ("argmax", "argmin")


def reducers():
    """The reduce.cu functors (r_<name>) of the registry's reduce kernels: "reduce:<name>" but
    argmax / argmin (their own kernel); norm is r_norm1 or r_norm2 by its ord."""
    from .. import registry
    out = []
    for name in registry.kernel_names("reduce", "reduce"):
        if name not in _ARG:
            out += ["norm1", "norm2"] if name == "norm" else [name]
    return out


def instantiations():
    """Every name expression of reduce.cu."""
    out = []
    for dt in DTYPES + ("bool", "bfloat16"):
        c = CTYPE[dt]
        acc = "double" if dt in TRAIN_FLOATS else "long long"
        for r in reducers():
            out += ["mxc_reduce_rows<mxc::r_%s, %s, %s>" % (r, c, c),
                    "mxc_reduce_cols<mxc::r_%s, %s, %s>" % (r, c, c),
                    "mxc_reduce_parts<mxc::r_%s, %s, %s>" % (r, acc, c)]
        for m in ("true", "false"):
            # MXNet 1.9.1's argmax/argmin give the index in the input's dtype
            out.append("mxc_argreduce<%s, %s, %s>" % (m, c, c))
    out.append("mxc_finite_init")
    out += ["mxc_all_finite<%s>" % CTYPE[dt] for dt in TRAIN_FLOATS]
    return out


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
    packed = i64s(len(keep), *(pad([n for n, _ in keep], 1) + pad([s for _, s in keep]) +
                               [len(red)] + pad([n for n, _ in red], 1) +
                               pad([s for _, s in red])))
    return nout, count, packed, (red[-1][1] == 1 if red else True)


def all_finite(inputs, init_output):
    """all_finite / multi_all_finite (ops/misc_ops.py): out (1,) float32 = 1 (when init_output)
    then 0 if an element of a float input is not finite; integer inputs are always finite."""
    launches = []
    if init_output:
        launches.append(launch("reduce", "mxc_finite_init", 1, [("out", 0)], grid=(1,)))
    for i, x in enumerate(inputs):
        n, dt = nelem(x), np.dtype(x.dtype)
        if n and (dt.kind == "f" or dt.name == "bfloat16"):
            launches.append(launch("reduce", "mxc_all_finite<%s>" % ctype(dt), n,
                                   [("in", i), ("out", 0), ("i64", n)]))
    return {"launches": launches}


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    if kernel == "all_finite":
        return all_finite(inputs, bool(tuple(iattr)[0]))
    name = kernel.split(":", 1)[1]
    x, y = inputs[0], outputs[0]
    mask = tuple(iattr.mask) or (1,) * x.ndim
    nout, count, packed, inner_red = reduce_map(tuple(x.shape), mask)
    c, co = ctype(x.dtype), ctype(y.dtype)
    if name in ("argmax", "argmin"):
        return launch("reduce", "mxc_argreduce<%s, %s, %s>" % (
            "true" if name == "argmax" else "false", c, co), nout,
            [("in", 0), ("out", 0), ("i64", nout), ("i64", count), packed],
            grid=(max(1, min(nout, 65535)),))
    if name == "norm":
        r = "norm1" if int(fattr.ord) == 1 else "norm2"
    else:
        r = name     # launch() answers None for a reducer reduce.cu does not instantiate
    if inner_red and count >= 65536 and nout < 2 * 132:
        # few long rows: stage 1 spreads each row over `nparts` blocks writing accumulators
        # into a workspace, stage 2 folds them (one pass over the data at full bandwidth)
        nparts = max(2, min(1024, -(-count // (BLOCK * 16)), -(-4 * 132 // nout)))
        acc = "double" if np.dtype(x.dtype).kind == "f" else "long long"
        stage1 = launch("reduce", "mxc_reduce_rows<mxc::r_%s, %s, %s>" % (r, c, co), nout,
                         [("in", 0), ("out", 0), ("ws", 0), ("i64", nout), ("i64", count),
                          ("i64", nparts), packed], grid=(min(nout * nparts, 65535),))
        stage2 = launch("reduce", "mxc_reduce_parts<mxc::r_%s, %s, %s>" % (r, acc, co), nout,
                         [("ws", 0), ("out", 0), ("i64", nout), ("i64", nparts), ("i64", count)],
                         grid=(max(1, min(nout, 65535)),))
        return {"launches": [stage1, stage2], "workspace": 8 * nout * nparts}
    if inner_red and count >= 32:
        # one block per output row
        return launch("reduce", "mxc_reduce_rows<mxc::r_%s, %s, %s>" % (r, c, co), nout,
                       [("in", 0), ("out", 0), ("ptr", 0), ("i64", nout), ("i64", count),
                        ("i64", 1), packed], grid=(max(1, min(nout, 65535)),))
    return launch("reduce", "mxc_reduce_cols<mxc::r_%s, %s, %s>" % (r, c, co), nout,
                   [("in", 0), ("out", 0), ("i64", nout), ("i64", count), packed])


