"""CPU gather/scatter kernels (pick, gather_nd, scatter_nd, Embedding's gradient, histogram,
ravel_multi_index, unravel_index): csrc/kernels/gather.h.

One function per data dtype (float16/32/64, uint8, int8, int32, int64; bool shares uint8's);
the header describes each kernel's inputs, outputs and attributes. Key: the data dtype code.
"""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

cdef extern from "kernels/gather.h" nogil:
    const mxc_code_entry mxc_gather_table[]


#: ``{kernel name: {dtype_code: kernel address}}``
KERNELS = build_code_table(mxc_gather_table, -1)
