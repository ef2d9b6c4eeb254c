"""``mx.gluon``: Parameter, Block/HybridBlock/SymbolBlock, Trainer and friends (MXNet 1.9.1's
mxnet.gluon). Sub-packages (nn, rnn, loss, data, model_zoo) register themselves below."""
from .parameter import *  # noqa: F401,F403
from .block import *  # noqa: F401,F403
from . import utils  # noqa: F401
from .trainer import *  # noqa: F401,F403
from . import rnn  # noqa: F401
from . import data  # noqa: F401
from . import nn, loss, model_zoo  # noqa: F401
from . import contrib  # noqa: F401
