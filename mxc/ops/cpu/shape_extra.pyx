"""CPU kernels of the extra shape operators (pad, diag, shape_array, size_array, add_n):
csrc/kernels/shape_extra.h.

One function per data dtype (float16/32/64, uint8, int8, int32, int64; bool shares uint8's);
the header describes each kernel's inputs, outputs and attributes. Key: the data dtype code.
"""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

cdef extern from "kernels/shape_extra.h" nogil:
    const mxc_code_entry mxc_shape_extra_table[]


#: ``{kernel name: {dtype_code: kernel address}}``
KERNELS = build_code_table(mxc_shape_extra_table, -1)
