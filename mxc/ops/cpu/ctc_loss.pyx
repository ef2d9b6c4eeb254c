"""CPU kernel of CTCLoss: the loss and its gradient w.r.t. the activations by the alpha-beta
recursion in log space, OpenMP over the batch (csrc/kernels/ctc_loss.h has the contract).

``KERNELS["ctc_loss"][dtype code of data]`` for float16, float32 and float64.
"""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

cdef extern from "kernels/ctc_loss.h" nogil:
    const mxc_code_entry mxc_ctc_table[]
    const int mxc_ctc_table_len


KERNELS = build_code_table(mxc_ctc_table, mxc_ctc_table_len)
