"""``gluon.contrib.nn`` (MXNet 1.9.1): container and reshaping blocks outside the core set."""
from .basic_layers import *  # noqa: F401,F403
