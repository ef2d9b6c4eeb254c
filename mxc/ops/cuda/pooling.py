"""Launches of Pooling and its backward, and of nearest UpSampling (ops/pooling.py,
ops/upsampling.py; csrc/kernels/pooling.h) on the GPU: pooling.cu."""
import numpy as np

from ._launch import TRAIN_FLOATS, NoKernel, ctype, ctypes_of, i64s, launch, nelem


def instantiations():
    """Every name expression of pooling.cu."""
    out = []
    for t in ctypes_of(TRAIN_FLOATS):
        out += ["mxc_pool_fwd<%s>" % t, "mxc_pool_argmax<%s>" % t, "mxc_pool_bwd<%s>" % t,
                "mxc_upnear_fwd<%s>" % t, "mxc_upnear_bwd<%s>" % t]
    return out


def geometry(x, y, iattr):
    """pooling.cu's pool_geom of data x and output y for the kernels' 13 slots (POOL_INTS:
    kernel, stride, pad as 3-D, type, p, count_include_pad, channels_last): the CPU's
    mxc_pool_geom_make."""
    v = [int(a) for a in tuple(iattr)]
    if len(v) < 13 or not 3 <= len(x.shape) <= 5 or len(y.shape) != len(x.shape):
        raise NoKernel("Pooling: bad kernel call")
    last = v[12] != 0
    nsp = len(x.shape) - 2
    first = 1 if last else 2
    isp = [1] * (3 - nsp) + [int(d) for d in x.shape[first:first + nsp]]
    osp = [1] * (3 - nsp) + [int(d) for d in y.shape[first:first + nsp]]
    c = int(x.shape[-1] if last else x.shape[1])
    return i64s(int(x.shape[0]), c, *isp, *osp, *v[0:9], v[9], v[10], v[11] != 0, last)


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    dt = np.dtype(outputs[0].dtype).name if outputs else None
    if dt not in TRAIN_FLOATS:
        raise NoKernel("pooling kernels are bfloat16 and float16/32/64 only")
    t = ctype(dt)
    if kernel == "pool:forward":
        x, y = inputs[0], outputs[0]
        return launch("pooling", "mxc_pool_fwd<%s>" % t, nelem(y),
                      [("in", 0), ("out", 0), geometry(x, y, iattr)])
    if kernel == "pool:backward":          # inputs dy, x, y; output dx
        dy, x, y = inputs
        geom = geometry(x, dy, iattr)
        n_out = nelem(dy)
        bwd = launch("pooling", "mxc_pool_bwd<%s>" % t, nelem(x),
                     [("in", 0), ("in", 1), ("in", 2), ("ws", 0), ("out", 0), geom])
        if int(tuple(iattr)[9]) != 0:       # avg / sum / lp: no argmax
            bwd["args"][3] = ("ptr", 0)
            return bwd
        arg = launch("pooling", "mxc_pool_argmax<%s>" % t, n_out,
                     [("in", 1), ("in", 2), ("ws", 0), geom])
        return {"launches": [arg, bwd], "workspace": max(8, 8 * n_out)}
    if kernel == "upsampling:nearest":     # inputs x_0 .. x_k; output y
        y = outputs[0]
        add_mode = bool(tuple(iattr)[0]) if iattr is not None and len(tuple(iattr)) else False
        launches, c0 = [], 0
        for i, x in enumerate(inputs):
            n, cx, h, w = (int(d) for d in x.shape)
            sc = int(y.shape[2]) // h if h > 0 else 1
            launches.append(launch("pooling", "mxc_upnear_fwd<%s>" % t, n * cx * h * w * sc * sc,
                                   [("in", i), ("out", 0), ("i64", n), ("i64", cx), ("i64", h),
                                    ("i64", w), ("i64", int(y.shape[1])), ("i64", c0),
                                    ("i64", sc), ("i32", 1 if add_mode and i > 0 else 0)]))
            if not add_mode:
                c0 += cx
        return {"launches": launches}
    if kernel == "upsampling:nearest_backward":   # input dy; outputs dx_0 .. dx_k
        dy = inputs[0]
        add_mode = bool(tuple(iattr)[0]) if iattr is not None and len(tuple(iattr)) else False
        launches, c0 = [], 0
        for i, x in enumerate(outputs):
            n, cx, h, w = (int(d) for d in x.shape)
            sc = int(dy.shape[2]) // h if h > 0 else 1
            launches.append(launch("pooling", "mxc_upnear_bwd<%s>" % t, n * cx * h * w,
                                   [("in", 0), ("out", i), ("i64", n), ("i64", cx), ("i64", h),
                                    ("i64", w), ("i64", int(dy.shape[1])), ("i64", c0),
                                    ("i64", sc)]))
            if not add_mode:
                c0 += cx
        return {"launches": launches}
    return None
