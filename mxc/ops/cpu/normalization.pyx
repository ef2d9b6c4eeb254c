"""CPU normalization kernels: BatchNorm (per-channel statistics) and the row kernel shared by
LayerNorm, InstanceNorm and GroupNorm, forward and backward.

The loops are plain C in csrc/kernels/normalization.h (see the header for the (A, K, B) view of the
data and the attribute slots); this module only publishes them. Keys are the data's MXNet dtype
code; BatchNorm's float16 kernels take float32 parameters and statistics, the row kernels' float16
kernels take float16 parameters (MXNet's type rules for each operator).
"""
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

cdef extern from "kernels/normalization.h" nogil:
    ctypedef struct mxc_nrm_entry:
        const char *name
        int32_t code
        mxc_kernel fn
    const mxc_nrm_entry mxc_nrm_table[]
    const int mxc_nrm_table_len


cdef dict _build():
    cdef dict table = {}
    cdef int i
    for i in range(mxc_nrm_table_len):
        name = mxc_nrm_table[i].name.decode()
        table.setdefault(name, {})[int(mxc_nrm_table[i].code)] = <uintptr_t>mxc_nrm_table[i].fn
    return table


#: ``{"bn_fwd" | "bn_bwd" | "row_fwd" | "row_bwd": {dtype_code: kernel address}}``
KERNELS = _build()
