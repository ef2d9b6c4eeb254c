"""Launches of the RNN operator's fused gate steps (ops/rnn.py, csrc/kernels/rnn_cell.h) on the
GPU: rnn_cell.cu, one thread per (row, unit); the GEMMs around them are FullyConnected / dot
(cuBLAS, dot.py)."""
from ._launch import FLOATS, ctypes_of, ctype, nelem, launch


def instantiations():
    """Every name expression of rnn_cell.cu."""
    out = []
    for c in ctypes_of(FLOATS):
        out += ["mxc_lstm_cell<%s>" % c, "mxc_lstm_cell_grad<%s>" % c,
                "mxc_gru_cell<%s>" % c, "mxc_gru_cell_grad<%s>" % c]
    return out


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    c = ctype(outputs[0].dtype)
    if kernel in ("lstm", "lstm_bwd"):
        cell = inputs[1]                         # (N, H)
        n, H = nelem(cell), int(cell.shape[-1])
        tail = [("i64", n), ("i64", H), ("i32", int(iattr.clip)), ("f64", float(fattr.lo)),
                ("f64", float(fattr.hi))]
        if kernel == "lstm":
            return launch("rnn_cell", "mxc_lstm_cell<%s>" % c, n,
                          [("in", 0), ("in", 1), ("out", 0), ("out", 1)] + tail)
        return launch("rnn_cell", "mxc_lstm_cell_grad<%s>" % c, n,
                      [("in", 0), ("in", 1), ("in", 2), ("in", 3), ("out", 0), ("out", 1)] + tail)
    if kernel in ("gru", "gru_bwd"):
        h = inputs[2]                            # (N, H)
        n, H = nelem(h), int(h.shape[-1])
        if kernel == "gru":
            return launch("rnn_cell", "mxc_gru_cell<%s>" % c, n,
                          [("in", 0), ("in", 1), ("in", 2), ("out", 0), ("i64", n), ("i64", H)])
        return launch("rnn_cell", "mxc_gru_cell_grad<%s>" % c, n,
                      [("in", 0), ("in", 1), ("in", 2), ("in", 3), ("out", 0), ("out", 1),
                       ("out", 2), ("i64", n), ("i64", H)])
    return None
