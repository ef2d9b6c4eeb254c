"""Launches of Activation's softrelu / backward and LeakyReLU's kinds (ops/activation.py,
csrc/kernels/activation.h) on the GPU: activation.cu."""
from ._launch import TRAIN_FLOATS, ctypes_of, ctype, nelem, launch


def instantiations():
    """Every name expression of activation.cu."""
    out = []
    for c in ctypes_of(TRAIN_FLOATS):
        out += ["mxc_activation<%s>" % c, "mxc_activation_grad<%s>" % c,
                "mxc_leaky_relu<%s>" % c, "mxc_leaky_relu_grad<%s>" % c,
                "mxc_prelu_gamma_grad<%s>" % c]
    return out


# ---- activation -------------------------------------------------------------------------------
ACT_TYPES = {"relu": 0, "sigmoid": 1, "tanh": 2, "softrelu": 3, "softsign": 4}
# LeakyReLU's CPU kernels -> the act code of activation.cu's leaky_fwd / leaky_bwd
LEAKY_TYPES = {"xelu": 0, "xelu_arr": 0, "elu": 1, "selu": 2, "gelu": 3, "prelu": 4}


def prelu_view(iattr):
    """(inner, channels) of activation.cu's gamma lookup gamma[(i / inner) % channels] for the
    CPU's prelu view iattr (d0, d1, rest, g0, g1): data (d0, d1, rest), gamma (g0, g1) with g0 in
    {1, d0} and g1 in {1, d1}."""
    d0, d1, rest, g0, g1 = (int(getattr(iattr, s)) for s in ("d0", "d1", "rest", "g0", "g1"))
    if g1 > 1:
        return rest, g0 * g1
    return d1 * rest, g0


def _leaky(kind, t, inputs, outputs, iattr, fattr):
    y = outputs[0]
    n, c = nelem(y), ctype(y.dtype)
    act = LEAKY_TYPES[t]
    slope = float(fattr.slope) if t in ("xelu", "elu") else 0.0
    inner, channels = 1, 1
    gamma = ("ptr", 0)
    if t == "xelu_arr":          # rrelu's per-element slopes: input 1 (forward) or 2 (backward)
        gamma, channels = ("in", 1 if kind == "fwd" else 2), max(1, n)
    elif t == "prelu":
        inner, channels = prelu_view(iattr)
        gamma = ("in", 1 if kind == "fwd" else 2)
    tail = [("i64", n), ("i32", act), ("f64", slope), ("i64", max(1, inner)),
            ("i64", max(1, channels))]
    if kind == "fwd":
        return launch("activation", "mxc_leaky_relu<%s>" % c, n,
                       [("in", 0), gamma, ("out", 0)] + tail)
    # backward inputs (dy, output) for leaky/elu/selu/rrelu, (dy, x) for gelu and prelu: the
    # second decides the branch; elu and selu also read the output's value
    value = ("in", 1) if t in ("elu", "selu") else ("ptr", 0)
    dx = launch("activation", "mxc_leaky_relu_grad<%s>" % c, n,
                 [("in", 0), ("in", 1), value, gamma, ("out", 0)] + tail)
    if t != "prelu":
        return dx
    x = inputs[1]
    outer = nelem(x) // max(1, inner * channels)
    dgamma = launch("activation", "mxc_prelu_gamma_grad<%s>" % c, channels,
                     [("in", 0), ("in", 1), ("out", 1), ("i64", outer), ("i64", channels),
                      ("i64", inner)], grid=(max(1, min(channels, 65535)),))
    return {"launches": [dx, dgamma]}


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    kind, _, t = kernel.partition(":")
    if t in LEAKY_TYPES and kind in ("fwd", "bwd"):
        return _leaky(kind, t, inputs, outputs, iattr, fattr)
    if t not in ACT_TYPES:
        return None
    y = outputs[0]
    n, c = nelem(y), ctype(y.dtype)
    if kind == "fwd":
        return launch("activation", "mxc_activation<%s>" % c, n,
                       [("in", 0), ("out", 0), ("i64", n), ("i32", ACT_TYPES[t])])
    if kind == "bwd":   # inputs (dy, y[, x])
        return launch("activation", "mxc_activation_grad<%s>" % c, n,
                       # (head, data): data is the output y, or the input x for softsign
                       [("in", 0), ("in", 1), ("in", 1) if t == "softsign" else ("ptr", 0),
                        ("out", 0), ("i64", n), ("i32", ACT_TYPES[t])])
    return None


