"""Contrib recurrent cells of Gluon (MXNet 1.9.1's ``gluon.contrib.rnn``)."""
from . import conv_rnn_cell, rnn_cell  # noqa: F401
from .conv_rnn_cell import *  # noqa: F401,F403
from .rnn_cell import *  # noqa: F401,F403

__all__ = list(conv_rnn_cell.__all__) + list(rnn_cell.__all__)
