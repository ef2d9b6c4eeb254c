"""CPU kernels of the linalg_* operators: potrf, potri, trsm, trmm, syrk, sumlogdiag and the
backward kernels of potrf, potri, trsm, trmm, sumlogdiag (csrc/kernels/linalg.h; BLAS/LAPACK
called without the GIL). Keys are MXNet dtype codes (float32, float64)."""
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

include "_blas.pxi"

cdef extern from "kernels/linalg.h" nogil:
    ctypedef struct mxc_linalg_entry:
        const char *name
        int32_t code
        mxc_kernel fn
    const mxc_linalg_entry mxc_linalg_table[]
    const int mxc_linalg_table_len


cdef dict _build():
    cdef dict table = {}
    cdef int i
    for i in range(mxc_linalg_table_len):
        table.setdefault(mxc_linalg_table[i].name.decode(), {})[int(mxc_linalg_table[i].code)] = \
            <uintptr_t>mxc_linalg_table[i].fn
    return table


#: ``{"<kernel>": {dtype_code: kernel address}}``
KERNELS = _build()
