"""DLPack for NDArrays on a GPU, zero-copy, through CuPy (which CuPy and PyTorch both read).

``to_dlpack(a)``: waits for the array's writers (engine wait + a fence on the device's stream),
then exports a capsule over the same device memory (the capsule keeps the NDArray alive).
``from_dlpack(obj)``: imports a CUDA tensor (``__dlpack__``/capsule from CuPy or PyTorch) as an
NDArray on gpu(k) sharing its memory (CuPy's current stream is synchronised once, so the
producer's pending writes are done before mxc's stream reads).
"""
import numpy as np

from ..base import MXNetError
from ..ops._gpu import cupy_view
from .._core import cuda, handle
from ..context import Context

KDLCUDA = 2


def dlpack_device(a):
    return (KDLCUDA, a._ctx.device_id)


def to_dlpack(a):
    a.wait_to_read()
    return cupy_view(a).toDlpack()


def is_cuda_producer(obj):
    dev = getattr(obj, "__dlpack_device__", None)
    return dev is not None and dev()[0] in (KDLCUDA, 3)    # CUDA, CUDA host (pinned)


def from_dlpack(obj, cls):
    """An NDArray of class `cls` sharing a CUDA DLPack tensor's memory."""
    import cupy
    try:
        x = cupy.from_dlpack(obj)
    except Exception as e:
        raise MXNetError(f"from_dlpack: cannot import this CUDA tensor: {e}") from None
    if not x.flags.c_contiguous or np.dtype(x.dtype) not in handle.DTYPE_CODE:
        x = cupy.ascontiguousarray(x)
    # the producer ordered its writes before CuPy's current stream; mxc's stream is another one
    cupy.cuda.get_current_stream().synchronize()
    dev = x.device.id
    chunk = cuda.external_chunk(x, x.data.ptr, x.nbytes, dev)
    return handle.make_array(cls, chunk, 0, tuple(x.shape), np.dtype(x.dtype), Context("gpu", dev))


def cupy_available():
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return cuda.device_count() > 0
