"""Building and running `mxc_opcall`s (csrc/mxc/opcall.h).

`run_on_numpy` calls a kernel directly on numpy arrays, outside the engine: kernel tests use it
to check a kernel before any front end exists, and it is the reference path for debugging.
"""
cdef extern from "mxc/smallpool.h" nogil:
    void *mxc_sp_calloc(size_t n)
    void mxc_sp_free(void *p)
cdef extern from "mxc/pool.h" nogil:
    ctypedef struct mxc_pool_t:
        pass
    void mxc_pool_quiesce(mxc_pool_t *p)
from libc.string cimport strncpy
from libc.stdint cimport int64_t, uintptr_t
cimport numpy as cnp
import os
import numpy as np

from mxc._core.engine cimport engine_team_thread
from mxc._core._types cimport (mxc_opcall, mxc_kernel, mxc_tensor, MXC_MAX_NDIM,
                               MXC_MAX_IATTR, MXC_MAX_FATTR, MXC_ERR_LEN, MXC_REQ_WRITE)
from mxc.base import MXNetError, bfloat16

cnp.import_array()

# numpy dtype -> MXNet type flag, and back
DTYPE_CODE = {
    np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2,
    np.dtype(np.uint8): 3, np.dtype(np.int32): 4, np.dtype(np.int8): 5,
    np.dtype(np.int64): 6, np.dtype(np.bool_): 7, np.dtype(np.int16): 8,
    np.dtype(np.uint16): 9, np.dtype(np.uint32): 10, np.dtype(np.uint64): 11,
    bfloat16: 12,
}
CODE_DTYPE = {v: k for k, v in DTYPE_CODE.items()}


cdef mxc_opcall* new_call(mxc_kernel kernel, int nin, int nout) except NULL:
    cdef size_t n = sizeof(mxc_opcall) + <size_t>(nin + nout) * sizeof(mxc_tensor)
    cdef mxc_opcall *call = <mxc_opcall*>mxc_sp_calloc(n)
    if call == NULL:
        raise MemoryError("mxc: out of memory building an operator call")
    call.kernel = kernel
    call.nin = nin
    call.nout = nout
    call.inp = <mxc_tensor*>(<char*>call + sizeof(mxc_opcall))
    call.out = call.inp + nin
    call.req = MXC_REQ_WRITE
    call.nthreads = 1
    return call


cdef void free_call(void *call) noexcept nogil:
    mxc_sp_free(call)


# The most OpenMP threads any kernel may use; 0: no cap. A forked child gets 1: libgomp's
# thread pool does not survive fork, and a parallel region in the child waits for the parent's
# threads forever (MXNet #15690). Every kernel run passes here, whoever built its call.
cdef int g_thread_cap = 0
cdef bint g_forked = False


def _after_fork_child():
    global g_thread_cap, g_forked
    g_thread_cap = 1
    g_forked = True


def set_load_cap(int n):
    """Cap every kernel's OpenMP threads at n (0: no cap): the cores other processes leave free
    (mxc/_core/threads.py follows them). A forked child keeps its cap of 1."""
    global g_thread_cap
    if not g_forked:
        g_thread_cap = n if n > 0 else 0


os.register_at_fork(after_in_child=_after_fork_child)


# the load pool (mxc/_core/pool.pyx), NULL until it is imported
cdef mxc_pool_t *g_pool = NULL


def install_pool(uintptr_t address):
    global g_pool
    g_pool = <mxc_pool_t*>address


cdef int capped_threads(int n) noexcept nogil:
    if n > 1 and not engine_team_thread():
        return 1
    return g_thread_cap if g_thread_cap > 0 and n > g_thread_cap else n


def kernel_threads(int n):
    """The OpenMP threads a kernel asking for n may fork on the calling thread now (the load
    cap and the engine's rule, capped_threads): for native code that runs outside run_call."""
    return capped_threads(n)


cdef int run_call(void *arg, char *err, size_t errlen) noexcept nogil:
    cdef mxc_opcall *call = <mxc_opcall*>arg
    cdef int rc, asked = call.nthreads
    # the cap follows the load, and a bulk operation's calls run again and again: cap this run
    # only
    call.nthreads = capped_threads(asked)
    rc = call.kernel(call)
    call.nthreads = asked
    # a GEMM block the load pool's helper took may still run, reading this kernel's arrays,
    # which the engine may free once the kernel returns
    if g_pool != NULL:
        mxc_pool_quiesce(g_pool)
    if rc != 0:
        call.err[MXC_ERR_LEN - 1] = 0
        if call.err[0] == 0:
            strncpy(call.err, "kernel failed", MXC_ERR_LEN - 1)
        strncpy(err, call.err, errlen - 1)
        err[errlen - 1] = 0
    return rc


cdef int fill_attrs(mxc_opcall *call, iattr, fattr) except -1:
    cdef int i
    if len(iattr) > MXC_MAX_IATTR or len(fattr) > MXC_MAX_FATTR:
        raise ValueError("too many kernel attributes")
    for i, v in enumerate(iattr):
        call.iattr[i] = v
    for i, v in enumerate(fattr):
        call.fattr[i] = v
    call.niattr = len(iattr)
    call.nfattr = len(fattr)
    return 0


cdef int set_tensor(mxc_tensor *t, cnp.ndarray a) except -1:
    if not a.flags.c_contiguous:
        raise ValueError("kernel arrays must be C-contiguous")
    if a.ndim > MXC_MAX_NDIM:
        raise ValueError(f"at most {MXC_MAX_NDIM} dimensions")
    t.data = cnp.PyArray_DATA(a)
    t.dtype = DTYPE_CODE[a.dtype]
    t.ndim = a.ndim
    t.size = a.size
    for i in range(a.ndim):
        t.shape[i] = a.shape[i]
    return 0


def run_on_numpy(uintptr_t kernel, inputs, outputs, iattr=(), fattr=(), int req=MXC_REQ_WRITE,
                 int nthreads=1):
    """Run the kernel at address `kernel` on contiguous numpy arrays; outputs are written."""
    cdef mxc_opcall *call = new_call(<mxc_kernel>kernel, len(inputs), len(outputs))
    cdef int rc
    try:
        for i, a in enumerate(inputs):
            set_tensor(&call.inp[i], a)
        for i, a in enumerate(outputs):
            set_tensor(&call.out[i], a)
        fill_attrs(call, iattr, fattr)
        call.req = req
        call.nthreads = max(1, nthreads)
        if g_thread_cap > 0 and call.nthreads > g_thread_cap:
            call.nthreads = g_thread_cap
        with nogil:
            rc = call.kernel(call)
            if g_pool != NULL:   # as run_call: the caller's arrays outlive any dropped block
                mxc_pool_quiesce(g_pool)
        if rc != 0:
            raise MXNetError(call.err.decode("utf-8", "replace"))
    finally:
        free_call(call)
