"""``mx.npx``: MXNet's numpy extension. Operators that are not numpy's (neural-network layers,
``reshape`` with MXNet's codes ...) on ``mx.np.ndarray``, the numpy-semantics switches,
devices, ``save``/``load`` of numpy-shape ``.params`` files, ``random`` and ``image``."""
from . import _op  # noqa: F401
from . import image  # noqa: F401
from . import random  # noqa: F401
from ._op import *  # noqa: F401,F403
from ..context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus  # noqa: F401
from ..util import (is_np_shape, is_np_array, set_np, reset_np,  # noqa: F401
                    get_cuda_compute_capability, use_np, use_np_shape, use_np_array,
                    np_shape, np_array, is_np_default_dtype)
from ..ndarray.ndarray import waitall  # noqa: F401
from .random import seed  # noqa: F401
from .utils import save, load  # noqa: F401
from . import utils  # noqa: F401
from ..base import MXNetError


def gpu_memory_info(device_id=0):
    """(free, total) bytes of a GPU; mxc runs on CPU, so any device id raises MXNetError."""
    raise MXNetError(f"gpu_memory_info: gpu({device_id}) is not available (mxc runs on CPU)")


__all__ = []
