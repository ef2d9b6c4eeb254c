from libc.stdint cimport int64_t, uintptr_t
from mxc._core.engine cimport Var, VarC
from mxc._core.storage cimport Block

cdef class Chunk(Var):
    """A storage block owned by an engine var: the unit that views share and the engine orders.
    The block is allocated when first needed (by the first operation that runs on it, or by a
    read from Python), so queued work holds no memory: ``c.data`` is NULL until then."""
    cdef size_t nbytes
    cdef int dev_type
    cdef int dev_id

cdef class NDArrayBase:
    cdef readonly Chunk _chunk
    cdef readonly Py_ssize_t _offset      # bytes from chunk.base
    cdef readonly tuple _shape
    cdef readonly object _dtype           # numpy dtype
    cdef readonly int _dcode              # MXNet type flag
    cdef readonly int _itemsize
    cdef readonly int64_t _size
    cdef readonly object _ctx
    cdef public object _ag                # autograd state (later issue); None when not recorded
    cdef object __weakref__
    cdef void* data_ptr(self) except NULL


cdef class FastKernel:
    """Kernel addresses by dtype code for one elementwise operator (the per-call fast path)."""
    cdef uintptr_t addr[16]
    cdef bytes name
    cdef int nthreads
    cdef public object op
    cdef public object attrs
    cdef public dict gpu_plans      # (device, shape, dtype code, scalar) -> its packed GPU launch


cdef int chunk_ensure(VarC *v, size_t nbytes, int dev_type, int dev_id) noexcept nogil
cdef void copy_layout(NDArrayBase dst, NDArrayBase src) noexcept
