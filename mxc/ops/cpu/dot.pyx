"""CPU matrix-product kernel (FullyConnected, dot, batch_dot, linalg_gemm, linalg_gemm2).

One strided, batched GEMM in csrc/kernels/dot.h ("gemm"), calling BLAS without the GIL; see the
header for its attributes. Keys are the MXNet dtype code of the inputs (float32, float64,
float16; float16 is multiplied in float32)."""
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

include "_blas.pxi"

cdef extern from "kernels/dot.h" nogil:
    ctypedef struct mxc_dot_entry:
        const char *name
        int32_t code
        mxc_kernel fn
    const mxc_dot_entry mxc_dot_table[]
    const int mxc_dot_table_len


cdef dict _build():
    cdef dict table = {}
    cdef int i
    for i in range(mxc_dot_table_len):
        table.setdefault(mxc_dot_table[i].name.decode(), {})[int(mxc_dot_table[i].code)] = \
            <uintptr_t>mxc_dot_table[i].fn
    return table


#: ``{"gemm": {dtype_code: kernel address}}``
KERNELS = _build()
