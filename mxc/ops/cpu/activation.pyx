"""CPU kernels of Activation and LeakyReLU (loops in csrc/kernels/activation.h).

Keys are the MXNet dtype code of the data (float16, float32, float64). Names:

- ``fwd:softrelu``, ``fwd:selu``, ``fwd:gelu`` (x -> y); ``fwd:xelu`` and ``fwd:elu`` read the
  slope from fattr[0]; ``fwd:xelu_arr`` takes (x, slopes) -> y (rrelu in training).
- ``bwd:<name>`` (head gradient, output or input[, slopes]) -> input gradient, for relu,
  sigmoid, tanh, softrelu (from the output), softsign (from the input), xelu/elu (output,
  fattr[0] = slope), xelu_arr (output, slopes), selu (output), gelu (input).
- ``fwd:prelu`` (x, gamma) -> y and ``bwd:prelu`` (head, x, gamma) -> (dx, dgamma), with
  iattr = (d0, d1, rest, g0, g1): data viewed as (d0, d1, rest), gamma as (g0, g1).
"""
from mxc.ops.cpu._table cimport mxc_kentry, build_table

cdef extern from "kernels/activation.h" nogil:
    const mxc_kentry mxc_activation_table[]


#: ``{kernel name: {dtype code: kernel address}}``
KERNELS = build_table(mxc_activation_table)
