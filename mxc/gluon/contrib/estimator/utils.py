"""Argument checks shared by the estimator and its handlers."""
from ...loss import SoftmaxCrossEntropyLoss
from ....metric import Accuracy, CompositeEvalMetric, EvalMetric


def _check_metrics(metrics):
    """A list of plain EvalMetrics from None, one metric, a list, or a CompositeEvalMetric
    (flattened, so handlers see the metrics it holds)."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for inner in metrics.metrics for m in _check_metrics(inner)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    if metrics is None:
        return []
    if not isinstance(metrics, (list, tuple)) or \
            not all(isinstance(m, EvalMetric) for m in metrics):
        raise ValueError("metrics must be a Metric or a list of Metric, "
                         f"refer to mxnet.metric.EvalMetric: {metrics!r}")
    return list(metrics)


def _check_handler_metric_ref(handler, known_metrics):
    """Raise ValueError when `handler` holds a metric the estimator does not update.

    Like MXNet 1.9, only attributes whose name has 'metric' in it are checked (a `monitor`
    outside the estimator's metrics is caught later: it stays NaN and the handler warns)."""
    for attr, ref in vars(handler).items():
        if "metric" not in attr or not ref:
            continue
        for metric in ref if isinstance(ref, (list, tuple)) else [ref]:
            if metric not in known_metrics:
                raise ValueError(
                    f"Event handler {type(handler).__name__} refers to a metric instance "
                    f"{metric} outside of the known training and validation metrics. Please use "
                    "the metrics from estimator.train_metrics and estimator.val_metrics instead.")


def _suggest_metric_for_loss(loss):
    """The metric added by default next to the loss: accuracy for softmax cross-entropy."""
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None
