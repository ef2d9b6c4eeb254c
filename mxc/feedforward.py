"""``mx.model.FeedForward``: MXNet's deprecated scikit-learn-style estimator, kept for old code.

Training runs on :class:`mxc.module.Module` (a :class:`BucketingModule` when the symbol is a
generator ``sym_gen(bucket_key)``) with the loop of MXNet 1.9.1's ``_train_multi_device``:
``epoch_size`` batches per epoch (the iterator is reset only when it runs out), batch callbacks
numbered from 1, parameters copied back at the end of an epoch, evaluation with the training
executors. ``predict``/``score`` use a separate executor bound without gradients.
"""
import logging
import time
import warnings

import numpy as np

from . import io
from . import metric
from . import ndarray as nd
from . import symbol as sym
from .base import mx_real_t
from .callback import LogValidationMetricsCallback
from .context import Context, cpu
from .initializer import Uniform
from .io import DataDesc
from .model import BatchEndParam, _multiple_callbacks, load_checkpoint, save_checkpoint
from .module import BucketingModule, Module

__all__ = ["FeedForward"]


def _check_arguments(symbol):
    """Argument and auxiliary-state names must be unique (MXNet refuses such graphs too)."""
    for kind, names in (("argument", symbol.list_arguments()),
                        ("auxiliary state", symbol.list_auxiliary_states())):
        seen = set()
        for name in names:
            if name in seen:
                raise ValueError(f"Find duplicated {kind} name \"{name}\", please make the weight "
                                 f"name non-duplicated(using name arguments), arguments are "
                                 f"{names}")
            seen.add(name)


class FeedForward:
    """A model from a symbol (or a ``sym_gen(bucket_key)``) trained with `optimizer` (a name,
    built with `kwargs` as its parameters, or an Optimizer) for epochs
    [`begin_epoch`, `num_epoch`). numpy inputs are cut into batches of `numpy_batch_size`."""

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
                 initializer=Uniform(0.01), numpy_batch_size=128, arg_params=None,
                 aux_params=None, allow_extra_params=False, begin_epoch=0, **kwargs):
        warnings.warn("mxnet.model.FeedForward has been deprecated. Please use mxnet.mod.Module "
                      "instead.", DeprecationWarning, stacklevel=2)
        if isinstance(symbol, sym.Symbol):
            self.symbol, self.sym_gen = symbol, None
        elif callable(symbol):
            self.symbol, self.sym_gen = None, symbol
        else:
            raise TypeError(f"FeedForward: symbol must be a Symbol or a callable sym_gen, got "
                            f"{type(symbol).__name__}")
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.argument_checked = False
        if self.sym_gen is None:
            self._check_arguments()
        if ctx is None:
            ctx = [cpu()]
        elif isinstance(ctx, Context):
            ctx = [ctx]
        self.ctx = ctx
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.kwargs = kwargs.copy()
        self.optimizer = optimizer
        self.initializer = initializer
        self.numpy_batch_size = numpy_batch_size
        self._pred_exec = None
        self.begin_epoch = begin_epoch

    def _check_arguments(self):
        """Check the symbol once; with allow_extra_params drop parameters it does not use."""
        if self.argument_checked:
            return
        self.argument_checked = True
        _check_arguments(self.symbol)
        if self.allow_extra_params:
            if self.arg_params:
                names = set(self.symbol.list_arguments())
                self.arg_params = {k: v for k, v in self.arg_params.items() if k in names}
            if self.aux_params:
                names = set(self.symbol.list_auxiliary_states())
                self.aux_params = {k: v for k, v in self.aux_params.items() if k in names}

    @staticmethod
    def _is_data_arg(name):
        return name.endswith("data") or name.endswith("label")

    def _init_params(self, inputs, overwrite=False):
        """Create every parameter for the input descriptions: the given arg/aux params (unless
        `overwrite`), the initializer for the rest. Returns (arg, param, aux) names."""
        inputs = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in inputs]
        input_shapes = {d.name: d.shape for d in inputs}
        arg_shapes, _, aux_shapes = self.symbol.infer_shape(**input_shapes)
        if arg_shapes is None:
            raise ValueError(f"FeedForward: cannot infer the parameter shapes from {input_shapes}")
        arg_dtypes, _, aux_dtypes = self.symbol.infer_type(**{d.name: d.dtype for d in inputs})
        arg_names = self.symbol.list_arguments()
        param_names = [n for n in arg_names if n not in input_shapes]
        aux_names = self.symbol.list_auxiliary_states()
        arg_params = {n: nd.zeros(shape=s, dtype=t)
                      for n, s, t in zip(arg_names, arg_shapes, arg_dtypes) if n in param_names}
        aux_params = {n: nd.zeros(shape=s, dtype=t)
                      for n, s, t in zip(aux_names, aux_shapes, aux_dtypes)}
        for given, fresh in ((self.arg_params, arg_params), (self.aux_params, aux_params)):
            for k, v in fresh.items():
                if given and k in given and not overwrite:
                    v[:] = given[k][:]
                else:
                    self.initializer(k, v)
        self.arg_params, self.aux_params = arg_params, aux_params
        return arg_names, list(param_names), aux_names

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_pred_exec"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    # ---- data ----
    def _init_iter(self, X, y, is_train):
        """A DataIter for X: as is, or an NDArrayIter over numpy/NDArray data and 1-D labels."""
        if isinstance(X, (np.ndarray, nd.NDArray)):
            if y is None:
                if is_train:
                    raise ValueError("y must be specified when X is numpy.ndarray")
                y = np.zeros(X.shape[0])
            if not isinstance(y, (np.ndarray, nd.NDArray)):
                raise TypeError("y must be ndarray when X is numpy.ndarray")
            if X.shape[0] != y.shape[0]:
                raise ValueError("The numbers of data points and labels not equal")
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.flatten()
            if y.ndim != 1:
                raise ValueError("Label must be 1D or 2D (with 2nd dimension being 1)")
            batch_size = min(X.shape[0], self.numpy_batch_size)
            if is_train:
                return io.NDArrayIter(X, y, batch_size, shuffle=True,
                                      last_batch_handle="roll_over")
            return io.NDArrayIter(X, y, batch_size, shuffle=False)
        if not isinstance(X, io.DataIter):
            raise TypeError("X must be DataIter, NDArray or numpy.ndarray")
        return X

    def _init_eval_iter(self, eval_data):
        if eval_data is None:
            return None
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            data, label = eval_data
            if data is None:
                raise ValueError("Eval data is NONE")
            if label is None and isinstance(data, io.DataIter):
                return data
            data = np.array(data) if isinstance(data, list) else data
            label = np.array(label) if isinstance(label, list) else label
            return self._init_iter(data, label, is_train=True)
        if not isinstance(eval_data, io.DataIter):
            raise TypeError("Eval data must be DataIter, or NDArray/numpy.ndarray/list pair "
                            "(i.e. tuple/list of length 2)")
        return eval_data

    # ---- inference ----
    def _init_predictor(self, input_shapes, type_dict=None):
        """Bind (or keep) the gradient-free executor for these input shapes."""
        shapes = {name: arr.shape for name, arr in self.arg_params.items()}
        shapes.update(dict(input_shapes))
        if self._pred_exec is not None:
            arg_shapes, _, _ = self.symbol.infer_shape(**shapes)
            if arg_shapes == [x.shape for x in self._pred_exec.arg_arrays]:
                return
        pred_exec = self.symbol.simple_bind(self.ctx[0], grad_req="null", type_dict=type_dict,
                                            **shapes)
        pred_exec.copy_params_from(self.arg_params, self.aux_params)
        _check_arguments(self.symbol)
        self._pred_exec = pred_exec

    def _prepare_predictor(self, X):
        type_dict = {k: v.dtype for k, v in self.arg_params.items()}
        for d in X.provide_data:
            if isinstance(d, DataDesc):
                type_dict[d.name] = d.dtype
            else:
                type_dict[d[0]] = mx_real_t
        self._init_predictor(X.provide_data, type_dict)
        return [self._pred_exec.arg_dict[d[0]] for d in X.provide_data]

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """Outputs for X (numpy; a list when the symbol has several outputs), padding removed;
        with `return_data`, also (data, label)."""
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        data_arrays = self._prepare_predictor(X)
        batch_size = X.batch_size
        outputs = [[] for _ in self._pred_exec.outputs]
        data_list = [[] for _ in X.provide_data]
        label_list = [[] for _ in X.provide_label]
        for i, batch in enumerate(X):
            for src, dst in zip(batch.data, data_arrays):
                src.copyto(dst)
            self._pred_exec.forward(is_train=False)
            real = batch_size - batch.pad
            for o_list, o in zip(outputs, self._pred_exec.outputs):
                o_list.append(o[0:real].asnumpy())
            if return_data:
                for j, x in enumerate(batch.data):
                    data_list[j].append(x[0:real].asnumpy())
                for j, x in enumerate(batch.label):
                    label_list[j].append(x[0:real].asnumpy())
            if num_batch is not None and i + 1 == num_batch:
                break
        outputs = [np.concatenate(x) for x in outputs]
        outputs = outputs[0] if len(outputs) == 1 else outputs
        if not return_data:
            return outputs
        data = [np.concatenate(x) for x in data_list]
        label = [np.concatenate(x) for x in label_list]
        return (outputs, data[0] if len(data) == 1 else data,
                label[0] if len(label) == 1 else label)

    def score(self, X, eval_metric="acc", num_batch=None, batch_end_callback=None, reset=True):
        """The value of `eval_metric` over X (at most `num_batch` batches)."""
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        data_arrays = self._prepare_predictor(X)
        for i, batch in enumerate(X):
            if num_batch is not None and i == num_batch:
                break
            for src, dst in zip(batch.data, data_arrays):
                src.copyto(dst)
            self._pred_exec.forward(is_train=False)
            eval_metric.update(batch.label, self._pred_exec.outputs)
            if batch_end_callback is not None:
                _multiple_callbacks(batch_end_callback, BatchEndParam(
                    epoch=0, nbatch=i, eval_metric=eval_metric, locals=locals()))
        return eval_metric.get()[1]

    # ---- training ----
    def _make_module(self, data, work_load_list, logger):
        data_names = [d[0] for d in data.provide_data]
        label_names = [d[0] for d in data.provide_label]
        if self.sym_gen is None:
            return Module(self.symbol, data_names=data_names, label_names=label_names,
                          logger=logger, context=self.ctx, work_load_list=work_load_list)
        gen = self.sym_gen
        return BucketingModule(lambda key: (gen(key), data_names, label_names),
                               default_bucket_key=data.default_bucket_key, logger=logger,
                               context=self.ctx, work_load_list=work_load_list)

    def fit(self, X, y=None, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", logger=None, work_load_list=None,
            monitor=None, eval_end_callback=LogValidationMetricsCallback(),
            eval_batch_end_callback=None):
        """Train on X (a DataIter, or numpy/NDArray data with labels y)."""
        data = self._init_iter(X, y, is_train=True)
        eval_data = self._init_eval_iter(eval_data)
        if self.sym_gen:
            self.symbol = self.sym_gen(data.default_bucket_key)
            self._check_arguments()
        self._init_params(data.provide_data + data.provide_label)
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        logger = logger or logging
        mod = self._make_module(data, work_load_list, logger)
        mod.bind(data_shapes=data.provide_data, label_shapes=data.provide_label,
                 for_training=True)
        mod.set_params(self.arg_params, self.aux_params)
        if monitor is not None:
            mod.install_monitor(monitor)
        if isinstance(self.optimizer, str):
            mod.init_optimizer(kvstore=kvstore, optimizer=self.optimizer,
                               optimizer_params=self.kwargs)
        else:
            mod.init_optimizer(kvstore=kvstore, optimizer=self.optimizer)
        self._train(mod, data, eval_data, eval_metric, epoch_end_callback, batch_end_callback,
                    logger, monitor, eval_end_callback, eval_batch_end_callback)

    def _train(self, mod, train_data, eval_data, eval_metric, epoch_end_callback,
               batch_end_callback, logger, monitor, eval_end_callback, eval_batch_end_callback):
        # MXNet 1.9.1's _train_multi_device loop, over a Module
        train_data.reset()
        for epoch in range(self.begin_epoch, self.num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            while True:
                do_reset = True
                for data_batch in train_data:
                    if monitor is not None:
                        monitor.tic()
                    mod.forward_backward(data_batch)
                    mod.update()
                    if monitor is not None:
                        monitor.toc_print()
                    mod.update_metric(eval_metric, data_batch.label)
                    nbatch += 1
                    if batch_end_callback is not None:
                        _multiple_callbacks(batch_end_callback, BatchEndParam(
                            epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                            locals=locals()))
                    if self.epoch_size is not None and nbatch >= self.epoch_size:
                        do_reset = False
                        break
                if do_reset:
                    logger.info("Epoch[%d] Resetting Data Iterator", epoch)
                    train_data.reset()
                if self.epoch_size is None or nbatch >= self.epoch_size:
                    break
            logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            if epoch_end_callback or epoch + 1 == self.num_epoch:
                arg, aux = mod.get_params()
                for given, new in ((self.arg_params, arg), (self.aux_params, aux)):
                    for k, v in new.items():
                        v.copyto(given[k])
            _multiple_callbacks(epoch_end_callback, epoch, self.symbol, self.arg_params,
                                self.aux_params)
            if eval_data:
                eval_metric.reset()
                eval_data.reset()
                total = 0
                for i, eval_batch in enumerate(eval_data):
                    mod.forward(eval_batch, is_train=False)
                    mod.update_metric(eval_metric, eval_batch.label)
                    if eval_batch_end_callback is not None:
                        _multiple_callbacks(eval_batch_end_callback, BatchEndParam(
                            epoch=epoch, nbatch=i, eval_metric=eval_metric, locals=locals()))
                    total += 1
                if eval_end_callback is not None:
                    _multiple_callbacks(eval_end_callback, BatchEndParam(
                        epoch=epoch, nbatch=total, eval_metric=eval_metric, locals=locals()))
                eval_data.reset()
        self._pred_exec = None  # parameters changed: rebind for predict

    # ---- files ----
    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """Checkpoint to ``prefix-symbol.json`` and ``prefix-%04d.params`` (epoch defaults to
        num_epoch)."""
        if epoch is None:
            epoch = self.num_epoch
        if epoch is None:
            raise ValueError("FeedForward.save: give epoch (num_epoch is not set)")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params,
                        remove_amp_cast=remove_amp_cast)

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """A FeedForward from a checkpoint, continuing from `epoch`."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
               initializer=Uniform(0.01), eval_data=None, eval_metric="acc",
               epoch_end_callback=None, batch_end_callback=None, kvstore="local", logger=None,
               work_load_list=None, eval_end_callback=LogValidationMetricsCallback(),
               eval_batch_end_callback=None, **kwargs):
        """Build a FeedForward and fit it."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                  kvstore=kvstore, logger=logger, work_load_list=work_load_list,
                  eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model
