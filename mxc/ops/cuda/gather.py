"""Launches of pick, gather_nd, scatter_nd and their gradients (ops/gather.py,
csrc/kernels/gather.h) on the GPU: gather.cu."""
import numpy as np

from ._launch import (DTYPES, TRAIN_FLOATS, CTYPE, ctype, nelem, launch, index_map_bytes, fail,
                      bounds_check)


# the index dtypes the gather kernels take
IDX = ("float32", "float64", "int32", "int64", "uint8", "int8", "float16")


def instantiations():
    """Every name expression of gather.cu."""
    out = []
    for dt in DTYPES:
        for it in IDX:
            a, b = CTYPE[dt], CTYPE[it]
            out += ["mxc_take<%s, %s>" % (a, b), "mxc_one_hot<%s, %s>" % (a, b),
                    "mxc_pick<%s, %s>" % (a, b), "mxc_pick_grad<%s, %s>" % (a, b),
                    "mxc_gather_nd<%s, %s>" % (a, b), "mxc_scatter_nd<%s, %s, false>" % (a, b)]
            if dt in TRAIN_FLOATS:
                out += ["mxc_take_grad<%s, %s>" % (a, b), "mxc_scatter_nd<%s, %s, true>" % (a, b)]
    # bfloat16: Embedding (take) and its gradient (scatter-add), take's gradient
    for it in IDX:
        b = CTYPE[it]
        out += ["mxc_take<__nv_bfloat16, %s>" % b, "mxc_take_grad<__nv_bfloat16, %s>" % b,
                "mxc_scatter_nd<__nv_bfloat16, %s, true>" % b]
    return out


# ---- gather family (csrc/kernels/gather.h's kernels) ------------------------------------------
def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    """take_along (pick, _take_along_axis): in (x, idx), slots ALONG_INTS (ops/gather.py: pre,
    n, post, k, mode); put_along (_backward_pick): in (g, idx[, data]), out (pre, n, post), slots
    as take_along; gather_nd: in (x, idx (M, N)), slot M; scatter_nd: in (data, idx) or (dst,
    data, idx), slots M, add, has_dst, clip."""
    y = outputs[0]
    if kernel in ("take_along", "put_along"):
        pre, n, post, k, mode = (int(getattr(iattr, s)) for s in ("pre", "n", "post", "k", "mode"))
        idx = inputs[1]
        tname = "%s, %s" % (ctype(y.dtype), ctype(idx.dtype))
        if kernel == "take_along":
            total = pre * k * post
            if total and not n:
                return {"launches": [], "check": fail("pick: cannot pick from an axis of size 0")}
            return launch("gather", "mxc_pick<%s>" % tname, total,
                           [("in", 0), ("in", 1), ("out", 0), ("i64", pre), ("i64", n),
                            ("i64", post), ("i64", k), ("i32", mode)])
        return launch("gather", "mxc_pick_grad<%s>" % tname, pre * post,
                       [("in", 0), ("in", 1), ("out", 0), ("i64", pre), ("i64", n),
                        ("i64", post), ("i64", k if n else 0), ("i32", mode)])
    if kernel == "gather_nd":
        x, idx = inputs[0], inputs[1]
        M = int(iattr.M)
        N = nelem(idx) // M if M else 0
        dims = [int(d) for d in tuple(x.shape)[:M]]
        K = nelem(x) // max(1, int(np.prod(dims))) if dims else nelem(x)
        spec = launch("gather", "mxc_gather_nd<%s, %s>" % (ctype(x.dtype), ctype(idx.dtype)),
                       N * K, [("in", 0), ("in", 1), ("out", 0), ("i64", N), ("i64", M),
                               ("i64", K), index_map_bytes(0, dims, [0] * M)])
        if spec is None or not N * K:
            return {"launches": []} if spec is not None else None
        return {"launches": [spec], "check": bounds_check(
            1, [(-d, d) for d in dims],
            "gather_nd: IndexError: index {v} is out of bounds for dimension {m} with size {d}")}
    if kernel == "scatter_nd":
        M, add, has_dst, clip = (int(getattr(iattr, s)) for s in ("M", "add", "has_dst", "clip"))
        vi, ii = (1, 2) if has_dst else (0, 1)
        if len(inputs) <= ii:
            return None
        idx = inputs[ii]
        N = nelem(idx) // M if M else 0
        dims = [int(d) for d in tuple(y.shape)[:M]]
        K = nelem(y) // max(1, int(np.prod(dims))) if dims else nelem(y)
        c = ctype(y.dtype)
        launches = []
        if not has_dst:
            total = nelem(y)
            launches.append(launch("init", "mxc_fill<%s>" % c, total,
                                    [("out", 0), ("i64", total), ("f64", 0.0)]))
        if N * K:
            launches.append(launch(
                "gather", "mxc_scatter_nd<%s, %s, %s>" % (c, ctype(idx.dtype),
                                                          "true" if add else "false"),
                N * K, [("in", vi), ("in", ii), ("out", 0), ("i64", N), ("i64", M), ("i64", K),
                        index_map_bytes(0, dims, [0] * M), ("i32", 1 if clip else 0)]))
        spec = {"launches": launches}
        if N * K and not clip:
            spec["check"] = bounds_check(
                ii, [(-d, d) for d in dims],
                "scatter_nd: index {v} is out of bounds for dimension {m} with size {d}")
        return spec
    return None


