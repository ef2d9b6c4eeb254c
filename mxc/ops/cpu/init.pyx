"""CPU initialisation kernels: fill, arange, eye (loops in csrc/kernels/elemwise_init.h).

- ``fill``: fattr[0] = value, written to every element (converted once with MXNet's cast rules).
- ``arange``: out[i] = fattr[0] + i * fattr[1], computed in double then converted (not bool).
- ``eye``: 2-D output (N, M); ones on diagonal iattr[0] (k > 0 above the main one).

Every key is the output's MXNet dtype code.
"""
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

cdef extern from "kernels/elemwise_init.h" nogil:
    ctypedef struct mxc_kentry:
        const char *name
        int32_t key0
        int32_t key1
        mxc_kernel fn
    const mxc_kentry mxc_init_table[]


cdef dict _build():
    cdef dict table = {}
    cdef int i = 0
    cdef mxc_kentry e
    while mxc_init_table[i].name != NULL:
        e = mxc_init_table[i]
        table.setdefault(e.name.decode(), {})[int(e.key0)] = <uintptr_t>e.fn
        i += 1
    return table


#: ``{"fill" | "arange" | "eye": {dtype code: kernel address}}``
KERNELS = _build()
