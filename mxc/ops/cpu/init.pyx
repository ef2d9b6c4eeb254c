"""CPU initialisation kernels: fill, arange, eye (loops in csrc/kernels/elemwise_init.h).

- ``fill``: fattr[0] = value, written to every element (converted once with MXNet's cast rules).
- ``arange``: out[i] = fattr[0] + i * fattr[1], computed in double then converted (not bool).
- ``eye``: 2-D output (N, M); ones on diagonal iattr[0] (k > 0 above the main one).

Every key is the output's MXNet dtype code.
"""
from mxc.ops.cpu._table cimport mxc_kentry, build_table

cdef extern from "kernels/elemwise_init.h" nogil:
    const mxc_kentry mxc_init_table[]


#: ``{"fill" | "arange" | "eye": {dtype code: kernel address}}``
KERNELS = build_table(mxc_init_table)
