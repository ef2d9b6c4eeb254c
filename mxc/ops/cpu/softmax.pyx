"""CPU kernels of the softmax family (loops in csrc/kernels/softmax.h; see its header comment
for the attribute layout).

- ``softmax``: key (input code, output code) over float16/32/64; softmax, log_softmax and
  softmin along the middle axis of an (outer, M, inner) view, with an optional length input.
- ``softmax_bwd``: key (forward output code, input-gradient code).
- ``softmax_output_bwd``, ``softmax_ce``, ``softmax_ce_rows``, ``softmax_ce_rows_bwd``: key =
  the data's (or the head gradient's) dtype code.
"""
from mxc.ops.cpu._table cimport mxc_kentry, build_table

cdef extern from "kernels/softmax.h" nogil:
    const mxc_kentry mxc_softmax_table[]


#: ``{kernel name: {key: kernel address}}``
KERNELS = build_table(mxc_softmax_table)
