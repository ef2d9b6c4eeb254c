"""CPU kernels of Convolution and Deconvolution (forward and backward), 1-D/2-D/3-D.

The loops are C in csrc/kernels/convolution.h (im2col/col2im + BLAS GEMM; see the header for the
roles of the tensors). Kernels, each keyed by the data dtype code (float16, float32, float64):

- ``conv:forward``    in (x, w[, b]), out (y)
- ``conv:backward``   in (dy, x, w), out (dx, dw[, db])
- ``deconv:forward``  in (x, w[, b]), out (y)
- ``deconv:backward`` in (dy, x, w), out (dx, dw[, db])

iattr: kernel[3], stride[3], dilate[3], pad[3] (padded to 3-D with 1, 1, 1, 0), num_group.
"""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

include "_blas.pxi"

cdef extern from "kernels/convolution.h" nogil:
    const mxc_code_entry mxc_conv_table[]
    const int mxc_conv_table_len


#: ``{"conv:forward" | "conv:backward" | "deconv:forward" | "deconv:backward": {code: address}}``
KERNELS = build_code_table(mxc_conv_table, mxc_conv_table_len)
