"""Launches of BatchNorm and of LayerNorm / InstanceNorm / GroupNorm, forward and backward
(ops/normalization.py; csrc/kernels/normalization.h) on the GPU: normalization.cu.

Each operator is a short sequence of launches on one stream sharing a double workspace:
BatchNorm's statistics are two-stage sums (P interleaved partial sums per channel, then one
thread per channel), the row norms' one thread per row; then one elementwise pass. BatchNorm
runs through cuDNN's graphs instead where cudnn_norm.py takes the call."""
import numpy as np

from . import cudnn_norm, cudnn_plans
from ._launch import TRAIN_FLOATS, NoKernel, ctype, ctypes_of, launch

# partial sums per BatchNorm channel: about 64 elements each, at most 512
_PART_ELEMS, _PART_MAX = 64, 512


def instantiations():
    """Every name expression of normalization.cu."""
    out = ["mxc_bn_mean"]
    for t in ctypes_of(TRAIN_FLOATS):
        out += ["mxc_bn_partial<%s>" % t, "mxc_bn_var<%s>" % t, "mxc_bn_moving<%s>" % t,
                "mxc_bn_apply<%s>" % t, "mxc_bn_bwd_channel<%s>" % t, "mxc_bn_dx<%s>" % t,
                "mxc_row_stats<%s>" % t, "mxc_row_apply<%s>" % t, "mxc_row_bwd_rows<%s>" % t,
                "mxc_row_dx<%s>" % t, "mxc_row_dparams<%s>" % t]
    return out


class Workspace:
    """Byte offsets of named double arrays in one workspace."""

    def __init__(self, **sizes):
        self.at, off = {}, 0
        for name, n in sizes.items():
            self.at[name] = off
            off += 8 * max(1, int(n))
        self.size = off

    def __getitem__(self, name):
        return ("ws", self.at[name])


def _fam(name, t, n, args):
    return launch("normalization", "%s<%s>" % (name, t) if t else name, n, args)


def bn_parts(n):
    """Partial sums per channel for n elements of it."""
    return max(1, min(_PART_MAX, -(-n // _PART_ELEMS)))


def bn_stats(t, x, w, A, K, B, P, eps, om, ov, var_out):
    """The launches of the batch statistics of data x: w's mean, invstd and biased var
    (double), and om / ov (null, or mean and var (var_out) or invstd in the parameters' type)."""
    geo = [("i64", A), ("i64", K), ("i64", B), ("i64", P)]
    return [
        _fam("mxc_bn_partial", t, K * P, [x, ("ptr", 0), ("ptr", 0), w["part"], ("ptr", 0)] +
             geo + [("i32", 0)]),
        _fam("mxc_bn_mean", None, K, [w["part"], w["mean"], ("i64", K), ("i64", P),
                                      ("i64", A * B)]),
        _fam("mxc_bn_partial", t, K * P, [x, ("ptr", 0), w["mean"], w["part"], ("ptr", 0)] +
             geo + [("i32", 1)]),
        _fam("mxc_bn_var", t, K, [w["part"], w["mean"], w["invstd"], w["var"], om, ov,
                                  ("i64", K), ("i64", P), ("i64", A * B), ("f64", eps),
                                  ("i32", var_out)])]


def _bn(kernel, inputs, outputs, iattr, fattr):
    A, K, B, train, fixg, third = (int(v) for v in tuple(iattr)[:6])
    n = A * B
    t = ctype(inputs[0 if kernel == "bn_fwd" else 1].dtype)
    P = bn_parts(n)
    w = Workspace(part=K * P, part2=K * P, mean=K, invstd=K, var=K, coef=4 * K)
    eps = float(tuple(fattr)[0])
    L = []
    if kernel == "bn_fwd":          # in x, gamma, beta, mm, mv; out y[, mean, var]
        has_mv = len(outputs) >= 3
        om = ("out", 1) if has_mv else ("ptr", 0)
        ov = ("out", 2) if has_mv else ("ptr", 0)
        x, gamma, beta, mm, mv = (("in", i) for i in range(5))
        y = ("out", 0)
        var_out = third
    else:                           # in dy, x, gamma; out dx, dgamma, dbeta, mm, mv
        x, gamma = ("in", 1), ("in", 2)
        mm, mv = ("out", 3), ("out", 4)
        om = ov = ("ptr", 0)
        var_out = 0
    if train:
        L += bn_stats(t, x, w, A, K, B, P, eps, om, ov, var_out)
    else:
        L.append(_fam("mxc_bn_moving", t, K, [mm, mv, w["mean"], w["invstd"], om, ov,
                                              ("i64", K), ("f64", eps), ("i32", var_out)]))
    if kernel == "bn_fwd":
        L.append(_fam("mxc_bn_apply", t, A * K * B, [x, gamma, beta, w["mean"], w["invstd"], y,
                                                     ("i64", A), ("i64", K), ("i64", B),
                                                     ("i32", fixg)]))
    else:
        mom = float(tuple(fattr)[1])
        L.append(_fam("mxc_bn_partial", t, K * P, [x, ("in", 0), w["mean"], w["part"],
                                                   w["part2"], ("i64", A), ("i64", K),
                                                   ("i64", B), ("i64", P), ("i32", 2)]))
        L.append(_fam("mxc_bn_bwd_channel", t, K,
                      [w["part"], w["part2"], w["mean"], w["invstd"], w["var"], gamma,
                       ("out", 1), ("out", 2), mm, mv, w["coef"], ("i64", K), ("i64", P),
                       ("i64", n), ("i32", train), ("i32", fixg), ("i32", third),
                       ("f64", mom)]))
        L.append(_fam("mxc_bn_dx", t, A * K * B, [x, ("in", 0), w["coef"], ("out", 0),
                                                  ("i64", A), ("i64", K), ("i64", B)]))
    return {"launches": L, "workspace": w.size}


def _row(kernel, inputs, outputs, iattr, fattr):
    A, K, B, mode, P = (int(v) for v in tuple(iattr)[:5])
    eps = float(tuple(fattr)[0])
    R = A * B
    w = Workspace(mean=R, invstd=R, c1=R, c2=R, rdot=R, rsdy=R)
    geo = [("i64", A), ("i64", K), ("i64", B)]
    if kernel == "row_fwd":         # in x, gamma, beta; out y[, mean, std]
        t = ctype(inputs[0].dtype)
        has_mv = len(outputs) >= 3
        return {"launches": [
            _fam("mxc_row_stats", t, R, [("in", 0), w["mean"], w["invstd"],
                                         ("out", 1) if has_mv else ("ptr", 0),
                                         ("out", 2) if has_mv else ("ptr", 0)] + geo +
                 [("f64", eps)]),
            _fam("mxc_row_apply", t, A * K * B, [("in", 0), ("in", 1), ("in", 2), w["mean"],
                                                 w["invstd"], ("out", 0)] + geo +
                 [("i32", mode), ("i64", P)])], "workspace": w.size}
    # row_bwd: in dy, x, gamma; out dx, dgamma, dbeta
    t = ctype(inputs[1].dtype)
    dy, x, gamma = ("in", 0), ("in", 1), ("in", 2)
    return {"launches": [
        _fam("mxc_row_stats", t, R, [x, w["mean"], w["invstd"], ("ptr", 0), ("ptr", 0)] + geo +
             [("f64", eps)]),
        _fam("mxc_row_bwd_rows", t, R, [x, dy, gamma, w["mean"], w["invstd"], w["c1"], w["c2"],
                                        w["rdot"], w["rsdy"]] + geo + [("i32", mode)]),
        _fam("mxc_row_dx", t, A * K * B, [x, dy, gamma, w["mean"], w["invstd"], w["c1"],
                                          w["c2"], ("out", 0)] + geo + [("i32", mode),
                                                                        ("i64", P)]),
        _fam("mxc_row_dparams", t, P if mode == 1 else K,
             [x, dy, w["mean"], w["invstd"], w["rdot"], w["rsdy"], ("out", 1), ("out", 2)] +
             geo + [("i32", mode), ("i64", P)])], "workspace": w.size}


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    if kernel not in ("bn_fwd", "bn_bwd", "row_fwd", "row_bwd"):
        return None
    data = inputs[0 if kernel.endswith("fwd") else 1]
    if np.dtype(data.dtype).name not in TRAIN_FLOATS:
        raise NoKernel("normalization kernels are bfloat16 and float16/32/64 only")
    if kernel.startswith("bn"):
        if cudnn_plans.enabled(attrs):
            spec = cudnn_norm.spec(kernel, inputs, outputs, iattr, fattr, attrs)
            if spec is not None:
                return spec
        return _bn(kernel, inputs, outputs, iattr, fattr)
    return _row(kernel, inputs, outputs, iattr, fattr)
