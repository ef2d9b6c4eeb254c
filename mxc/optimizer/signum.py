"""signSGD and Signum (Bernstein et al., 2018): ``signsgd_update``/``signum_update``."""
from .. import ndarray as _nd
from ..ndarray import zeros
from .optimizer import Optimizer, register
from .utils import _check_nd

__all__ = ["Signum"]


@register
class Signum(Optimizer):
    """signSGD (momentum 0) and Signum: ``weight -= lr * sign(momentum buffer)``, with optional
    decoupled weight decay `wd_lh`."""

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype)
        return None

    def _update_impl(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if self.wd_lh:
            kwargs["wd_lh"] = self.wd_lh
        if state is not None:
            _nd.signum_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            _nd.signsgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state)
