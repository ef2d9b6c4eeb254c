"""``SVRGModule``: a Module trained with stochastic variance reduced gradients.

Every `update_freq` epochs ``update_full_grads`` copies the weights into an auxiliary module
(the snapshot w~) and averages the gradient at w~ over the whole training set (mu). Each batch
then runs forward/backward on both modules and updates with ``g(w) - g(w~) + mu``.
"""
import logging

from ... import context as _context
from ... import ndarray as nd
from ... import optimizer as opt
from ...model import _create_kvstore
from ...module import Module
from .svrg_optimizer import _SVRGOptimizer


class SVRGModule(Module):
    """A Module with SVRG updates; `update_freq` (a positive int) is the number of epochs
    between full-gradient snapshots. The other arguments are Module's."""

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=_context.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None, update_freq=None):
        super().__init__(symbol, data_names=data_names, label_names=label_names, logger=logger,
                         context=context, work_load_list=work_load_list,
                         fixed_param_names=fixed_param_names, state_names=state_names,
                         group2ctxs=group2ctxs, compression_params=compression_params)
        if not isinstance(update_freq, int) or isinstance(update_freq, bool):
            raise TypeError("update_freq in SVRGModule must be an integer to represent the "
                            "frequency for calculating full gradients")
        if update_freq <= 0:
            raise ValueError("update_freq in SVRGModule must be a positive integer to represent "
                             "the frequency for calculating full gradients")
        self.update_freq = update_freq
        # the snapshot module: same graph, weights of the last full-gradient pass
        self._mod_aux = Module(symbol, data_names, label_names, logger, context, work_load_list,
                               fixed_param_names, state_names, group2ctxs, compression_params)
        self._param_dict = None  # per device: parameter name -> full gradient at the snapshot
        self._ctx_len = len(self._context)

    def _reset_bind(self):
        super()._reset_bind()
        self._mod_aux._reset_bind()

    def reshape(self, data_shapes, label_shapes=None):
        super().reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                     shared_module, grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                               force_rebind, shared_module, grad_req)

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Wrap `optimizer` in an ``_SVRGOptimizer``; with a kvstore, also create the
        ``<name>_full`` keys that sum the full gradients."""
        arg_params = self.get_params()[0]
        self._param_dict = [{name: nd.zeros(shape=value.shape, ctx=self._context[i])
                             for name, value in arg_params.items()}
                            for i in range(self._ctx_len)]
        svrg_optimizer = self._create_optimizer(_SVRGOptimizer.__name__, default_opt=optimizer,
                                                kvstore=kvstore,
                                                optimizer_params=optimizer_params)
        super().init_optimizer(kvstore=kvstore, optimizer=svrg_optimizer,
                               optimizer_params=optimizer_params, force_init=force_init)
        if self._kvstore:
            for idx, param_on_devs in enumerate(self._exec_group.param_arrays):
                name = self._exec_group.param_names[idx]
                self._kvstore.init(name + "_full", nd.zeros(shape=self._arg_params[name].shape))
                if self._update_on_kvstore:
                    self._kvstore.pull(name + "_full", param_on_devs, priority=-idx)

    def _create_optimizer(self, optimizer, default_opt, kvstore, optimizer_params):
        """An `optimizer` (the _SVRGOptimizer name) around `default_opt`, with the parameter
        index map Module uses plus one index per ``<name>_full`` key."""
        batch_size = self._exec_group.batch_size
        kv_store, update_on_kvstore = _create_kvstore(kvstore, self._ctx_len, self._arg_params)
        if kv_store and "dist" in kv_store.type and "_sync" in kv_store.type:
            batch_size *= kv_store.num_workers
        idx2name = {}
        if update_on_kvstore:
            idx2name.update(enumerate(self._exec_group.param_names))
        else:
            for k in range(self._ctx_len):
                idx2name.update({i * self._ctx_len + k: n
                                 for i, n in enumerate(self._exec_group.param_names)})
        for name in self._param_dict[0]:
            idx2name[max(idx2name) + 1] = name + "_full"
        params = dict(optimizer_params)
        params.setdefault("rescale_grad", 1.0 / batch_size)
        params["default_optimizer"] = default_opt
        params["param_idx2name"] = idx2name
        return opt.create(optimizer, **params)

    def forward(self, data_batch, is_train=None):
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self):
        """Replace each gradient with its SVRG estimate, then update as Module does."""
        self._update_svrg_gradients()
        super().update()

    def update_full_grads(self, train_data):
        """Snapshot the weights into the auxiliary module and average its gradient over every
        batch of `train_data` (padding of the last batch excluded)."""
        param_names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        train_data.reset()
        # as MXNet 1.9.1, the sums start from the previous snapshot's average (it is not reset
        # without a kvstore), so mu = mean gradient + old mu / nbatch: kept for MXNet's numbers
        nbatch = 0
        padding = 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for ctx in range(self._ctx_len):
                for index, name in enumerate(param_names):
                    grads = self._mod_aux._exec_group.grad_arrays[index][ctx]
                    self._param_dict[ctx][name] += grads
            padding = batch.pad
        true_num_batch = nbatch - padding / train_data.batch_size
        for name in param_names:
            grad_list = []
            for i in range(self._ctx_len):
                self._param_dict[i][name] /= true_num_batch
                grad_list.append(self._param_dict[i][name])
            if self._kvstore:
                self._accumulate_kvstore(name, grad_list)

    def _accumulate_kvstore(self, key, value):
        """Sum the full gradients of `key` over devices and workers, then share them out."""
        self._kvstore.push(key + "_full", value)
        self._kvstore._barrier()
        self._kvstore.pull(key + "_full", value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key, value):
        for i in range(self._ctx_len):
            self._param_dict[i][key] = value[i] / self._ctx_len

    def _svrg_grads_update_rule(self, g_curr_batch_curr_weight, g_curr_batch_special_weight,
                                g_special_weight_all_batch):
        """g(w) - g(w~) + mu, in place in the first list."""
        for index, grad in enumerate(g_curr_batch_curr_weight):
            grad -= g_curr_batch_special_weight[index]
            grad += g_special_weight_all_batch[index]
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self):
        param_names = self._exec_group.param_names
        for ctx in range(self._ctx_len):
            for index, name in enumerate(param_names):
                g_curr = self._exec_group.grad_arrays[index][ctx]
                g_snapshot = self._mod_aux._exec_group.grad_arrays[index][ctx]
                mu = self._param_dict[ctx][name]
                self._exec_group.grad_arrays[index][ctx] = self._svrg_grads_update_rule(
                    g_curr, g_snapshot, mu)

    def _begin_fit_epoch(self, epoch, train_data):
        # Module.fit's hook: refresh the snapshot and full gradient every update_freq epochs
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)
        train_data.reset()

    def prepare(self, data_batch, sparse_row_id_fn=None):
        super().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
