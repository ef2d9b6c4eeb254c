"""``gluon.contrib.data.sampler``: MXNet 1.9.1 keeps IntervalSampler here; mxc's lives with the
other samplers in gluon.data.sampler and is the same class."""
from ...data.sampler import IntervalSampler

__all__ = ["IntervalSampler"]
