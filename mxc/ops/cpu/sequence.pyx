"""CPU sequence kernels (SequenceMask, SequenceLast, SequenceReverse): csrc/kernels/sequence.h.

One function per data dtype (float16/32/64, uint8, int8, int32, int64; bool shares uint8's);
the header describes each kernel's inputs, outputs and attributes. Key: the data dtype code.
"""
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

cdef extern from "kernels/sequence.h" nogil:
    ctypedef struct mxc_gu_entry:
        const char *name
        int32_t code
        mxc_kernel fn
    const mxc_gu_entry mxc_sequence_table[]


cdef dict _build():
    cdef dict table = {}
    cdef int i = 0
    while mxc_sequence_table[i].name != NULL:
        table.setdefault(mxc_sequence_table[i].name.decode(), {})[int(mxc_sequence_table[i].code)] = \
            <uintptr_t>mxc_sequence_table[i].fn
        i += 1
    for t in table.values():
        if 3 in t:
            t.setdefault(7, t[3])      # bool is stored as uint8
    return table


#: ``{kernel name: {dtype_code: kernel address}}``
KERNELS = _build()
