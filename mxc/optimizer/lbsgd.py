"""LBSGD: large-batch SGD with gradient accumulation and learning-rate warmup."""
import logging
import math
import warnings

import numpy

from .. import ndarray as _nd
from ..ndarray import array, zeros
from .optimizer import Optimizer, register
from .sgd import _sgd_single
from .utils import _check_nd

__all__ = ["LBSGD"]


@register
class LBSGD(Optimizer):
    """Large-batch SGD: gradients of `batch_scale` calls are accumulated and applied together,
    with a learning-rate warmup ('linear', 'power2', 'sqrt' or 'lars')."""

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy="linear",
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super().__init__(**kwargs)
        logging.info("Running Large-Batch SGD Algorithm")
        logging.info("(Batch_scale=%f, warmup_epochs=%d, warmup_strategy=%s, "
                     "updates_per_epoch=%d)", batch_scale, warmup_epochs, warmup_strategy,
                     updates_per_epoch)
        self.momentum = momentum
        self.multi_precision = multi_precision
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index, weight):
        momentum = None
        if self.multi_precision and weight.dtype == numpy.float16:
            weight_master_copy = array(weight, ctx=weight.context, dtype=numpy.float32)
            if self.momentum != 0.0:
                momentum = zeros(weight.shape, weight.context, dtype=numpy.float32,
                                 stype=weight.stype)
            return (momentum, weight_master_copy)
        if weight.dtype == numpy.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                          "slow convergence. Consider using multi_precision=True option of "
                          "the SGD optimizer")
        if self.momentum != 0.0:
            momentum = zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype)
        return momentum

    def _get_lbmult(self, nup):
        nwup = self.warmup_epochs * self.updates_per_epoch
        strategy = self.warmup_strategy
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            mult = maxmult
        elif nwup <= 1:
            mult = 1.0
        elif strategy == "linear":
            mult = 1.0 + (maxmult - 1) * nup / nwup
        elif strategy == "power2":
            mult = 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
        elif strategy == "sqrt":
            mult = 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
        else:
            mult = 1.0
        return mult

    def _get_lars(self, weight, g, wd):
        weight2 = self._l2norm(weight)
        grad2 = self._l2norm(g)
        lars = math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18))
        return min(max(lars, 0.01), 100)

    def _l2norm(self, v):
        return _nd.multiply(v, v).asnumpy().sum()

    def _reset_cum_gradient(self, index):
        self.cumgrads[index]["cum_grad"] = 0

    def _get_cum_gradient(self, index):
        return self.cumgrads.get(index, {})

    def _put_cum_gradient(self, index, cgrad):
        self.cumgrads[index] = cgrad

    def _cumulate_gradient(self, grad, index):
        cgrad = self._get_cum_gradient(index)
        if cgrad and cgrad["num_cums"] > 0:
            cum_grad = cgrad["cum_grad"] + grad
            num_cums = cgrad["num_cums"] + 1
        else:
            cum_grad = grad
            num_cums = self.init_updates + 1
        cgrad = {"cum_grad": cum_grad, "num_cums": num_cums}
        self._put_cum_gradient(index, cgrad)
        return cgrad

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        self._update_count(index)
        cgrad = self._cumulate_gradient(grad, index)
        if (cgrad["num_cums"] % self.batch_scale) == 0:
            grad = cgrad["cum_grad"] / self.batch_scale
            if self.warmup_strategy == "lars":
                lbmult = self._get_lars(weight, grad, wd)
            else:
                lbmult = self._get_lbmult(cgrad["num_cums"])
            lr = lr * lbmult
            kwargs = {"rescale_grad": self.rescale_grad}
            if self.momentum > 0:
                kwargs["momentum"] = self.momentum
            if self.clip_gradient:
                kwargs["clip_gradient"] = self.clip_gradient
            # SGD's step (float16 weights with multi_precision hold (momentum, weight32))
            _sgd_single(weight, grad, state, lr, wd, kwargs,
                        multi_precision=isinstance(state, (list, tuple)), lazy_update=True)
            self._reset_cum_gradient(index)
        else:
            _nd.sgd_update(weight, grad, out=weight, lr=0.0, wd=wd)
