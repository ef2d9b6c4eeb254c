"""CPU kernels of _linalg_syevd, _linalg_gelqf, _linalg_inverse, _linalg_det, _linalg_slogdet,
_linalg_extractdiag, _linalg_makediag, _linalg_extracttrian, _linalg_maketrian and
_backward_linalg_syevd (csrc/kernels/linalg_extra.h). Keys are MXNet dtype codes (float32,
float64)."""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

cdef extern from "kernels/linalg_extra.h" nogil:
    const mxc_code_entry mxc_linalg_extra_table[]
    const int mxc_linalg_extra_table_len


#: ``{"<kernel>": {dtype_code: kernel address}}``
KERNELS = build_code_table(mxc_linalg_extra_table, mxc_linalg_extra_table_len)
