"""``gluon.contrib.data`` (MXNet 1.9.1): IntervalSampler and the WikiText language-model
data sets (``contrib.data.text``)."""
from . import text  # noqa: F401
from .sampler import *  # noqa: F401,F403
