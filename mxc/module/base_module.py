"""BaseModule: the interface every module implements, and the training/scoring/prediction loops
built on it (``fit``, ``score``, ``predict``, ``iter_predict``), as MXNet 1.9.1."""
import logging
import os
import sys
import time
import warnings

import numpy as np

from .. import ndarray, metric
from ..base import _as_list
from ..context import cpu
from ..io import DataBatch, DataDesc, DataIter
from ..model import BatchEndParam
from ..initializer import Uniform

__all__ = ["BaseModule"]


class _DefaultInitializer:
    """``Uniform(0.01)``, MXNet's default initializer, created on first use."""

    _impl = None

    def _get(self):
        if _DefaultInitializer._impl is None:
            _DefaultInitializer._impl = Uniform(0.01)
        return _DefaultInitializer._impl

    def __call__(self, *args, **kwargs):
        return self._get()(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._get(), name)

    def __repr__(self):
        return "Uniform(0.01)"


_UNIFORM_001 = _DefaultInitializer()


def _metric_module():
    return metric


def _check_input_names(symbol, names, typename, throw):
    """Every name in `names` must be an argument of `symbol` (error or warning)."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [a for a in args if not a.endswith(("_weight", "_bias", "_gamma", "_beta"))]
        msg = ("\033[91mYou created Module with Module(..., %s_names=%s) but input with name "
               "'%s' is not found in symbol.list_arguments(). Did you mean one of:\n\t%s\033[0m"
               % (typename, str(names), name, "\n\t".join(candidates)))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _check_names_match(data_names, data_shapes, name, throw):
    actual = [x[0] for x in data_shapes]
    if sorted(data_names) != sorted(actual):
        msg = "Data provided by %s_shapes don't match names specified by %s_names (%s vs. %s)" % (
            name, name, str(data_shapes), str(data_names))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _as_desc(x):
    if isinstance(x, DataDesc):
        return x
    if not isinstance(x, (list, tuple)) or len(x) < 2 or not isinstance(x[0], str):
        raise TypeError(f"a data/label shape must be a DataDesc or a (name, shape) pair, "
                        f"got {x!r}")
    shape = x[1]
    if not isinstance(shape, (list, tuple)) or not all(
            isinstance(d, (int, np.integer)) for d in shape):
        raise TypeError(f"the shape of {x[0]!r} must be a tuple of ints, got "
                        f"{type(shape).__name__}: {shape!r}")
    return DataDesc(x[0], tuple(int(d) for d in shape), *x[2:])


def _parse_data_desc(data_names, label_names, data_shapes, label_shapes):
    """DataDescs for the data and label shapes, checked against the module's names."""
    data_shapes = [_as_desc(x) for x in data_shapes]
    _check_names_match(data_names, data_shapes, "data", True)
    if label_shapes is not None:
        label_shapes = [_as_desc(x) for x in label_shapes]
        _check_names_match(label_names, label_shapes, "label", False)
    else:
        _check_names_match(label_names, [], "label", False)
    return data_shapes, label_shapes


def _progress_bar(train_data, epoch):
    """A tqdm bar for one epoch when stderr is a terminal (MXC_PROGRESS=0 turns it off)."""
    if os.environ.get("MXC_PROGRESS", "1") == "0" or os.environ.get("CI"):
        return None
    try:
        if not sys.stderr.isatty():
            return None
        from tqdm import tqdm
    except Exception:
        return None
    total = None
    try:
        num, bs = getattr(train_data, "num_data", None), getattr(train_data, "batch_size", 0)
        if num and bs:
            total = -(-int(num) // int(bs))
        elif hasattr(train_data, "__len__"):
            total = len(train_data)
    except Exception:
        total = None
    return tqdm(total=total, desc=f"Epoch[{epoch}]", unit="batch", leave=True,
                dynamic_ncols=True)


class BaseModule:
    """The module interface: a computation with parameters that can be bound to input shapes,
    initialized, run forward and backward and updated. Subclasses implement the abstract part;
    ``fit``, ``score``, ``predict`` and ``iter_predict`` are written on top of it.

    Parameters
    ----------
    logger : logging.Logger, default the logging module
    """

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # ---- high level ---------------------------------------------------------------------------
    def forward_backward(self, data_batch):
        """``forward(data_batch, is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def _require(self, what="score"):
        if not self.binded:
            raise AssertionError(f"{what}: call bind() first")
        if not self.params_initialized:
            raise AssertionError(f"{what}: call init_params() (or set_params) first")

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Run over `eval_data` and return the metric's ``get_name_value()``."""
        self._require("score")
        if reset:
            eval_data.reset()
        metric = _metric_module()
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            if isinstance(eval_batch, list):
                self.update_metric(eval_metric, [eb.label for eb in eval_batch], pre_sliced=True)
            else:
                self.update_metric(eval_metric, eval_batch.label)
            if batch_end_callback is not None:
                params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                       locals=locals())
                for cb in _as_list(batch_end_callback):
                    cb(params)
            actual_num_batch += 1
        if score_end_callback:
            params = BatchEndParam(epoch=epoch, nbatch=actual_num_batch,
                                   eval_metric=eval_metric, locals=locals())
            for cb in _as_list(score_end_callback):
                cb(params)
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield (outputs without padding, batch index, batch) per batch of `eval_data`."""
        self._require("iter_predict")
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, eval_batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """Outputs over `eval_data` (a DataIter, or one NDArray/numpy batch), concatenated over
        batches when `merge_batches`; a single output is returned bare unless
        `always_output_list`."""
        self._require("predict")
        if isinstance(eval_data, (ndarray.NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = ndarray.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError("eval_data must be of type NDArray or DataIter")
        if reset:
            eval_data.reset()
        output_list = []
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            output_list.append([out[0:out.shape[0] - pad].copy() for out in self.get_outputs()])
        if not output_list:
            return output_list
        if merge_batches:
            num_outputs = len(output_list[0])
            for out in output_list:
                if len(out) != num_outputs:
                    raise AssertionError("Cannot merge batches, as num of outputs is not the "
                                         "same in mini-batches. Maybe bucketing is used?")
            merged = [ndarray.concatenate([out[i] for out in output_list])
                      for i in range(num_outputs)]
            if num_outputs == 1 and not always_output_list:
                return merged[0]
            return merged
        return output_list

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=_UNIFORM_001, arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Train on `train_data` for epochs [begin_epoch, num_epoch): bind, init_params,
        init_optimizer, then per batch forward_backward, update and update_metric; logs
        ``Epoch[e] Train-<metric>=``, ``Epoch[e] Time cost=`` and ``Epoch[e] Validation-...``
        as MXNet, and shows a progress bar per epoch when stderr is a terminal."""
        if num_epoch is None:
            raise AssertionError("please specify number of epochs")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        metric = _metric_module()
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)

        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            self._begin_fit_epoch(epoch, train_data)
            nbatch = 0
            bar = _progress_bar(train_data, epoch)
            data_iter = iter(train_data)
            end_of_batch = False
            try:
                next_data_batch = next(data_iter)
            except StopIteration:
                raise ValueError(f"fit: train_data yielded no batch in epoch {epoch}") from None
            eval_name_vals = []
            while not end_of_batch:
                data_batch = next_data_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                if isinstance(data_batch, list):
                    self.update_metric(eval_metric, [db.label for db in data_batch],
                                       pre_sliced=True)
                else:
                    self.update_metric(eval_metric, data_batch.label)
                try:
                    # prefetch the next batch only after this one is consumed
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    eval_name_vals = eval_metric.get_global_name_value()
                if batch_end_callback is not None:
                    params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                           locals=locals())
                    for cb in _as_list(batch_end_callback):
                        cb(params)
                if bar is not None:
                    bar.update(1)
                    if nbatch % 20 == 0 or end_of_batch:
                        try:
                            bar.set_postfix(dict(eval_metric.get_name_value()), refresh=False)
                        except Exception:
                            pass
                nbatch += 1
            if bar is not None:
                bar.close()
            for name, val in eval_name_vals:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            toc = time.time()
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, toc - tic)

            # sync the parameters across devices
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            if epoch_end_callback is not None:
                for cb in _as_list(epoch_end_callback):
                    cb(epoch, self.symbol, arg_params, aux_params)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    def _begin_fit_epoch(self, epoch, train_data):
        """Called by ``fit`` before each epoch's first batch (SVRGModule computes its full
        gradients here)."""

    # ---- symbol information -------------------------------------------------------------------
    @property
    def data_names(self):
        raise NotImplementedError()

    @property
    def output_names(self):
        raise NotImplementedError()

    @property
    def data_shapes(self):
        raise NotImplementedError()

    @property
    def label_shapes(self):
        raise NotImplementedError()

    @property
    def output_shapes(self):
        raise NotImplementedError()

    # ---- parameters ---------------------------------------------------------------------------
    def get_params(self):
        raise NotImplementedError()

    def init_params(self, initializer=_UNIFORM_001, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        raise NotImplementedError()

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Set the parameters from dicts of name to NDArray."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def save_params(self, fname):
        """Save the parameters to `fname` with ``arg:``/``aux:`` keys."""
        arg_params, aux_params = self.get_params()
        save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
        save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
        ndarray.save(fname, save_dict)

    def load_params(self, fname):
        """Load parameters saved by ``save_params`` (or a checkpoint's .params file)."""
        save_dict = ndarray.load(fname)
        arg_params, aux_params = {}, {}
        for k, value in save_dict.items():
            kind, _, name = k.partition(":")
            if kind == "arg":
                arg_params[name] = value
            elif kind == "aux":
                aux_params[name] = value
            else:
                raise ValueError(f"Invalid param file {fname}: key {k!r} has no arg:/aux: "
                                 "prefix")
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context=True):
        self._require("get_states")
        if merge_multi_context:
            raise AssertionError("get_states: merge_multi_context=True is not supported")
        return []

    def set_states(self, states=None, value=None):
        self._require("set_states")
        if states or value:
            raise AssertionError("this module has no states")

    def install_monitor(self, mon):
        raise NotImplementedError()

    # ---- computation --------------------------------------------------------------------------
    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare for the next batch (row_sparse pulls); nothing for a plain module."""
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning("sparse_row_id_fn is not invoked for BaseModule."))

    def forward(self, data_batch, is_train=None):
        raise NotImplementedError()

    def backward(self, out_grads=None):
        raise NotImplementedError()

    def get_outputs(self, merge_multi_context=True):
        raise NotImplementedError()

    def get_input_grads(self, merge_multi_context=True):
        raise NotImplementedError()

    def update(self):
        raise NotImplementedError()

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        raise NotImplementedError()

    # ---- module setup -------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        raise NotImplementedError()

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        raise NotImplementedError()

    @property
    def symbol(self):
        """The symbol of this module."""
        return self._symbol
