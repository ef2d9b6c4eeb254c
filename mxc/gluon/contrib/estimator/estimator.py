"""`Estimator`: MXNet 1.9.1's Gluon fit loop (``fit`` and ``evaluate`` over DataLoaders)."""
import copy
import logging
import os
import sys
import warnings

from .batch_processor import BatchProcessor
from .event_handler import (BatchBegin, BatchEnd, EpochBegin, EpochEnd, GradientUpdateHandler,
                            LoggingHandler, MetricHandler, ProgressBarHandler, StoppingHandler,
                            TrainBegin, TrainEnd, ValidationHandler, _check_event_handlers)
from .utils import _check_handler_metric_ref, _check_metrics, _suggest_metric_for_loss
from ...data import DataLoader
from ...loss import Loss as _GluonLoss
from ...trainer import Trainer
from ....context import Context, cpu, gpu, num_gpus
from ....metric import Loss as _LossMetric

__all__ = ["Estimator"]

# the six events in the order `_categorize_handlers` returns them
_EVENTS = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)


def _terminal_progress():
    """Whether fit adds a progress bar by default: on a terminal, as Module.fit does, unless
    MXC_PROGRESS=0 or CI is set."""
    if os.environ.get("MXC_PROGRESS", "1") == "0" or os.environ.get("CI"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


class Estimator(object):
    """Train `net` with `loss` through event handlers.

    Parameters
    ----------
    net : gluon.Block
    loss : gluon.loss.Loss
    train_metrics, val_metrics : EvalMetric or list of EvalMetric
        Without training metrics the estimator uses the loss's suggested metric (accuracy for
        softmax cross-entropy) and a `metric.Loss`; without validation metrics, copies of the
        training ones. Names get a 'training ' / 'validation ' prefix.
    initializer : Initializer
        Used for the parameters not yet initialized (all of them when none are).
    trainer : gluon.Trainer
        Default: SGD with learning rate 0.001 (with a warning).
    context : Context or list of Context
        Default: gpu(0) when there is a GPU, else cpu().
    val_net, val_loss : the network and loss for validation (default: `net` and `loss`).
    batch_processor : object with ``fit_batch`` and ``evaluate_batch`` (default BatchProcessor).

    ``logger`` is a `logging.Logger` of its own that prints INFO and above to stdout."""

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None, batch_processor=None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = _check_metrics(train_metrics)
        self._val_metrics = _check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net

        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))

        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = self.max_batch = None
        self.batch_axis = 0
        self._train_length = None  # batches per epoch of the running fit, when known

    # ---- argument checks ------------------------------------------------------------------------
    @staticmethod
    def _check_loss(loss):
        if not isinstance(loss, _GluonLoss):
            raise ValueError(f"loss must be a Loss, refer to gluon.loss.Loss:{loss}")
        return loss

    @staticmethod
    def _check_context(context):
        available_gpus = [gpu(i) for i in range(num_gpus())]
        if not context:
            if len(available_gpus) > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default."
                              "To utilize all your GPUs, specify context as a list of gpus, "
                              "e.g. context=[mx.gpu(0), mx.gpu(1)] ")
            return [gpu(0)] if available_gpus else [cpu()]
        if isinstance(context, Context):
            context = [context]
        if not isinstance(context, list) or not all(isinstance(c, Context) for c in context):
            raise ValueError("context must be a Context or a list of Context, for example "
                             "mx.cpu() or [mx.gpu(0), mx.gpu(1)], refer to mxnet.Context:"
                             f"{context}")
        for ctx in context:
            # AssertionError, as MXNet 1.9 raises for a device that is not there
            assert ctx in available_gpus or ctx.device_type.startswith("cpu"), (
                "%s is not available, please make sure your context is in one of: mx.cpu(), %s"
                % (ctx, ", ".join(str(g) for g in available_gpus)))
        return context

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not callable(getattr(batch_processor, "fit_batch", None)) or \
                not callable(getattr(batch_processor, "evaluate_batch", None)):
            raise ValueError("Customized Batch Processor must contain fit_batch() and "
                             "evaluate_batch() methods")
        return batch_processor

    def _check_trainer(self, trainer):
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate 0.001 "
                          "is used.")
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError(f"Trainer must be a Gluon Trainer instance, refer to "
                             f"gluon.Trainer:{trainer}")
        return trainer

    def _is_initialized(self):
        params = self.net.collect_params()
        try:
            for name in params:
                params[name].list_ctx()
        except RuntimeError:
            return False
        return True

    def _initialize(self, initializer):
        if not self._is_initialized():
            # only the parameters without values are initialized: a partly initialized net
            # (fine-tuning a new output layer) keeps the rest
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your net. "
                          "You can use net.initialize(init=your_initializer, force_reinit=True)"
                          "to force re-initialize.")

    # ---- metrics --------------------------------------------------------------------------------
    def _add_default_training_metrics(self):
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            self._train_metrics.append(_LossMetric(self.loss.name.rstrip("1234567890")))
        # the prefixes let handlers tell training from validation metrics
        for metric in self._train_metrics:
            metric.name = "training " + metric.name

    def _add_validation_metrics(self):
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            if "training" in metric.name:
                metric.name = metric.name.replace("training", "validation")
            else:
                metric.name = "validation " + metric.name

    @property
    def train_metrics(self):
        return self._train_metrics

    @property
    def val_metrics(self):
        return self._val_metrics

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        return self.batch_processor._get_data_and_label(batch, ctx, batch_axis)

    # ---- loops ----------------------------------------------------------------------------------
    @staticmethod
    def _check_loader(data, what):
        if not isinstance(data, DataLoader):
            raise ValueError(f"Estimator only support input as Gluon DataLoader ({what} is "
                             f"{type(data).__name__}). Alternatively, you can transform your "
                             "DataIter or any NDArray into Gluon DataLoader. Refer to "
                             "gluon.data.DataLoader")

    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Run ``batch_processor.evaluate_batch`` over `val_data` once, as one epoch of events
        (epoch begin, batch begin/end, epoch end). A MetricHandler and a LoggingHandler over
        `val_metrics` are added unless `event_handlers` has handlers of those kinds."""
        self._check_loader(val_data, "val_data")
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = \
            self._categorize_handlers(handlers)
        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):
        """Train on `train_data` for `epochs` epochs or `batches` batches (exactly one of
        them). Default handlers: StoppingHandler, GradientUpdateHandler, MetricHandler,
        ValidationHandler (when `val_data` is given) and LoggingHandler, each unless
        `event_handlers` already has one of its kind; on a terminal also a ProgressBarHandler,
        which shows a bar once an epoch has run 2 s (MXC_PROGRESS=0 turns it off)."""
        self._check_loader(train_data, "train_data")
        if (not epochs) == (not batches):
            raise ValueError("Fit only support exactly one type of iteration, train by number "
                             "of epochs or number of batches.Please specify one and only one "
                             "of: epochs or batches.")
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis
        try:
            self._train_length = len(train_data)
        except TypeError:  # a loader over an iterable dataset has no length
            self._train_length = None

        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(handlers)

        for handler in train_begin:
            handler.train_begin(self)
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            for batch in train_data:
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                # every handler sees the batch before a stop request is honoured
                stops = [handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                         for handler in batch_end]
                if any(stops):
                    break
            stops = [handler.epoch_end(self) for handler in epoch_end]
            if any(stops):
                break
        for handler in train_end:
            handler.train_end(self)

    # ---- handlers -------------------------------------------------------------------------------
    def _finish_handlers(self, handlers, defaults, known_metrics):
        """User handlers then defaults, sorted by priority (stable: equal priorities keep that
        order). When both kinds are present, they must share the estimator's metrics."""
        if handlers and defaults:
            known = set(known_metrics)
            for handler in handlers + defaults:
                _check_handler_metric_ref(handler, known)
        handlers = handlers + defaults
        handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return handlers

    def _prepare_default_handlers(self, val_data, event_handlers):
        handlers = _check_event_handlers(event_handlers)

        def missing(kind):
            return not any(isinstance(h, kind) for h in handlers)

        # StoppingHandler uses no metrics and is always added
        defaults = [StoppingHandler(self.max_epoch, self.max_batch)]
        if missing(GradientUpdateHandler):
            defaults.append(GradientUpdateHandler())
        if missing(MetricHandler):
            defaults.append(MetricHandler(metrics=self.train_metrics))
        if missing(ValidationHandler) and val_data:
            defaults.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if missing(ProgressBarHandler) and _terminal_progress():
            # before the LoggingHandler of equal priority: the bar is gone when it logs
            defaults.append(ProgressBarHandler(metrics=self.train_metrics))
        if missing(LoggingHandler):
            defaults.append(LoggingHandler(metrics=self.train_metrics))
        return self._finish_handlers(handlers, defaults, self.train_metrics + self.val_metrics)

    def _prepare_default_validation_handlers(self, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        defaults = []
        if not any(isinstance(h, MetricHandler) for h in handlers):
            defaults.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            defaults.append(LoggingHandler(metrics=self.val_metrics))
        return self._finish_handlers(handlers, defaults, self.val_metrics)

    @staticmethod
    def _categorize_handlers(event_handlers):
        """Six lists: the handlers of each event (train begin, epoch begin, batch begin, batch
        end, epoch end, train end), so only handlers that take an event are called for it."""
        return tuple([h for h in event_handlers if isinstance(h, event)] for event in _EVENTS)
