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


# The per-dtype kernel table of csrc/kernels/common.h (mxc_code_entry: one dtype code per entry),
# used by most kernel families (gather, ordering, sequence, shape_extra, convolution, pooling, dot, linalg, ...).
cdef extern from "kernels/common.h" nogil:
    ctypedef struct mxc_code_entry:
        const char *name
        int32_t code
        mxc_kernel fn


cdef inline dict build_code_table(const mxc_code_entry *t, Py_ssize_t n):
    """``{name: {dtype code: address}}`` from `n` entries (n < 0: up to the entry with name ==
    NULL); bool (7) uses the uint8 (3) kernel where there is one, as bool is stored in a byte."""
    cdef dict table = {}
    cdef Py_ssize_t i = 0
    while (i < n) if n >= 0 else (t[i].name != NULL):
        table.setdefault(t[i].name.decode(), {})[int(t[i].code)] = <uintptr_t>t[i].fn
        i += 1
    for by_code in table.values():
        if 3 in by_code:
            by_code.setdefault(7, by_code[3])
    return table
