"""CPU kernels of the RNN operator's fused gate steps (loops in csrc/kernels/rnn_cell.h, the
arithmetic in csrc/kernels/rnn_cell_math.h, shared with the GPU): ``lstm``, ``lstm_bwd``
(iattr[0] = clip, fattr = lo, hi), ``gru``, ``gru_bwd``. Keys: the dtype code
(float16/32/64)."""
from mxc.ops.cpu._table cimport mxc_kentry, build_table

cdef extern from "kernels/rnn_cell.h" nogil:
    const mxc_kentry mxc_rnn_cell_table[]


#: ``{kernel name: {dtype code: kernel address}}``
KERNELS = build_table(mxc_rnn_cell_table)
