"""CPU matrix-product kernel (FullyConnected, dot, batch_dot, linalg_gemm, linalg_gemm2).

One strided, batched GEMM in csrc/kernels/dot.h ("gemm"), calling BLAS without the GIL; see the
header for its attributes. Keys are the MXNet dtype code of the inputs (float32, float64,
float16; float16 is multiplied in float32)."""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

include "_blas.pxi"

cdef extern from "kernels/dot.h" nogil:
    const mxc_code_entry mxc_dot_table[]
    const int mxc_dot_table_len


cdef extern from "mxc/blas.h" nogil:
    ctypedef struct mxc_pool_gemm:
        int m, n, k, bycol, bs
    int mxc_sgemm_parts(mxc_pool_gemm *j, int nt, int least_data)


#: ``{"gemm": {dtype_code: kernel address}}``
KERNELS = build_code_table(mxc_dot_table, mxc_dot_table_len)


def sgemm_split(int m, int n, int k, int nthreads, bint products=True):
    """How a lone float32 GEMM of an m x n result over k runs on nthreads threads
    (csrc/mxc/blas.h, mxc_sgemm_parts): ("rows" or "cols", block length, parts), or None when
    it runs as one call. products: one of the dot family's (this module's kernel), else a
    convolution's."""
    cdef mxc_pool_gemm j
    j.m, j.n, j.k = m, n, k
    cdef int parts = mxc_sgemm_parts(&j, nthreads, products)
    if parts == 0:
        return None
    return ("cols" if j.bycol else "rows", j.bs, parts)
