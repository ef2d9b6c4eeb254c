"""AdaMax, composed from NDArray arithmetic (as MXNet computes it in Python)."""
from ..ndarray import abs as _abs, clip, maximum, zeros
from .optimizer import Optimizer, register
from .utils import _check_nd

__all__ = ["Adamax"]


@register
class Adamax(Optimizer):
    """AdaMax, Adam's infinity-norm variant."""

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype),
                zeros(weight.shape, weight.context, dtype=weight.dtype))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        lr /= (1. - self.beta1 ** t)
        grad = grad * self.rescale_grad + wd * weight
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        m_t, u_t = state
        m_t[:] *= self.beta1
        m_t[:] += (1. - self.beta1) * grad
        u_t[:] = maximum(self.beta2 * u_t, _abs(grad))
        weight[:] -= lr * m_t / u_t
