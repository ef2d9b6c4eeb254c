# The pooled storage allocator: aligned host blocks, reused by size class, thread-safe without
# the GIL. Engine workers and the NDArray front call these two functions on every output.

cdef struct Block:
    void *ptr          # 64-byte aligned data (host), or a device pointer (gpu)
    size_t nbytes      # bytes requested
    size_t capacity    # the rounded size class actually held
    int dev_type       # 1 cpu, 2 gpu, 3 cpu_pinned (MXNet's Context.devtype2str codes)
    int dev_id

# NULL on failure: out of memory, a request too large to round, gpu without a device backend
# installed (the caller raises "GPU backend not available"), or an unknown dev_type.
cdef Block* storage_alloc(size_t nbytes, int dev_type, int dev_id) noexcept nogil
# Returns the block to its pool (or to the OS / the device past the pool limit). NULL is a no-op.
cdef void storage_free(Block *b) noexcept nogil

# A device backend (mxc/_core/cuda.pyx installs one when the CUDA driver loads): raw memory for
# gpu blocks (dev_type 2) and page-locked host memory for cpu_pinned (dev_type 3). Both run on
# any thread without the GIL. alloc returns 0 and the pointer in out[0], or nonzero.
ctypedef int (*backend_alloc_fn)(int dev_type, int dev_id, size_t nbytes, void **out) noexcept nogil
ctypedef void (*backend_free_fn)(int dev_type, int dev_id, void *ptr) noexcept nogil
cdef enum:
    STORAGE_MAX_GPUS = 16
cdef void storage_set_backend(backend_alloc_fn alloc, backend_free_fn free_, int ngpus) noexcept nogil
