"""Launches of fill / arange / eye (ops/init.py, csrc/kernels/elemwise_init.h) on the GPU:
init.cu."""
from ._launch import DTYPES, CTYPE, ctype, nelem, launch


def instantiations():
    """Every name expression of init.cu."""
    out = []
    for dt in DTYPES + ("bool",):
        c = CTYPE[dt]
        out += ["mxc_fill<%s>" % c, "mxc_arange<%s>" % c, "mxc_linspace<%s>" % c,
                "mxc_eye<%s>" % c]
    # bfloat16 arrays are zeroed and filled (gradients, Embedding's backward) like the others
    out.append("mxc_fill<__nv_bfloat16>")
    return out


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    y = outputs[0]
    n, c = nelem(y), ctype(y.dtype)
    if kernel == "fill":
        return launch("init", "mxc_fill<%s>" % c, n,
                      [("out", 0), ("i64", n), ("f64", float(fattr.value))])
    if kernel == "arange":
        return launch("init", "mxc_arange<%s>" % c, n,
                      [("out", 0), ("i64", n), ("f64", float(fattr.start)),
                       ("f64", float(fattr.step)), ("i64", int(attrs.get("repeat", 1) or 1))])
    if kernel == "eye":
        rows = int(y.shape[0])
        return launch("init", "mxc_eye<%s>" % c, n,
                      [("out", 0), ("i64", rows), ("i64", n // max(1, rows)), ("i64", int(iattr.k))])
    return None


