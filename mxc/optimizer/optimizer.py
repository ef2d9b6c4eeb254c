"""Optimizers with MXNet 1.9.1's classes, registry, hyper-parameters and update rules.

Each optimizer updates a weight in place from its gradient and its state, with the fused update
operator MXNet uses for it (``sgd_mom_update``, ``adam_update``, ...) and the same arguments, or
with the same NDArray arithmetic where MXNet's optimizer computes in Python (AdaGrad, AdaDelta,
Adamax, Nadam, DCASGD, SGLD). Per-parameter learning-rate and weight-decay multipliers come from
``set_lr_mult``/``set_wd_mult``, the symbol's ``__lr_mult__``/``__wd_mult__`` attributes or the
Gluon ``param_dict``.
"""
import logging
import math
import os
import warnings

import numpy

from .. import ndarray as _nd
from ..ndarray import NDArray, zeros, clip, sqrt, cast, maximum, square, array
from ..ndarray import abs as NDabs  # noqa: N812  (MXNet's exported name)
from ..random import normal
from ..util import is_np_array

__all__ = [
    "AdaDelta", "AdaGrad", "Adam", "Adamax", "DCASGD", "FTML", "Ftrl", "LARS", "LBSGD",
    "NAG", "NDabs", "Nadam", "Optimizer", "RMSProp", "SGD", "SGLD", "Signum", "LAMB",
    "Test", "Updater", "ccSGD", "create", "get_updater", "register"
]


def _flatten_list(nested_list):
    return [item for sublist in nested_list for item in sublist]


def _op(name):
    return getattr(_nd, name)


def _lazy_rows_update(opname, weight, grad, states, **kwargs):
    """MXNet's lazy update for a row_sparse gradient on a dense weight: only the rows the
    gradient holds are touched (weight decay and momentum included). Runs the dense fused
    operator on those rows and writes them back. Returns False where it does not apply."""
    if getattr(grad, "stype", "default") != "row_sparse" \
            or weight.stype not in ("default", "row_sparse"):
        return False
    # the sparse kernels update the gradient's rows in place (mxc/ndarray/sparse_impls.py);
    # the host path below only runs for combinations they decline
    from ..ops import registry
    impl = _nd.sparse.IMPLS.get(opname)
    if impl is not None:
        op = registry.names()[opname]
        kw = dict(kwargs)
        if any(p.name == "lazy_update" for p in op.params):
            kw["lazy_update"] = True
        if impl(op, op.parse(kw), [weight, grad] + list(states), weight) is not NotImplemented:
            return True
    idx = grad.indices.asnumpy().astype(numpy.int64)
    if idx.size == 0:
        return True
    w_np = (weight.tostype("default") if weight.stype != "default" else weight).asnumpy()
    w_rows = array(w_np[idx], ctx=weight.context, dtype=weight.dtype)
    s_nps, s_rows = [], []
    for s in states:
        s_np = (s.tostype("default") if s.stype != "default" else s).asnumpy()
        s_nps.append(s_np)
        s_rows.append(array(s_np[idx], ctx=s.context, dtype=s.dtype))
    g_rows = grad.data
    if g_rows.dtype != weight.dtype:
        g_rows = g_rows.astype(weight.dtype)
    kwargs.pop("lazy_update", None)
    _op(opname)(w_rows, g_rows, *s_rows, out=w_rows, **kwargs)
    w_np[idx] = w_rows.asnumpy()
    weight[:] = w_np
    for s, s_np, rows in zip(states, s_nps, s_rows):
        s_np[idx] = rows.asnumpy()
        s[:] = array(s_np, ctx=s.context, dtype=s.dtype)
    return True


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

    def set_wd_mult(self, args_wd_mult):
        """Weight-decay multipliers by name. Parameters not ending in ``_weight`` or ``_gamma``
        get 0 (no decay on biases), then the symbol's ``__wd_mult__`` and `args_wd_mult`."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith("_weight") or n.endswith("_gamma")):
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


def _check_nd(weight, grad):
    if not isinstance(weight, NDArray):
        raise AssertionError(f"weight must be an NDArray, got {type(weight).__name__}")
    if not isinstance(grad, NDArray):
        raise AssertionError(f"grad must be an NDArray, got {type(grad).__name__}")


def _mp_state_first(opt, index, weight, label):
    # SGD/NAG/LARS keep (state, weight32) for multi_precision float16 weights
    if opt.multi_precision and weight.dtype == numpy.float16:
        weight_master_copy = weight.astype(numpy.float32)
        return (opt.create_state(index, weight_master_copy), weight_master_copy)
    if weight.dtype == numpy.float16 and not opt.multi_precision:
        warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                      "slow convergence. Consider using multi_precision=True option of the "
                      f"{label} optimizer")
    return opt.create_state(index, weight)


def _sgd_single(opt, weight, grad, state, lr, wd, kwargs, multi_precision, lazy_update):
    if not multi_precision:
        if state is not None:
            if lazy_update and _lazy_rows_update("sgd_mom_update", weight, grad, [state],
                                                 lr=lr, wd=wd, **kwargs):
                return
            _nd.sgd_mom_update(weight, grad, state, out=weight, lazy_update=lazy_update,
                               lr=lr, wd=wd, **kwargs)
        else:
            if lazy_update and _lazy_rows_update("sgd_update", weight, grad, [],
                                                 lr=lr, wd=wd, **kwargs):
                return
            _nd.sgd_update(weight, grad, out=weight, lazy_update=lazy_update, lr=lr, wd=wd,
                           **kwargs)
    else:
        if state[0] is not None:
            _nd.mp_sgd_mom_update(weight, grad, state[0], state[1], out=weight, lr=lr, wd=wd,
                                  **kwargs)
        else:
            _nd.mp_sgd_update(weight, grad, state[1], out=weight, lr=lr, wd=wd, **kwargs)


@register
class SGD(Optimizer):
    """Stochastic gradient descent, with momentum, weight decay and lazy row_sparse updates.

    Without momentum ``weight -= lr * (rescale_grad * grad + wd * weight)`` (the gradient
    clipped first); with momentum ``state = momentum * state - lr * (...); weight += state``.
    Dense parameters are updated several at a time with ``multi_sgd_*`` (up to
    ``MXNET_OPTIMIZER_AGGREGATION_SIZE``, default 4).
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))

    def create_state_multi_precision(self, index, weight):
        return _mp_state_first(self, index, weight, "SGD")

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            stype = weight.stype if self.lazy_update else "default"
            return zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)
        return None

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        aggregate = True
        if not isinstance(indices, (tuple, list)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        for weight, grad in zip(weights, grads):
            _check_nd(weight, grad)
            aggregate = aggregate and weight.stype == "default" and grad.stype == "default"
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        kwargs = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if aggregate:
            n = len(weights)
            if not multi_precision:
                if self.momentum > 0:
                    _nd.multi_sgd_mom_update(*_flatten_list(zip(weights, grads, states)),
                                             out=list(weights), num_weights=n, lrs=lrs,
                                             wds=wds, **kwargs)
                else:
                    _nd.multi_sgd_update(*_flatten_list(zip(weights, grads)), out=list(weights),
                                         num_weights=n, lrs=lrs, wds=wds, **kwargs)
            else:
                if self.momentum > 0:
                    _nd.multi_mp_sgd_mom_update(
                        *_flatten_list(zip(weights, grads, *zip(*states))), out=list(weights),
                        num_weights=n, lrs=lrs, wds=wds, **kwargs)
                else:
                    _nd.multi_mp_sgd_update(
                        *_flatten_list(zip(weights, grads, list(zip(*states))[1])),
                        out=list(weights), num_weights=n, lrs=lrs, wds=wds, **kwargs)
        else:
            for weight, grad, state, lr, wd in zip(weights, grads, states, lrs, wds):
                _sgd_single(self, weight, grad, state, lr, wd, kwargs, multi_precision,
                            self.lazy_update)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        w0 = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and w0.dtype == numpy.float16)


@register
class Signum(Optimizer):
    """signSGD (momentum 0) and Signum: ``weight -= lr * sign(momentum buffer)``, with optional
    decoupled weight decay `wd_lh`."""

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype)
        return None

    def _update_impl(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if self.wd_lh:
            kwargs["wd_lh"] = self.wd_lh
        if state is not None:
            _nd.signum_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            _nd.signsgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state)


@register
class FTML(Optimizer):
    """Follow the Moving Leader (Zheng & Kwok, 2017), with ``ftml_update``."""

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return tuple(zeros(weight.shape, weight.context, dtype=weight.dtype) for _ in range(3))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                  "rescale_grad": self.rescale_grad, "t": t}
        if self.clip_gradient:
            kwargs["clip_grad"] = self.clip_gradient
        prev_d, prev_v, prev_z = state
        _nd.ftml_update(weight, grad, prev_d, prev_v, prev_z, out=weight, lr=lr, wd=wd,
                        **kwargs)


def _names_no_lars(name):
    return name.endswith("gamma") or name.endswith("beta") or name.endswith("bias")


@register
class LARS(Optimizer):
    """Layer-wise adaptive rate scaling (You et al., 2017) on SGD: the learning rate of each
    weight is scaled by ``eta * |w| / (|g| + wd * |w| + eps)`` (not for biases, gammas,
    betas); momentum is corrected for learning-rate changes when `momentum_correction`."""

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        lrs = [lr for _ in indices]
        for i, index in enumerate(indices):
            if index in self.param_dict:
                lrs[i] *= self.param_dict[index].lr_mult
            elif index in self.lr_mult:
                lrs[i] *= self.lr_mult[index]
            elif index in self.idx2name:
                lrs[i] *= self.lr_mult.get(self.idx2name[index], 1.0)
        return lrs

    def set_wd_mult(self, args_wd_mult):
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not n.endswith("_weight"):
                self.wd_mult[n] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])
        self.wd_mult.update(args_wd_mult)

    def create_state_multi_precision(self, index, weight):
        return _mp_state_first(self, index, weight, "SGD")

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            stype = weight.stype if self.lazy_update else "default"
            return zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)
        return None

    def _l2norm(self, v, rescale=False):
        v = v.astype("float32")
        if rescale:
            v *= self.rescale_grad
        return _nd.norm(v).asnumpy()[0]

    def _get_lars(self, i, weight, g, lr, wd):
        name = self.idx2name[i] if i in self.idx2name else str(i)
        if _names_no_lars(name):
            return lr
        w_norm = self._l2norm(weight)
        g_norm = self._l2norm(g, rescale=True)
        if w_norm > 0.0 and g_norm > 0.0:
            lars = self.eta * w_norm / (g_norm + wd * w_norm + self.eps)
        else:
            lars = 1.0
        return lars * lr

    def _multi_lars(self, lrs, weights, grads, wds):
        # MXNet's multi_sum_sq + multi_lars (float32 sums of squares per array)
        out = []
        for lr, w, g, wd in zip(lrs, weights, grads, wds):
            w32 = w.asnumpy().astype(numpy.float32)
            g32 = g.asnumpy().astype(numpy.float32)
            w_norm = numpy.sqrt(numpy.float32(numpy.sum(w32 * w32, dtype=numpy.float32)))
            g_norm = numpy.sqrt(numpy.float32(numpy.sum(g32 * g32, dtype=numpy.float32))) \
                * numpy.float32(self.rescale_grad)
            if w_norm > 0 and g_norm > 0:
                ratio = numpy.float32(self.eta) * w_norm / (
                    g_norm + numpy.float32(wd) * w_norm + numpy.float32(self.eps))
                out.append(numpy.float32(lr) * numpy.float32(ratio))
            else:
                out.append(numpy.float32(lr))
        return out

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        aggregate = True
        if not isinstance(indices, (tuple, list)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        for weight, grad in zip(weights, grads):
            _check_nd(weight, grad)
            aggregate = aggregate and weight.stype == "default" and grad.stype == "default"
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        kwargs = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kwargs["momentum"] = (self.momentum * (self.cur_lr / self.last_lr)) \
                if (self.momentum_correction and self.last_lr != 0) else self.momentum
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if aggregate:
            nb = len(indices)
            names = [self.idx2name[i] if i in self.idx2name else str(i) for i in indices]
            lars_idx = [i for i in range(nb) if not _names_no_lars(names[i])]
            no_lars_idx = [i for i in range(nb) if _names_no_lars(names[i])]
            full_idx = lars_idx + no_lars_idx
            new_lrs = [lrs[i] for i in full_idx]
            new_wds = [wds[i] for i in full_idx]
            new_weights = [weights[i] for i in full_idx]
            new_grads = [grads[i] for i in full_idx]
            new_states = [states[i] for i in full_idx]
            nl = len(lars_idx)
            if nl > 0:
                new_lrs[:nl] = self._multi_lars(new_lrs[:nl], new_weights[:nl],
                                                new_grads[:nl], new_wds[:nl])
            ctx = weights[0].context
            lrs_nd = array(new_lrs, ctx=ctx, dtype="float32")
            wds_nd = array(new_wds, ctx=ctx, dtype="float32")
            sidx = 0
            while sidx < nb:
                eidx = min(sidx + self.aggregate_num, nb)
                ws, gs, ss = new_weights[sidx:eidx], new_grads[sidx:eidx], new_states[sidx:eidx]
                tail = [lrs_nd[sidx:eidx], wds_nd[sidx:eidx]]
                n = eidx - sidx
                if not multi_precision:
                    if self.momentum > 0:
                        _nd.preloaded_multi_sgd_mom_update(
                            *(_flatten_list(zip(ws, gs, ss)) + tail), out=ws, num_weights=n,
                            **kwargs)
                    else:
                        _nd.preloaded_multi_sgd_update(
                            *(_flatten_list(zip(ws, gs)) + tail), out=ws, num_weights=n,
                            **kwargs)
                else:
                    if self.momentum > 0:
                        _nd.preloaded_multi_mp_sgd_mom_update(
                            *(_flatten_list(zip(ws, gs, *zip(*ss))) + tail), out=ws,
                            num_weights=n, **kwargs)
                    else:
                        _nd.preloaded_multi_mp_sgd_update(
                            *(_flatten_list(zip(ws, gs, list(zip(*ss))[1])) + tail), out=ws,
                            num_weights=n, **kwargs)
                sidx += self.aggregate_num
        else:
            lrs = [self._get_lars(i, w, g, lr, wd)
                   for (i, w, g, lr, wd) in zip(indices, weights, grads, lrs, wds)]
            for weight, grad, state, lr, wd in zip(weights, grads, states, lrs, wds):
                _sgd_single(self, weight, grad, state, lr, wd, kwargs, multi_precision,
                            self.lazy_update)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        w0 = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and w0.dtype == numpy.float16)


@register
class LBSGD(Optimizer):
    """Large-batch SGD: gradients of `batch_scale` calls are accumulated and applied together,
    with a learning-rate warmup ('linear', 'power2', 'sqrt' or 'lars')."""

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy="linear",
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super().__init__(**kwargs)
        logging.info("Running Large-Batch SGD Algorithm")
        logging.info("(Batch_scale=%f, warmup_epochs=%d, warmup_strategy=%s, "
                     "updates_per_epoch=%d)", batch_scale, warmup_epochs, warmup_strategy,
                     updates_per_epoch)
        self.momentum = momentum
        self.multi_precision = multi_precision
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index, weight):
        momentum = None
        if self.multi_precision and weight.dtype == numpy.float16:
            weight_master_copy = array(weight, ctx=weight.context, dtype=numpy.float32)
            if self.momentum != 0.0:
                momentum = zeros(weight.shape, weight.context, dtype=numpy.float32,
                                 stype=weight.stype)
            return (momentum, weight_master_copy)
        if weight.dtype == numpy.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                          "slow convergence. Consider using multi_precision=True option of "
                          "the SGD optimizer")
        if self.momentum != 0.0:
            momentum = zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype)
        return momentum

    def _get_lbmult(self, nup):
        nwup = self.warmup_epochs * self.updates_per_epoch
        strategy = self.warmup_strategy
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            mult = maxmult
        elif nwup <= 1:
            mult = 1.0
        elif strategy == "linear":
            mult = 1.0 + (maxmult - 1) * nup / nwup
        elif strategy == "power2":
            mult = 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
        elif strategy == "sqrt":
            mult = 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
        else:
            mult = 1.0
        return mult

    def _get_lars(self, weight, g, wd):
        weight2 = self._l2norm(weight)
        grad2 = self._l2norm(g)
        lars = math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18))
        return min(max(lars, 0.01), 100)

    def _l2norm(self, v):
        return _nd.multiply(v, v).asnumpy().sum()

    def _reset_cum_gradient(self, index):
        self.cumgrads[index]["cum_grad"] = 0

    def _get_cum_gradient(self, index):
        return self.cumgrads.get(index, {})

    def _put_cum_gradient(self, index, cgrad):
        self.cumgrads[index] = cgrad

    def _cumulate_gradient(self, grad, index):
        cgrad = self._get_cum_gradient(index)
        if cgrad and cgrad["num_cums"] > 0:
            cum_grad = cgrad["cum_grad"] + grad
            num_cums = cgrad["num_cums"] + 1
        else:
            cum_grad = grad
            num_cums = self.init_updates + 1
        cgrad = {"cum_grad": cum_grad, "num_cums": num_cums}
        self._put_cum_gradient(index, cgrad)
        return cgrad

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        self._update_count(index)
        cgrad = self._cumulate_gradient(grad, index)
        if (cgrad["num_cums"] % self.batch_scale) == 0:
            grad = cgrad["cum_grad"] / self.batch_scale
            if self.warmup_strategy == "lars":
                lbmult = self._get_lars(weight, grad, wd)
            else:
                lbmult = self._get_lbmult(cgrad["num_cums"])
            lr = lr * lbmult
            kwargs = {"rescale_grad": self.rescale_grad}
            if self.momentum > 0:
                kwargs["momentum"] = self.momentum
            if self.clip_gradient:
                kwargs["clip_gradient"] = self.clip_gradient
            if not isinstance(state, (list, tuple)):
                if state is not None:
                    _nd.sgd_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
                else:
                    _nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
            else:
                if state[0] is not None:
                    _nd.mp_sgd_mom_update(weight, grad, state[0], state[1], out=weight, lr=lr,
                                          wd=wd, **kwargs)
                else:
                    _nd.mp_sgd_update(weight, grad, state[1], out=weight, lr=lr, wd=wd,
                                      **kwargs)
            self._reset_cum_gradient(index)
        else:
            _nd.sgd_update(weight, grad, out=weight, lr=0.0, wd=wd)


def _lamb_norm(x):
    return _nd.norm(x)


@register
class LAMB(Optimizer):
    """LAMB (You et al., 2019): Adam-style step rescaled per layer by ||w|| / ||step||
    (``lamb_update_phase1`` / ``lamb_update_phase2``)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE",
                                                          "45"))))

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype),
                zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype))

    def _one(self, index, weight, grad, state, multi_precision, lr, wd, t):
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                  "bias_correction": self.bias_correction, "rescale_grad": self.rescale_grad,
                  "t": t}
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        bounds = {}
        if self.lower_bound:
            bounds["lower_bound"] = self.lower_bound
        if self.upper_bound:
            bounds["upper_bound"] = self.upper_bound
        if multi_precision:
            mean, var = state[1]
            weight32 = state[0]
            g = _nd.mp_lamb_update_phase1(weight, grad, mean, var, weight32, wd=wd, **kwargs)
            r_1 = _lamb_norm(weight32)
            r_2 = _lamb_norm(g)
            # = mp_lamb_update_phase2(weight, g, r_1, r_2, weight32, lr=lr, out=weight),
            # written as its two halves: mxc's op leaves the weight32 input unchanged
            _nd.lamb_update_phase2(weight32, g, r_1, r_2, lr=lr, out=weight32, **bounds)
            cast(weight32, dtype=weight.dtype, out=weight)
        else:
            mean, var = state
            g = _nd.lamb_update_phase1(weight, grad, mean, var, wd=wd, **kwargs)
            r_1 = _lamb_norm(weight)
            r_2 = _lamb_norm(g)
            _nd.lamb_update_phase2(weight, g, r_1, r_2, lr=lr, out=weight, **bounds)

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        if self.aggregate_num <= 1 or not isinstance(index, (tuple, list)):
            if isinstance(index, (tuple, list)):
                index, weight, grad, state = index[0], weight[0], grad[0], state[0]
            _check_nd(weight, grad)
            self._update_count(index)
            lr = self._get_lr(index)
            wd = self._get_wd(index)
            t = self._index_update_count[index]
            self._one(index, weight, grad, state, multi_precision, lr, wd, t)
        else:
            # MXNet runs multi_lamb_update here; it applies the same two phases per tensor
            step_count, lrs, wds = [], [], []
            for i, w_i, g_i in zip(index, weight, grad):
                _check_nd(w_i, g_i)
                self._update_count(i)
                step_count.append(self._index_update_count[i])
                lrs.append(self._get_lr(i))
                wds.append(self._get_wd(i))
            for i, w_i, g_i, s_i, lr, wd, t in zip(index, weight, grad, state, lrs, wds,
                                                  step_count):
                self._one(i, w_i, g_i, s_i, multi_precision, lr, wd, t)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        w0 = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and w0.dtype == numpy.float16)


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al., 2016)."""

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return (None, weight.copy())
        return (zeros(weight.shape, weight.context, dtype=weight.dtype), weight.copy())

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        mom, previous_weight = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous_weight))
        # (MXNet tests `if mom:`, which raises for arrays of more than one element)
        if mom is not None:
            mom[:] *= self.momentum
            mom[:] += step
        else:
            mom = step
        previous_weight[:] = weight
        weight[:] += mom


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient (``nag_mom_update``)."""

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state_multi_precision(self, index, weight):
        return _mp_state_first(self, index, weight, "NAG")

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = {"rescale_grad": self.rescale_grad}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if not multi_precision:
            if state is not None:
                _nd.nag_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
            else:
                _nd.sgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            if state[0] is not None:
                _nd.mp_nag_mom_update(weight, grad, state[0], state[1], out=weight, lr=lr,
                                      wd=wd, **kwargs)
            else:
                _nd.mp_sgd_update(weight, grad, state[1], out=weight, lr=lr, wd=wd, **kwargs)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        use_mp = (self.multi_precision and weight.dtype == numpy.float16
                  and isinstance(state, (tuple, list)))
        self._update_impl(index, weight, grad, state, multi_precision=use_mp)


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics: a half SGD step plus N(0, lr) noise (drawn with
    mx.random, so mx.random.seed governs it)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        weight[:] += - lr / 2 * (grad + wd * weight)
        weight[:] += normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                            ctx=weight.context)


@register
class ccSGD(SGD):  # noqa: N801  (MXNet's name)
    """Deprecated alias of SGD."""


@register
class Adam(Optimizer):
    """Adam (Kingma & Ba, 2014) with ``adam_update``; the bias corrections are folded into the
    learning rate. Lazy row_sparse updates with `lazy_update`."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        stype = weight.stype if self.lazy_update else "default"
        return (zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype),
                zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        coef1 = 1. - self.beta1 ** t
        coef2 = 1. - self.beta2 ** t
        lr *= math.sqrt(coef2) / coef1
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                  "rescale_grad": self.rescale_grad}
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        mean, var = state
        if self.lazy_update and _lazy_rows_update("adam_update", weight, grad, [mean, var],
                                                  lr=lr, wd=wd, **kwargs):
            return
        _nd.adam_update(weight, grad, mean, var, out=weight, lazy_update=self.lazy_update,
                        lr=lr, wd=wd, **kwargs)


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al., 2011): ``history += g^2; weight -= lr * (g / sqrt(history + eps)
    + wd * weight)``; row_sparse gradients use ``sparse.adagrad_update``."""

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context, stype=weight.stype)

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        history = state
        if grad.stype == "row_sparse":
            kwargs = {"epsilon": self.float_stable_eps, "rescale_grad": self.rescale_grad}
            if self.clip_gradient:
                kwargs["clip_gradient"] = self.clip_gradient
            if wd != 0:
                raise ValueError("AdaGrad: the row_sparse (sparse.adagrad_update) update does "
                                 f"not support weight decay, got wd={wd}")
            if _lazy_rows_update("_sparse_adagrad_update", weight, grad, [history], lr=lr,
                                 wd=wd, **kwargs):
                return
            _nd.sparse.adagrad_update(weight, grad, history, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            grad = grad * self.rescale_grad
            if self.clip_gradient is not None:
                grad = clip(grad, -self.clip_gradient, self.clip_gradient)
            history[:] += square(grad)
            div = grad / sqrt(history + self.float_stable_eps)
            weight[:] += (div + weight * wd) * -lr


@register
class RMSProp(Optimizer):
    """RMSProp (Tieleman & Hinton) with ``rmsprop_update``; the centered form (Graves, 2013)
    with ``rmspropalex_update``."""

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        n = 3 if self.centered else 1
        return tuple(zeros(weight.shape, weight.context, stype=weight.stype) for _ in range(n))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = {"gamma1": self.gamma1, "epsilon": self.epsilon,
                  "rescale_grad": self.rescale_grad}
        if self.centered:
            kwargs["gamma2"] = self.gamma2
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if self.clip_weights:
            kwargs["clip_weights"] = self.clip_weights
        if not self.centered:
            (n,) = state
            _nd.rmsprop_update(weight, grad, n, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            n, g, delta = state
            _nd.rmspropalex_update(weight, grad, n, g, delta, out=weight, lr=lr, wd=wd,
                                   **kwargs)


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler, 2012)."""

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context), zeros(weight.shape, weight.context))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        wd = self._get_wd(index)
        self._update_count(index)
        # (MXNet rescales the caller's gradient in place; this leaves it alone)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        acc_g, acc_delta = state
        acc_g[:] *= self.rho
        acc_g[:] += (1. - self.rho) * grad * grad
        current_delta = sqrt(acc_delta + self.epsilon) / sqrt(acc_g + self.epsilon) * grad
        acc_delta[:] *= self.rho
        acc_delta[:] += (1. - self.rho) * current_delta * current_delta
        weight[:] -= current_delta + wd * weight


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., 2013) with ``ftrl_update``."""

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, stype=weight.stype),
                zeros(weight.shape, weight.context, stype=weight.stype))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        wd = self._get_wd(index)
        lr = self._get_lr(index)
        kwargs = {"lamda1": self.lamda1, "beta": self.beta, "rescale_grad": self.rescale_grad}
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        z, n = state
        # MXNet's row_sparse FTRL (weight, grad and states all row_sparse) is lazy; a dense
        # weight takes the dense update
        if weight.stype == "row_sparse" and _lazy_rows_update(
                "ftrl_update", weight, grad, [z, n], lr=lr, wd=wd, **kwargs):
            return
        _nd.ftrl_update(weight, grad, z, n, out=weight, lr=lr, wd=wd, **kwargs)


@register
class Adamax(Optimizer):
    """AdaMax, Adam's infinity-norm variant."""

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype),
                zeros(weight.shape, weight.context, dtype=weight.dtype))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        lr /= (1. - self.beta1 ** t)
        grad = grad * self.rescale_grad + wd * weight
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        m_t, u_t = state
        m_t[:] *= self.beta1
        m_t[:] += (1. - self.beta1) * grad
        u_t[:] = maximum(self.beta2 * u_t, NDabs(grad))
        weight[:] -= lr * m_t / u_t


@register
class Nadam(Optimizer):
    """Nesterov Adam (Dozat, 2016). As in MXNet, the momentum schedule product is one value
    shared by all parameters."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype),
                zeros(weight.shape, weight.context, dtype=weight.dtype))

    def update(self, index, weight, grad, state):
        _check_nd(weight, grad)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        grad = grad * self.rescale_grad + wd * weight
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        momentum_t = self.beta1 * (1. - 0.5 * (pow(0.96, t * self.schedule_decay)))
        momentum_t_1 = self.beta1 * (1. - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        self.m_schedule = self.m_schedule * momentum_t
        m_schedule_next = self.m_schedule * momentum_t_1
        m_t, v_t = state
        m_t[:] *= self.beta1
        m_t[:] += (1. - self.beta1) * grad
        v_t[:] *= self.beta2
        v_t[:] += (1. - self.beta2) * grad * grad
        grad_prime = grad / (1. - self.m_schedule)
        m_t_prime = m_t / (1. - m_schedule_next)
        v_t_prime = v_t / (1. - pow(self.beta2, t))
        m_t_bar = (1. - momentum_t) * grad_prime + momentum_t_1 * m_t_prime
        weight[:] -= lr * m_t_bar / (sqrt(v_t_prime) + self.epsilon)


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

# the Updater lives in updater.py; importing it here keeps MXNet's module layout
from .updater import Updater, get_updater  # noqa: E402,F401
