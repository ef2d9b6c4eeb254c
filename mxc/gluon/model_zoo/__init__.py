"""Predefined and pretrained models of Gluon (``mx.gluon.model_zoo``, as MXNet 1.9.1)."""
from . import model_store  # noqa: F401
from . import vision  # noqa: F401
