# The pooled storage allocator: aligned host blocks, reused by size class, thread-safe without
# the GIL. Engine workers and the NDArray front call these two functions on every output.

cdef struct Block:
    void *ptr          # 64-byte aligned data
    size_t nbytes      # bytes requested
    size_t capacity    # the rounded size class actually held
    int dev_type       # 1 cpu, 2 gpu, 3 cpu_pinned (MXNet's Context.devtype2str codes)
    int dev_id

# NULL on failure: out of memory, a request too large to round, gpu (no backend here: the
# caller raises "GPU backend not available"), or an unknown dev_type.
cdef Block* storage_alloc(size_t nbytes, int dev_type, int dev_id) noexcept nogil
# Returns the block to its pool (or to the OS past the pool limit). NULL is a no-op.
cdef void storage_free(Block *b) noexcept nogil
