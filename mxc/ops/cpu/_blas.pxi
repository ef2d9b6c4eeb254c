# Included by every kernel module that calls BLAS: fills this module's copy of the function
# table in csrc/mxc/blas.h from the addresses mxc._core.blas found, and points it at the gate
# state all modules share (see that module).
from libc.stdint cimport uintptr_t as _blas_uintptr_t

cdef extern from "mxc/blas.h" nogil:
    void mxc_blas_install(int i, void *fn)
    void mxc_blas_install_gate(void *gate)
    void mxc_blas_install_pool(void *pool)

def _install_blas():
    from mxc._core import blas as _blas
    for _i, _a in enumerate(_blas.ADDRESSES):
        mxc_blas_install(_i, <void*><_blas_uintptr_t>_a)
    mxc_blas_install_gate(<void*><_blas_uintptr_t>_blas.GATE)
    mxc_blas_install_pool(<void*><_blas_uintptr_t>_blas.POOL)

_install_blas()
