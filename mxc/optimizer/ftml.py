"""FTML: ``ftml_update``."""
from .. import ndarray as _nd
from ..ndarray import zeros
from .optimizer import Optimizer, register
from .utils import _check_nd

__all__ = ["FTML"]


@register
class FTML(Optimizer):
    """Follow the Moving Leader (Zheng & Kwok, 2017), with ``ftml_update``."""

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return tuple(zeros(weight.shape, weight.context, dtype=weight.dtype) for _ in range(3))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                  "rescale_grad": self.rescale_grad, "t": t}
        if self.clip_gradient:
            kwargs["clip_grad"] = self.clip_gradient
        prev_d, prev_v, prev_z = state
        _nd.ftml_update(weight, grad, prev_d, prev_v, prev_z, out=weight, lr=lr, wd=wd,
                        **kwargs)
