"""Trainer: applies an Optimizer to a set of Parameters after ``autograd.backward`` (gradients
reduced across contexts through a KVStore when there are several), as mxnet.gluon.Trainer."""
from .. import autograd
from .._core import atomic_write
from ..model import _create_kvstore, _create_sparse_kvstore, _kv_can_optimize
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]


def _opt():
    from .. import optimizer
    return optimizer


class Trainer:
    """Applies `optimizer` (a name with `optimizer_params`, or an Optimizer) to `params` (a
    ParameterDict, dict or list of Parameters); call ``step(batch_size)`` after backward."""

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[k] for k in sorted(list(params.keys()))]
        if not isinstance(params, (list, tuple)):
            raise ValueError(f"First argument must be a list or dict of Parameters, got "
                             f"{type(params)}.")
        self._params = []
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        self._param2idx = {}
        for i, p in enumerate(params):
            if not isinstance(p, Parameter):
                raise ValueError(f"First argument must be a list or dict of Parameters, got list "
                                 f"of {type(p)}.")
            self._param2idx[p.name] = i
            self._params.append(p)
            p._set_trainer(self)
            if p._stype != "default":
                self._contains_sparse_weight = True
            if p._grad_stype != "default":
                self._contains_sparse_grad = True
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params if optimizer_params else {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._reset_kvstore()

    def _check_contexts(self):
        contexts = None
        for p in self._params:
            ctx = p.list_ctx()
            if contexts is not None and contexts != ctx:
                raise AssertionError(
                    f"All Parameters must be initialized on the same set of contexts, but "
                    f"Parameter {p.name} is initialized on {ctx} while previous Parameters are "
                    f"initialized on {contexts}.")
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer, optimizer_params):
        opt = _opt()
        param_dict = {i: p for i, p in enumerate(self._params)}
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise AssertionError("optimizer_params must be None if optimizer is an instance "
                                     "of Optimizer instead of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in (self._contexts or [None])]

    def _init_params(self):
        """Put the initialized parameters into the KVStore (deferred ones wait)."""
        if not self._kv_initialized:
            raise AssertionError("Cannot initialize parameters in KVStore when KVStore is not "
                                 "initialized.")
        waiting = []
        if self._kvstore:
            with autograd.pause(train_mode=autograd._modes.is_training()):
                waiting = self._init_params_in_kv()
        self._params_to_init = waiting

    def _init_params_in_kv(self):
        # store writes, not part of any graph (row_sparse_data may run inside record())
        waiting = []
        for p in self._params_to_init:
            if p._deferred_init:
                waiting.append(p)
                continue
            arrays = p._check_and_get(p._data, list)
            idx = self._param2idx[p.name]
            if p._stype != "default":
                self._kvstore.init(idx, arrays[0])
            elif self._update_on_kvstore and len(arrays) == 1:
                self._kvstore._broadcast_shared(idx, arrays[0])
            else:
                self._kvstore.broadcast(idx, arrays[0], arrays)
        return waiting

    def _reset_kvstore(self):
        if self._kvstore and self._kvstore.is_distributed:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self):
        config = self._kvstore_params
        if self._contains_sparse_weight:
            kvstore, update_on_kvstore = _create_sparse_kvstore(config["kvstore"])
            self._distributed = kvstore.is_distributed
            if config["update_on_kvstore"] is False:
                raise ValueError("Cannot set update_on_kvstore=False when sparse weights are "
                                 "present.")
        elif self._contains_sparse_grad:
            arrays = {p.name: p.data(self._contexts[0]) for p in self._params}
            kvstore, _ = _create_kvstore(config["kvstore"], len(self._contexts), arrays)
            self._distributed = kvstore.is_distributed if kvstore else False
            update_on_kvstore = self._distributed
            if config["update_on_kvstore"] is not None:
                if config["update_on_kvstore"] is False and self._distributed:
                    raise ValueError("Cannot set update_on_kvstore=False on dist kvstore when "
                                     "sparse gradients are present.")
                update_on_kvstore = config["update_on_kvstore"]
        else:
            arrays = {p.name: p.data(self._contexts[0]) for p in self._params}
            kvstore, update_on_kvstore = _create_kvstore(config["kvstore"], len(self._contexts),
                                                         arrays)
            self._distributed = kvstore.is_distributed if kvstore else False
            if self._distributed and kvstore.is_async:
                update_on_kvstore = True
                if config["update_on_kvstore"] is False:
                    raise ValueError("Please set update_on_kvstore=True when training in async "
                                     "mode.")
            if config["update_on_kvstore"] is not None:
                update_on_kvstore = config["update_on_kvstore"]
            if update_on_kvstore and kvstore is not None and not _kv_can_optimize(kvstore):
                if config["update_on_kvstore"]:
                    raise ValueError("Please set update_on_kvstore=False when training with "
                                     f"{type(kvstore)}")
                update_on_kvstore = False
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    @property
    def learning_rate(self):
        if not isinstance(self._optimizer, _opt().Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate can be "
                              "accessed.")
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        if isinstance(self._optimizer, _opt().Optimizer):
            return self._optimizer
        raise UserWarning("Optimizer has not been initialized yet")

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate."""
        if not isinstance(self._optimizer, _opt().Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate is mutated.")
        self._optimizer.set_learning_rate(lr)

    def _row_sparse_pull(self, parameter, out, row_id, full_idx=False):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        idx = self._param2idx[parameter.name]
        with autograd.pause(train_mode=autograd._modes.is_training()):
            if full_idx and not self._kvstore.is_distributed:
                if row_id.size != out.shape[0]:
                    raise AssertionError("row_sparse pull of all rows: row_id size does not "
                                         "match")
                self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
            else:
                self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    def _check_and_rescale_grad(self, scale):
        if self._update_on_kvstore and self._distributed and self._kv_initialized:
            if self._optimizer.rescale_grad != scale:
                raise UserWarning("Possible change in the `batch_size` from previous `step` "
                                  "detected. Optimizer gradient normalizing factor will not "
                                  "change w.r.t new batch_size when update_on_kvstore=True and "
                                  "when distributed kvstore is used.")
        self._optimizer.rescale_grad = scale

    def step(self, batch_size, ignore_stale_grad=False):
        """Reduce gradients across contexts and update every Parameter, gradients scaled by
        ``1/batch_size``. Raises UserWarning for a Parameter whose gradient backward did not
        refresh since the last step (unless `ignore_stale_grad`, which skips it)."""
        self._check_and_rescale_grad(self._scale / batch_size)
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Reduce (sum) the gradients across contexts; with ``update`` this is ``step``."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError("allreduce_grads() when parameters are updated on kvstore is "
                                 "not supported. Try setting `update_on_kvstore` to False when "
                                 "creating trainer.")
        self._allreduce_grads()

    def _allreduce_grads(self):
        if not self._kvstore:
            return
        updates, sums = [], []
        for i, p in enumerate(self._params):
            if p.grad_req == "null":
                continue
            grads = p.list_grad()
            if grads[0].stype != "default":
                self._kvstore.push(i, grads, priority=-i)
                if p._stype == "default":
                    dst = p.list_data() if self._update_on_kvstore else p.list_grad()
                    self._kvstore.pull(i, dst, priority=-i, ignore_sparse=self._distributed)
            elif self._update_on_kvstore:
                updates.append((i, grads, p.list_data(), -i))
            else:
                sums.append((i, grads, -i))
        if updates:
            self._kvstore._pushpull_updates(updates)
        if sums:
            self._kvstore._pushpull_sums(sums)

    def update(self, batch_size, ignore_stale_grad=False):
        """Apply the optimizer (after ``allreduce_grads``)."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError("update() when parameters are updated on kvstore is not "
                                 "supported. Try setting `update_on_kvstore` to False when "
                                 "creating trainer.")
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad=False):
        scaler = getattr(self, "_amp_loss_scaler", None)
        if scaler is not None and scaler.has_overflow(self._params):
            return
        if not ignore_stale_grad:
            # every parameter is checked before any is touched: a failed step leaves all
            # gradients fresh (MXNet marked the ones before the stale one as consumed)
            self._check_fresh_grads()
        updates = [[] for _ in self._updaters]
        for i, p in enumerate(self._params):
            if p.grad_req == "null":
                continue
            if self._kvstore and self._update_on_kvstore:
                continue
            for upd, arr, grad in zip(updates, p.list_data(), p.list_grad()):
                if not ignore_stale_grad or arr._fresh_grad:
                    upd.append((i, grad, arr))
                    arr._fresh_grad = False
        if not (self._kvstore and self._update_on_kvstore):
            for updater, upd in zip(self._updaters, updates):
                if upd:
                    idx, grads, weights = zip(*upd)
                    updater(list(idx), list(grads), list(weights))

    def _check_fresh_grads(self):
        for p in self._params:
            if p.grad_req == "null":
                continue
            for data in p._check_and_get(p._data, list):
                if not data._fresh_grad:
                    raise UserWarning(
                        f"Gradient of Parameter `{p.name}` on context {data.context} has not "
                        "been updated by backward since last `step`. This could mean a bug "
                        "in your model that made it only use a subset of the Parameters "
                        "(Blocks) for this iteration. If you are intentionally only using a "
                        "subset, call step with ignore_stale_grad=True to suppress this "
                        "warning and skip updating of Parameters with stale gradient")

    def save_states(self, fname):
        """Save the optimizer's states (momentum...) to `fname`."""
        if self._optimizer is None:
            raise AssertionError("Trainer.save_states: no optimizer")
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._update_on_kvstore:
            if self._params_to_init:
                raise AssertionError("Cannot save trainer states when some parameters are not "
                                     "yet initialized in kvstore.")
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            atomic_write.write_bytes(fname, [self._updaters[0].get_states(dump_optimizer=True)])

    def load_states(self, fname):
        """Load optimizer states written by ``save_states``."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            with open(fname, "rb") as f:
                states = f.read()
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = {i: p for i, p in enumerate(self._params)}
