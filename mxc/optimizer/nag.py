"""NAG: ``nag_mom_update`` (``mp_nag_mom_update`` for float16 master copies)."""
import numpy

from .. import ndarray as _nd
from ..ndarray import zeros
from .optimizer import Optimizer, register
from .utils import _check_nd, _mp_state_first

__all__ = ["NAG"]


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient (``nag_mom_update``)."""

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state_multi_precision(self, index, weight):
        return _mp_state_first(self, index, weight, "NAG")

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if not multi_precision:
            if state is not None:
                _nd.nag_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
            else:
                _nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            if state[0] is not None:
                _nd.mp_nag_mom_update(weight, grad, state[0], state[1], out=weight, lr=lr,
                                      wd=wd, **kwargs)
            else:
                _nd.mp_sgd_update(weight, grad, state[1], out=weight, lr=lr, wd=wd, **kwargs)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        use_mp = (self.multi_precision and weight.dtype == numpy.float16
                  and isinstance(state, (tuple, list)))
        self._update_impl(index, weight, grad, state, multi_precision=use_mp)
