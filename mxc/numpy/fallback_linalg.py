"""MXNet 1.9.1's ``mxnet.numpy.fallback_linalg``: the numpy.linalg functions MXNet runs with
official numpy on the host. ``cond`` runs on the host here too (see ``_host``); the others have
operator versions in mxc's ``mx.np.linalg``, and those are the ones exported."""
from . import linalg as _linalg

__all__ = ["cond", "lstsq", "matrix_power", "matrix_rank", "multi_dot", "qr"]

cond = _linalg.cond
lstsq = _linalg.lstsq
matrix_power = _linalg.matrix_power
matrix_rank = _linalg.matrix_rank
multi_dot = _linalg.multi_dot
qr = _linalg.qr
