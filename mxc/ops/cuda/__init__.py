"""CUDA C kernels of mxc's GPU operators, compiled at run time through CuPy (loader.py).

Each family of CPU kernels that runs on the GPU has its launch builder here at the same stem
(``ops/<family>.py``, ``ops/cpu/<family>.pyx``, ``csrc/kernels/<family>.h`` ->
``ops/cuda/<family>.py``): ``build(opname, kernel, attrs, inputs, outputs, iattr, fattr)``
returns the launch spec (see ``launch_spec``). Each ``<family>.cu`` has its
``instantiations()`` in the ``.py`` beside it. What the builders share is in _launch.py.
"""
import importlib

from .. import registry
from ._launch import NoKernel


def launch_spec(opname, attrs, inputs, outputs, family=None, kernel=None, iattr=None,
                fattr=None):
    """The GPU launch of operator `opname` whose CPU kernel is (family, kernel), given the
    integer and float attributes (iattr, fattr) its kernel_forward computes for the CPU kernel
    (the GPU kernels read the same values). Keyed by the CPU kernel, so every operator that
    shares a CPU kernel shares its GPU launch. Returns one launch dict (family, name, grid,
    block, args), ``{"launches": [...]}`` for several in order on one stream (with
    ``"workspace": nbytes`` when their ("ws", offset) arguments need scratch memory, and
    ``"check"`` for a device-side check run first), ``{"cublas": run}`` for GEMMs, or None when
    the operator has no GPU kernel for these arrays (the caller raises naming it). A builder
    that fails otherwise raises: that is a bug, not a missing kernel."""
    try:
        mod = importlib.import_module("%s.%s" % (__name__, family))
    except ModuleNotFoundError as e:
        if e.name != "%s.%s" % (__name__, family):
            raise
        return None
    build = getattr(mod, "build", None)
    if build is None:           # a .cu's instantiations only (broadcast)
        return None
    attrs = attrs if isinstance(attrs, dict) else {}
    sig = registry.declared_kernel(family, kernel)
    if sig is not None:           # slots read by name (registry.Kernel)
        iattr, fattr = sig.ints_of(iattr), sig.floats_of(fattr)
    else:
        iattr = None if iattr is None else tuple(iattr)
        fattr = None if fattr is None else tuple(fattr)
    try:
        return build(opname, kernel, attrs, inputs, outputs, iattr, fattr)
    except NoKernel:
        return None
