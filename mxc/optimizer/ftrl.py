"""FTRL-Proximal: ``ftrl_update``, lazy for row_sparse weights."""
from .. import ndarray as _nd
from ..ndarray import zeros
from .optimizer import Optimizer, register
from .utils import _check_nd, _lazy_rows_update

__all__ = ["Ftrl"]


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., 2013) with ``ftrl_update``."""

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, stype=weight.stype),
                zeros(weight.shape, weight.context, stype=weight.stype))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        wd = self._get_wd(index)
        lr = self._get_lr(index)
        kwargs = {"lamda1": self.lamda1, "beta": self.beta, "rescale_grad": self.rescale_grad}
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        z, n = state
        # MXNet's row_sparse FTRL (weight, grad and states all row_sparse) is lazy; a dense
        # weight takes the dense update
        if weight.stype == "row_sparse" and _lazy_rows_update(
                "ftrl_update", weight, grad, [z, n], lr=lr, wd=wd, **kwargs):
            return
        _nd.ftrl_update(weight, grad, z, n, out=weight, lr=lr, wd=wd, **kwargs)
