# The kernel table format of csrc/kernels/elemwise_common.h (mxc_kentry) and the one function
# that turns such a table into a module's KERNELS dict.
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

cdef extern from "kernels/elemwise_common.h" nogil:
    ctypedef struct mxc_kentry:
        const char *name
        int32_t key0
        int32_t key1         # -1 when the key is the single code key0
        mxc_kernel fn


cdef inline dict build_table(const mxc_kentry *t):
    """``{name: {key: address}}`` from a table ending with name == NULL; a later entry for the
    same (name, key) replaces an earlier one."""
    cdef dict table = {}
    cdef int i = 0
    while t[i].name != NULL:
        key = int(t[i].key0) if t[i].key1 < 0 else (int(t[i].key0), int(t[i].key1))
        table.setdefault(t[i].name.decode(), {})[key] = <uintptr_t>t[i].fn
        i += 1
    return table
