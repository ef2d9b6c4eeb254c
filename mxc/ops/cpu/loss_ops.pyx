"""CPU kernels of the loss family (loops in csrc/kernels/loss_ops.h): ``smooth_l1`` and
``smooth_l1_bwd`` (fattr[0] = sigma), ``lrn`` and ``lrn_bwd`` (iattr = n, C, rest, nsize;
fattr = alpha, beta, knorm). Keys: the data's dtype code (float16/32/64)."""
from mxc.ops.cpu._table cimport mxc_kentry, build_table

cdef extern from "kernels/loss_ops.h" nogil:
    const mxc_kentry mxc_loss_ops_table[]


#: ``{kernel name: {dtype code: kernel address}}``
KERNELS = build_table(mxc_loss_ops_table)
