"""Launches of softmax / log_softmax / softmin and their gradient (ops/softmax.py,
csrc/kernels/softmax.h) on the GPU: softmax.cu."""
import numpy as np

from ._launch import FLOATS, TRAIN_FLOATS, NoKernel, ctypes_of, ctype, launch


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
        # bfloat16 beside itself and float32 (AMP's casts), not beside every float type
        for a, b in (("__nv_bfloat16", "__nv_bfloat16"), ("__nv_bfloat16", "float"),
                     ("float", "__nv_bfloat16")):
            for L in ("int", "long long"):
                out += ["mxc_softmax_rows<%s, %s, %s, %s>" % (lg, a, b, L),
                        "mxc_softmax_cols<%s, %s, %s, %s>" % (lg, a, b, L),
                        "mxc_softmax_grad<%s, %s, %s, %s>" % (lg, a, b, L)]
    # SoftmaxOutput's backward and the cross-entropy losses, per dtype
    for t in ctypes_of(TRAIN_FLOATS):
        out += ["mxc_so_scale<%s>" % t, "mxc_so_bwd<%s>" % t, "mxc_ce_row_lse<%s>" % t,
                "mxc_ce_rows<%s>" % t, "mxc_ce_rows_bwd<%s>" % t, "mxc_ce_total_rows<%s>" % t,
                "mxc_ce_total<%s>" % t]
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
    if kernel in _LOSSES:
        return _LOSSES[kernel](inputs, outputs, iattr, fattr)
    if kernel not in ("softmax", "softmax_bwd"):
        return None
    outer, n, inner = int(iattr.outer), int(iattr.n), int(iattr.inner)
    logm, use_len = iattr.log, iattr.use_length
    # softmin(x) = softmax(-x): the kernels scale by 1/t, so a negated temperature negates x
    # (and the backward's final 1/t carries the sign of the chain rule)
    t = -float(fattr.temperature) if iattr.negate else float(fattr.temperature)
    log = "true" if logm else "false"
    nin = 2 if kernel == "softmax" else 3
    # without a length, inputs after the data are not the kernel's (SoftmaxOutput's label)
    want = nin - 1 + (1 if use_len else 0)
    if len(inputs) < want or (use_len and len(inputs) != want):
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


# ---- SoftmaxOutput's backward and the cross-entropy losses -------------------------------------
def _float_t(a):
    name = np.dtype(a.dtype).name
    if name not in TRAIN_FLOATS:
        raise NoKernel("the softmax losses are bfloat16 and float16/32/64 only")
    return ctype(name)


def _so_bwd(inputs, outputs, iattr, fattr):
    """in y, label; out dx. Slots (ops/softmax.py _SO_BWD_INTS; ignore_label, smooth_alpha,
    grad_scale). Workspace: the gradient scale (one double)."""
    n, K, inner, use_ign, smooth, norm, out_grad, multi, nlab = (int(v) for v in tuple(iattr)[:9])
    ign, alpha, gscale = (float(v) for v in tuple(fattr)[:3])
    t = _float_t(inputs[0])
    return {"launches": [
        launch("softmax", "mxc_so_scale<%s>" % t, 1,
               [("in", 1), ("ws", 0), ("i64", nlab), ("i64", n), ("i64", inner), ("i32", norm),
                ("i32", multi), ("i32", int(ign)), ("f64", gscale)], grid=(1,)),
        launch("softmax", "mxc_so_bwd<%s>" % t, n * K * inner,
               [("in", 0), ("in", 1), ("ws", 0), ("out", 0), ("i64", n), ("i64", K),
                ("i64", inner), ("i32", use_ign), ("i32", smooth), ("i32", out_grad),
                ("i32", int(ign)), ("f64", alpha)])], "workspace": 8}


def _row_lse(x, N, K, t):
    # workspace: mx (N doubles), sum (N), lse (N), per-row losses (N)
    return launch("softmax", "mxc_ce_row_lse<%s>" % t, N,
                  [("in", x), ("ws", 0), ("ws", 8 * N), ("ws", 16 * N), ("i64", N), ("i64", K)])


def _ce_rows(inputs, outputs, iattr, fattr):
    """_softmax_ce_rows: in x (N, K), label (N); out loss (N)"""
    N, K = (int(d) for d in inputs[0].shape)
    t = _float_t(inputs[0])
    return {"launches": [
        _row_lse(0, N, K, t),
        launch("softmax", "mxc_ce_rows<%s>" % t, N,
               [("in", 0), ("in", 1), ("ws", 0), ("ws", 16 * N), ("out", 0), ("i64", N),
                ("i64", K)])], "workspace": max(8, 24 * N)}


def _ce_rows_bwd(inputs, outputs, iattr, fattr):
    """_backward_softmax_ce_rows: in g (N), x (N, K), label (N); out dx (N, K)"""
    N, K = (int(d) for d in inputs[1].shape)
    t = _float_t(inputs[1])
    return {"launches": [
        _row_lse(1, N, K, t),
        launch("softmax", "mxc_ce_rows_bwd<%s>" % t, N * K,
               [("in", 0), ("in", 1), ("in", 2), ("ws", 0), ("ws", 16 * N), ("out", 0),
                ("i64", N), ("i64", K)])], "workspace": max(8, 24 * N)}


def _ce_label_check(K):
    """softmax_cross_entropy's label check, on the device before the launches (the CPU
    kernel's message)."""
    def check(xp, inputs):
        lab = inputs[1].astype(xp.float64)
        bad = ~(lab > -1) | (xp.trunc(lab) >= K)
        if bool(bad.any()):
            i = int(xp.argmax(bad))
            return ("softmax_cross_entropy: label %g of row %d is outside [0, %d)"
                    % (float(lab[i]), i, K))
        return None
    return check


def _ce_total(inputs, outputs, iattr, fattr):
    """softmax_cross_entropy: in x (N, K), label (N); out (1,): the sum of the rows' losses"""
    N, K = (int(d) for d in inputs[0].shape)
    t = _float_t(inputs[0])
    return {"check": _ce_label_check(K), "launches": [
        _row_lse(0, N, K, t),
        launch("softmax", "mxc_ce_total_rows<%s>" % t, N,
               [("in", 0), ("in", 1), ("ws", 0), ("ws", 8 * N), ("ws", 24 * N), ("i64", N),
                ("i64", K)]),
        launch("softmax", "mxc_ce_total<%s>" % t, 1, [("ws", 24 * N), ("out", 0), ("i64", N)],
               grid=(1,))], "workspace": max(8, 32 * N)}


_LOSSES = {"softmax_output_bwd": _so_bwd, "softmax_ce_rows": _ce_rows,
           "softmax_ce_rows_bwd": _ce_rows_bwd, "softmax_ce": _ce_total}
