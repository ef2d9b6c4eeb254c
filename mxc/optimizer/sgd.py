"""SGD (and its deprecated alias ccSGD): ``sgd_update``/``sgd_mom_update``, several dense
parameters at a time with ``multi_sgd_*``, lazy row_sparse updates, float16 master copies."""
import os

import numpy

from .. import ndarray as _nd
from ..ndarray import zeros
from .optimizer import Optimizer, register
from .utils import _check_nd, _flatten_list, _lazy_rows_update, _mp_state_first

__all__ = ["SGD", "ccSGD"]


def _sgd_single(weight, grad, state, lr, wd, kwargs, multi_precision, lazy_update):
    """One weight's SGD step with the fused operator (lazy rows for row_sparse gradients)."""
    if not multi_precision:
        if state is not None:
            if lazy_update and _lazy_rows_update("sgd_mom_update", weight, grad, [state],
                                                 lr=lr, wd=wd, **kwargs):
                return
            _nd.sgd_mom_update(weight, grad, state, out=weight, lazy_update=lazy_update,
                               lr=lr, wd=wd, **kwargs)
        else:
            if lazy_update and _lazy_rows_update("sgd_update", weight, grad, [],
                                                 lr=lr, wd=wd, **kwargs):
                return
            _nd.sgd_update(weight, grad, out=weight, lazy_update=lazy_update, lr=lr, wd=wd,
                           **kwargs)
    else:
        if state[0] is not None:
            _nd.mp_sgd_mom_update(weight, grad, state[0], state[1], out=weight, lr=lr, wd=wd,
                                  **kwargs)
        else:
            _nd.mp_sgd_update(weight, grad, state[1], out=weight, lr=lr, wd=wd, **kwargs)


@register
class SGD(Optimizer):
    """Stochastic gradient descent, with momentum, weight decay and lazy row_sparse updates.

    Without momentum ``weight -= lr * (rescale_grad * grad + wd * weight)`` (the gradient
    clipped first); with momentum ``state = momentum * state - lr * (...); weight += state``.
    Dense parameters are updated several at a time with ``multi_sgd_*`` (up to
    ``MXNET_OPTIMIZER_AGGREGATION_SIZE``, default 4).
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))

    def create_state_multi_precision(self, index, weight):
        return _mp_state_first(self, index, weight, "SGD")

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            stype = weight.stype if self.lazy_update else "default"
            return zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)
        return None

    def _momentum(self):
        return self.momentum

    def _scale_lrs(self, indices, weights, grads, lrs, wds, aggregate):
        """This step's learning rates from the scheduled ones (LARS scales them per layer)."""
        return lrs

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        aggregate = True
        if not isinstance(indices, (tuple, list)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        for weight, grad in zip(weights, grads):
            _check_nd(weight, grad)
            aggregate = aggregate and weight.stype == "default" and grad.stype == "default"
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        lrs = self._scale_lrs(indices, weights, grads, lrs, wds, aggregate)
        kwargs = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kwargs["momentum"] = self._momentum()
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if aggregate:
            n = len(weights)
            if not multi_precision:
                if self.momentum > 0:
                    _nd.multi_sgd_mom_update(*_flatten_list(zip(weights, grads, states)),
                                             out=list(weights), num_weights=n, lrs=lrs,
                                             wds=wds, **kwargs)
                else:
                    _nd.multi_sgd_update(*_flatten_list(zip(weights, grads)), out=list(weights),
                                         num_weights=n, lrs=lrs, wds=wds, **kwargs)
            else:
                if self.momentum > 0:
                    _nd.multi_mp_sgd_mom_update(
                        *_flatten_list(zip(weights, grads, *zip(*states))), out=list(weights),
                        num_weights=n, lrs=lrs, wds=wds, **kwargs)
                else:
                    _nd.multi_mp_sgd_update(
                        *_flatten_list(zip(weights, grads, list(zip(*states))[1])),
                        out=list(weights), num_weights=n, lrs=lrs, wds=wds, **kwargs)
        else:
            for weight, grad, state, lr, wd in zip(weights, grads, states, lrs, wds):
                _sgd_single(weight, grad, state, lr, wd, kwargs, multi_precision,
                            self.lazy_update)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        w0 = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and w0.dtype == numpy.float16)


@register
class ccSGD(SGD):  # noqa: N801  (MXNet's name)
    """Deprecated alias of SGD."""
