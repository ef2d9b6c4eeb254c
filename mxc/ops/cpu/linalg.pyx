"""CPU kernels of the linalg_* operators: potrf, potri, trsm, trmm, syrk, sumlogdiag and the
backward kernels of potrf, potri, trsm, trmm, sumlogdiag (csrc/kernels/linalg.h; BLAS/LAPACK
called without the GIL). Keys are MXNet dtype codes (float32, float64)."""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

include "_blas.pxi"

cdef extern from "kernels/linalg.h" nogil:
    const mxc_code_entry mxc_linalg_table[]
    const int mxc_linalg_table_len


#: ``{"<kernel>": {dtype_code: kernel address}}``
KERNELS = build_code_table(mxc_linalg_table, mxc_linalg_table_len)
