"""CPU kernels of _linalg_syevd, _linalg_gelqf, _linalg_inverse, _linalg_det, _linalg_slogdet,
_linalg_extractdiag, _linalg_makediag, _linalg_extracttrian, _linalg_maketrian and
_backward_linalg_syevd (csrc/kernels/linalg_extra.h). Keys are MXNet dtype codes (float32,
float64)."""
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

cdef extern from "kernels/linalg_extra.h" nogil:
    ctypedef struct mxc_linalg_extra_entry:
        const char *name
        int32_t code
        mxc_kernel fn
    const mxc_linalg_extra_entry mxc_linalg_extra_table[]
    const int mxc_linalg_extra_table_len


cdef dict _build():
    cdef dict table = {}
    cdef int i
    for i in range(mxc_linalg_extra_table_len):
        table.setdefault(mxc_linalg_extra_table[i].name.decode(), {})[
            int(mxc_linalg_extra_table[i].code)] = <uintptr_t>mxc_linalg_extra_table[i].fn
    return table


#: ``{"<kernel>": {dtype_code: kernel address}}``
KERNELS = _build()
