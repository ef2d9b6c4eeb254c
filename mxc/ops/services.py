"""What operators get from the NDArray layer above them, installed by it when it loads.

Some operators allocate a scratch array, run other operators from their forward, or hand a
sparse input to the CSR/row_sparse classes. Those live in mxc.ndarray, a layer above; rather than
import it, operators read them here (``services.ndarray.empty(...)``, ``services.run(...)``),
where mxc.ndarray installs them (as ``handle.install_*`` does for the autograd recorder).
"""
from ..base import MXNetError

__all__ = ["ndarray", "sparse", "run", "install_ndarray"]


class _Missing:
    def __getattr__(self, name):
        raise MXNetError(f"operator services: mxc.ndarray is not loaded (needed for {name})")


ndarray = _Missing()   # the mx.nd namespace: an imperative call's F (empty, zeros, array ...)
sparse = _Missing()    # mxc.ndarray.sparse: the CSR/row_sparse classes, cast_storage


def run(op, inputs, attrs, out=None):
    """Run OpDef `op` with typed `attrs` on NDArrays (mxc.ndarray.register.run once installed)."""
    raise MXNetError(f"operator services: mxc.ndarray is not loaded (running {op.name})")


def install_ndarray(namespace, run_op, sparse_module):
    """Called once by mxc.ndarray when it has loaded."""
    global ndarray, run, sparse
    ndarray, run, sparse = namespace, run_op, sparse_module
