"""Module: a Symbol bound to executors on one or more devices, with parameters, an optimizer
and checkpoints (MXNet 1.9.1's ``mx.mod.Module``)."""
import logging
import warnings

from .. import context as ctx
from .. import ndarray as nd
from .._core import atomic_write
from ..io import DataDesc
from ..model import (_create_kvstore, _initialize_kvstore, _update_params,
                     _update_params_on_kvstore, load_checkpoint)
from .base_module import BaseModule, _UNIFORM_001, _check_input_names, _parse_data_desc
from .executor_group import DataParallelExecutorGroup

__all__ = ["Module"]


def _opt():
    from .. import optimizer
    return optimizer


class Module(BaseModule):
    """A module over a Symbol.

    Parameters
    ----------
    symbol : Symbol
    data_names : list of str, default ('data',)
    label_names : list of str, default ('softmax_label',)
    logger : logging.Logger
    context : Context or list of Context, default cpu()
        One executor per context; each runs a slice of the batch.
    work_load_list : list of number, optional
        Relative share of the batch per context.
    fixed_param_names : list of str, optional
        Parameters that are not updated (no gradient is computed for them).
    state_names : list of str, optional
        Inputs that are states (set with ``set_states``), neither data nor parameters.
    group2ctxs : dict or list of dict, optional
        ``ctx_group`` attribute to context, per executor.
    compression_params : dict, optional
        Gradient compression for the kvstore.
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=ctx.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        super().__init__(logger=logger)
        if isinstance(context, ctx.Context):
            context = [context]
        self._context = context
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        if len(work_load_list) != len(self._context):
            raise AssertionError(f"work_load_list has {len(work_load_list)} entries for "
                                 f"{len(self._context)} contexts")
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._symbol = symbol
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)
        arg_names = symbol.list_arguments()
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in arg_names if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()
        self._arg_params = None
        self._aux_params = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module from a checkpoint (``prefix-symbol.json``, ``prefix-%04d.params`` and, with
        `load_optimizer_states`, ``prefix-%04d.states`` applied at ``init_optimizer``); `kwargs`
        go to the Module constructor. Bind it before use."""
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = "%s-%04d.states" % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and optionally
        ``prefix-%04d.states``."""
        self._symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
        param_name = "%s-%04d.params" % (prefix, epoch)
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = "%s-%04d.states" % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # ---- names and shapes ---------------------------------------------------------------------
    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        self._need_bind("data_shapes")
        return self._data_shapes

    @property
    def label_shapes(self):
        self._need_bind("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        self._need_bind("output_shapes")
        return self._exec_group.get_output_shapes()

    def _need_bind(self, what):
        if not self.binded:
            raise AssertionError(f"Module.{what}: call bind() first")

    def _need(self, what, optimizer=False):
        if not self.binded:
            raise AssertionError(f"Module.{what}: call bind() first")
        if not self.params_initialized:
            raise AssertionError(f"Module.{what}: call init_params() first")
        if optimizer and not self.optimizer_initialized:
            raise AssertionError(f"Module.{what}: call init_optimizer() first")

    # ---- parameters ---------------------------------------------------------------------------
    def get_params(self):
        """(arg_params, aux_params): dicts of name to NDArray (copies on the CPU)."""
        if not self.params_initialized:
            raise AssertionError("Module.get_params: parameters are not initialized")
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=_UNIFORM_001, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the parameters: from `arg_params`/`aux_params` where given, else with
        `initializer` (a missing one is an error unless `allow_missing`)."""
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "init_params call ignored.", stacklevel=2)
            return
        if not self.binded:
            raise AssertionError("call bind before initializing the parameters")

        def _impl(name, arr, cache):
            if cache is not None:
                if name in cache:
                    src = cache[name]
                    if src is not arr:
                        if src.shape != arr.shape:
                            raise ValueError(f"init_params: {name} has shape {src.shape} in "
                                             f"the given parameters, the module needs "
                                             f"{arr.shape}")
                        src.copyto(arr)
                    return
                if not allow_missing:
                    raise RuntimeError(f"{name} is not presented")
                if initializer is not None:
                    initializer(name, arr)
            else:
                initializer(name, arr)

        try:
            from ..initializer import InitDesc
        except ImportError:  # only while mx.init is missing: plain names
            def InitDesc(name, attrs=None):  # noqa: N802
                return name
        attrs = self._symbol.attr_dict()
        for name, arr in sorted(self._arg_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Set the parameters from dicts of name to NDArray."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    # ---- binding ------------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Allocate the executors for the given input shapes (DataDesc or (name, shape))."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        if not for_training and inputs_need_grad:
            raise AssertionError("inputs_need_grad=True needs for_training=True")
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        if shared_module is not None:
            if not (isinstance(shared_module, Module) and shared_module.binded and
                    shared_module.params_initialized):
                raise AssertionError("shared_module must be a bound Module with initialized "
                                     "parameters")
            shared_group = shared_module._exec_group
            if len(shared_group.execs) < len(self._context):
                raise AssertionError("shared_module has fewer executors than this module's "
                                     "contexts")
        else:
            shared_group = None
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad,
            shared_group, logger=self.logger, fixed_param_names=self._fixed_param_names,
            grad_req=grad_req, group2ctxs=self._group2ctxs, state_names=self._state_names)
        self._total_exec_bytes = self._exec_group._total_exec_bytes
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            # parameters loaded before binding (Module.load) or kept across a rebind
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            if self._arg_params is not None or self._aux_params is not None:
                raise AssertionError("bind: parameters exist but are not initialized")
            self._arg_params = {
                name: nd.zeros(x[0].shape, dtype=x[0].dtype, stype=x[0].stype)
                for name, x in zip(self._param_names, self._exec_group.param_arrays)}
            self._aux_params = {
                name: nd.zeros(x[0].shape, dtype=x[0].dtype)
                for name, x in zip(self._aux_names, self._exec_group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes, label_shapes=None):
        """Re-bind the executors for new input shapes (the parameters are kept)."""
        self._need_bind("reshape")
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # ---- optimizer ----------------------------------------------------------------------------
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Create the optimizer (a name with `optimizer_params`, or an Optimizer) and the kvstore.
        A named optimizer gets ``rescale_grad = 1 / batch_size`` unless given."""
        self._need("init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        opt = _opt()
        kvstore, update_on_kvstore = _create_kvstore(kvstore, len(self._context),
                                                     self._arg_params)
        batch_size = self._exec_group.batch_size
        if kvstore and kvstore.is_distributed and not kvstore.is_async:
            batch_size *= kvstore.num_workers   # the store sums every worker's gradients
        rescale_grad = 1.0 / batch_size
        idx2name = {}
        if update_on_kvstore:
            idx2name.update(enumerate(self._exec_group.param_names))
        else:
            n = len(self._context)
            for k in range(n):
                idx2name.update({i * n + k: name
                                 for i, name in enumerate(self._exec_group.param_names)})
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            if "rescale_grad" not in optimizer_params:
                optimizer_params["rescale_grad"] = rescale_grad
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name,
                                   **optimizer_params)
        else:
            if not isinstance(optimizer, opt.Optimizer):
                raise TypeError(f"optimizer must be a name or an mx.optimizer.Optimizer, got "
                                f"{type(optimizer).__name__}")
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn("Optimizer created manually outside Module but rescale_grad is not "
                              "normalized to 1.0/batch_size/num_workers (%s vs. %s). Is this "
                              "intended?" % (optimizer.rescale_grad, rescale_grad), stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        self._optimizer = optimizer
        self._kvstore = kvstore
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            _initialize_kvstore(kvstore=kvstore, param_arrays=self._exec_group.param_arrays,
                                arg_params=self._arg_params, param_names=self._param_names,
                                update_on_kvstore=update_on_kvstore)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Use `shared_module`'s optimizer, kvstore and updater (bucketing)."""
        if not shared_module.optimizer_initialized:
            raise AssertionError("borrow_optimizer: the shared module has no optimizer")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    # ---- computation --------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Run forward on a batch (a DataBatch or anything with ``.data``); a batch of another
        shape reshapes the executors first."""
        self._need("forward")
        curr = tuple(d.shape for d in self._data_shapes)
        if isinstance(data_batch, list):
            if not data_batch:
                raise AssertionError("Encountered empty data batch")
            new = []
            for i in range(len(data_batch[0].data)):
                shape = data_batch[0].data[i].shape
                for db in data_batch:
                    if db.data[i].shape != shape:
                        raise AssertionError("All data batches in a list need to have the same "
                                             "shape")
                new.append((len(data_batch) * shape[0],) + tuple(shape[1:]))
            new = tuple(new)
        else:
            new = tuple(tuple(d.shape) for d in data_batch.data)
        if curr != new:
            if getattr(data_batch, "provide_data", None):
                new_dshape = data_batch.provide_data
            else:
                new_dshape = [DataDesc(d.name, shape, d.dtype, d.layout)
                              for d, shape in zip(self._data_shapes, new)]
            if getattr(data_batch, "provide_label", None):
                new_lshape = data_batch.provide_label
            elif getattr(data_batch, "label", None) and self._label_shapes:
                new_lshape = [DataDesc(d.name, j.shape, d.dtype, d.layout)
                              for d, j in zip(self._label_shapes, data_batch.label)]
            else:
                new_lshape = None
            self.reshape(new_dshape, new_lshape)
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Backward from the last forward; `out_grads` are the head gradients (needed for
        outputs that are not losses)."""
        self._need("backward")
        self._exec_group.backward(out_grads=out_grads)

    def update(self):
        """Update the parameters with their gradients (through the kvstore when there is one)."""
        self._need("update", optimizer=True)
        self._params_dirty = True
        if self._update_on_kvstore:
            _update_params_on_kvstore(self._exec_group.param_arrays,
                                      self._exec_group.grad_arrays, self._kvstore,
                                      self._exec_group.param_names)
        else:
            _update_params(self._exec_group.param_arrays, self._exec_group.grad_arrays,
                           updater=self._updater, num_device=len(self._context),
                           kvstore=self._kvstore, param_names=self._exec_group.param_names)

    def get_outputs(self, merge_multi_context=True):
        self._need("get_outputs")
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._need("get_input_grads")
        if not self.inputs_need_grad:
            raise AssertionError("get_input_grads: bind with inputs_need_grad=True")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        self._need("get_states")
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        self._need("set_states")
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update `eval_metric` with the last outputs and `labels`."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def _sync_params_from_devices(self):
        self._exec_group.get_params(self._arg_params, self._aux_params)
        if self._kvstore and self._update_on_kvstore:
            for name, val in sorted(self._arg_params.items()):
                if val.stype == "row_sparse":
                    row_ids = nd.arange(0, val.shape[0], dtype="int64")
                    self._kvstore.row_sparse_pull(name, val, row_ids=row_ids)
        self._params_dirty = False

    def save_optimizer_states(self, fname):
        """Write the optimizer states (the updater's or the kvstore's) to `fname`."""
        if not self.optimizer_initialized:
            raise AssertionError("save_optimizer_states: call init_optimizer() first")
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            atomic_write.write_bytes(fname, [self._updater.get_states()])

    def load_optimizer_states(self, fname):
        """Read optimizer states written by ``save_optimizer_states``."""
        if not self.optimizer_initialized:
            raise AssertionError("load_optimizer_states: call init_optimizer() first")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, "rb") as f:
                self._updater.set_states(f.read())

    def install_monitor(self, mon):
        self._need_bind("install_monitor")
        self._exec_group.install_monitor(mon)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Pull the rows of row_sparse parameters the next batch needs (``sparse_row_id_fn``)."""
        self._need_bind("prepare")
        if sparse_row_id_fn is None:
            return
        if not self._kvstore or not self._update_on_kvstore:
            warnings.warn(UserWarning("Parameters are not updated in the KVStore. No need to "
                                      "call sparse_row_id_fn."))
            return
        row_ids = sparse_row_id_fn(data_batch)
        if not isinstance(row_ids, dict):
            raise AssertionError("Expected dict output from sparse_row_id_fn")
        for name, row_id in row_ids.items():
            idx = self._exec_group.param_names.index(name)
            val = self._exec_group.param_arrays[idx]
            if val[0].stype != "row_sparse":
                warnings.warn(UserWarning(f"{name}.stype is not 'row_sparse'. No need to perform "
                                          "row_sparse_pull."))
            else:
                self._kvstore.row_sparse_pull(name, val, row_ids=row_id, priority=-idx)
