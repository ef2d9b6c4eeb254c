"""MXNet 1.9.1's ``mxnet.numpy.function_base`` module name; ``meshgrid`` lives in multiarray."""
from .multiarray import meshgrid

__all__ = ["meshgrid"]
