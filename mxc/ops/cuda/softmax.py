"""Launches of softmax / log_softmax / softmin and their gradient (ops/softmax.py,
csrc/kernels/softmax.h) on the GPU: softmax.cu."""
import numpy as np

from ._launch import FLOATS, ctypes_of, ctype, launch


def instantiations():
    """Every name expression of softmax.cu."""
    # <log, input dtype, output dtype (softmax's dtype=), length dtype (use_length; int when
    # there is none: a null pointer)>; the gradient's <log, output dtype, input dtype, length>
    out = []
    for lg in ("false", "true"):
        for a in ctypes_of(FLOATS):
            for b in ctypes_of(FLOATS):
                for L in ("int", "long long"):
                    out += ["mxc_softmax_rows<%s, %s, %s, %s>" % (lg, a, b, L),
                            "mxc_softmax_cols<%s, %s, %s, %s>" % (lg, a, b, L),
                            "mxc_softmax_grad<%s, %s, %s, %s>" % (lg, a, b, L)]
    return out

# ---- softmax ----------------------------------------------------------------------------------
def axis_view(shape, axis):
    axis = axis % len(shape)
    outer = int(np.prod(shape[:axis])) if axis else 1
    inner = int(np.prod(shape[axis + 1:])) if axis + 1 < len(shape) else 1
    return outer, int(shape[axis]), inner


_LEN_T = {"int32": "int", "int64": "long long"}


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    """Slots (ops/softmax.py SOFTMAX_INTS, temperature).
    Forward inputs (x[, length]) -> y in the dtype= output dtype; backward inputs (dy, y[,
    length]) -> dx in the forward input's dtype."""
    if kernel not in ("softmax", "softmax_bwd"):
        return None
    outer, n, inner = int(iattr.outer), int(iattr.n), int(iattr.inner)
    logm, use_len = iattr.log, iattr.use_length
    # softmin(x) = softmax(-x): the kernels scale by 1/t, so a negated temperature negates x
    # (and the backward's final 1/t carries the sign of the chain rule)
    t = -float(fattr.temperature) if iattr.negate else float(fattr.temperature)
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
            return launch("softmax", "mxc_softmax_rows<%s>" % tname, outer,
                           [("in", 0), lenarg, ("out", 0), ("i64", outer), ("i64", n),
                            ("f64", t)], grid=(max(1, min(outer, 65535)),))
        return launch("softmax", "mxc_softmax_cols<%s>" % tname, outer * inner,
                       [("in", 0), lenarg, ("out", 0), ("i64", outer), ("i64", n),
                        ("i64", inner), ("f64", t)])
    if kernel == "softmax_bwd":
        tname = "%s, %s, %s, %s" % (log, ctype(inputs[1].dtype), ctype(outputs[0].dtype), L)
        return launch("softmax", "mxc_softmax_grad<%s>" % tname, outer * inner,
                       [("in", 1), ("in", 0), lenarg, ("out", 0), ("i64", outer), ("i64", n),
                        ("i64", inner), ("f64", t)])
    return None


