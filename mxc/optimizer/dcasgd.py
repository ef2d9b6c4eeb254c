"""DCASGD, composed from NDArray arithmetic (as MXNet computes it in Python)."""
from ..ndarray import clip, zeros
from .optimizer import Optimizer, register
from .utils import _check_nd

__all__ = ["DCASGD"]


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al., 2016)."""

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return (None, weight.copy())
        return (zeros(weight.shape, weight.context, dtype=weight.dtype), weight.copy())

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        mom, previous_weight = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous_weight))
        # (MXNet tests `if mom:`, which raises for arrays of more than one element)
        if mom is not None:
            mom[:] *= self.momentum
            mom[:] += step
        else:
            mom = step
        previous_weight[:] = weight
        weight[:] += mom
