"""CPU kernels of Convolution and Deconvolution (forward and backward), 1-D/2-D/3-D.

The loops are C in csrc/kernels/convolution.h (im2col/col2im + BLAS GEMM; see the header for the
roles of the tensors). Kernels, each keyed by the data dtype code (float16, float32, float64):

- ``conv:forward``    in (x, w[, b]), out (y)
- ``conv:backward``   in (dy, x, w), out (dx, dw[, db])
- ``deconv:forward``  in (x, w[, b]), out (y)
- ``deconv:backward`` in (dy, x, w), out (dx, dw[, db])

iattr: kernel[3], stride[3], dilate[3], pad[3] (padded to 3-D with 1, 1, 1, 0), num_group.
"""
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

include "_blas.pxi"

cdef extern from "kernels/convolution.h" nogil:
    ctypedef struct mxc_conv_entry:
        const char *name
        int32_t code
        mxc_kernel fn
    const mxc_conv_entry mxc_conv_table[]
    const int mxc_conv_table_len


cdef dict _build():
    cdef dict table = {}
    cdef int i
    for i in range(mxc_conv_table_len):
        table.setdefault(mxc_conv_table[i].name.decode(), {})[int(mxc_conv_table[i].code)] = \
            <uintptr_t>mxc_conv_table[i].fn
    return table


#: ``{"conv:forward" | "conv:backward" | "deconv:forward" | "deconv:backward": {code: address}}``
KERNELS = _build()
