"""``mx.nd.contrib``: MXNet's contrib functions for NDArrays.

The ``_contrib_<name>`` operators of the registry appear here as ``<name>`` (as MXNet's generated
contrib namespace), next to the Python functions MXNet writes in ``mxnet/ndarray/contrib.py``:
``isinf``, ``isfinite`` and ``isnan`` (elementwise, 1.0 where true, in the input's dtype)."""
import math as _math
import sys as _sys

import numpy as _np

from ..context import current_context as _current_context
from ..ops import registry as _registry
from .control_flow import foreach, while_loop, cond  # noqa: F401

__all__ = ["foreach", "while_loop", "cond", "isinf", "isfinite", "isnan", "adamw_update",
           "mp_adamw_update", "multi_adamw_update", "multi_mp_adamw_update", "rand_zipfian"]


def _nd():
    return _sys.modules["mxc.ndarray"]


def isinf(data):
    """1 where `data` is +inf or -inf, else 0."""
    return data.abs() == _np.inf


def isfinite(data):
    """1 where `data` is neither infinite nor NaN, else 0."""
    is_not_nan = data == data          # NaN != NaN
    is_not_inf = data.abs() != _np.inf
    return _nd().logical_and(is_not_inf, is_not_nan)


def isnan(data):
    """1 where `data` is NaN, else 0."""
    return data != data


def zipfian_candidates(F, true_classes, num_sampled, range_max, **uniform_kwargs):
    """MXNet's rand_zipfian written once for both fronts (F = mx.nd or mx.sym): num_sampled
    classes of [0, range_max) drawn with replacement as floor(exp(u) - 1), u uniform in
    [0, log(range_max + 1)), so P(c) = log((c + 2) / (c + 1)) / log(range_max + 1); with the
    expected counts of the true and the sampled classes under it (int64, float64, float64)."""
    log_range = _math.log(range_max + 1)
    rand = F.random.uniform(0, log_range, shape=(num_sampled,), dtype="float64",
                            **uniform_kwargs)
    sampled = (rand.exp() - 1).astype("int64") % range_max

    def expected(classes):
        c = classes.astype("float64")
        return ((c + 2.0) / (c + 1.0)).log() / log_range * num_sampled
    return sampled, expected(true_classes), expected(sampled)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Candidates for sampled softmax, approximately log-uniform (Zipfian) over
    [0, range_max): see zipfian_candidates. Returns (sampled classes, expected count of each
    true class, expected count of each sampled class) on `ctx` (default: the current one)."""
    ctx = _current_context() if ctx is None else ctx
    return zipfian_candidates(_nd(), true_classes.as_in_context(ctx), num_sampled, range_max,
                              ctx=ctx)


# ---- AdamW: MXNet's Python wrappers take rescale_grad as a number or an NDArray; the operators
# read it as a one-element array (so a loss scaler can change it without a new call signature)

def _rescale_array(rescale_grad, ctx):
    if isinstance(rescale_grad, (int, float, _np.number)):
        return _nd().full((1,), float(rescale_grad), ctx=ctx)
    return rescale_grad


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """AdamW step (decoupled weight decay) on `weight` in place (or into `out`)."""
    return _nd()._adamw_update(weight, grad, mean, var,
                               _rescale_array(rescale_grad, weight.context), lr=lr, eta=eta,
                               beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                               clip_gradient=clip_gradient, out=out, **kwargs)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                    beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                    **kwargs):
    """AdamW step on a float16 `weight` with its float32 master copy `weight32`."""
    return _nd()._mp_adamw_update(weight, grad, mean, var, weight32,
                                  _rescale_array(rescale_grad, weight.context), lr=lr, eta=eta,
                                  beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                  clip_gradient=clip_gradient, out=out, **kwargs)


def _interleave(*lists):
    return [x for group in zip(*lists) for x in group]


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None,
                       name=None, size=0, **kwargs):
    """AdamW steps on several weights in one operator call."""
    size = size or len(weights)
    args = _interleave(weights, grads, mean, var) + [_rescale_array(rescale_grad,
                                                                    weights[0].context)]
    return _nd()._multi_adamw_update(*args, out=out, num_weights=size, lrs=lrs, wds=wds,
                                     etas=etas, **kwargs)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas,
                          out=None, name=None, size=0, **kwargs):
    """Multi-precision AdamW steps on several weights in one operator call."""
    size = size or len(weights)
    args = _interleave(weights, grads, mean, var, weights32) + [
        _rescale_array(rescale_grad, weights[0].context)]
    return _nd()._multi_mp_adamw_update(*args, out=out, num_weights=size, lrs=lrs, wds=wds,
                                        etas=etas, **kwargs)


def _populate():
    nd = _nd()
    ns = globals()
    prefix = "_contrib_"
    for name in _registry.names():
        if name.startswith(prefix) and hasattr(nd, name):
            short = name[len(prefix):]
            if short not in ns:
                ns[short] = getattr(nd, name)
                __all__.append(short)


_populate()
