"""MXNet 1.x's symbolic recurrent networks (``mx.rnn``): cells, checkpoints, bucketing IO."""
from . import rnn_cell  # noqa: F401
from .rnn_cell import *  # noqa: F401,F403
from . import rnn  # noqa: F401
from .rnn import *  # noqa: F401,F403
from . import io  # noqa: F401
from .io import *  # noqa: F401,F403
