"""Instantiations of broadcast.cu: the broadcast binary and where kernels (launched by the
elementwise builder, mxc/ops/cuda/elemwise.py)."""
from ._launch import DTYPES, CTYPE
from .elemwise import ops_of


def instantiations():
    """Every name expression of broadcast.cu."""
    out = []
    for dt in DTYPES + ("bfloat16",):
        out += ["mxc_bcast_binary<mxc::op_%s, %s>" % (op, CTYPE[dt]) for op in ops_of("binary")]
    for a in DTYPES + ("bool", "bfloat16"):
        for c in DTYPES + ("bool", "bfloat16"):
            out.append("mxc_bcast_where<%s, %s>" % (CTYPE[a], CTYPE[c]))
    return out

