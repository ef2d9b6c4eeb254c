"""CPU kernels for sparse storage (CSR, row_sparse): csr . dense, csr.T . dense and the lazy
(row_sparse) optimizer updates. The loops are plain C in csrc/kernels/sparse_ops.h, where each
kernel's tensor layout is documented; this module only publishes them.

``KERNELS["sp:<kernel>"][code]``: code is the values' MXNet dtype code (float16, float32,
float64); indices and indptr are int64.
"""
from mxc.ops.cpu._table cimport mxc_kentry, build_table

cdef extern from "kernels/sparse_ops.h" nogil:
    const mxc_kentry mxc_sparse_table[]


#: ``{kernel name: {dtype code: kernel address}}``
KERNELS = build_table(mxc_sparse_table)
