"""Probability densities of MXNet 1.9.1's samplers: ``_random_pdf_<distribution>`` (aliases
``random_pdf_<distribution>``) for uniform, normal, gamma, exponential, poisson,
negative_binomial, generalized_negative_binomial and dirichlet.

``sample`` has the parameters' shape followed by any number of sample dimensions (dirichlet:
followed by sample dimensions and the k components, which the density sums over); each
parameter tensor has the leading shape. The density (or its log with ``is_log``) has the
sample's shape (dirichlet: without the last dimension). The formulas are MXNet's, written with
differentiable operators so that the gradients with respect to the sample and the parameters
come from autograd (MXNet wrote them out by hand). As in MXNet, nothing checks that a sample
lies in the distribution's support.
"""
import math

from ..base import OperatorInputError
from .params import Param
from .registry import OpDef, register

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _check(name, sample, params, vector=False):
    lead = params[0].shape
    for p in params[1:]:
        if p.shape != lead:
            raise OperatorInputError(f"{name}: the parameter tensors must have the same shape, got "
                             f"{[q.shape for q in params]}")
    want = lead[:-1] if vector else lead
    if sample.ndim < len(lead) or tuple(sample.shape[:len(want)]) != tuple(want) or \
            (vector and sample.shape[-1] != lead[-1]):
        raise OperatorInputError(f"{name}: the sample's shape {sample.shape} must start with the "
                         f"parameters' shape {lead}")


def _spread(F, p, sample):
    """A parameter tensor broadcast over the sample dimensions that follow its own."""
    extra = sample.ndim - p.ndim
    if extra:
        p = p.reshape(p.shape + (1,) * extra)
    return F.broadcast_like(p, sample)


def _finish(F, a, lpdf):
    return lpdf if a["is_log"] else F.exp(lpdf)


def _uniform(F, a, x, low, high):
    _check("random_pdf_uniform", x, [low, high])
    width = _spread(F, high, x) - _spread(F, low, x)
    lpdf = -F.log(width)
    return _finish(F, a, lpdf)


def _normal(F, a, x, mu, sigma):
    _check("random_pdf_normal", x, [mu, sigma])
    m, s = _spread(F, mu, x), _spread(F, sigma, x)
    lpdf = -0.5 * F.square(x - m) / F.square(s) - F.log(s) - _LOG_SQRT_2PI
    return _finish(F, a, lpdf)


def _gamma(F, a, x, alpha, beta):
    _check("random_pdf_gamma", x, [alpha, beta])
    al, be = _spread(F, alpha, x), _spread(F, beta, x)
    lpdf = al * F.log(be) + (al - 1) * F.log(x) - be * x - F.gammaln(al)
    return _finish(F, a, lpdf)


def _exponential(F, a, x, lam):
    _check("random_pdf_exponential", x, [lam])
    lm = _spread(F, lam, x)
    return _finish(F, a, F.log(lm) - lm * x)


def _poisson(F, a, x, lam):
    _check("random_pdf_poisson", x, [lam])
    lm = _spread(F, lam, x)
    return _finish(F, a, x * F.log(lm) - F.gammaln(x + 1) - lm)


def _nb_lpdf(F, x, limit, prob):
    return (F.gammaln(x + limit) - F.gammaln(x + 1) - F.gammaln(limit)
            + limit * F.log(prob) + x * F.log(1 - prob))


def _negative_binomial(F, a, x, k, p):
    _check("random_pdf_negative_binomial", x, [k, p])
    return _finish(F, a, _nb_lpdf(F, x, _spread(F, k, x), _spread(F, p, x)))


def _generalized_negative_binomial(F, a, x, mu, alpha):
    _check("random_pdf_generalized_negative_binomial", x, [mu, alpha])
    m, al = _spread(F, mu, x), _spread(F, alpha, x)
    # MXNet's reparameterisation: limit 1 / alpha, probability 1 / (mu * alpha + 1)
    return _finish(F, a, _nb_lpdf(F, x, 1 / al, 1 / (m * al + 1)))


def _dirichlet(F, a, x, alpha):
    _check("random_pdf_dirichlet", x, [alpha], vector=True)
    k = alpha.shape[-1]
    extra = x.ndim - alpha.ndim
    al = alpha.reshape(alpha.shape[:-1] + (1,) * extra + (k,))
    al = F.broadcast_like(al, x)
    lpdf = (F.sum((al - 1) * F.log(x), axis=-1) + F.gammaln(F.sum(al, axis=-1))
            - F.sum(F.gammaln(al), axis=-1))
    out = _finish(F, a, lpdf)
    return out.reshape((1,)) if x.ndim == 1 else out


_IS_LOG = (Param("is_log", bool, False),)
for _dist, _fn, _inputs in [
        ("uniform", _uniform, ("sample", "low", "high")),
        ("normal", _normal, ("sample", "mu", "sigma")),
        ("gamma", _gamma, ("sample", "alpha", "beta")),
        ("exponential", _exponential, ("sample", "lam")),
        ("poisson", _poisson, ("sample", "lam")),
        ("negative_binomial", _negative_binomial, ("sample", "k", "p")),
        ("generalized_negative_binomial", _generalized_negative_binomial,
         ("sample", "mu", "alpha")),
        ("dirichlet", _dirichlet, ("sample", "alpha"))]:
    register(OpDef(f"_random_pdf_{_dist}", aliases=(f"random_pdf_{_dist}",), inputs=_inputs,
                   params=_IS_LOG, composite=_fn,
                   doc=f"The {_dist} density (or its log, is_log) of each sample under the "
                       f"parameters of its leading dimensions."))
