"""Neural network layers of Gluon (``mx.gluon.nn``): the Block classes, basic layers,
convolution/pooling layers and activations, as MXNet 1.9.1's gluon.nn."""
# pylint: disable=wildcard-import
from ..block import *  # noqa: F401,F403

from .basic_layers import *  # noqa: F401,F403

from .conv_layers import *  # noqa: F401,F403

from .activations import *  # noqa: F401,F403
