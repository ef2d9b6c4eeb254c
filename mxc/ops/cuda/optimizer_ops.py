"""Launches of the fused optimizer updates (ops/optimizer_ops.py, csrc/kernels/optimizer_ops.h)
on the GPU: optimizer_ops.cu, whose steps are the CPU's (csrc/kernels/hd_math.h)."""
import numpy as np

from ._launch import TRAIN_FLOATS, NoKernel, ctypes_of, ctype, nelem, launch


# CPU kernel "opt:<name>" -> its template mxc_<template>_update in optimizer_ops.cu, where the
# names differ
_TEMPLATE = {"msgd": "sgd_mom", "mp_msgd": "mp_sgd_mom", "nag": "nag_mom", "mp_nag": "mp_nag_mom"}


def updates_of(kernel):
    """The update template (mxc_<it>_update) of CPU kernel "opt:<kernel>"."""
    return _TEMPLATE.get(kernel, kernel)


def updates():
    """The update templates of the registry's optimizer kernels (OPTIMIZERS, derived)."""
    from .. import registry
    return [updates_of(k) for k in registry.kernel_names("optimizer_ops", "opt")]


def instantiations():
    """Every name expression of optimizer_ops.cu."""
    out = []
    for c in ctypes_of(TRAIN_FLOATS):
        out += ["mxc_%s_update<%s>" % (o, c) for o in updates()]
    return out


# CPU kernel -> the tensor arguments of its .cu kernel, before n. Every update then takes n and
# the kernel's float slots, all of them in their declared order (ops/optimizer_ops.py: the order
# of the C kernel and of the step functions in kernels/hd_math.h), then its integer flags.
_IN0, _IN1, _OUT0, _OUT1, _OUT2, _OUT3 = ("in", 0), ("in", 1), ("out", 0), ("out", 1), ("out", 2), \
    ("out", 3)
_TENSORS = {
    "sgd": (_IN0, _IN1, _OUT0),
    "signsgd": (_IN0, _IN1, _OUT0),
    "adam": (_IN0, _IN1, _OUT1, _OUT2, _OUT0),
    "rmsprop": (_IN0, _IN1, _OUT1, _OUT0),
    "rmspropalex": (_IN0, _IN1, _OUT1, _OUT2, _OUT3, _OUT0),
    "ftrl": (_IN0, _IN1, _OUT1, _OUT2, _OUT0),
    "ftml": (_IN0, _IN1, _OUT1, _OUT2, _OUT3, _OUT0),
    "signum": (_IN0, _IN1, _OUT1, _OUT0),
    "nag": (_IN0, _IN1, _OUT1, _OUT0),
    "adagrad": (_IN0, _IN1, _OUT1, _OUT0),
    "mp_sgd": (_IN1, _OUT1, _OUT0),                          # (w, g, w32) -> (w, w32)
    "mp_nag": (_IN1, _OUT1, _OUT2, _OUT0),                   # (w, g, mom, w32) -> (w, mom, w32)
    # (w, g, mean, var[, w32]) -> (direction, mean, var); the mp_ form reads w32
    "lamb1": (_IN0, _IN1, _OUT1, _OUT2, _OUT0),
    "mp_lamb1": (("in", 4), _IN1, _OUT1, _OUT2, _OUT0),
    # (w, g, r1, r2[, w32]) -> w
    "lamb2": (_IN0, _IN1, ("in", 2), ("in", 3), _OUT0),
    "mp_lamb2": (("in", 4), _IN1, ("in", 2), ("in", 3), _OUT0),
    # (w, g, mean, var[, w32], scale) -> (w, mean, var[, w32])
    "adamw": (_IN0, _IN1, _OUT1, _OUT2, ("in", 4), _OUT0),
    "mp_adamw": (_IN0, _IN1, _OUT1, _OUT2, _OUT3, ("in", 5), _OUT0),
}
# integer slots passed after the floats (as int)
_FLAGS = {"lamb1": ("bias_correction",), "mp_lamb1": ("bias_correction",), "adamw": ("multi",),
          "mp_adamw": ("multi",)}


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    """One launch per weight (the multi_ forms push one operator call per weight)."""
    k = kernel.split(":", 1)[1]
    w = inputs[0]
    n, c = nelem(w), ctype(w.dtype)
    floats = [("f64", float(v)) for v in fattr]
    if k in ("msgd", "mp_msgd"):
        # msgd (w, g[, mom][, lrs, wds]) -> (w[, mom]); mp_msgd (w, g[, mom], w32[, lrs, wds])
        # -> (w[, mom], w32); the preloaded_ forms read lr and wd from the last two inputs
        # (float32 arrays) at index `preloaded`
        li = int(iattr.preloaded)
        lrwd = [("in", len(inputs) - 2), ("in", len(inputs) - 1)] if li >= 0 else \
            [("ptr", 0), ("ptr", 0)]
        mom = ("out", 1) if iattr.has_mom else ("ptr", 0)
        tensors = [_IN0, _IN1, mom] if k == "msgd" else \
            [_IN1, mom, ("out", 2 if iattr.has_mom else 1)]
        return launch("optimizer_ops", "mxc_%s_update<%s>" % (updates_of(k), c), n,
                      tensors + lrwd + [_OUT0, ("i64", n), ("i64", max(li, 0))] + floats)
    if k in ("adamw", "mp_adamw") and np.dtype(inputs[-1].dtype) != np.float32:
        raise NoKernel("adamw: rescale_grad must be float32")
    tensors = _TENSORS.get(k)
    if tensors is None:
        return None
    flags = [("i32", int(getattr(iattr, f))) for f in _FLAGS.get(k, ())]
    return launch("optimizer_ops", "mxc_%s_update<%s>" % (updates_of(k), c), n,
                  list(tensors) + [("i64", n)] + floats + flags)
