"""SGLD, composed from NDArray arithmetic and mx.random."""
import math

from ..ndarray import clip
from ..random import normal
from .optimizer import Optimizer, register
from .utils import _check_nd

__all__ = ["SGLD"]


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics: a half SGD step plus N(0, lr) noise (drawn with
    mx.random, so mx.random.seed governs it)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        weight[:] += - lr / 2 * (grad + wd * weight)
        weight[:] += normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                            ctx=weight.context)
