"""CPU ordering kernels (sort, argsort, topk): csrc/kernels/ordering.h, one "topk" kernel per
data dtype (float16/32/64, uint8, int8, int32, int64; bool shares uint8's).

Kernel contract: input x viewed as (pre, n, post); iattr = [pre, n, post, k, ret, ascend] with
ret 0 value, 1 indices, 2 mask, 3 both; outputs as the header describes. Key: x's dtype code.
"""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

cdef extern from "kernels/ordering.h" nogil:
    const mxc_code_entry mxc_ordering_table[]


#: ``{kernel name: {dtype_code: kernel address}}``
KERNELS = build_code_table(mxc_ordering_table, -1)
