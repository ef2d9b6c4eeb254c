"""Native memory passes of the distributed KVStore's shared-memory sums (loops in
``csrc/kvstore/shm_sum.h``): ``publish`` and ``sum_into`` take flat, contiguous numpy arrays,
checked here once; the loops run without the GIL."""
import numpy as np

from libc.stdint cimport uintptr_t

cdef extern from "kvstore/shm_sum.h" nogil:
    void mxc_shm_publish(void *dst, const void *src, size_t nbytes)
    void mxc_shm_fence()
    void mxc_shm_sum(int kind, const void *send, void *const *others, int nothers,
                     void *out, size_t n)

_KINDS = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.int32): 2,
          np.dtype(np.int64): 3}
DTYPES = tuple(_KINDS)
_MAX_OTHERS = 64


cdef uintptr_t _addr(a, what) except 0:
    if not a.flags.c_contiguous:
        raise ValueError("kvstore shared sum: %s is not contiguous" % what)
    return <uintptr_t>a.ctypes.data if a.size else 1


def publish(dst, src):
    """dst[...] = src (same dtype and size) with non-temporal stores."""
    if dst.dtype != src.dtype or dst.size != src.size:
        raise ValueError("kvstore shared sum: publish of %s[%d] into %s[%d]"
                         % (src.dtype, src.size, dst.dtype, dst.size))
    if not dst.flags.writeable:
        raise ValueError("kvstore shared sum: publish into a read-only array")
    cdef uintptr_t d = _addr(dst, "the destination"), s = _addr(src, "the source")
    cdef size_t nbytes = dst.nbytes
    if nbytes:
        with nogil:
            mxc_shm_publish(<void *>d, <const void *>s, nbytes)


def fence():
    """A full memory barrier: this thread's writes before it are visible to other cores (and
    processes) before its writes after it, and its reads after it see what others published
    before their fence."""
    mxc_shm_fence()


def sum_into(send, out, others):
    """out = send + others[0] + ... (in that order), then each of ``others`` = out; all of
    one dtype in DTYPES and one size. False (nothing done) for another dtype."""
    kind = _KINDS.get(send.dtype)
    if kind is None:
        return False
    cdef int n = len(others)
    if n < 1 or n > _MAX_OTHERS:
        raise ValueError("kvstore shared sum: %d other ranks (1 to %d)" % (n, _MAX_OTHERS))
    for a in [out] + list(others):
        if a.dtype != send.dtype or a.size != send.size:
            raise ValueError("kvstore shared sum: %s[%d] with %s[%d]"
                             % (send.dtype, send.size, a.dtype, a.size))
        if not a.flags.writeable:
            raise ValueError("kvstore shared sum: a read-only receive array")
    cdef void *ptrs[64]
    cdef int q
    for q in range(n):
        ptrs[q] = <void *>_addr(others[q], "a receive array")
    cdef uintptr_t s = _addr(send, "the values"), o = _addr(out, "the receive array")
    cdef size_t size = send.size
    cdef int k = kind
    if size:
        with nogil:
            mxc_shm_sum(k, <const void *>s, <void *const *>ptrs, n, <void *>o, size)
    return True
