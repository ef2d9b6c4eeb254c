"""``mx.np.genfromtxt``: numpy reads the text file, the table becomes an mx.np array (numpy's
dtype kept, as MXNet 1.9.1)."""
import numpy as onp

from ._core import ctx_arg
from .multiarray import array

__all__ = ["genfromtxt"]


def genfromtxt(*args, **kwargs):
    ctx = ctx_arg(kwargs.pop("ctx", None))
    table = onp.genfromtxt(*args, **kwargs)
    return array(table, dtype=table.dtype, ctx=ctx)
