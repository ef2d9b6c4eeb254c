"""BucketingModule: one Module per bucket key (e.g. sequence length), all sharing the parameters
of the default bucket's module (MXNet 1.9.1's ``mx.mod.BucketingModule``)."""
import logging
import warnings

import numpy as np

from .. import context as ctx, symbol as sym
from .. import ndarray as nd
from ..name import NameManager
from .base_module import BaseModule, _UNIFORM_001, _check_input_names
from .module import Module
from ..model import load_params

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """A module that switches between symbols by bucket key.

    Parameters
    ----------
    sym_gen : callable bucket_key -> (Symbol, data_names, label_names)
    default_bucket_key : the key of the largest bucket (its module owns the parameters)
    logger : logging.Logger
    context, work_load_list, fixed_param_names, state_names, group2ctxs, compression_params :
        as for Module.
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=ctx.cpu(),
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise AssertionError("BucketingModule needs a default_bucket_key")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)
        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        self._context = context
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _call_sym_gen(self, *args, **kwargs):
        # a fresh name manager per call, so that every bucket names its layers alike
        with NameManager():
            return self._sym_gen(*args, **kwargs)

    def _new_module(self, symbol, data_names, label_names):
        return Module(symbol, data_names, label_names, logger=self.logger,
                      context=self._context, work_load_list=self._work_load_list,
                      fixed_param_names=self._fixed_param_names,
                      state_names=self._state_names, group2ctxs=self._group2ctxs,
                      compression_params=self._compression_params)

    def _need(self, what, optimizer=False):
        if not self.binded:
            raise AssertionError(f"BucketingModule.{what}: call bind() first")
        if not self.params_initialized:
            raise AssertionError(f"BucketingModule.{what}: call init_params() first")
        if optimizer and not self.optimizer_initialized:
            raise AssertionError(f"BucketingModule.{what}: call init_optimizer() first")

    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        _, data_names, _ = self._call_sym_gen(self._default_bucket_key)
        return data_names

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        symbol, _, _ = self._call_sym_gen(self._default_bucket_key)
        return symbol.list_outputs()

    @property
    def data_shapes(self):
        self._need_bind()
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        self._need_bind()
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        self._need_bind()
        return self._curr_module.output_shapes

    def _need_bind(self):
        if not self.binded:
            raise AssertionError("BucketingModule: call bind() first")

    def get_params(self):
        if not self.params_initialized:
            raise AssertionError("BucketingModule.get_params: parameters are not initialized")
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=2)
            return
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                     force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def init_params(self, initializer=_UNIFORM_001, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        if not self.binded:
            raise AssertionError("call bind before initializing the parameters")
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        self._need("get_states")
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        self._need("set_states")
        self._curr_module.set_states(states, value)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind the default bucket's module (the one that owns the parameters)."""
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise AssertionError("shared_module for BucketingModule is not supported")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.binded = True
        self._grad_req = grad_req
        symbol, data_names, label_names = self._call_sym_gen(self._default_bucket_key)
        if self._default_bucket_key in self._buckets:
            module = self._buckets[self._default_bucket_key]
        else:
            module = self._new_module(symbol, data_names, label_names)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=self._grad_req)
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if self.params_initialized:
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make `bucket_key` current, creating (and binding, sharing the default bucket's
        parameters) its module on first use."""
        if not self.binded:
            raise AssertionError("call bind before switching bucket")
        if bucket_key not in self._buckets:
            symbol, data_names, label_names = self._call_sym_gen(bucket_key)
            module = self._new_module(symbol, data_names, label_names)
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=self._buckets[self._default_bucket_key],
                        grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        else:
            module = self._buckets[bucket_key]
            if not module.binded:
                module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                            self._curr_module.inputs_need_grad, force_rebind=False,
                            shared_module=self._buckets[self._default_bucket_key],
                            grad_req=self._grad_req)
        self._curr_module = self._buckets[bucket_key]
        self._curr_bucket_key = bucket_key

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        self._need("init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for mod in self._buckets.values():
            if mod is not self._curr_module:
                mod.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    def prepare(self, data_batch, sparse_row_id_fn=None):
        self._need("prepare")
        original = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch, is_train=None):
        self._need("forward")
        key = getattr(data_batch, "bucket_key", None)
        if key is None:
            key = self._curr_bucket_key
        self.switch_bucket(key, getattr(data_batch, "provide_data", None),
                           getattr(data_batch, "provide_label", None))
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        self._need("backward")
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        self._need("update", optimizer=True)
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        self._need("get_outputs")
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._need("get_input_grads")
        if not self.inputs_need_grad:
            raise AssertionError("get_input_grads: bind with inputs_need_grad=True")
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._need("update_metric")
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    @property
    def symbol(self):
        self._need_bind()
        return self._curr_module.symbol

    def install_monitor(self, mon):
        self._need_bind()
        self._monitor = mon
        for mod in self._buckets.values():
            mod.install_monitor(mon)

    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Write ``prefix-%04d.params``, ``prefix-<key>-symbol.json`` per bucket and
        ``prefix.buckets`` (the keys)."""
        if not self._buckets:
            raise AssertionError("Empty BucketingModule cannot be saved")
        self.save_params("%s-%04d.params" % (prefix, epoch))
        for bucket_key in self._buckets:
            symbol, _, _ = self._call_sym_gen(bucket_key)
            symbol.save(f"{prefix}-{bucket_key}-symbol.json", remove_amp_cast=remove_amp_cast)
        nd.save(f"{prefix}.buckets", nd.array(list(self._buckets.keys()), dtype=np.int32))

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule from files written by ``save_checkpoint``."""
        if sym_gen is None:
            raise AssertionError("sym_gen is required for loading BucketingModule")
        if default_bucket_key is None:
            raise AssertionError("default_bucket_key is required for loading BucketingModule")
        buckets = nd.load(f"{prefix}.buckets")
        buckets = [int(k) for k in buckets[0].asnumpy().astype("int32")]
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key in buckets:
            _, data_names, label_names = mod._call_sym_gen(key)
            symbol = sym.load(f"{prefix}-{key}-symbol.json")
            mod._buckets[key] = Module(symbol, data_names, label_names, **kwargs)
            if key == default_bucket_key:
                mod._curr_module = mod._buckets[key]
        if mod._curr_module is None:
            raise ValueError(f"BucketingModule.load: default_bucket_key {default_bucket_key!r} "
                             f"is not among the saved buckets {buckets}")
        arg_params, aux_params = load_params(prefix, epoch)
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None,
                  aux_params=None, **kwargs):
        """A BucketingModule from symbols by bucket key and parameter dicts."""
        for what, val in (("sym_dict", sym_dict), ("arg_params", arg_params),
                          ("aux_params", aux_params), ("default_bucket_key", default_bucket_key)):
            if val is None:
                raise AssertionError(f"{what} needs to be provided for "
                                     "BucketingModule.load_dict")
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key, loaded in sym_dict.items():
            _, data_names, label_names = mod._call_sym_gen(default_bucket_key)
            mod._buckets[key] = Module(loaded, data_names, label_names, **kwargs)
            if key == default_bucket_key:
                mod._curr_module = mod._buckets[key]
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod
