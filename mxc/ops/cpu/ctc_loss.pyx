"""CPU kernel of CTCLoss: the loss and its gradient w.r.t. the activations by the alpha-beta
recursion in log space, OpenMP over the batch (csrc/kernels/ctc_loss.h has the contract).

``KERNELS["ctc_loss"][dtype code of data]`` for float16, float32 and float64.
"""
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

cdef extern from "kernels/ctc_loss.h" nogil:
    ctypedef struct mxc_ctc_entry:
        const char *name
        int32_t code
        mxc_kernel fn
    const mxc_ctc_entry mxc_ctc_table[]
    const int mxc_ctc_table_len


cdef dict _build():
    cdef dict table = {}
    cdef int i
    for i in range(mxc_ctc_table_len):
        table.setdefault(mxc_ctc_table[i].name.decode(), {})[int(mxc_ctc_table[i].code)] = \
            <uintptr_t>mxc_ctc_table[i].fn
    return table


KERNELS = _build()
