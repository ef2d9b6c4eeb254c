"""CPU random kernels (Philox4x32-10, counter based; loops in csrc/kernels/random.h).

Every kernel takes iattr[0] = key and iattr[1] = the first block counter reserved for the call
(mxc._core.resource.request_random); see the header for how many blocks each kernel uses.

- ``uniform`` / ``normal`` / ``exponential`` / ``gamma`` / ``poisson`` / ``negative_binomial`` /
  ``generalized_negative_binomial``: keyed by the output dtype (float16/32/64); parameters in
  fattr[0..1] (no inputs) or one or two parameter tensors (any dtype).
- ``randint``: int32 / int64 output, iattr[2] = low, iattr[3] = high.
- ``multinomial`` (probabilities -> samples[, log probabilities]) and ``multinomial_backward``:
  keyed by the probabilities' dtype.
- ``shuffle``: rows along axis 0, any dtype.
- ``dropout``: x -> (y, mask) or () -> mask, fattr[0] = 1 - p, keyed by the dtype.
- ``philox``: raw generator blocks into an int32 array (known-answer tests).
"""
from mxc.ops.cpu._table cimport mxc_kentry, build_table

cdef extern from "kernels/random.h" nogil:
    const mxc_kentry mxc_random_table[]


#: ``{kernel name: {dtype code: kernel address}}``
KERNELS = build_table(mxc_random_table)
