# The CUDA runtime of mxc (mxc/_core/cuda.pyx): the driver API opened at run time, per-device
# contexts and streams, kernel launches and copies pushed on the engine's device workers.
from mxc._core.engine cimport VarC

# Give var v its device/host block (as handle.chunk_ensure does): 0, or -1 out of memory.
cdef int cuda_chunk_ensure(VarC *v, size_t nbytes, int dev_type, int dev_id) noexcept nogil
