"""Launches of the shape kernels (ops/shape.py, ops/indexing.py, csrc/kernels/shape.h) on the
GPU: index-map gathers and scatters of shape.cu, and take / one_hot / row scatter of gather.cu."""
import numpy as np

from ._launch import (BYTES_T, ctype, nelem, launch, bcast_strides, index_map_bytes, cstrides, fail,
                      bounds_check, scalar_bits)


def instantiations():
    """Every name expression of shape.cu."""
    BYTES = tuple(BYTES_T.values())
    return (["mxc_gather_map<%s>" % t for t in BYTES] + ["mxc_scatter_map<%s>" % t for t in BYTES]
            + ["mxc_scatter_value<%s>" % t for t in BYTES])


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    x, y = inputs[0], outputs[0]
    n = nelem(y)
    t = BYTES_T[np.dtype(y.dtype).itemsize]
    xs, ys = tuple(x.shape), tuple(y.shape)
    st = cstrides(xs)
    if kernel == "transpose":
        m = index_map_bytes(0, ys, [st[int(a)] for a in iattr.axes])
    elif kernel == "broadcast_to":
        m = index_map_bytes(0, ys, bcast_strides(xs, ys))
    elif kernel == "flip":
        axes = [d for d, flip in enumerate(iattr.mask) if flip]
        begin = sum((xs[a] - 1) * st[a] for a in axes)
        m = index_map_bytes(begin, ys, [-st[d] if d in axes else st[d] for d in range(len(xs))])
    elif kernel == "slice":
        # per-axis begin and step (mxc/ops/shape.py slice_plan)
        starts, steps = iattr.begin, iattr.step
        m = index_map_bytes(sum(int(b) * st[d] for d, b in enumerate(starts)), ys,
                            [int(k) * st[d] for d, k in enumerate(steps)])
    elif kernel in ("slice_assign", "slice_assign_scalar"):
        # inputs (dst, value) or (dst,), output dst's buffer (copy_then_inplace copied dst into
        # it): write the value (or the scalar) at the slice's positions
        starts, steps = iattr.begin, iattr.step
        begin = sum(int(b) * st[d] for d, b in enumerate(starts))
        stride = [int(k) * st[d] for d, k in enumerate(steps)]
        if kernel == "slice_assign":
            if len(inputs) < 2:
                return None
            vs = tuple(inputs[1].shape)
            nv = nelem(inputs[1])
            return launch("shape", "mxc_scatter_map<%s>" % t, nv,
                           [("in", 1), ("out", 0), ("i64", nv), index_map_bytes(begin, vs, stride)])
        lens = [int(v) for v in iattr.length]
        nv = int(np.prod(lens)) if lens else 1
        kind, bits = scalar_bits(float(fattr.scalar), y.dtype)
        return launch("shape", "mxc_scatter_value<%s>" % t, nv,
                       [("out", 0), ("i64", nv), index_map_bytes(begin, lens, stride),
                        (kind, bits)])
    elif kernel in ("concat", "split"):
        # one gather per part: concat copies input j into its slab of the output; split copies
        # the slab of output j out of the input
        axis = int(iattr.axis)
        parts = inputs if kernel == "concat" else outputs
        whole = ys if kernel == "concat" else xs
        wst = cstrides(whole)
        launches, off = [], 0
        for j, part in enumerate(parts):
            ps = tuple(part.shape)
            if len(ps) != len(whole):
                return None   # squeezed split outputs: the front end passes them with the axis kept
            pn = nelem(part)
            if pn:
                if kernel == "concat":
                    # out[slab] = in_j: scatter in_j's elements to the slab offsets
                    m = index_map_bytes(off * wst[axis], ps, wst)
                    launches.append(launch("shape", "mxc_scatter_map<%s>" % t, pn,
                                            [("in", j), ("out", 0), ("i64", pn), m]))
                else:
                    m = index_map_bytes(off * wst[axis], ps, wst)
                    launches.append(launch("shape", "mxc_gather_map<%s>" % t, pn,
                                            [("in", 0), ("out", j), ("i64", pn), m]))
            off += ps[axis]
        return {"launches": launches}
    elif kernel == "take":
        axis, mode = int(iattr.axis) % len(xs), int(iattr.mode)
        idx = inputs[1]
        outer = int(np.prod(xs[:axis])) if axis else 1
        inner = int(np.prod(xs[axis + 1:])) if axis + 1 < len(xs) else 1
        N = int(xs[axis])
        if n and not N:
            return {"launches": [], "check": fail(
                "take: cannot take from axis %d of size 0" % axis)}
        spec = launch("gather", "mxc_take<%s, %s>" % (ctype(x.dtype), ctype(idx.dtype)), n,
                       [("in", 0), ("in", 1), ("out", 0), ("i64", outer), ("i64", N),
                        ("i64", inner), ("i64", nelem(idx)), ("i32", 0 if mode == 2 else mode)])
        if mode != 2 or spec is None:
            return spec
        # raise: the indices are checked on the device first (a failed check skips the launch
        # and the error reaches the next wait), then taken with clip, which leaves them alone
        return {"launches": [spec], "check": bounds_check(
            1, [(0, N)], "take: index {v} is out of bounds for axis %d with size %d" % (axis, N))}
    elif kernel == "scatter_rows" and len(inputs) == 3:
        # x[int_array] = v: inputs (dst, idx, value), output dst's buffer; scatter_nd's set with
        # one index dimension (negative rows count from the end; the range is checked first)
        idx = inputs[1]
        N, m = int(xs[0]), nelem(idx)
        row = nelem(x) // N if N else 0
        if not m * row:
            return {"launches": []}
        spec = launch("gather", "mxc_scatter_nd<%s, %s, false>" % (ctype(y.dtype),
                                                                   ctype(idx.dtype)), m * row,
                       [("in", 2), ("in", 1), ("out", 0), ("i64", m), ("i64", 1), ("i64", row),
                        index_map_bytes(0, [N], [0]), ("i32", 0)])
        if spec is None:
            return None
        return {"launches": [spec], "check": bounds_check(
            1, [(-N, N)], "scatter_rows: index {v} is out of bounds for axis 0 with size {d}")}
    elif kernel == "one_hot":
        depth = int(iattr.depth)
        return launch("gather", "mxc_one_hot<%s, %s>" % (ctype(y.dtype), ctype(x.dtype)), n,
                       [("in", 0), ("out", 0), ("i64", nelem(x)), ("i64", depth),
                        ("f64", float(fattr.on_value)), ("f64", float(fattr.off_value))])
    else:
        return None
    return launch("shape", "mxc_gather_map<%s>" % t, n, [("in", 0), ("out", 0), ("i64", n), m])


