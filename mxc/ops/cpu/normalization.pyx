"""CPU normalization kernels: BatchNorm (per-channel statistics) and the row kernel shared by
LayerNorm, InstanceNorm and GroupNorm, forward and backward.

The loops are plain C in csrc/kernels/normalization.h (see the header for the (A, K, B) view of the
data and the attribute slots); this module only publishes them. Keys are the data's MXNet dtype
code; BatchNorm's float16 kernels take float32 parameters and statistics, the row kernels' float16
kernels take float16 parameters (MXNet's type rules for each operator).
"""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

cdef extern from "kernels/normalization.h" nogil:
    const mxc_code_entry mxc_nrm_table[]
    const int mxc_nrm_table_len


#: ``{"bn_fwd" | "bn_bwd" | "row_fwd" | "row_bwd": {dtype_code: kernel address}}``
KERNELS = build_code_table(mxc_nrm_table, mxc_nrm_table_len)
