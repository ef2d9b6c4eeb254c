"""CPU kernels of ROIPooling, BilinearSampler and Correlation, forward and backward
(csrc/kernels/spatial.h). Keys are MXNet dtype codes (float32, float64)."""
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

cdef extern from "kernels/spatial.h" nogil:
    ctypedef struct mxc_spatial_entry:
        const char *name
        int32_t code
        mxc_kernel fn
    const mxc_spatial_entry mxc_spatial_table[]
    const int mxc_spatial_table_len


cdef dict _build():
    cdef dict table = {}
    cdef int i
    for i in range(mxc_spatial_table_len):
        table.setdefault(mxc_spatial_table[i].name.decode(), {})[
            int(mxc_spatial_table[i].code)] = <uintptr_t>mxc_spatial_table[i].fn
    return table


#: ``{"<kernel>": {dtype_code: kernel address}}``
KERNELS = _build()
