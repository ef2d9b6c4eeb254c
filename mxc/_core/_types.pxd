# C types named after numpy dtypes, and the kernel call contract from csrc/mxc/opcall.h.
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                          uint64_t)

ctypedef float float32_t
ctypedef double float64_t
ctypedef uint16_t float16_t   # IEEE half stored as bits; kernels convert through float32

cdef extern from "mxc/opcall.h" nogil:
    enum:
        MXC_MAX_NDIM
        MXC_MAX_IATTR
        MXC_MAX_FATTR
        MXC_ERR_LEN
    enum mxc_dtype:
        MXC_FLOAT32, MXC_FLOAT64, MXC_FLOAT16, MXC_UINT8, MXC_INT32, MXC_INT8, MXC_INT64,
        MXC_BOOL, MXC_INT16, MXC_UINT16, MXC_UINT32, MXC_UINT64
    enum mxc_req:
        MXC_REQ_NULL, MXC_REQ_WRITE, MXC_REQ_INPLACE, MXC_REQ_ADD

    ctypedef struct mxc_tensor:
        void *data
        int32_t dtype
        int32_t ndim
        int64_t size
        int64_t shape[MXC_MAX_NDIM]

    ctypedef struct mxc_opcall
    ctypedef int (*mxc_kernel)(mxc_opcall *call) noexcept nogil

    ctypedef struct mxc_opcall:
        mxc_kernel kernel
        int32_t nin, nout
        mxc_tensor *inp "in"
        mxc_tensor *out
        int32_t req
        int32_t nthreads
        int32_t niattr, nfattr
        int64_t iattr[MXC_MAX_IATTR]
        double fattr[MXC_MAX_FATTR]
        char err[MXC_ERR_LEN]
