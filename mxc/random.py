"""``mx.random``: seeding, and the sampling functions of ``mx.nd.random``.

Generators are per device and counter based (Philox4x32-10): every random operator reserves its
numbers when it is pushed, so for a given seed and device a program gets the same numbers
whatever the engine and OpenMP thread counts. CPU contexts share one generator, each GPU has its
own.

Without ``seed`` a process starts from a seed drawn from ``os.urandom``, so separate runs give
different numbers (MXNet users asked for that, apache/mxnet#7410). Call ``mx.random.seed(n)``
for reproducible results. Details: mxc/_core/resource.pyx.
"""
from ._core import resource as _resource
from .ndarray.random import (uniform, normal, randn, poisson, exponential, gamma,  # noqa: F401
                             multinomial, negative_binomial, generalized_negative_binomial,
                             shuffle, randint)
from .context import Context

__all__ = ["seed", "uniform", "normal", "randn", "poisson", "exponential", "gamma",
           "multinomial", "negative_binomial", "generalized_negative_binomial", "shuffle",
           "randint"]


def seed(seed_state, ctx="all"):
    """Seed the random number generators.

    ``ctx='all'`` (default) seeds the generator of every device, each from `seed_state` and its
    device id (so gpu(0) and gpu(1) differ). A context seeds only its device's generator, from
    `seed_state` and the device kind alone (then gpu(0) and gpu(1) give the same numbers). All
    CPU contexts share one generator. `seed_state` must be an integer."""
    if not (isinstance(ctx, str) and ctx == "all"):
        if not isinstance(ctx, Context):
            raise ValueError(f"seed: ctx must be 'all' or a Context, got {ctx!r}")
    _resource.seed(seed_state, ctx)
