"""CPU ordering kernels (sort, argsort, topk): csrc/kernels/ordering.h, one "topk" kernel per
data dtype (float16/32/64, uint8, int8, int32, int64; bool shares uint8's).

Kernel contract: input x viewed as (pre, n, post); iattr = [pre, n, post, k, ret, ascend] with
ret 0 value, 1 indices, 2 mask, 3 both; outputs as the header describes. Key: x's dtype code.
"""
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

cdef extern from "kernels/ordering.h" nogil:
    ctypedef struct mxc_gu_entry:
        const char *name
        int32_t code
        mxc_kernel fn
    const mxc_gu_entry mxc_ordering_table[]


cdef dict _build():
    cdef dict table = {}
    cdef int i = 0
    while mxc_ordering_table[i].name != NULL:
        table.setdefault(mxc_ordering_table[i].name.decode(), {})[int(mxc_ordering_table[i].code)] = \
            <uintptr_t>mxc_ordering_table[i].fn
        i += 1
    for t in table.values():
        if 3 in t:
            t.setdefault(7, t[3])      # bool is stored as uint8
    return table


#: ``{"topk": {dtype_code: kernel address}}``
KERNELS = _build()
