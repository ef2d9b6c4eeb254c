"""CPU kernels of ROIPooling, BilinearSampler and Correlation, forward and backward
(csrc/kernels/spatial.h). Keys are MXNet dtype codes (float32, float64)."""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

cdef extern from "kernels/spatial.h" nogil:
    const mxc_code_entry mxc_spatial_table[]
    const int mxc_spatial_table_len


#: ``{"<kernel>": {dtype_code: kernel address}}``
KERNELS = build_code_table(mxc_spatial_table, mxc_spatial_table_len)
