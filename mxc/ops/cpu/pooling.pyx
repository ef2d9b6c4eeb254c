"""CPU kernels of Pooling and nearest-neighbour UpSampling (forward and backward).

The loops are C in csrc/kernels/pooling.h. Kernels, keyed by the data dtype code (float16,
float32, float64):

- ``pool:forward``  in (x), out (y[, argmax]); ``pool:backward`` in (dy, x, y), out (dx);
  ``pool:backward_index`` in (dy, argmax, x), out (dx) (max pooling; x for its shape). iattr:
  kernel[3], stride[3], pad[3] (padded to 3-D), pool type (0 max, 1 avg, 2 sum, 3 lp), p_value,
  count_include_pad, channels_last. The argmax is int32 in y's layout: per output the index
  within its (n, c) plane of the first element equal to it, -1 for an empty window.
- ``upsampling:nearest`` in (x_0, ...), out (y); ``upsampling:nearest_backward`` in (dy), out
  (dx_0, ...). iattr[0]: 0 concat along channels, 1 sum.
"""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

cdef extern from "kernels/pooling.h" nogil:
    const mxc_code_entry mxc_pool_table[]
    const int mxc_pool_table_len


#: ``{"pool:forward" | "pool:backward" | "upsampling:nearest[_backward]": {code: address}}``
KERNELS = build_code_table(mxc_pool_table, mxc_pool_table_len)
