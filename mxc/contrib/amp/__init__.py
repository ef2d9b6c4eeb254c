"""Automatic mixed precision (``mx.contrib.amp``, MXNet 1.9.1)."""
from . import amp, lists, loss_scaler  # noqa: F401
from .amp import *  # noqa: F401,F403
from .amp import __all__  # noqa: F401
