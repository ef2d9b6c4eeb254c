"""``mx.contrib.tensorboard``: metrics into TensorBoard event files, through ``tensorboardX``
(an optional dependency: ``pip install tensorboardX`` or ``mxc[tensorboard]``).

`LogMetricsCallback` is MXNet 1.9.1's callback for ``Module.fit`` (``batch_end_callback`` /
``eval_end_callback``; MXNet wrote through mxboard, which has the same ``add_scalar``).
`TensorBoardHandler` is the same for ``gluon.contrib.estimator``: an event handler that logs the
estimator's training and validation metrics and learning rate."""
import re

import numpy as np

from ..gluon.contrib.estimator.event_handler import BatchEnd, EpochEnd, TrainBegin, TrainEnd

__all__ = ["LogMetricsCallback", "TensorBoardHandler"]


def _summary_writer(logging_dir):
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        raise ImportError("writing TensorBoard event files needs the tensorboardX package: "
                          "pip install tensorboardX (or mxc[tensorboard])") from None
    return SummaryWriter(logging_dir)


class LogMetricsCallback(object):
    """Write ``param.eval_metric``'s values as TensorBoard scalars at step ``param.epoch``.

    Parameters
    ----------
    logging_dir : str
        Directory of the event file (``tensorboard --logdir`` it).
    prefix : str, optional
        Scalars are named ``'{prefix}-{metric name}'``: different prefixes for the training and
        the evaluation callback keep their curves apart when they log to one directory.

    ``summary_writer`` is the tensorboardX SummaryWriter; its ``close()`` writes out what its
    thread still holds."""

    def __init__(self, logging_dir, prefix=None):
        self.prefix = prefix
        self.summary_writer = _summary_writer(logging_dir)

    def __call__(self, param):
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            if self.prefix is not None:
                name = "%s-%s" % (self.prefix, name)
            self.summary_writer.add_scalar(name, value, global_step=param.epoch)


def _tag(metric_name):
    """'training accuracy' -> 'training/accuracy': TensorBoard groups the estimator's training
    and validation metrics; other spaces, not allowed in tags, become '_'."""
    head, _, rest = metric_name.partition(" ")
    if head in ("training", "validation") and rest:
        metric_name = head + "/" + rest
    return re.sub(r"\s+", "_", metric_name)


class TensorBoardHandler(TrainBegin, BatchEnd, EpochEnd, TrainEnd):
    """Estimator event handler writing TensorBoard scalars to `logging_dir`.

    At every epoch end: each of `metrics` (default: the estimator's training and validation
    metrics) as ``training/<name>`` or ``validation/<name>`` at step = epoch (counted from 0)
    and ``learning_rate``. With an integer `log_interval`, also the training metrics every
    `log_interval` batches, at step = batches trained so far, under ``batch/``. tensorboardX
    writes from a thread of its own (its flush does not wait for it); the file is complete when
    the writer is closed, at train end.

    Runs after the metric and validation handlers (priority inf), so the values are current."""

    def __init__(self, logging_dir, metrics=None, log_interval="epoch", priority=np.inf):
        if not isinstance(log_interval, int) and log_interval != "epoch":
            raise ValueError("TensorBoardHandler: log_interval must be an integer or 'epoch', "
                             f"got {log_interval!r}")
        self.logging_dir = logging_dir
        self.metrics = metrics
        self.log_interval = log_interval
        self.priority = priority
        self.summary_writer = None
        self.current_epoch = 0
        self.current_batch = 0

    def _metrics(self, estimator):
        if self.metrics is not None:
            return list(self.metrics)
        return list(estimator.train_metrics) + list(estimator.val_metrics)

    def train_begin(self, estimator, *args, **kwargs):
        if self.summary_writer is None:
            self.summary_writer = _summary_writer(self.logging_dir)
        self.current_epoch = 0
        self.current_batch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if isinstance(self.log_interval, int) and self.current_batch % self.log_interval == 0:
            for metric in estimator.train_metrics:
                for name, value in metric.get_name_value():
                    self.summary_writer.add_scalar("batch/" + _tag(name), value,
                                                   self.current_batch)
        return False

    def epoch_end(self, estimator, *args, **kwargs):
        for metric in self._metrics(estimator):
            for name, value in metric.get_name_value():
                if not np.isnan(value):  # a validation metric without validation data
                    self.summary_writer.add_scalar(_tag(name), value, self.current_epoch)
        self.summary_writer.add_scalar("learning_rate", estimator.trainer.learning_rate,
                                       self.current_epoch)
        self.current_epoch += 1
        return False

    def train_end(self, estimator, *args, **kwargs):
        if self.summary_writer is not None:
            self.summary_writer.close()
            self.summary_writer = None
