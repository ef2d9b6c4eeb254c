"""``mx.np.random``: numpy's sampling functions on mxc's generators (seeded by
``mx.random.seed``, the same streams ``mx.nd.random`` draws from)."""
import numbers

import numpy as onp

from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from .. import random as _mxrandom
from . import _core, _op
from ._core import wrap, nd, cast, reshape_view, default_float, ctx_arg, check_out
from .multiarray import empty, arange, zeros
from . import linalg

__all__ = ["uniform", "normal", "randint", "choice", "shuffle", "rand", "randn", "random",
           "random_sample", "seed", "permutation", "exponential", "gamma", "beta", "chisquare",
           "lognormal", "logistic", "gumbel", "pareto", "power", "rayleigh", "weibull",
           "multinomial", "multivariate_normal"]


def seed(seed_state, ctx="all"):
    _mxrandom.seed(seed_state, ctx)


def _size(size):
    if size is None:
        return ()
    if isinstance(size, (numbers.Integral, onp.integer)):
        return (int(size),)
    return tuple(int(d) for d in size)


def _is_arr(v):
    return isinstance(v, (NDArray, onp.ndarray, list, tuple))


def _draw(opname, size, dtype, ctx, **params):
    shape = _size(size)
    dt = onp.dtype(dtype) if dtype is not None else default_float()
    if 0 in shape:
        return ndarray_empty(shape, dt, ctx)
    r = wrap(getattr(nd(), opname)(shape=shape if shape else (1,), ctx=ctx, dtype=dt.name,
                                   **params))
    return reshape_view(r, shape)


def ndarray_empty(shape, dt, ctx):
    return empty(shape, dt, ctx=ctx)


def _params_shape(size, *vals):
    shapes = [onp.shape(v) if not isinstance(v, NDArray) else v.shape for v in vals]
    bshape = tuple(onp.broadcast_shapes(*shapes))
    return bshape if size is None else _size(size)


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    """Samples from [low, high) (float32 unless `dtype`); array low/high broadcast."""
    ctx = ctx_arg(ctx, device)
    if _is_arr(low) or _is_arr(high):
        shape = _params_shape(size, low, high)
        u = uniform(0.0, 1.0, shape, dtype, ctx)
        return check_out(out, _op.add(low, _op.multiply(_op.subtract(high, low), u)).astype(
            u.dtype, copy=False), "uniform")
    return check_out(out, _draw("_random_uniform", size, dtype, ctx, low=float(low),
                                high=float(high)), "uniform")


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    """Gaussian samples (float32 unless `dtype`); array loc/scale broadcast."""
    ctx = ctx_arg(ctx, device)
    if _is_arr(loc) or _is_arr(scale):
        shape = _params_shape(size, loc, scale)
        z = normal(0.0, 1.0, shape, dtype, ctx)
        return check_out(out, _op.add(loc, _op.multiply(scale, z)).astype(z.dtype, copy=False),
                         "normal")
    return check_out(out, _draw("_random_normal", size, dtype, ctx, loc=float(loc),
                                scale=float(scale)), "normal")


def randint(low, high=None, size=None, dtype=None, ctx=None, device=None, out=None):
    """Integers in [low, high) (int64 unless `dtype`)."""
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"low >= high ({low} >= {high})")
    ctx = ctx_arg(ctx, device)
    dt = onp.dtype(dtype) if dtype is not None else onp.dtype(onp.int64)
    work = dt if dt in (onp.dtype(onp.int32), onp.dtype(onp.int64)) else onp.dtype(onp.int64)
    r = _draw("_random_randint", size, work, ctx, low=int(low), high=int(high))
    return check_out(out, cast(r, dt), "randint")


def rand(*size, **kwargs):
    return uniform(size=size if size else None, **kwargs)


def randn(*size, **kwargs):
    return normal(size=size if size else None, **kwargs)


def random(size=None, ctx=None, out=None):
    return uniform(0.0, 1.0, size, ctx=ctx, out=out)


random_sample = random


def exponential(scale=1.0, size=None, ctx=None, out=None):
    u = uniform(0.0, 1.0, size, ctx=ctx)
    return check_out(out, _op.multiply(_op.negative(_op.log1p(_op.negative(u))), scale),
                     "exponential")


def gamma(shape=1.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    ctx = ctx_arg(ctx)
    return check_out(out, _draw("_random_gamma", size, dtype, ctx, alpha=float(shape),
                                beta=float(scale)), "gamma")


def beta(a, b, size=None, dtype=None, ctx=None):
    x = gamma(a, 1.0, size, dtype, ctx)
    y = gamma(b, 1.0, size, dtype, ctx)
    return _op.true_divide(x, _op.add(x, y))


def _permutation_index(n, ctx):
    idx = wrap(nd()._random_uniform(low=0.0, high=1.0, shape=(n,), ctx=ctx, dtype="float64"))
    return cast(wrap(nd().argsort(idx, axis=0, dtype="int64")), onp.int64)


def shuffle(x):
    """Shuffle `x` in place along its first axis."""
    if not isinstance(x, NDArray):
        raise TypeError("shuffle: x must be an mx.np.ndarray")
    if x.ndim == 0 or x.shape[0] <= 1:
        return None
    perm = _permutation_index(x.shape[0], x.context)
    shuffled = _op.take(x, perm, axis=0)
    nd()._copyto(shuffled, out=x)
    return None


def permutation(x, ctx=None):
    if isinstance(x, (numbers.Integral, onp.integer)):
        return _op.take(arange(int(x), dtype="int64", ctx=ctx_arg(ctx)),
                        _permutation_index(int(x), ctx_arg(ctx)))
    x = _core.asarray_like(x)
    return _op.take(x, _permutation_index(x.shape[0], x.context), axis=0)


def choice(a, size=None, replace=True, p=None, ctx=None, out=None):
    """Samples from arange(a) (an int) or from the elements of a 1-d array `a`."""
    ctx = ctx_arg(ctx)
    if isinstance(a, (numbers.Integral, onp.integer)):
        n = int(a)
        pool = None
    else:
        pool = _core.asarray_like(a, ctx)
        if pool.ndim != 1:
            raise ValueError("a must be 1-dimensional")
        n = pool.shape[0]
    if n <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    shape = _size(size)
    k = 1
    for d in shape:
        k *= d
    if p is not None:
        pp = _core.asarray_like(p, ctx)
        if pp.shape != (n,):
            raise ValueError("a and p must have same size")
        pp = cast(pp, onp.float64)
        if replace:
            idx = wrap(nd()._sample_multinomial(pp, shape=(k,) if k else (1,), dtype="int32"))
            idx = cast(idx, onp.int64)
        else:
            if k > n:
                raise ValueError("Cannot take a larger sample than population when "
                                 "'replace=False'")
            # Gumbel top-k: sampling without replacement proportional to p
            u = wrap(nd()._random_uniform(low=1e-300, high=1.0, shape=(n,), ctx=ctx,
                                          dtype="float64"))
            keys = _op.subtract(_op.log(pp), _op.log(_op.negative(_op.log(u))))
            idx = cast(wrap(nd().argsort(keys, axis=0, is_ascend=False, dtype="int64")),
                       onp.int64)[:k] if k else None
    elif replace:
        idx = randint(0, n, (k,) if k else (1,), ctx=ctx)
    else:
        if k > n:
            raise ValueError("Cannot take a larger sample than population when 'replace=False'")
        idx = _permutation_index(n, ctx)[:k] if k else None
    if k == 0:
        res = empty(shape, onp.int64 if pool is None else pool.dtype, ctx=ctx)
    else:
        idx = idx[:k] if idx.shape[0] != k else idx
        res = idx if pool is None else _op.take(pool, idx)
        res = reshape_view(res, shape)
    return check_out(out, res, "choice")


# ---- distributions by transforming uniform/normal draws with mx.np operators ------------------
# Each is a differentiable function of its parameters (autograd records the ops), as MXNet's
# samplers with reparameterised gradients are.
_pyany = any


def _positive(name, **params):
    for pname, v in params.items():
        if _is_arr(v):
            v = v.asnumpy() if isinstance(v, NDArray) else onp.asarray(v)
        if onp.any(onp.asarray(v) <= 0):
            raise ValueError(f"mx.np.random.{name}: expect {pname} > 0")


def _open_uniform(size, params, ctx, dtype=None):
    """Uniform draws in (0, 1) shaped like `size` or the broadcast parameters."""
    shape = _params_shape(size, *params) if _pyany(_is_arr(p) for p in params) else size
    u = uniform(0.0, 1.0, shape, dtype, ctx)
    tiny = float(onp.finfo(u.dtype).tiny)
    return _op.maximum(u, tiny)


def chisquare(df, size=None, dtype=None, ctx=None):
    """Chi-square samples: Gamma(df / 2, scale 2) (numpy's distribution, mean df)."""
    _positive("chisquare", df=df)
    return gamma(float(df) / 2.0, 2.0, size, dtype, ctx)


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, out=None):
    return check_out(out, _op.exp(normal(mean, sigma, size, dtype, ctx)), "lognormal")


def logistic(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    """loc + scale * log(u / (1 - u))."""
    u = _open_uniform(size, (loc, scale), ctx_arg(ctx))
    z = _op.subtract(_op.log(u), _op.log1p(_op.negative(u)))
    return check_out(out, _op.add(loc, _op.multiply(scale, z)), "logistic")


def gumbel(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    """loc - scale * log(-log(u))."""
    u = _open_uniform(size, (loc, scale), ctx_arg(ctx))
    z = _op.negative(_op.log(_op.negative(_op.log(u))))
    return check_out(out, _op.add(loc, _op.multiply(scale, z)), "gumbel")


def _neg_log_u(size, a, ctx):
    """Standard exponential draws -log(u), shaped like `size` or `a`."""
    return _op.negative(_op.log(_open_uniform(size, (a,), ctx_arg(ctx))))


def pareto(a, size=None, ctx=None, out=None):
    """numpy's Pareto II (Lomax) samples: exp(E / a) - 1 with E standard exponential."""
    _positive("pareto", a=a)
    return check_out(out, _op.expm1(_op.true_divide(_neg_log_u(size, a, ctx), a)), "pareto")


def power(a, size=None):
    """Samples of density a x^(a-1) on [0, 1]: u^(1/a)."""
    _positive("power", a=a)
    u = _open_uniform(size, (a,), ctx_arg(None))
    return _op.power(u, _op.reciprocal(a) if _is_arr(a) else 1.0 / float(a))


def rayleigh(scale=1.0, size=None, ctx=None, out=None):
    """scale * sqrt(2 E), E standard exponential."""
    _positive("rayleigh", scale=scale)
    e = _neg_log_u(size, scale, ctx)
    return check_out(out, _op.multiply(scale, _op.sqrt(_op.multiply(e, 2.0))), "rayleigh")


def weibull(a, size=None, ctx=None, out=None):
    """E^(1/a), E standard exponential."""
    _positive("weibull", a=a)
    e = _neg_log_u(size, a, ctx)
    return check_out(out, _op.power(e, _op.reciprocal(a) if _is_arr(a) else 1.0 / float(a)),
                     "weibull")


def multinomial(n, pvals, size=None):
    """Counts of `n` draws over len(pvals) categories (int64), shape size + (len(pvals),). As
    numpy, the last category takes probability 1 - sum(pvals[:-1])."""
    if isinstance(pvals, onp.ndarray):
        raise ValueError("multinomial: numpy ndarray is not supported!")
    if isinstance(pvals, (list, tuple)) and _pyany(isinstance(p, (list, tuple)) for p in pvals):
        raise ValueError("multinomial: object too deep for desired array")
    host = pvals.asnumpy() if isinstance(pvals, NDArray) else onp.asarray(pvals, onp.float64)
    ctx = pvals.context if isinstance(pvals, NDArray) else ctx_arg(None)
    if host.ndim != 1:
        raise ValueError("multinomial: pvals must be a 1-d sequence")
    head = float(onp.sum(host[:-1], dtype=onp.float64))
    total = float(onp.sum(host, dtype=onp.float64))
    # MXNet checks the whole sum (numpy only pvals[:-1]), to the rounding of pvals' dtype
    slack = 1e-12 if host.dtype == onp.float64 else float(onp.finfo(host.dtype).eps) * host.size
    if total > 1.0 + slack:
        raise MXNetError(f"mx.np.random.multinomial: sum(pvals) > 1.0 ({total})")
    if onp.any(host < 0):
        raise MXNetError("mx.np.random.multinomial: pvals must be non-negative")
    n = int(n)
    if n < 0:
        raise ValueError("multinomial: n < 0")
    k = host.shape[0]
    shape = _size(size)
    m = int(onp.prod(shape)) if shape else 1
    if m == 0 or n == 0 or k == 0:
        return zeros(shape + (k,), dtype="int64", ctx=ctx)
    probs = onp.append(host[:-1], max(0.0, 1.0 - head))
    p = _core.asarray_like(onp.tile(probs, (m, 1)), ctx)
    draws = wrap(nd()._sample_multinomial(p, shape=(n,), dtype="int32"))       # (m, n)
    counts = wrap(nd().sum(nd().one_hot(draws, depth=k, dtype="int32"), axis=1))
    return reshape_view(cast(counts, onp.int64), shape + (k,))


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None):
    """mean + L z with L L^T = cov (from cov's eigendecomposition, so a positive semi-definite
    cov works as in numpy); shape size + broadcast(mean.shape, cov.shape[:-1])."""
    if check_valid is not None:
        raise NotImplementedError("multivariate_normal: parameter `check_valid` is not supported")
    if tol is not None:
        raise NotImplementedError("multivariate_normal: parameter `tol` is not supported")
    mean, cov = _core.asarray_like(mean), _core.asarray_like(cov)
    if cov.ndim < 2 or cov.shape[-1] != cov.shape[-2] or mean.ndim < 1 or \
            mean.shape[-1] != cov.shape[-1]:
        raise ValueError(f"multivariate_normal: mean {mean.shape} and cov {cov.shape} must be "
                         "(..., n) and (..., n, n)")
    w, v = linalg.eigh(cov)
    factor = _op.multiply(v, _op.expand_dims(_op.sqrt(_op.maximum(w, 0.0)), -2))
    batch = tuple(onp.broadcast_shapes(mean.shape, cov.shape[:-1]))
    shape = _size(size) + batch
    z = normal(0.0, 1.0, shape, mean.dtype, mean.context)
    return _op.add(mean, _op.squeeze(_op.matmul(factor, _op.expand_dims(z, -1)), -1))
