"""Online evaluation metrics, as MXNet 1.9.1's ``mx.metric``.

Every metric keeps two sets of running statistics: the *local* ones (``sum_metric``,
``num_inst``), cleared by ``reset_local()`` (what Module's ``fit`` does at every logging
interval), and the *global* ones (``global_sum_metric``, ``global_num_inst``), cleared only by
``reset()``. ``get()`` reports the local value and ``get_global()`` the global one.

Inputs are lists of labels and of predictions, each an NDArray or a numpy array; a single
array on each side is accepted too. Metrics are registered by lower-cased class name and by
their aliases ('acc', 'ce', 'nll_loss', 'top_k_accuracy', ...) so that ``create`` builds them
from a name, a JSON config string, a dict, a list of those, or a plain ``f(label, pred)``.
"""
import json
import math
import warnings
from collections import OrderedDict

import numpy

from .base import numeric_types, string_types
from . import ndarray
from .ndarray.ndarray import NDArray

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe", "CustomMetric", "np",
           "create", "register", "alias", "check_label_shapes"]


def _is_array(x):
    return isinstance(x, (NDArray, numpy.ndarray))


def _host(x):
    """The values of an NDArray or array-like as a numpy array."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    return numpy.asarray(x)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Raise ValueError unless labels and preds agree in length (or, with ``shape``, in shape).

    With ``wrap``, a single array on either side is put into a list.
    """
    if shape:
        label_shape, pred_shape = labels.shape, preds.shape
    else:
        label_shape, pred_shape = len(labels), len(preds)
    if label_shape != pred_shape:
        raise ValueError("Shape of labels {} does not match shape of "
                         "predictions {}".format(label_shape, pred_shape))
    if wrap:
        if _is_array(labels):
            labels = [labels]
        if _is_array(preds):
            preds = [preds]
    return labels, preds


# ---- registry ------------------------------------------------------------------------------
_METRICS = {}


def register(klass, name=None):
    """Register a metric class under ``name`` (default: its class name), lower-cased."""
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise TypeError("Can only register subclass of EvalMetric, got %r" % (klass,))
    key = (klass.__name__ if name is None else name).lower()
    old = _METRICS.get(key)
    if old is not None and old is not klass:
        warnings.warn("New metric %s.%s registered with name %s is overriding existing "
                      "metric %s.%s" % (klass.__module__, klass.__name__, key,
                                        old.__module__, old.__name__),
                      UserWarning, stacklevel=2)
    _METRICS[key] = klass
    return klass


def alias(*aliases):
    """Class decorator registering a metric under extra names."""
    def _reg(klass):
        for a in aliases:
            register(klass, a)
        return klass
    return _reg


def _create(*args, **kwargs):
    if args:
        name, args = args[0], args[1:]
    else:
        if "metric" not in kwargs:
            raise ValueError("metric.create needs a metric name, instance or config "
                             "(the 'metric' key of a config dict)")
        name = kwargs.pop("metric")
    if isinstance(name, EvalMetric):
        if args or kwargs:
            raise ValueError("metric is already an instance. Additional arguments are invalid")
        return name
    if isinstance(name, dict):
        return _create(**name)
    if not isinstance(name, string_types):
        raise TypeError("metric must be a name (str), an EvalMetric, a dict config, a list "
                        "or a callable, got %s" % type(name).__name__)
    text = name.strip()
    if text.startswith("["):
        if args or kwargs:
            raise ValueError("a JSON metric config takes no additional arguments")
        name, kwargs = json.loads(text)
        return _create(name, **kwargs)
    if text.startswith("{"):
        if args or kwargs:
            raise ValueError("a JSON metric config takes no additional arguments")
        return _create(**json.loads(text))
    key = name.lower()
    if key not in _METRICS:
        raise ValueError("%s is not registered. Please register with metric.register first "
                         "(known metrics: %s)" % (name, ", ".join(sorted(_METRICS))))
    return _METRICS[key](*args, **kwargs)


def create(metric, *args, **kwargs):
    """Create a metric from a name, an EvalMetric, a list of those, or a function
    ``feval(label, pred)`` (wrapped in CustomMetric). Extra arguments go to the constructor."""
    if callable(metric) and not isinstance(metric, (EvalMetric, type)):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        comp = CompositeEvalMetric()
        for child in metric:
            comp.add(create(child, *args, **kwargs))
        return comp
    return _create(metric, *args, **kwargs)


# ---- base ----------------------------------------------------------------------------------
class EvalMetric(object):
    """Base class of the metrics: ``update(labels, preds)`` accumulates, ``get()`` reports.

    Parameters
    ----------
    name : str
        Display name.
    output_names, label_names : list of str or None
        The outputs / labels ``update_dict`` picks (all of them when None).
    """

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return "EvalMetric: {}".format(dict(self.get_name_value()))

    def get_config(self):
        """A dict from which ``metric.create(**config)`` rebuilds this metric."""
        config = dict(self._kwargs)
        config.update({"metric": self.__class__.__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label, pred):
        """Update from name -> array mappings, picking ``output_names``/``label_names``."""
        if self.output_names is not None:
            pred = [pred[n] for n in self.output_names]
        else:
            pred = list(pred.values())
        if self.label_names is not None:
            label = [label[n] for n in self.label_names]
        else:
            label = list(label.values())
        self.update(label, pred)

    def update(self, labels, preds):
        """Accumulate the statistics of one batch."""
        raise NotImplementedError()

    def reset(self):
        """Clear local and global statistics."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local statistics only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """(name, value) of the local statistics; value is nan before any update."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        """(name, value) of the global statistics."""
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.global_sum_metric / self.global_num_inst)

    @staticmethod
    def _zip(name, value):
        if not isinstance(name, list):
            name = [name]
        if not isinstance(value, list):
            value = [value]
        return list(zip(name, value))

    def get_name_value(self):
        """[(name, value), ...] of the local statistics."""
        name, value = self.get()
        return self._zip(name, value)

    def get_global_name_value(self):
        """[(name, value), ...] of the global statistics."""
        if not self._has_global_stats:
            return self.get_name_value()
        name, value = self.get_global()
        return self._zip(name, value)

    def _add(self, value, count):
        if isinstance(value, numpy.floating):
            value = float(value)         # accumulate in double precision whatever numpy does
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count


# ---- composite -----------------------------------------------------------------------------
@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns (names, values) lists."""

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        super(CompositeEvalMetric, self).__init__(name, output_names=output_names,
                                                  label_names=label_names,
                                                  has_global_stats=True)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        """Append a child metric (anything ``create`` takes)."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at ``index``."""
        try:
            return self.metrics[index]
        except IndexError:
            raise ValueError("Metric index {} is out of range 0 and {}".format(
                index, len(self.metrics))) from None

    def update_dict(self, labels, preds):  # pylint: disable=arguments-differ
        if self.label_names is not None:
            labels = OrderedDict((k, v) for k, v in labels.items() if k in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict((k, v) for k, v in preds.items() if k in self.output_names)
        for m in self.metrics:
            m.update_dict(labels, preds)

    def update(self, labels, preds):
        for m in self.metrics:
            m.update(labels, preds)

    def reset(self):
        for m in getattr(self, "metrics", ()):
            m.reset()

    def reset_local(self):
        for m in getattr(self, "metrics", ()):
            m.reset_local()

    def _collect(self, getter):
        names, values = [], []
        for m in self.metrics:
            name, value = getter(m)
            if isinstance(name, string_types):
                name = [name]
            if isinstance(value, numeric_types):
                value = [value]
            names.extend(name)
            values.extend(value)
        return (names, values)

    def get(self):
        return self._collect(lambda m: m.get())

    def get_global(self):
        return self._collect(lambda m: m.get_global())

    def get_config(self):
        config = super(CompositeEvalMetric, self).get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config


# ---- classification ------------------------------------------------------------------------
@register
@alias("acc")
class Accuracy(EvalMetric):
    """Fraction of samples whose predicted class (argmax over ``axis`` when the prediction
    has a different shape than the label) equals the label."""

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super(Accuracy, self).__init__(name, axis=axis, output_names=output_names,
                                       label_names=label_names, has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            if pred.shape != label.shape:
                if isinstance(pred, NDArray):
                    pred = ndarray.argmax(pred, axis=self.axis)
                else:
                    pred = numpy.argmax(numpy.asarray(pred), axis=self.axis)
            pred = _host(pred).astype("int32").ravel()
            label = _host(label).astype("int32").ravel()
            check_label_shapes(label, pred)
            correct = int((pred == label).sum())
            self._add(correct, len(pred))


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Fraction of samples whose label is among the ``top_k`` highest-scored classes."""

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super(TopKAccuracy, self).__init__(name, top_k=top_k, output_names=output_names,
                                           label_names=label_names, has_global_stats=True)
        self.top_k = top_k
        if not self.top_k > 1:
            raise AssertionError("Please use Accuracy if top_k is no more than 1")
        self.name += "_%d" % self.top_k

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            if len(pred.shape) > 2:
                raise AssertionError("Predictions should be no more than 2 dims")
            scores = _host(pred).astype("float32")
            kth = min(self.top_k, scores.shape[-1]) if scores.ndim else self.top_k
            pred = numpy.argpartition(scores, -kth)
            label = _host(label).astype("int32")
            check_label_shapes(label, pred)
            n = pred.shape[0]
            if pred.ndim == 1:
                correct = int((pred.ravel() == label.ravel()).sum())
            else:
                ncls = pred.shape[1]
                k = min(ncls, self.top_k)
                flat = label.ravel()
                correct = 0
                for j in range(k):
                    correct += int((pred[:, ncls - 1 - j].ravel() == flat).sum())
            self._add(correct, n)


class _BinaryClassificationMetrics(object):
    """True/false positive/negative counts of a binary classifier, local and global."""

    _FIELDS = ("true_positives", "false_negatives", "false_positives", "true_negatives")

    def __init__(self):
        self.reset_stats()

    def update_binary_stats(self, label, pred):
        pred = _host(pred)
        label = _host(label).astype("int32")
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError("%s currently only supports binary classification."
                             % self.__class__.__name__)
        pred_true = pred_label == 1
        label_true = label == 1
        tp = int((pred_true & label_true).sum())
        fp = int((pred_true & ~label_true).sum())
        fn = int((~pred_true & label_true).sum())
        tn = int((~pred_true & ~label_true).sum())
        for field, v in zip(self._FIELDS, (tp, fn, fp, tn)):
            setattr(self, field, getattr(self, field) + v)
            setattr(self, "global_" + field, getattr(self, "global_" + field) + v)

    @staticmethod
    def _ratio(num, den):
        return float(num) / den if den > 0 else 0.

    @property
    def precision(self):
        return self._ratio(self.true_positives, self.true_positives + self.false_positives)

    @property
    def global_precision(self):
        return self._ratio(self.global_true_positives,
                           self.global_true_positives + self.global_false_positives)

    @property
    def recall(self):
        return self._ratio(self.true_positives, self.true_positives + self.false_negatives)

    @property
    def global_recall(self):
        return self._ratio(self.global_true_positives,
                           self.global_true_positives + self.global_false_negatives)

    @staticmethod
    def _f(p, r):
        return 2 * p * r / (p + r) if p + r > 0 else 0.

    @property
    def fscore(self):
        return self._f(self.precision, self.recall)

    @property
    def global_fscore(self):
        return self._f(self.global_precision, self.global_recall)

    def matthewscc(self, use_global=False):
        """Matthews correlation coefficient; zero factors of the denominator count as 1."""
        pre = "global_" if use_global else ""
        total = self.global_total_examples if use_global else self.total_examples
        if not total:
            return 0.
        tp, fn, fp, tn = (float(getattr(self, pre + f)) for f in self._FIELDS)
        denom = 1.
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)

    @property
    def total_examples(self):
        return sum(getattr(self, f) for f in self._FIELDS)

    @property
    def global_total_examples(self):
        return sum(getattr(self, "global_" + f) for f in self._FIELDS)

    def local_reset_stats(self):
        for f in self._FIELDS:
            setattr(self, f, 0)

    def reset_stats(self):
        for f in self._FIELDS:
            setattr(self, f, 0)
            setattr(self, "global_" + f, 0)


def _check_average(average):
    if average not in ("macro", "micro"):
        raise ValueError("average must be 'macro' or 'micro', got %r" % (average,))
    return average


@register
class F1(EvalMetric):
    """F1 score (harmonic mean of precision and recall) of a binary classifier.

    ``average='macro'`` averages the per-update scores, ``'micro'`` scores all samples seen.
    """

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        self.average = _check_average(average)
        self.metrics = _BinaryClassificationMetrics()
        EvalMetric.__init__(self, name=name, output_names=output_names,
                            label_names=label_names, has_global_stats=True, average=average)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self.metrics.update_binary_stats(label, pred)
        m = self.metrics
        if self.average == "macro":
            self.sum_metric += m.fscore
            self.global_sum_metric += m.global_fscore
            self.num_inst += 1
            self.global_num_inst += 1
            m.reset_stats()
        else:
            self.sum_metric = m.fscore * m.total_examples
            self.global_sum_metric = m.global_fscore * m.global_total_examples
            self.num_inst = m.total_examples
            self.global_num_inst = m.global_total_examples

    def reset(self):
        self.sum_metric = 0.
        self.num_inst = 0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        self.metrics.reset_stats()

    def reset_local(self):
        self.sum_metric = 0.
        self.num_inst = 0
        self.metrics.local_reset_stats()


@register
class MCC(EvalMetric):
    """Matthews correlation coefficient of a binary classifier (see PCC for more classes).

    ``average='macro'`` averages the per-update values, ``'micro'`` uses all samples seen.
    """

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        self._average = _check_average(average)
        self._metrics = _BinaryClassificationMetrics()
        EvalMetric.__init__(self, name=name, output_names=output_names,
                            label_names=label_names, has_global_stats=True, average=average)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._metrics.update_binary_stats(label, pred)
        m = self._metrics
        if self._average == "macro":
            self.sum_metric += m.matthewscc()
            self.global_sum_metric += m.matthewscc(use_global=True)
            self.num_inst += 1
            self.global_num_inst += 1
            m.reset_stats()
        else:
            self.sum_metric = m.matthewscc() * m.total_examples
            self.global_sum_metric = m.matthewscc(use_global=True) * m.global_total_examples
            self.num_inst = m.total_examples
            self.global_num_inst = m.global_total_examples

    def reset(self):
        self.sum_metric = 0.
        self.num_inst = 0.
        self.global_sum_metric = 0.
        self.global_num_inst = 0.
        self._metrics.reset_stats()

    def reset_local(self):
        self.sum_metric = 0.
        self.num_inst = 0.
        self._metrics.local_reset_stats()


@register
class Perplexity(EvalMetric):
    """exp of the mean negative log of the probability given to the true label.

    Parameters
    ----------
    ignore_label : int or None
        Label value whose samples are not counted (None counts all).
    axis : int, default -1
        The class axis of the predictions.
    """

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super(Perplexity, self).__init__(name, ignore_label=ignore_label, axis=axis,
                                         output_names=output_names, label_names=label_names,
                                         has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        if len(labels) != len(preds):
            raise ValueError("Perplexity: %d labels but %d predictions"
                             % (len(labels), len(preds)))
        loss = 0.
        num = 0
        for label, pred in zip(labels, preds):
            if not isinstance(pred, NDArray):
                pred = ndarray.array(numpy.asarray(pred))
            if not isinstance(label, NDArray):
                label = ndarray.array(numpy.asarray(label), ctx=pred.context)
            if label.size != pred.size / pred.shape[-1]:
                raise AssertionError("shape mismatch: %s vs. %s" % (label.shape, pred.shape))
            label = label.as_in_context(pred.context).reshape((label.size,))
            axis = self.axis
            if pred.ndim > 2:
                # classes to the last axis, then one row per label (MXNet handles 2-D only)
                ax = axis % pred.ndim
                order = [i for i in range(pred.ndim) if i != ax] + [ax]
                pred = ndarray.transpose(pred, axes=order).reshape((-1, pred.shape[ax]))
                axis = -1
            pred = ndarray.pick(pred, label.astype(dtype="int32"), axis=axis)
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(pred.dtype)
                num -= ndarray.sum(ignore).asscalar()
                pred = pred * (1 - ignore) + ignore
            loss -= ndarray.sum(ndarray.log(ndarray.maximum(1e-10, pred))).asscalar()
            num += pred.size
        self._add(loss, num)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


# ---- regression ----------------------------------------------------------------------------
def _as_2d(a):
    return a.reshape(a.shape[0], 1) if a.ndim == 1 else a


class _Regression(EvalMetric):
    """Shared update loop of MAE/MSE/RMSE: one value per (label, pred) pair, each counted once."""

    def __init__(self, name, output_names=None, label_names=None):
        super(_Regression, self).__init__(name, output_names=output_names,
                                          label_names=label_names, has_global_stats=True)

    @staticmethod
    def _value(label, pred):
        raise NotImplementedError()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._add(self._value(_as_2d(_host(label)), _as_2d(_host(pred))), 1)


@register
class MAE(_Regression):
    """Mean absolute error."""

    def __init__(self, name="mae", output_names=None, label_names=None):
        super(MAE, self).__init__(name, output_names=output_names, label_names=label_names)

    @staticmethod
    def _value(label, pred):
        return numpy.abs(label - pred).mean()


@register
class MSE(_Regression):
    """Mean squared error."""

    def __init__(self, name="mse", output_names=None, label_names=None):
        super(MSE, self).__init__(name, output_names=output_names, label_names=label_names)

    @staticmethod
    def _value(label, pred):
        return ((label - pred) ** 2.0).mean()


@register
class RMSE(_Regression):
    """Root mean squared error (of each update, averaged over updates)."""

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super(RMSE, self).__init__(name, output_names=output_names, label_names=label_names)

    @staticmethod
    def _value(label, pred):
        return numpy.sqrt(((label - pred) ** 2.0).mean())


def _picked_prob(label, pred):
    label = _host(label).ravel()
    pred = _host(pred)
    if label.shape[0] != pred.shape[0]:
        raise AssertionError("%d labels for %d predictions" % (label.shape[0], pred.shape[0]))
    return pred[numpy.arange(label.shape[0], dtype=numpy.int64), label.astype(numpy.int64)]


@register
@alias("ce")
class CrossEntropy(EvalMetric):
    """Mean of -log(p + eps), p the predicted probability of the true class."""

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super(CrossEntropy, self).__init__(name, eps=eps, output_names=output_names,
                                           label_names=label_names, has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            prob = _picked_prob(label, pred)
            self._add((-numpy.log(prob + self.eps)).sum(), prob.shape[0])


@register
@alias("nll_loss")
class NegativeLogLikelihood(EvalMetric):
    """Mean negative log-likelihood of the true class, -log(p + eps)."""

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super(NegativeLogLikelihood, self).__init__(name, eps=eps, output_names=output_names,
                                                    label_names=label_names,
                                                    has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            prob = _picked_prob(label, pred)
            self._add((-numpy.log(prob + self.eps)).sum(), prob.shape[0])


class _Moments(object):
    """Running count, means, sums of squared deviations and co-moment of two series
    (Welford/Chan batch updates), for the micro-averaged Pearson correlation."""

    def __init__(self):
        self.n = 0
        self.mean_l = self.mean_p = 0.
        self.m2_l = self.m2_p = 0.
        self.c = 0.

    def add(self, label, pred):
        n = self.n + len(label)
        dl = label - self.mean_l
        new_mean_l = self.mean_l + numpy.sum(dl / n)
        self.m2_l += numpy.sum(dl * (label - new_mean_l))
        # co-moment: deviations of one series from its new mean times the other's from its old
        self.c += numpy.sum((label - new_mean_l) * (pred - self.mean_p))
        dp = pred - self.mean_p
        new_mean_p = self.mean_p + numpy.sum(dp / n)
        self.m2_p += numpy.sum(dp * (pred - new_mean_p))
        self.mean_l, self.mean_p, self.n = new_mean_l, new_mean_p, n

    def corr(self):
        n = self.n
        return self.c / ((n - 1) * numpy.sqrt(self.m2_p / (n - 1))
                         * numpy.sqrt(self.m2_l / (n - 1)))


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of predictions and labels (flattened).

    ``average='macro'`` averages the per-array correlations; ``'micro'`` correlates every
    value seen (since ``reset_local`` for ``get``, since ``reset`` for ``get_global``).
    """

    def __init__(self, name="pearsonr", output_names=None, label_names=None,
                 average="macro"):
        self.average = _check_average(average)
        super(PearsonCorrelation, self).__init__(name, output_names=output_names,
                                                 label_names=label_names,
                                                 has_global_stats=True, average=average)

    def reset_micro(self):
        self._local = _Moments()
        self._global = _Moments()

    def reset(self):
        super(PearsonCorrelation, self).reset()
        self.reset_micro()

    def reset_local(self):
        super(PearsonCorrelation, self).reset_local()
        self._local = _Moments()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _host(label).ravel().astype(numpy.float64)
            pred = _host(pred).ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self._local.add(label, pred)
                self._global.add(label, pred)
                self.num_inst += 1
                self.global_num_inst += 1

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.sum_metric / self.num_inst)
        return (self.name, self._local.corr())

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.global_sum_metric / self.global_num_inst)
        return (self.name, self._global.corr())


@register
class PCC(EvalMetric):
    """Multiclass Matthews correlation (Pearson correlation of the K x K confusion matrix);
    equals MCC for two classes. The class count grows with the largest label/prediction."""

    def __init__(self, name="pcc", output_names=None, label_names=None,
                 has_global_stats=True):
        self.k = 2
        super(PCC, self).__init__(name=name, output_names=output_names,
                                  label_names=label_names, has_global_stats=has_global_stats)

    def _grow(self, inc):
        pad = ((0, inc), (0, inc))
        self.lcm = numpy.pad(self.lcm, pad, "constant", constant_values=0)
        self.gcm = numpy.pad(self.gcm, pad, "constant", constant_values=0)
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _host(label).astype("int32")
            pred = _host(pred)
            if pred.shape != label.shape:
                pred = pred.argmax(axis=1)
            else:
                pred = pred.astype("int32")
            label = label.ravel()
            pred = pred.ravel()
            if label.size == 0:
                continue
            if min(pred.min(), label.min()) < 0:
                raise ValueError("PCC: negative class index in labels or predictions")
            n = int(max(pred.max(), label.max()))
            if n >= self.k:
                self._grow(n + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (pred, label), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    def reset(self):
        self.global_num_inst = 0.
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.
        self.lcm = numpy.zeros((self.k, self.k))


@register
class Loss(EvalMetric):
    """Mean of the predictions themselves (for printing a loss output)."""

    def __init__(self, name="loss", output_names=None, label_names=None):
        super(Loss, self).__init__(name, output_names=output_names, label_names=label_names,
                                   has_global_stats=True)

    def update(self, _, preds):
        if _is_array(preds):
            preds = [preds]
        for pred in preds:
            if isinstance(pred, NDArray):
                total = ndarray.sum(pred).asscalar()
            else:
                pred = numpy.asarray(pred)
                total = pred.sum()
            self._add(total, pred.size)


@register
class Torch(Loss):
    """Dummy metric for torch criterions."""

    def __init__(self, name="torch", output_names=None, label_names=None):
        super(Torch, self).__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """Dummy metric for caffe criterions."""

    def __init__(self, name="caffe", output_names=None, label_names=None):
        super(Caffe, self).__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric computed by ``feval(label, pred)`` on numpy arrays, per (label, pred) pair.

    ``feval`` returns either a value (counted as one instance) or (sum_metric, num_inst).
    With ``allow_extra_outputs`` there may be more predictions than labels (RNN states).
    """

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if name is None:
            name = feval.__name__
            if "<" in name:
                name = "custom(%s)" % name
        super(CustomMetric, self).__init__(name, feval=feval,
                                           allow_extra_outputs=allow_extra_outputs,
                                           output_names=output_names, label_names=label_names,
                                           has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        else:
            if _is_array(labels):
                labels = [labels]
            if _is_array(preds):
                preds = [preds]
        for pred, label in zip(preds, labels):
            result = self._feval(_host(label), _host(pred))
            if isinstance(result, tuple):
                value, count = result
                self._add(value, count)
            else:
                self._add(result, 1)

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):  # pylint: disable=invalid-name
    """A CustomMetric from ``numpy_feval(label, pred)`` taking numpy arrays and returning a
    float (or a (sum, count) tuple)."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
