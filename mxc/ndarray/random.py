"""``mx.nd.random``: sampling functions with MXNet 1.9.1's signatures.

Each function dispatches on its distribution parameters as MXNet's python/mxnet/ndarray/random.py
does: numbers go to ``_random_<dist>`` (``shape`` samples, default one; ``ctx``, ``dtype``), NDArrays
to ``_sample_<dist>`` (``shape`` samples from each element's distribution). Seeding:
``mx.random.seed``; see mxc/_core/resource.pyx for how the generators work.
"""
from numbers import Number

from ..ops import registry as _registry
from .ndarray import NDArray
from .register import invoke, make_function

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "randint"]


class _NullType:
    """Placeholder for arguments not given (MXNet's _Null)."""

    def __repr__(self):
        return "_Null"


_Null = _NullType()


def _invoke(name, inputs, kwargs, out=None):
    return invoke(_registry.get(name), list(inputs), kwargs, out)


def _random_helper(random, sampler, params, shape, dtype, ctx, out, kwargs):
    kw = dict(kwargs)
    if dtype is not _Null:
        kw["dtype"] = dtype
    if isinstance(params[0], NDArray):
        if sampler is None:
            raise ValueError(f"{random}: the parameters must be numbers")
        for p in params[1:]:
            if not isinstance(p, NDArray):
                raise ValueError(f"Distribution parameters must all have the same type, but got "
                                 f"both {type(params[0])} and {type(p)}.")
        if shape is not _Null:
            kw["shape"] = shape
        return _invoke(sampler, params, kw, out)
    if isinstance(params[0], Number):
        for p in params[1:]:
            if not isinstance(p, Number):
                raise ValueError(f"Distribution parameters must all have the same type, but got "
                                 f"both {type(params[0])} and {type(p)}.")
        if shape is _Null:
            shape = out.shape if out is not None else 1
        kw["shape"] = shape
        if ctx is not None:
            kw["ctx"] = ctx
        names = [p.name for p in _registry.get(random).params][:len(params)]
        kw.update(zip(names, params))
        return _invoke(random, [], kw, out)
    raise ValueError(f"Distribution parameters must be either NDArray or numbers, but got "
                     f"{type(params[0])}.")


def uniform(low=0, high=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Samples from a uniform distribution on [low, high) (numbers or NDArrays)."""
    return _random_helper("_random_uniform", "_sample_uniform", [low, high], shape, dtype, ctx,
                          out, kwargs)


def normal(loc=0, scale=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Samples from a normal distribution with mean loc and standard deviation scale."""
    return _random_helper("_random_normal", "_sample_normal", [loc, scale], shape, dtype, ctx,
                          out, kwargs)


def randn(*shape, **kwargs):
    """Normal samples of the given shape: ``randn(2, 3, loc=0, scale=1)``."""
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    dtype = kwargs.pop("dtype", _Null)
    ctx = kwargs.pop("ctx", None)
    out = kwargs.pop("out", None)
    if not isinstance(loc, (int, float, NDArray)) or not isinstance(scale, (int, float, NDArray)):
        raise ValueError("randn: loc and scale must be numbers or NDArrays")
    return _random_helper("_random_normal", "_sample_normal", [loc, scale], shape, dtype, ctx,
                          out, kwargs)


def poisson(lam=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Samples from a Poisson distribution with rate lam."""
    return _random_helper("_random_poisson", "_sample_poisson", [lam], shape, dtype, ctx, out,
                          kwargs)


def exponential(scale=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Samples from an exponential distribution with the given scale (1 / rate)."""
    return _random_helper("_random_exponential", "_sample_exponential", [1.0 / scale], shape,
                          dtype, ctx, out, kwargs)


def gamma(alpha=1, beta=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Samples from a gamma distribution with shape alpha and scale beta."""
    return _random_helper("_random_gamma", "_sample_gamma", [alpha, beta], shape, dtype, ctx,
                          out, kwargs)


def negative_binomial(k=1, p=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Samples from a negative binomial distribution: failures before k successes, each trial
    a success with probability p."""
    return _random_helper("_random_negative_binomial", "_sample_negative_binomial", [k, p],
                          shape, dtype, ctx, out, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=_Null, dtype=_Null, ctx=None, out=None,
                                  **kwargs):
    """Samples from a generalized negative binomial distribution (mean mu, dispersion alpha)."""
    return _random_helper("_random_generalized_negative_binomial",
                          "_sample_generalized_negative_binomial", [mu, alpha], shape, dtype, ctx,
                          out, kwargs)


def multinomial(data, shape=_Null, get_prob=False, out=None, dtype="int32", **kwargs):
    """Samples categories from the distributions in data's last axis; get_prob=True also
    returns the log probability of each sample."""
    kw = dict(kwargs, get_prob=get_prob, dtype=dtype)
    if shape is not _Null:
        kw["shape"] = shape
    return _invoke("_sample_multinomial", [data], kw, out)


def shuffle(data, **kwargs):
    """data with its rows (axis 0) in a random order."""
    out = kwargs.pop("out", None)
    return _invoke("_shuffle", [data], kwargs, out)


def randint(low, high, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Integers drawn uniformly from [low, high)."""
    return _random_helper("_random_randint", None, [low, high], shape, dtype, ctx, out, kwargs)


def _expose_generated():
    """The generated operators MXNet places in this namespace, under their short names:
    ``_random_<dist>_like`` (samples with the shape and dtype of ``data``: uniform_like,
    normal_like, gamma_like, exponential_like, poisson_like, negative_binomial_like,
    generalized_negative_binomial_like) and the densities ``_random_pdf_<dist>``."""
    ns = globals()
    for opname, op in _registry.names().items():
        if opname.startswith("_random_") and (opname.endswith("_like")
                                              or opname.startswith("_random_pdf_")):
            short = opname[len("_random_"):]
            fn = make_function(op, short)
            fn.__module__ = __name__
            ns[short] = fn
            if short.endswith("_like"):
                __all__.append(short)


_expose_generated()
del _expose_generated
