"""CPU optimizer update kernels: one fused pass per parameter (SGD, momentum SGD, NAG, Adam,
RMSProp, RMSPropAlex, FTRL, FTML, signSGD, Signum, LAMB phases, AdaGrad, AdamW and their
mixed-precision forms).

The loops are plain C in csrc/kernels/optimizer_ops.h (tensor layouts and attribute slots are
documented there per kernel); this module only publishes them.

``KERNELS["opt:<kernel>"][code]``: code is the weight's MXNet dtype code (float16, float32,
float64); mixed-precision kernels keep their states and master weight in float32.
"""
from mxc.ops.cpu._table cimport mxc_kentry, build_table

cdef extern from "kernels/optimizer_ops.h" nogil:
    const mxc_kentry mxc_optimizer_table[]


#: ``{kernel name: {weight dtype code: kernel address}}``
KERNELS = build_table(mxc_optimizer_table)
