"""SequentialModule: modules chained output-to-input (MXNet 1.9.1's ``mx.mod.SequentialModule``)."""
import copy
import logging

from .base_module import BaseModule, _UNIFORM_001

__all__ = ["SequentialModule"]


class SequentialModule(BaseModule):
    """A chain of modules: each module's outputs are the next one's data.

    ``add(module, take_labels=True)`` gives the module the labels (and makes it update the
    metric); ``auto_wiring=True`` renames the previous outputs to the module's data names.
    """

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {getattr(SequentialModule, x) for x in dir(SequentialModule)
                           if x.startswith("META_")}

    def add(self, module, **kwargs):
        """Append a module; returns self so that calls chain."""
        self._modules.append(module)
        for key in kwargs:
            if key not in self._meta_keys:
                raise AssertionError(f'Unknown meta "{key}", a typo?')
        self._metas.append(kwargs)
        # adding a module invalidates the binding
        self.binded = False
        self.params_initialized = False
        self.optimizer_initialized = False
        return self

    def _need(self, what, optimizer=False):
        if not self.binded:
            raise AssertionError(f"SequentialModule.{what}: call bind() first")
        if not self.params_initialized:
            raise AssertionError(f"SequentialModule.{what}: call init_params() first")
        if optimizer and not self.optimizer_initialized:
            raise AssertionError(f"SequentialModule.{what}: call init_optimizer() first")

    @property
    def data_names(self):
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        if not self.binded:
            raise AssertionError("SequentialModule: call bind() first")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        if not self.binded:
            raise AssertionError("SequentialModule: call bind() first")
        return self._label_shapes

    @property
    def output_shapes(self):
        if not self.binded:
            raise AssertionError("SequentialModule: call bind() first")
        return self._modules[-1].output_shapes

    def get_params(self):
        if not (self.binded and self.params_initialized):
            raise AssertionError("SequentialModule.get_params: bind and init_params first")
        arg_params, aux_params = {}, {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer=_UNIFORM_001, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        if not self.binded:
            raise AssertionError("call bind before initializing the parameters")
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=allow_extra)

        def _check_name(known, new_names, i):
            for name in new_names:
                if name in known:
                    j = known[name]
                    raise AssertionError(
                        f'Duplicated parameter names: name "{name}" in layer {i} '
                        f"({type(self._modules[i])}) is already used in layer {j} "
                        f"({type(self._modules[j])}).")
                known[name] = i

        arg_names, aux_names = {}, {}
        for i, module in enumerate(self._modules):
            arg, aux = module.get_params()
            _check_name(arg_names, arg.keys(), i)
            _check_name(aux_names, aux.keys(), i)
        self.params_initialized = True

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and for_training is not True:
            raise AssertionError("inputs_need_grad needs for_training=True")
        if shared_module is not None:
            raise AssertionError("Shared module is not supported")
        if not self._modules:
            raise AssertionError("Attempting to bind an empty SequentialModule")
        self.binded = True
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._label_shapes = label_shapes
        my_data_shapes = data_shapes
        anybody_needs_label = False
        for i, module in enumerate(self._modules):
            meta = self._metas[i]
            if meta.get(SequentialModule.META_TAKE_LABELS):
                my_label_shapes = label_shapes
                anybody_needs_label = True
            else:
                my_label_shapes = None
            my_inputs_need_grad = bool(inputs_need_grad or (for_training and i > 0))
            if meta.get(SequentialModule.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(my_data_shapes):
                    raise AssertionError(f"auto_wiring: module {i} takes {len(names)} inputs, "
                                         f"the previous module gives {len(my_data_shapes)}")
                my_data_shapes = [(new, shape) for new, (_, shape) in zip(names, my_data_shapes)]
            module.bind(data_shapes=my_data_shapes, label_shapes=my_label_shapes,
                        for_training=for_training, inputs_need_grad=my_inputs_need_grad,
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            my_data_shapes = module.output_shapes
        if not anybody_needs_label:
            self._label_shapes = None

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        self._need("init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None):
        self._need("forward")
        data_batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(data_batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            data_batch.data = module.get_outputs()
            if hasattr(data_batch, "provide_data"):
                names = [x[0] for x in module.output_shapes]
                if len(names) != len(data_batch.data):
                    raise AssertionError("output names and outputs differ in number")
                data_batch.provide_data = [(n, x.shape) for n, x in zip(names, data_batch.data)]

    def backward(self, out_grads=None):
        self._need("backward")
        for i in range(len(self._modules) - 1, -1, -1):
            module = self._modules[i]
            module.backward(out_grads=out_grads)
            if i == 0:
                break
            out_grads = module.get_input_grads()

    def update(self):
        self._need("update", optimizer=True)
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        self._need("get_outputs")
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._need("get_input_grads")
        if not self.inputs_need_grad:
            raise AssertionError("get_input_grads: bind with inputs_need_grad=True")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._need("update_metric")
        for meta, module in zip(self._metas, self._modules):
            if meta.get(SequentialModule.META_TAKE_LABELS):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        if not self.binded:
            raise AssertionError("SequentialModule: call bind() first")
        for module in self._modules:
            module.install_monitor(mon)
