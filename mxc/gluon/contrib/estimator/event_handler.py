"""Event handlers of `Estimator` (MXNet 1.9.1's set, plus a progress bar).

A handler subclasses one or more of the six event classes (`TrainBegin`, `EpochBegin`,
`BatchBegin`, `BatchEnd`, `EpochEnd`, `TrainEnd`); the estimator calls only the methods of the
classes a handler derives from, in the order of the handlers' ``priority`` (lowest first;
default 0). ``batch_end`` and ``epoch_end`` return True to stop training."""
import os
import time
import warnings

import numpy as np

from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as _LossMetric
from .utils import _check_metrics

__all__ = ["TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd",
           "StoppingHandler", "MetricHandler", "ValidationHandler", "LoggingHandler",
           "CheckpointHandler", "EarlyStoppingHandler", "GradientUpdateHandler",
           "ProgressBarHandler"]


class EventHandler(object):
    """Base of the six event classes; `Estimator.fit` accepts only its subclasses."""


def _check_event_handlers(handlers):
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = list(handlers or [])
    if not all(isinstance(h, EventHandler) for h in handlers):
        raise ValueError("handlers must be an EventHandler or a list of EventHandler, "
                         f"got: {handlers}")
    return handlers


class TrainBegin(EventHandler):
    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    def batch_end(self, estimator, *args, **kwargs):
        return False


def _improvement_op(monitor, mode, who):
    """np.greater or np.less: how `who` tells that `monitor` improved under `mode`.

    'auto' picks greater for accuracy and F1 metrics and less for everything else (MXNet 1.9
    meant this but its test ``'acc' or 'f1' in name`` always chose greater)."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{who} mode {mode} is unknown, fallback to auto mode: max for f1 and "
                      "accuracy metrics and min otherwise", RuntimeWarning)
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "max":
        return np.greater
    name = monitor.get()[0]
    if "acc" in name.lower() or "f1" in name.lower():
        warnings.warn(f"`greater` operator will be used to determine if {name} has improved. "
                      "Please specify `mode='min'` to use the `less` operator. "
                      "Specify `mode='max' to disable this warning.`")
        return np.greater
    warnings.warn(f"`less` operator will be used to determine if {name} has improved. "
                  "Please specify `mode='max'` to use the `greater` operator. "
                  "Specify `mode='min' to disable this warning.`")
    return np.less


def _worst(op):
    return np.inf if op is np.less else -np.inf


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stop after ``estimator.max_epoch`` epochs or ``estimator.max_batch`` batches (the
    constructor's values are replaced by the estimator's at train begin)."""

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Reset `metrics` at epoch begin and update them at batch end: a `metric.Loss` with the
    batch's loss values, every other metric with (label, pred). Runs early (priority -1000) so
    later handlers see the updated values."""

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            if isinstance(metric, _LossMetric):
                metric.update(0, kwargs["loss"])
            else:
                metric.update(kwargs["label"], kwargs["pred"])


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Call ``eval_fn(val_data=..., batch_axis=..., event_handlers=...)`` every `epoch_period`
    epochs and, when `batch_period` is set, every `batch_period` batches."""

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None, priority=-1000,
                 event_handlers=None):
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def _evaluate(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = 0
        self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._evaluate(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._evaluate(estimator)


def _metric_text(metrics):
    return ", ".join("%s: %.4f" % m.get() for m in metrics)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Log to ``estimator.logger``: the optimizer and learning rate at train begin, `metrics`
    at every epoch end (``log_interval='epoch'``) or also every `log_interval` batches (an int),
    and the totals at train end. Runs last (priority inf) to see every update."""

    def __init__(self, log_interval="epoch", metrics=None, priority=np.inf):
        if not isinstance(log_interval, int) and log_interval != "epoch":
            raise ValueError("log_interval must be either an integer or string 'epoch'")
        self.metrics = _check_metrics(metrics)
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.priority = priority
        self.log_interval = log_interval
        self.log_interval_time = 0
        self.train_start = self.epoch_start = self.batch_start = time.time()

    def _log(self, estimator, head, metrics=True):
        text = _metric_text(self.metrics) if metrics else ""
        estimator.logger.info((head + text).rstrip(", "))

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate "
                              "%.4f ", type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        took = time.time() - self.train_start
        self._log(estimator, "Train finished using total %ds with %d epochs. "
                  % (took, self.current_epoch))

    def batch_begin(self, estimator, *args, **kwargs):
        self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.log_interval_time += time.time() - self.batch_start
            self.processed_samples += kwargs["batch"][0].shape[0]
            if self.batch_index % self.log_interval == 0:
                self._log(estimator, "[Epoch %d][Batch %d][Samples %s] time/interval: %.3fs "
                          % (self.current_epoch, self.batch_index, self.processed_samples,
                             self.log_interval_time))
                self.log_interval_time = 0
        self.batch_index += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        # the estimator names its training metrics 'training ...': without one, this handler
        # logs an evaluation run
        if any("training" in m.name for m in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        self._log(estimator, "[Epoch %d] Finished in %.3fs, "
                  % (self.current_epoch, time.time() - self.epoch_start))
        self.current_epoch += 1
        self.batch_index = 0


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Save parameters (``.params``) and trainer states (``.states``) as
    ``{model_prefix}-epoch{E}batch{B}`` every `epoch_period` epochs or `batch_period` batches,
    keeping the newest `max_checkpoints`; the symbol (``-symbol.json``) after the first batch
    when the net is hybridized; with `save_best`, also ``{model_prefix}-best`` whenever
    `monitor` improves. `resume_from_checkpoint` loads the newest checkpoint in `model_dir` at
    train begin and trains only the remaining epochs or batches.

    E counts finished epochs from 0; B is the number of batches trained at an epoch-end save
    and the 0-based index of the batch at a batch-period save (MXNet 1.9's numbering)."""

    def __init__(self, model_dir, model_prefix="model", monitor=None, verbose=0,
                 save_best=False, mode="auto", epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        if save_best and not isinstance(monitor, EvalMetric):
            raise ValueError("To save best model only, please provide one of the metric objects "
                             "from estimator.train_metrics and estimator.val_metrics as monitor.")
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.monitor = monitor
        self.verbose = verbose
        self.save_best = save_best
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.current_batch = 0
        self.current_epoch = 0
        self.trained_epoch = -1
        self.trained_batch = -1
        self.saved_checkpoints = []
        if save_best:
            self.monitor_op = _improvement_op(monitor, mode, "CheckpointHandler")
            self.best = _worst(self.monitor_op)

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = _worst(self.monitor_op)
        if self.resume_from_checkpoint:
            if bool(estimator.max_batch) != bool(self.batch_period) or \
                    bool(estimator.max_epoch) != bool(self.epoch_period):
                raise AssertionError(
                    "To use resume from checkpoint, you must only specify the same type of "
                    "period you used for training. For example, if you are training based on "
                    "number of epochs, you must save only based on epochs, and set "
                    "batch_period to None.")
            self._resume(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    def _save_checkpoint(self, estimator):
        epoch, batch = self.current_epoch, self.current_batch
        if self.resume_from_checkpoint and self.trained_epoch >= 0:
            # continue the numbering of the run that was resumed
            epoch += self.trained_epoch + 1
            batch += self.trained_batch + (0 if estimator.max_epoch else 1)
        prefix = "%s-epoch%dbatch%d" % (self.model_prefix, epoch, batch)
        self._save_params_and_trainer(estimator, prefix)
        self._count_checkpoint(prefix)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  self.current_batch + 1, self.model_dir, prefix)
        if self.save_best:
            self._save_if_best(estimator)

    def _save_if_best(self, estimator):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                f"Skipping save best because {name} is not updated, make sure you pass one of "
                "the metric objects estimator.train_metrics and estimator.val_metrics as monitor"))
        elif self.monitor_op(value, self.best):
            prefix = self.model_prefix + "-best"
            self._save_params_and_trainer(estimator, prefix)
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f to "
                                      "%0.5f, updating best model at %s with prefix: %s",
                                      self.current_epoch, name, self.best, value,
                                      self.model_dir, prefix)
            self.best = value
        elif self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from %0.5f, "
                                  "skipping updating best model",
                                  self.current_epoch, name, self.best)

    def _save_symbol(self, estimator):
        path = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        graph = getattr(estimator.net, "_cached_graph", None)
        if graph:
            graph[1].save(path)
        else:
            estimator.logger.info(
                "Model architecture(symbol file) is not saved, please use HybridBlock to "
                "construct your model, and call net.hybridize() before passing to Estimator in "
                "order to save model architecture as %s.", path)

    def _save_params_and_trainer(self, estimator, prefix):
        base = os.path.join(self.model_dir, prefix)
        estimator.net.save_parameters(base + ".params")
        estimator.trainer.save_states(base + ".states")

    def _count_checkpoint(self, prefix):
        self.saved_checkpoints.append(prefix)
        while len(self.saved_checkpoints) > self.max_checkpoints:
            old = os.path.join(self.model_dir, self.saved_checkpoints.pop(0))
            for ext in (".params", ".states"):
                if os.path.exists(old + ext):
                    os.remove(old + ext)

    def _existing_checkpoints(self):
        """(epoch, batch) of every ``{prefix}-epoch{E}batch{B}.params`` in model_dir, sorted."""
        head = self.model_prefix + "-epoch"
        found = []
        for fname in os.listdir(self.model_dir):
            if not (fname.startswith(head) and fname.endswith(".params")):
                continue
            epoch, sep, batch = fname[len(head):-len(".params")].partition("batch")
            if not (sep and epoch.isdigit() and batch.isdigit()):
                raise ValueError(
                    f"Error parsing checkpoint file {fname!r} in {self.model_dir}, please check "
                    "your checkpoints have the format: "
                    "{model_name}-epoch{epoch_number}batch{batch_number}.params, there should "
                    "also be a .states file for each .params file")
            found.append((int(epoch), int(batch)))
        return sorted(found)

    def _resume(self, estimator):
        found = self._existing_checkpoints()
        # older checkpoints count towards max_checkpoints like the ones this run writes
        self.saved_checkpoints = ["%s-epoch%dbatch%d" % (self.model_prefix, e, b)
                                  for e, b in found]
        if not found:
            self.trained_epoch = self.trained_batch = -1
            left = ("%d batches" % estimator.max_batch if estimator.max_batch
                    else "%d epochs" % estimator.max_epoch)
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from "
                                  "scratch for " + left)
            return
        self.trained_epoch, self.trained_batch = found[-1]
        msg = ("CheckpointHandler: Checkpoint resumed from epoch %d batch %d, continue to train "
               "for " % (self.trained_epoch, self.trained_batch))
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError(
                    "Found checkpoint with maximum number of epoch %d reached, please specify "
                    "resume_from_checkpoint=False (default value) if you want to train from "
                    "scratch." % estimator.max_epoch)
            estimator.max_epoch -= self.trained_epoch + 1
            msg += "%d epochs " % estimator.max_epoch
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ValueError(
                    "Found checkpoint with maximum number of batch %d reached, please specify "
                    "resume_from_checkpoint=False (default value) if you want to train from "
                    "scratch." % self.trained_batch)
            estimator.max_batch -= self.trained_batch + 1
            msg += "%d batches " % estimator.max_batch
        base = os.path.join(self.model_dir, self.saved_checkpoints[-1])
        for ext in (".params", ".states"):
            if not os.path.exists(base + ext):
                raise ValueError(f"Failed to load checkpoint, {base + ext} does not exist")
        estimator.net.load_parameters(base + ".params", ctx=estimator.context)
        estimator.trainer.load_states(base + ".states")
        estimator.logger.warning(msg)


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stop training when `monitor` has not improved by more than `min_delta` for `patience`
    epochs (compared with the best value so far, or with `baseline` at first)."""

    def __init__(self, monitor, min_delta=0, patience=0, mode="auto", baseline=None):
        if not isinstance(monitor, EvalMetric):
            raise ValueError("Please provide one of the metric objects from "
                             "estimator.train_metrics and estimator.val_metrics as monitor.")
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError("CompositeEvalMetric is not supported for EarlyStoppingHandler, "
                             "please specify a simple metric instead.")
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.monitor_op = _improvement_op(monitor, mode, "EarlyStopping")
        # compared as (value - min_delta) against the best: the sign makes it a margin in the
        # direction of improvement
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.best = _worst(self.monitor_op)

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.best = self.baseline if self.baseline is not None else _worst(self.monitor_op)

    def epoch_end(self, estimator, *args, **kwargs):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                f"{name} is not updated, make sure you pass one of the metric objects from "
                "estimator.train_metrics and estimator.val_metrics as monitor."))
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best = value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stopped_epoch > 0:
            estimator.logger.info("[Epoch %d] EarlyStoppingHanlder: early stopping due to %s "
                                  "not improving", self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Take the optimizer step at batch end, normalized by the batch size (the summed length
    of the loss pieces). Runs first (priority -2000)."""

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs["loss"]
        pieces = loss if isinstance(loss, list) else [loss]
        estimator.trainer.step(sum(piece.shape[0] for piece in pieces))


class ProgressBarHandler(TrainBegin, EpochBegin, BatchEnd, EpochEnd):
    """A tqdm progress bar over each training epoch's batches with `metrics` as its postfix
    (not in MXNet 1.9; never added by default). The bar appears only once an epoch has run
    `delay` seconds, so short epochs stay quiet. The length comes from ``len(train_data)``
    when the loader has one. `file` defaults to stderr; other keyword arguments go to
    ``tqdm`` (e.g. ``leave=True`` to keep each epoch's finished bar)."""

    def __init__(self, metrics=None, delay=2.0, file=None, priority=np.inf, **tqdm_kwargs):
        self.metrics = _check_metrics(metrics)
        self.delay = delay
        self.file = file
        self.priority = priority
        self.tqdm_kwargs = dict({"leave": False, "unit": "batch"}, **tqdm_kwargs)
        self.current_epoch = 0
        self._bar = None

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0

    def epoch_begin(self, estimator, *args, **kwargs):
        from tqdm import tqdm  # a dependency of mxc; imported here to keep import time low
        self._bar = tqdm(total=estimator._train_length, delay=self.delay, file=self.file,
                         desc="[Epoch %d]" % self.current_epoch, **self.tqdm_kwargs)

    def batch_end(self, estimator, *args, **kwargs):
        if self._bar is not None:
            if self.metrics:
                self._bar.set_postfix_str(_metric_text(self.metrics), refresh=False)
            self._bar.update(1)

    def epoch_end(self, estimator, *args, **kwargs):
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self.current_epoch += 1
