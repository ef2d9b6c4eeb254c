"""Launches of the fused optimizer updates (ops/optimizer_ops.py, csrc/kernels/optimizer_ops.h)
on the GPU: optimizer_ops.cu, whose steps are the CPU's (csrc/kernels/hd_math.h)."""
import numpy as np

from ._launch import FLOATS, ctypes_of, ctype, nelem, launch


# CPU kernel "opt:<name>" -> its template mxc_<template>_update in optimizer_ops.cu, where the
# names differ
_TEMPLATE = {"msgd": "sgd_mom", "mp_msgd": "mp_sgd_mom", "nag": "nag_mom", "mp_nag": "mp_nag_mom"}


def updates():
    """The update templates of the registry's optimizer kernels (OPTIMIZERS, derived)."""
    from .. import registry
    return [_TEMPLATE.get(k, k) for k in registry.kernel_names("optimizer_ops", "opt")]


def instantiations():
    """Every name expression of optimizer_ops.cu."""
    out = []
    for c in ctypes_of(FLOATS):
        out += ["mxc_%s_update<%s>" % (o, c) for o in updates()]
        out.append("mxc_sum_sq<%s>" % c)
    return out


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


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    """One launch per weight (the multi_ forms push one operator call per weight). CPU inputs
    and outputs (csrc/kernels/optimizer_ops.h): msgd (w, g[, mom][, lrs, wds]) -> (w[, mom]);
    mp_sgd (w, g, w32) -> (w, w32); mp_msgd (w, g[, mom], w32[, lrs, wds]) -> (w[, mom], w32);
    mp_nag (w, g, mom, w32) -> (w, mom, w32); adamw (w, g, mean, var, scale) -> (w, mean,
    var); mp_adamw (w, g, mean, var, w32, scale) -> (w, mean, var, w32)."""
    if fattr is None:
        return None
    k = kernel.split(":", 1)[1]
    w = inputs[0]
    n, c = nelem(w), ctype(w.dtype)
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
            return launch("optimizer_ops", "mxc_sgd_mom_update<%s>" % c, n,
                           [("in", 0), ("in", 1), mom] + lrwd +
                           [("out", 0), ("i64", n), ("i64", max(li, 0))] + fs[:5])
        w32 = ("out", 2 if has_mom else 1)
        return launch("optimizer_ops", "mxc_mp_sgd_mom_update<%s>" % c, n,
                       [("in", 1), mom, w32] + lrwd +
                       [("out", 0), ("i64", n), ("i64", max(li, 0))] + fs[:5])
    if k == "mp_sgd" and len(fs) >= 4:
        return launch("optimizer_ops", "mxc_mp_sgd_update<%s>" % c, n,
                       [("in", 1), ("out", 1), ("out", 0), ("i64", n)] + fs[:4])
    if k == "mp_nag" and len(fs) >= 5:
        return launch("optimizer_ops", "mxc_mp_nag_mom_update<%s>" % c, n,
                       [("in", 1), ("out", 1), ("out", 2), ("out", 0), ("i64", n)] + fs[:5])
    if k in ("adamw", "mp_adamw") and len(fs) >= 7:
        if np.dtype(inputs[-1].dtype) != np.float32:
            return None
        multi = ("i32", ia[0] if ia else 0)
        if k == "adamw":
            return launch("optimizer_ops", "mxc_adamw_update<%s>" % c, n,
                           [("in", 0), ("in", 1), ("out", 1), ("out", 2), ("in", 4), ("out", 0),
                            ("i64", n)] + fs[:7] + [multi])
        return launch("optimizer_ops", "mxc_mp_adamw_update<%s>" % c, n,
                       [("in", 0), ("in", 1), ("out", 1), ("out", 2), ("out", 3), ("in", 5),
                        ("out", 0), ("i64", n)] + fs[:7] + [multi])
    if k in ("lamb1", "mp_lamb1") and len(fs) >= 8:
        # (w, g, mean, var[, w32]) -> (direction, mean, var); the mp_ form reads w32
        src = ("in", 4) if k == "mp_lamb1" else ("in", 0)
        return launch("optimizer_ops", "mxc_%s_update<%s>" % (k, c), n,
                       [src, ("in", 1), ("out", 1), ("out", 2), ("out", 0), ("i64", n)] +
                       fs[:8] + [("i32", ia[0] if ia else 1)])
    if k in ("lamb2", "mp_lamb2") and len(fs) >= 3:
        # (w, g, r1, r2[, w32]) -> w
        src = ("in", 4) if k == "mp_lamb2" else ("in", 0)
        return launch("optimizer_ops", "mxc_%s_update<%s>" % (k, c), n,
                       [src, ("in", 1), ("in", 2), ("in", 3), ("out", 0), ("i64", n)] + fs[:3])
    if k == "adagrad" and len(fs) >= 4:
        return launch("optimizer_ops", "mxc_adagrad_update<%s>" % c, n,
                       [("in", 0), ("in", 1), ("out", 1), ("out", 0), ("i64", n)] + fs[:4])
    spec = _OPT.get(k)
    if spec is None or len(fs) < spec[2]:
        return None
    tmpl, states, nf = spec
    args = [("in", 0), ("in", 1)] + [("out", s) for s in states] + [("out", 0), ("i64", n)]
    return launch("optimizer_ops", "%s<%s>" % (tmpl, c), n, args + fs[:nf])


