"""Recurrent layers and cells of Gluon (MXNet 1.9.1's ``gluon.rnn``)."""
from .rnn_cell import *  # noqa: F401,F403
from .rnn_layer import *  # noqa: F401,F403
from . import rnn_cell, rnn_layer  # noqa: F401
