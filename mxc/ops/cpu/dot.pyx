"""CPU matrix-product kernel (FullyConnected, dot, batch_dot, linalg_gemm, linalg_gemm2).

One strided, batched GEMM in csrc/kernels/dot.h ("gemm"), calling BLAS without the GIL; see the
header for its attributes. Keys are the MXNet dtype code of the inputs (float32, float64,
float16; float16 is multiplied in float32)."""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

include "_blas.pxi"

cdef extern from "kernels/dot.h" nogil:
    const mxc_code_entry mxc_dot_table[]
    const int mxc_dot_table_len


#: ``{"gemm": {dtype_code: kernel address}}``
KERNELS = build_code_table(mxc_dot_table, mxc_dot_table_len)
