"""CPU kernels of mxc/ops/contrib_misc.py (loops in csrc/kernels/contrib_misc.h).

- ``allclose``: in a, b (one dtype, one size), out a uint8 scalar; fattr = (rtol, atol),
  iattr = (equal_nan,). Keyed by the inputs' dtype code.
"""
from mxc.ops.cpu._table cimport mxc_kentry, build_table

cdef extern from "kernels/contrib_misc.h" nogil:
    const mxc_kentry mxc_contrib_misc_table[]


#: ``{"allclose": {dtype code: kernel address}}``
KERNELS = build_table(mxc_contrib_misc_table)
