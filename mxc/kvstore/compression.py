"""MXNet 1.9.1's 2-bit gradient compression with error feedback, in numpy.

Arithmetic (src/kvstore/gradient_compression-inl.h): the residual accumulates the gradient
(float32 ``residual += grad``); where it is ``>= t`` the value is sent as ``+t`` and ``t`` is
subtracted, where it is ``<= -t`` it is sent as ``-t`` and ``-t`` is subtracted, otherwise 0 is
sent and the residual keeps everything. Values travel as 2-bit codes, 16 per float32 word,
value ``i`` in byte ``i // 4`` at bits ``6 - 2 * (i % 4)``: ``11`` for +t, ``10`` for -t, ``00``
for 0 -- the same bytes MXNet puts on the wire.
"""
import numpy as np

__all__ = ["quantize_2bit", "dequantize_2bit", "packed_size"]


def packed_size(n):
    """Bytes of the packed form of ``n`` values (whole float32 words of 16 values)."""
    return ((n + 15) // 16) * 4


def quantize_2bit(grad, residual, threshold):
    """Add ``grad`` into ``residual`` (both flat float32, residual updated in place) and
    return the packed codes (uint8, ``packed_size(n)`` bytes)."""
    t = np.float32(threshold)
    np.add(residual, grad, out=residual)
    pos = residual >= t
    neg = residual <= -t
    np.subtract(residual, t, out=residual, where=pos)
    np.subtract(residual, -t, out=residual, where=neg)
    n = residual.size
    codes = np.zeros(packed_size(n) * 4, np.uint8)
    codes[:n][pos] = 3
    codes[:n][neg] = 2
    c = codes.reshape(-1, 4)
    return (c[:, 0] << 6) | (c[:, 1] << 4) | (c[:, 2] << 2) | c[:, 3]


def dequantize_2bit(packed, n, threshold, out=None, accumulate=False):
    """Values of the first ``n`` codes of ``packed``: +t, -t or 0 (float32). With
    ``accumulate`` they are added into ``out``."""
    t = np.float32(threshold)
    p = np.asarray(packed, np.uint8)
    codes = np.empty((p.size, 4), np.uint8)
    codes[:, 0] = p >> 6
    codes[:, 1] = (p >> 4) & 3
    codes[:, 2] = (p >> 2) & 3
    codes[:, 3] = p & 3
    codes = codes.reshape(-1)[:n]
    vals = np.where(codes == 3, t, np.where(codes == 2, -t, np.float32(0))).astype(np.float32)
    if out is None:
        return vals
    if accumulate:
        np.add(out, vals, out=out)
    else:
        np.copyto(out, vals)
    return out
