"""Contrib optimizers (MXNet 1.9.1's ``mx.optimizer.contrib``)."""
from .. import ndarray as _nd
from ..ndarray import NDArray, clip, mean, sqrt, square, zeros
from .optimizer import Optimizer

register = Optimizer.register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one accumulated squared-gradient value per row (the mean over the row):
    ``history += mean(grad^2, axis=1); weight -= lr * grad / sqrt(history + eps)``.
    Row_sparse gradients update only their rows. Weight decay is not supported."""

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        if weight.ndim != 2:
            raise ValueError(f"GroupAdaGrad needs 2-d weights, got shape {weight.shape}")
        return zeros((weight.shape[0], 1), weight.context, stype=weight.stype)

    def update(self, index, weight, grad, state):
        if not isinstance(weight, NDArray) or not isinstance(grad, NDArray):
            raise AssertionError("GroupAdaGrad: weight and grad must be NDArrays")
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        if wd != 0:
            raise AssertionError("Weight decay is not supported for GroupAdaGrad")
        history = state
        if grad.stype == "row_sparse":
            import numpy as np
            idx = grad.indices.asnumpy().astype(np.int64)
            g = grad.data * self.rescale_grad
            if self.clip_gradient is not None:
                g = clip(g, -self.clip_gradient, self.clip_gradient)
            h = (history.tostype("default") if history.stype != "default" else history).asnumpy()
            h[idx] += mean(square(g), axis=1, keepdims=True).asnumpy()
            w = weight.asnumpy()
            w[idx] -= lr * (g.asnumpy() / np.sqrt(h[idx] + self.float_stable_eps))
            history[:] = _nd.array(h, dtype=history.dtype)
            weight[:] = w
            return
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        history[:] += mean(square(grad), axis=1, keepdims=True)
        div = lr * grad / sqrt(history + self.float_stable_eps)
        weight[:] -= div
