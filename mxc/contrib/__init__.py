"""``mx.contrib``: MXNet 1.x's experimental namespaces: ``nd``/``ndarray`` and ``sym``/``symbol``
(the ``_contrib_`` operators), ``amp`` (mixed precision), ``horovod`` (the horovod.mxnet-style
facade over MPI), ``onnx`` (MXNet 1.9's ONNX names), ``tensorboard`` (metrics into TensorBoard
files), ``io`` (DataLoaderIter: a Gluon DataLoader for Module), and the legacy ``autograd``
(pre-1.0 API), ``text`` (vocabularies, token embeddings from local files),
``svrg_optimization`` (SVRGModule, SVRGOptimizer) and ``quantization`` (INT8 models:
quantize_model, quantize_net).
These load on first use: amp wraps operator lists (40 ms), horovod needs mpi4py, onnx the onnx
package and tensorboard tensorboardX (when a writer is made)."""
import importlib as _importlib

from ..ndarray import contrib as ndarray  # noqa: F401
from ..ndarray import contrib as nd  # noqa: F401
from ..symbol import contrib as symbol  # noqa: F401
from ..symbol import contrib as sym  # noqa: F401

_LAZY = ("amp", "autograd", "horovod", "io", "onnx", "quantization", "svrg_optimization",
         "tensorboard", "text")


def __getattr__(name):
    if name in _LAZY:
        return _importlib.import_module(f"{__name__}.{name}")
    if name == "quant":         # MXNet's contrib/__init__: from . import quantization as quant
        return _importlib.import_module(f"{__name__}.quantization")
    raise AttributeError(f"module 'mxc.contrib' has no attribute {name!r}")
