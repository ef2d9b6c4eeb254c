"""``mx.np.set_printoptions``: mx.np arrays print through numpy, so numpy's options apply;
MXNet 1.9.1 accepts only `precision` and `threshold`, and so does mxc."""
import numpy as onp

__all__ = ["set_printoptions"]


def set_printoptions(precision=None, threshold=None, **kwarg):
    if kwarg:
        raise NotImplementedError("mxnet.numpy.set_printoptions only supports parameters "
                                  f"precision and threshold for now (got {sorted(kwarg)})")
    onp.set_printoptions(precision=precision, threshold=threshold)
