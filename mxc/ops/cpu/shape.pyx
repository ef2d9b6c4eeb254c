"""CPU shape and indexing kernels: transpose, concat, split, slice, slice_assign,
slice_assign_scalar, broadcast_to, flip, take, one_hot, scatter_rows.

The loops are plain C in csrc/kernels/shape.h. They move bytes, so each is compiled once per
element size and registered here under every dtype code of that size (float16/32/64, uint8,
int8, int32, int64, bool). Keys: the data dtype code, except ``take`` and ``scatter_rows``
(``(data_code, index_code)``) and ``one_hot`` (``(index_code, out_code)``); index dtypes are
the seven numeric ones (floats are truncated toward zero, as MXNet does).

Attributes (``iattr``/``fattr`` of the opcall, n = ndim of the data):

- transpose: iattr[0..n) = axes permutation.
- concat (nin inputs) / split (nout outputs): iattr[0] = axis; sizes from the shapes.
- slice: iattr[0..n) = begin, iattr[n..2n) = step (non-zero, may be negative); the output
  shape gives the lengths.
- slice_assign: inputs (dst, value), out[0] is dst's buffer (written in place); iattr as slice,
  lengths from value's shape.
- slice_assign_scalar: input dst, out[0] is dst's buffer; fattr[0] = value; iattr[0..n) = begin,
  iattr[n..2n) = step, iattr[2n..3n) = slice lengths.
- broadcast_to: input of the output's ndim, each dim equal to the output's or 1.
- flip: iattr[0..n) = 1 for each flipped axis.
- take: inputs (data, indices); iattr[0] = axis, iattr[1] = mode (0 clip, 1 wrap, 2 raise).
- one_hot: input indices; iattr[0] = depth, fattr[0] = on_value, fattr[1] = off_value.
- scatter_rows: inputs (dst, indices, value), out[0] is dst's buffer; dst[idx[i]] = value[i]
  along axis 0, negative indices count from the end; out-of-range -> error, dst untouched.
"""
from libc.stdint cimport int32_t, uintptr_t
from mxc._core._types cimport mxc_kernel

cdef extern from "kernels/shape.h" nogil:
    ctypedef struct mxc_shape_entry:
        const char *name
        int32_t es
        mxc_kernel fn
    const mxc_shape_entry mxc_shape_table[]
    const int mxc_shape_table_len

#: MXNet dtype code -> element size in bytes, for the eight dtypes these kernels serve
DATA_CODES = {2: 2, 0: 4, 1: 8, 3: 1, 5: 1, 4: 4, 6: 8, 7: 1}
#: dtype codes accepted for index arrays (float16/32/64, uint8, int8, int32, int64)
INDEX_CODES = (2, 0, 1, 3, 5, 4, 6)


cdef dict _build():
    cdef dict table = {}
    cdef int i
    for i in range(mxc_shape_table_len):
        name = mxc_shape_table[i].name.decode()
        es = int(mxc_shape_table[i].es)
        addr = <uintptr_t>mxc_shape_table[i].fn
        keys = table.setdefault(name, {})
        if name == "one_hot":
            for ic in INDEX_CODES:
                for oc in DATA_CODES:
                    keys[(ic, oc)] = addr
            continue
        for code, size in DATA_CODES.items():
            if size != es:
                continue
            if name in ("take", "scatter_rows"):
                for ic in INDEX_CODES:
                    keys[(code, ic)] = addr
            else:
                keys[code] = addr
    return table


#: ``{name: {key: kernel address}}``; see the module docstring for keys and attributes.
KERNELS = _build()
