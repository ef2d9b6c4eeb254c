"""LARS: SGD whose learning rate is scaled per layer; the step itself is SGD's."""
import os

import numpy

from .. import ndarray as _nd
from .optimizer import Optimizer, register
from .sgd import SGD

__all__ = ["LARS"]


def _names_no_lars(name):
    return name.endswith("gamma") or name.endswith("beta") or name.endswith("bias")


@register
class LARS(SGD):
    """Layer-wise adaptive rate scaling (You et al., 2017) on SGD: the learning rate of each
    weight is scaled by ``eta * |w| / (|g| + wd * |w| + eps)`` (not for biases, gammas,
    betas); momentum is corrected for learning-rate changes when `momentum_correction`.
    Only weights decay by default (not gammas)."""

    _decayed_suffixes = ("_weight",)

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        # SGD's attributes, set in MXNet 1.9.1's order: pickled states keep it, byte for byte
        Optimizer.__init__(self, **kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        # remembers the scheduled rate of the previous step for the momentum correction
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return super()._get_lrs(indices)

    def _momentum(self):
        if self.momentum_correction and self.last_lr != 0:
            return self.momentum * (self.cur_lr / self.last_lr)
        return self.momentum

    def _l2norm(self, v, rescale=False):
        v = v.astype("float32")
        if rescale:
            v *= self.rescale_grad
        return _nd.norm(v).asnumpy()[0]

    def _get_lars(self, i, weight, g, lr, wd):
        name = self.idx2name[i] if i in self.idx2name else str(i)
        if _names_no_lars(name):
            return lr
        w_norm = self._l2norm(weight)
        g_norm = self._l2norm(g, rescale=True)
        if w_norm > 0.0 and g_norm > 0.0:
            lars = self.eta * w_norm / (g_norm + wd * w_norm + self.eps)
        else:
            lars = 1.0
        return lars * lr

    def _multi_lars(self, lr, w, g, wd):
        # MXNet's multi_sum_sq + multi_lars for one array (float32 sums of squares)
        w32 = w.asnumpy().astype(numpy.float32)
        g32 = g.asnumpy().astype(numpy.float32)
        w_norm = numpy.sqrt(numpy.float32(numpy.sum(w32 * w32, dtype=numpy.float32)))
        g_norm = numpy.sqrt(numpy.float32(numpy.sum(g32 * g32, dtype=numpy.float32))) \
            * numpy.float32(self.rescale_grad)
        if w_norm > 0 and g_norm > 0:
            ratio = numpy.float32(self.eta) * w_norm / (
                g_norm + numpy.float32(wd) * w_norm + numpy.float32(self.eps))
            return numpy.float32(lr) * numpy.float32(ratio)
        return numpy.float32(lr)

    def _scale_lrs(self, indices, weights, grads, lrs, wds, aggregate):
        if not aggregate:
            return [self._get_lars(i, w, g, lr, wd)
                    for i, w, g, lr, wd in zip(indices, weights, grads, lrs, wds)]
        names = [self.idx2name[i] if i in self.idx2name else str(i) for i in indices]
        return [lr if _names_no_lars(name) else self._multi_lars(lr, w, g, wd)
                for name, lr, w, g, wd in zip(names, lrs, weights, grads, wds)]
