"""mxc: Apache MXNet 1.x's programming model for today's Python. ``import mxc as mx``."""
__version__ = "0.1.0"

import os as _os

# OpenMP threads spin a little after a parallel region, then sleep, unless the user chose
# otherwise. A sleeping thread takes 25-55 us to wake on a 2-core VM (more than a kernel on 64K
# floats), and a training step runs a region every few tens of microseconds; libgomp's default
# spin (~ms) holds, under load, the cores the Python thread needs to queue the next operations
# (imperative MLP step 468 ms spinning vs 37 ms passive). 3000 spins is ~60-150 us. 2 cores,
# alternated against OMP_WAIT_POLICY=PASSIVE (with csrc/mxc/blas.h's float32 GEMMs on these
# threads), samples/s: hybridized LeNet 5.4k -> 7.0k, CIFAR ResNet-18 568 -> 644, imperative
# ResNet-18 559 -> 637; beside 4 busy processes unchanged (the watcher caps the teams at one
# thread there). Read when libgomp loads, which is with the first kernel module below.
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["GOMP_SPINCOUNT"] = "3000"

from .base import MXNetError  # noqa: F401
from . import base  # noqa: F401
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus  # noqa: F401
from . import context  # noqa: F401
from . import ndarray  # noqa: F401
from . import ndarray as nd  # noqa: F401
from .ndarray import NDArray  # noqa: F401
from ._core import storage  # noqa: F401
from . import engine  # noqa: F401
from . import recordio, io, image  # noqa: F401
from . import image as img  # noqa: F401  (MXNet's alias)
io.ImageRecordIter = image.record_iter.ImageRecordIter  # decoding images, they sit in mx.image
io.ImageRecordUInt8Iter = image.record_iter.ImageRecordUInt8Iter
io.ImageRecordInt8Iter = image.record_iter.ImageRecordInt8Iter
io.ImageDetRecordIter = image.det_record_iter.ImageDetRecordIter
from .ops import registry as _registry  # noqa: F401
from . import autograd  # noqa: F401
from . import util  # noqa: F401
from . import test_utils  # noqa: F401
from . import operator  # noqa: F401
from . import random  # noqa: F401
from . import runtime  # noqa: F401
from . import rtc  # noqa: F401
from . import profiler  # noqa: F401
from . import registry  # noqa: F401
from .util import is_np_shape, set_np_shape, np_shape, use_np_shape  # noqa: F401
from .util import is_np_array, np_array, use_np_array, use_np  # noqa: F401
from . import name  # noqa: F401
from . import attribute, executor, symbol  # noqa: F401
from . import symbol as sym  # noqa: F401
from .attribute import AttrScope  # noqa: F401
from . import lr_scheduler  # noqa: F401
ndarray.CachedOp = executor.CachedOp  # mx.nd.CachedOp, as MXNet exposes it
# training: the building blocks, Gluon, the legacy mx.rnn cells and the Module API
from . import initializer, optimizer, metric, kvstore  # noqa: F401
from . import initializer as init, optimizer as opt, kvstore as kv  # noqa: F401
from . import gluon, rnn  # noqa: F401
from . import model, callback, monitor, module  # noqa: F401
from . import module as mod, monitor as mon  # noqa: F401
from .feedforward import FeedForward as _FeedForward  # noqa: E402
model.FeedForward = _FeedForward  # MXNet's place for it; it builds on Module, above model
from . import visualization, visualization as viz  # noqa: F401
from . import onnx  # noqa: F401  (mx.onnx; the onnx package loads when a model is converted)
from . import contrib  # noqa: F401,E402  (amp and horovod load on first use)
gluon.contrib.data.text._contrib_text = lambda: contrib.text  # contrib builds on gluon

# mx.np and mx.npx (0.1 s of imports) load on first use, like contrib's amp and horovod
_LAZY = {"np": "numpy", "numpy": "numpy", "npx": "numpy_extension",
         "numpy_extension": "numpy_extension"}


def __getattr__(attr):
    sub = _LAZY.get(attr)
    if sub is None:
        raise AttributeError(f"module 'mxc' has no attribute {attr!r}")
    import importlib
    return importlib.import_module(f"{__name__}.{sub}")
