"""The optimizer base class and registry, with MXNet 1.9.1's hyper-parameters and
per-parameter multipliers; each optimizer lives in its own module beside this one (sgd.py,
adam.py, ...; MXNet 2.0's layout) and registers itself here.

Optimizers update a weight in place from its gradient and its state, with the fused update
operator MXNet uses for it (``sgd_mom_update``, ``adam_update``, ...) and the same arguments, or
composed from NDArray arithmetic where MXNet's optimizer computes in Python (AdaGrad, AdaDelta,
Adamax, Nadam, DCASGD, SGLD). Per-parameter learning-rate and weight-decay multipliers come from
``set_lr_mult``/``set_wd_mult``, the symbol's ``__lr_mult__``/``__wd_mult__`` attributes or the
Gluon ``param_dict``.

MXNet 1.9.1 defines every optimizer in this module, so code and pickles name them
``mxnet.optimizer.optimizer.SGD``: the names are re-exported here at the bottom.
"""
import warnings

import numpy

from ..ndarray import cast, zeros
from ..ndarray import abs as NDabs  # noqa: N812,F401  (MXNet 1.9.1 exports this name here)
from ..util import is_np_array

__all__ = [
    "AdaDelta", "AdaGrad", "Adam", "Adamax", "DCASGD", "FTML", "Ftrl", "LARS", "LBSGD",
    "NAG", "NDabs", "Nadam", "Optimizer", "RMSProp", "SGD", "SGLD", "Signum", "LAMB",
    "Test", "Updater", "ccSGD", "create", "get_updater", "register"
]


class Optimizer:
    """The base class of optimizers.

    Parameters
    ----------
    rescale_grad : float
        Gradients are multiplied by this first (typically 1/batch_size).
    param_idx2name : dict of int to str
        Parameter names by index (for the name-based lr/wd multipliers).
    wd : float
        L2 weight decay.
    clip_gradient : float, optional
        Clip the rescaled gradient to [-clip_gradient, clip_gradient].
    learning_rate : float
        The learning rate (default 0.01 without a scheduler).
    lr_scheduler : LRScheduler, optional
        Gives the learning rate from the update count.
    sym : Symbol, optional
        Its ``__lr_mult__``/``__wd_mult__`` attributes set multipliers.
    begin_num_update : int
        The update count to start from.
    multi_precision : bool
        Keep a float32 master copy of float16 weights and update that.
    param_dict : dict of int to gluon.Parameter
        Gluon parameters, whose lr_mult/wd_mult are used.
    """

    opt_registry = {}

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if self.lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if self.lr_scheduler is not None and learning_rate is not None:
            if self.lr_scheduler.base_lr != learning_rate:
                print(UserWarning("learning rate from ``lr_scheduler`` has been overwritten "
                                  "by ``learning_rate`` in optimizer."))
                self.lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise AssertionError("param_idx2name should be a dict of param indexes to names.")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = is_np_array()
        self.set_lr_mult({})
        self.set_wd_mult({})

    # ---------------------------------------------------------------- registry
    @staticmethod
    def register(klass):
        """Register an optimizer class under its lower-cased name (usable as a decorator)."""
        if not isinstance(klass, type):
            raise AssertionError(f"register needs a class, got {klass!r}")
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn(f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is "
                          f"overriding existing optimizer {old.__module__}.{old.__name__}")
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An optimizer of the registered (case-insensitive) `name`, built with `kwargs`."""
        if name.lower() in Optimizer.opt_registry:
            return Optimizer.opt_registry[name.lower()](**kwargs)
        raise ValueError(f"Cannot find optimizer {name}")

    # ---------------------------------------------------------------- learning rate
    @property
    def learning_rate(self):
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Set the learning rate (only without an lr_scheduler: UserWarning is raised then)."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note "
                              "that set_learning_rate can mutate the value of the learning "
                              "rate of the optimizer only when the LRScheduler of the "
                              "optimizer is undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult):
        """Learning-rate multipliers by parameter name (on top of the symbol's
        ``__lr_mult__`` attributes)."""
        self.lr_mult = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__lr_mult__" in attr[name]:
                    self.lr_mult[name] = float(attr[name]["__lr_mult__"])
        self.lr_mult.update(args_lr_mult)

    # names of the parameters that decay by default (LARS: weights only)
    _decayed_suffixes = ("_weight", "_gamma")

    def set_wd_mult(self, args_wd_mult):
        """Weight-decay multipliers by name. Parameters not ending in ``_weight`` or ``_gamma``
        get 0 (no decay on biases), then the symbol's ``__wd_mult__`` and `args_wd_mult`."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not n.endswith(self._decayed_suffixes):
                self.wd_mult[n] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])
        self.wd_mult.update(args_wd_mult)

    # ---------------------------------------------------------------- counts
    def _set_current_context(self, device_id):
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index):
        if not isinstance(index, (list, tuple)):
            index = [index]
        for idx in index:
            if idx not in self._index_update_count:
                self._index_update_count[idx] = self.begin_num_update
            self._index_update_count[idx] += 1
            self.num_update = max(self._index_update_count[idx], self.num_update)

    def _get_lrs(self, indices):
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        lrs = [lr for _ in indices]
        for i, index in enumerate(indices):
            if index in self.param_dict:
                lrs[i] *= self.param_dict[index].lr_mult
            elif index in self.lr_mult:
                lrs[i] *= self.lr_mult[index]
            elif index in self.idx2name:
                lrs[i] *= self.lr_mult.get(self.idx2name[index], 1.0)
        return lrs

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        wds = [self.wd for _ in indices]
        for i, index in enumerate(indices):
            if index in self.param_dict:
                wds[i] *= self.param_dict[index].wd_mult
            elif index in self.wd_mult:
                wds[i] *= self.wd_mult[index]
            elif index in self.idx2name:
                wds[i] *= self.wd_mult.get(self.idx2name[index], 1.0)
        return wds

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    # ---------------------------------------------------------------- states and updates
    def create_state(self, index, weight):
        """The auxiliary state (NDArrays or None) this optimizer keeps for `weight`."""
        return None

    def create_state_multi_precision(self, index, weight):
        """State for `weight`; with multi_precision and a float16 weight, a float32 master copy
        comes first: ``(weight32, state_of_weight32)``."""
        if self.multi_precision and weight.dtype == numpy.float16:
            weight_master_copy = weight.astype(numpy.float32)
            return (weight_master_copy,) + (self.create_state(index, weight_master_copy),)
        if weight.dtype == numpy.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                          "slow convergence. Consider using multi_precision=True option of "
                          "the optimizer")
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Update `weight` in place from `grad` and `state`."""
        raise NotImplementedError()

    def update_multi_precision(self, index, weight, grad, state):
        """`update`, through the float32 master copy for float16 weights with
        multi_precision."""
        if self.multi_precision and weight.dtype == numpy.float16:
            weight_master_copy, original_state = state[0], state[1]
            grad32 = grad.astype(numpy.float32)
            self.update(index, weight_master_copy, grad32, original_state)
            cast(weight_master_copy, dtype=weight.dtype, out=weight)
        else:
            self.update(index, weight, grad, state)

    def __getstate__(self):
        ret = self.__dict__.copy()
        ret.pop("param_dict", None)
        return ret

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}

    def __repr__(self):
        return f"{type(self).__name__}(learning_rate={self.lr}, wd={self.wd})"


register = Optimizer.register


@register
class Test(Optimizer):
    """The test optimizer: ``weight += rescale_grad * grad``, state = the new weight."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context)

    def update(self, index, weight, grad, state):
        weight[:] += grad * self.rescale_grad
        state[:] = weight


create = Optimizer.create_optimizer


# each optimizer's module registers it on import; these imports also keep MXNet 1.9.1's paths
# (mxnet.optimizer.optimizer.SGD, ...) and the Updater's
from .sgd import SGD, ccSGD  # noqa: E402,F401
from .signum import Signum  # noqa: E402,F401
from .ftml import FTML  # noqa: E402,F401
from .lars import LARS  # noqa: E402,F401
from .lbsgd import LBSGD  # noqa: E402,F401
from .lamb import LAMB  # noqa: E402,F401
from .dcasgd import DCASGD  # noqa: E402,F401
from .nag import NAG  # noqa: E402,F401
from .sgld import SGLD  # noqa: E402,F401
from .adam import Adam  # noqa: E402,F401
from .adagrad import AdaGrad  # noqa: E402,F401
from .rmsprop import RMSProp  # noqa: E402,F401
from .adadelta import AdaDelta  # noqa: E402,F401
from .ftrl import Ftrl  # noqa: E402,F401
from .adamax import Adamax  # noqa: E402,F401
from .nadam import Nadam  # noqa: E402,F401
from .updater import Updater, get_updater  # noqa: E402,F401
