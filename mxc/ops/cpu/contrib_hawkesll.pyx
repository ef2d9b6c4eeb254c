"""CPU kernels of mxc/ops/contrib_hawkesll.py (loops in csrc/kernels/contrib_hawkesll.h).

- ``hawkesll:forward``: in (mu, alpha, beta, state, lags, int32 marks, valid_length, max_time),
  out (ll, out_state); ``hawkesll:backward``: in (ograd, the eight forward inputs), out (dmu,
  dalpha, dbeta). Keyed by mu's dtype code (float32, float64).
"""
from mxc.ops.cpu._table cimport mxc_kentry, build_table

cdef extern from "kernels/contrib_hawkesll.h" nogil:
    const mxc_kentry mxc_contrib_hawkesll_table[]


#: ``{"hawkesll:forward": {dtype code: kernel address}, "hawkesll:backward": {...}}``
KERNELS = build_table(mxc_contrib_hawkesll_table)
