"""LAMB: ``lamb_update_phase1``/``lamb_update_phase2`` per tensor."""
import os

import numpy

from .. import ndarray as _nd
from ..ndarray import cast, zeros
from .optimizer import Optimizer, register
from .utils import _check_nd

__all__ = ["LAMB"]


def _lamb_norm(x):
    return _nd.norm(x)


@register
class LAMB(Optimizer):
    """LAMB (You et al., 2019): Adam-style step rescaled per layer by ||w|| / ||step||
    (``lamb_update_phase1`` / ``lamb_update_phase2``)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE",
                                                          "45"))))

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype),
                zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype))

    def _one(self, index, weight, grad, state, multi_precision, lr, wd, t):
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                  "bias_correction": self.bias_correction, "rescale_grad": self.rescale_grad,
                  "t": t}
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        bounds = {}
        if self.lower_bound:
            bounds["lower_bound"] = self.lower_bound
        if self.upper_bound:
            bounds["upper_bound"] = self.upper_bound
        if multi_precision:
            mean, var = state[1]
            weight32 = state[0]
            g = _nd.mp_lamb_update_phase1(weight, grad, mean, var, weight32, wd=wd, **kwargs)
            r_1 = _lamb_norm(weight32)
            r_2 = _lamb_norm(g)
            # = mp_lamb_update_phase2(weight, g, r_1, r_2, weight32, lr=lr, out=weight),
            # written as its two halves: mxc's op leaves the weight32 input unchanged
            _nd.lamb_update_phase2(weight32, g, r_1, r_2, lr=lr, out=weight32, **bounds)
            cast(weight32, dtype=weight.dtype, out=weight)
        else:
            mean, var = state
            g = _nd.lamb_update_phase1(weight, grad, mean, var, wd=wd, **kwargs)
            r_1 = _lamb_norm(weight)
            r_2 = _lamb_norm(g)
            _nd.lamb_update_phase2(weight, g, r_1, r_2, lr=lr, out=weight, **bounds)

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        if self.aggregate_num <= 1 or not isinstance(index, (tuple, list)):
            if isinstance(index, (tuple, list)):
                index, weight, grad, state = index[0], weight[0], grad[0], state[0]
            _check_nd(weight, grad)
            self._update_count(index)
            lr = self._get_lr(index)
            wd = self._get_wd(index)
            t = self._index_update_count[index]
            self._one(index, weight, grad, state, multi_precision, lr, wd, t)
        else:
            # MXNet runs multi_lamb_update here; it applies the same two phases per tensor
            step_count, lrs, wds = [], [], []
            for i, w_i, g_i in zip(index, weight, grad):
                _check_nd(w_i, g_i)
                self._update_count(i)
                step_count.append(self._index_update_count[i])
                lrs.append(self._get_lr(i))
                wds.append(self._get_wd(i))
            for i, w_i, g_i, s_i, lr, wd, t in zip(index, weight, grad, state, lrs, wds,
                                                  step_count):
                self._one(i, w_i, g_i, s_i, multi_precision, lr, wd, t)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        w0 = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and w0.dtype == numpy.float16)
