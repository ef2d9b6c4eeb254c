"""CPU kernels of mxc/ops/quantization.py (loops in csrc/kernels/quantization.h): quantize_v2,
quantize, dequantize, requantize, the int8 products (fully_connected, conv: u8/s8 x s8 with int32
accumulation) and the int8 pooling, relu and flatten. Keyed by the data input's dtype code."""
from mxc.ops.cpu._table cimport mxc_code_entry, build_code_table

cdef extern from "kernels/quantization.h" nogil:
    const mxc_code_entry mxc_quantization_table[]


#: ``{kernel name: {dtype code: kernel address}}``
KERNELS = build_code_table(mxc_quantization_table, -1)
