"""``gluon.contrib.cnn`` (MXNet 1.9.1): convolution layers outside the core set."""
from . import conv_layers  # noqa: F401
from .conv_layers import *  # noqa: F401,F403

__all__ = list(conv_layers.__all__)
