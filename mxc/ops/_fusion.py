"""Which CPU kernels are pointwise, for the fusion of chains in bulk operations.

A bound executor or a static CachedOp queues its kernel calls as one engine operation
(``handle.KernelSeq``); there, consecutive calls of pointwise kernels over one element count run
tile by tile as a chain (csrc/mxc/tiled_chain.h), so intermediates are read back from cache, with
bit-identical results. A kernel is pointwise when out[i] depends only on its inputs at i and
when it runs on any 1-D slice of its tensors: the unary, binary, scalar, cast and clip kernels
of ops/cpu/elemwise.pyx and the activations of ops/cpu/activation.pyx (not prelu, which indexes
its gamma by position). ``where`` is left out: its row-select form reads by row.
``MXNET_USE_FUSION=0`` turns fusion off.
"""
import importlib

from .._core import handle as _h

# kernel name prefixes (or whole names) per ops/cpu module
_POINTWISE = {
    "elemwise": ("unary:", "binary:", "scalar:", "rscalar:", "cast", "clip"),
    "activation": ("fwd:", "bwd:"),
}
_NOT_POINTWISE = ("prelu",)


def is_pointwise(family, name):
    """Whether kernel `name` of ops/cpu/`family` is pointwise (the CPU's bulk operations and the
    GPU's fused chains, mxc/ops/cuda/fusion.py, ask the same question)."""
    prefixes = _POINTWISE.get(family)
    return (prefixes is not None and name.startswith(prefixes)
            and not any(x in name for x in _NOT_POINTWISE))


def pointwise_kernels():
    """Addresses of every pointwise kernel."""
    out = set()
    for module in _POINTWISE:
        table = importlib.import_module(f"mxc.ops.cpu.{module}").KERNELS
        for name, by_key in table.items():
            if is_pointwise(module, name):
                out.update(by_key.values())
    return out


def install():
    _h.set_pointwise_source(pointwise_kernels)
