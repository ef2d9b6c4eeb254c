"""AdaDelta, composed from NDArray arithmetic (as MXNet computes it in Python)."""
from ..ndarray import clip, sqrt, zeros
from .optimizer import Optimizer, register
from .utils import _check_nd

__all__ = ["AdaDelta"]


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler, 2012)."""

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context), zeros(weight.shape, weight.context))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        wd = self._get_wd(index)
        self._update_count(index)
        # (MXNet rescales the caller's gradient in place; this leaves it alone)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        acc_g, acc_delta = state
        acc_g[:] *= self.rho
        acc_g[:] += (1. - self.rho) * grad * grad
        current_delta = sqrt(acc_delta + self.epsilon) / sqrt(acc_g + self.epsilon) * grad
        acc_delta[:] *= self.rho
        acc_delta[:] += (1. - self.rho) * current_delta * current_delta
        weight[:] -= current_delta + wd * weight
