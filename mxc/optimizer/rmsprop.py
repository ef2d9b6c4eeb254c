"""RMSProp: ``rmsprop_update``, centered ``rmspropalex_update``."""
from .. import ndarray as _nd
from ..ndarray import zeros
from .optimizer import Optimizer, register
from .utils import _check_nd

__all__ = ["RMSProp"]


@register
class RMSProp(Optimizer):
    """RMSProp (Tieleman & Hinton) with ``rmsprop_update``; the centered form (Graves, 2013)
    with ``rmspropalex_update``."""

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        n = 3 if self.centered else 1
        return tuple(zeros(weight.shape, weight.context, stype=weight.stype) for _ in range(n))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = {"gamma1": self.gamma1, "epsilon": self.epsilon,
                  "rescale_grad": self.rescale_grad}
        if self.centered:
            kwargs["gamma2"] = self.gamma2
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if self.clip_weights:
            kwargs["clip_weights"] = self.clip_weights
        if not self.centered:
            (n,) = state
            _nd.rmsprop_update(weight, grad, n, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            n, g, delta = state
            _nd.rmspropalex_update(weight, grad, n, g, delta, out=weight, lr=lr, wd=wd,
                                   **kwargs)
