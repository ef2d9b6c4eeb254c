"""``mx.optimizer`` / ``mx.opt``: optimizers, their registry and the Updater (MXNet 1.9.1)."""
from . import (optimizer, updater, contrib, utils, sgd, signum, ftml, lars,  # noqa: F401
               lbsgd, lamb, dcasgd, nag, sgld, adam, adagrad, rmsprop, adadelta, ftrl,
               adamax, nadam)
from .optimizer import *  # noqa: F401,F403
from .optimizer import (AdaDelta, AdaGrad, Adam, Adamax, DCASGD, FTML, Ftrl, LARS,  # noqa: F401
                        LBSGD, NAG, NDabs, Nadam, Optimizer, RMSProp, SGD, SGLD, Signum, LAMB,
                        Test, ccSGD, create, register)
from .updater import Updater, get_updater  # noqa: F401

__all__ = optimizer.__all__ + ["contrib"]
