"""MXNet 1.9.1's ``mxnet.numpy.stride_tricks`` module name; ``broadcast_arrays`` lives in _op."""
from ._op import broadcast_arrays

__all__ = ["broadcast_arrays"]
