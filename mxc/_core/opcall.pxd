from mxc._core._types cimport mxc_opcall, mxc_kernel, mxc_tensor

# One malloc holds the call and its nin + nout descriptors; free with free_call.
cdef mxc_opcall* new_call(mxc_kernel kernel, int nin, int nout) except NULL
cdef void free_call(void *call) noexcept nogil
# Engine trampoline: runs call->kernel, copies its message into err on failure.
cdef int run_call(void *call, char *err, size_t errlen) noexcept nogil
# nthreads under the cap (1 in a forked child, and on a thread that may not fork a team)
cdef int capped_threads(int n) noexcept nogil
cdef int fill_attrs(mxc_opcall *call, iattr, fattr) except -1
