"""AdaGrad: composed from NDArray arithmetic on dense gradients (as MXNet does), the fused
``sparse.adagrad_update`` on row_sparse ones."""
from .. import ndarray as _nd
from ..ndarray import clip, sqrt, square, zeros
from .optimizer import Optimizer, register
from .utils import _check_nd, _lazy_rows_update

__all__ = ["AdaGrad"]


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al., 2011): ``history += g^2; weight -= lr * (g / sqrt(history + eps)
    + wd * weight)``; row_sparse gradients use ``sparse.adagrad_update``."""

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context, stype=weight.stype)

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        history = state
        if grad.stype == "row_sparse":
            kwargs = {"epsilon": self.float_stable_eps, "rescale_grad": self.rescale_grad}
            if self.clip_gradient:
                kwargs["clip_gradient"] = self.clip_gradient
            if wd != 0:
                raise ValueError("AdaGrad: the row_sparse (sparse.adagrad_update) update does "
                                 f"not support weight decay, got wd={wd}")
            if _lazy_rows_update("_sparse_adagrad_update", weight, grad, [history], lr=lr,
                                 wd=wd, **kwargs):
                return
            _nd.sparse.adagrad_update(weight, grad, history, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            grad = grad * self.rescale_grad
            if self.clip_gradient is not None:
                grad = clip(grad, -self.clip_gradient, self.clip_gradient)
            history[:] += square(grad)
            div = grad / sqrt(history + self.float_stable_eps)
            weight[:] += (div + weight * wd) * -lr
