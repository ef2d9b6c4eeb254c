"""Adam: ``adam_update``, lazy on row_sparse gradients."""
import math

from .. import ndarray as _nd
from ..ndarray import zeros
from .optimizer import Optimizer, register
from .utils import _check_nd, _lazy_rows_update

__all__ = ["Adam"]


@register
class Adam(Optimizer):
    """Adam (Kingma & Ba, 2014) with ``adam_update``; the bias corrections are folded into the
    learning rate. Lazy row_sparse updates with `lazy_update`."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        stype = weight.stype if self.lazy_update else "default"
        return (zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype),
                zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        coef1 = 1. - self.beta1 ** t
        coef2 = 1. - self.beta2 ** t
        lr *= math.sqrt(coef2) / coef1
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                  "rescale_grad": self.rescale_grad}
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        mean, var = state
        if self.lazy_update and _lazy_rows_update("adam_update", weight, grad, [mean, var],
                                                  lr=lr, wd=wd, **kwargs):
            return
        _nd.adam_update(weight, grad, mean, var, out=weight, lazy_update=self.lazy_update,
                        lr=lr, wd=wd, **kwargs)
