"""Losses of Gluon (``mx.gluon.loss``, as MXNet 1.9.1's gluon.loss).

Every loss is a HybridBlock ``loss(pred, label, [sample_weight])`` returning one value per
sample (the mean over all axes but ``batch_axis``), except where noted (PoissonNLLLoss returns
the mean over everything, CTCLoss and CosineEmbeddingLoss one value per sample without a mean).
``weight`` is a global scalar factor; ``sample_weight`` is broadcast-multiplied elementwise."""

__all__ = ['Loss', 'L2Loss', 'L1Loss',
           'SigmoidBinaryCrossEntropyLoss', 'SigmoidBCELoss',
           'SoftmaxCrossEntropyLoss', 'SoftmaxCELoss',
           'KLDivLoss', 'CTCLoss', 'HuberLoss', 'HingeLoss',
           'SquaredHingeLoss', 'LogisticLoss', 'TripletLoss', 'PoissonNLLLoss',
           'CosineEmbeddingLoss', 'SDMLLoss']

import numpy as np

from ..base import numeric_types
from ..ndarray import NDArray
from .block import HybridBlock


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """Scale ``loss`` by ``sample_weight`` (broadcast, elementwise) and by the scalar
    ``weight``."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        assert isinstance(weight, numeric_types), "weight must be a number"
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    """``x`` reshaped to ``y``'s shape (labels given as (N,) for (N, 1) predictions...)."""
    if isinstance(x, NDArray):
        if x.shape != y.shape and x.size != y.size:
            raise ValueError('loss: label of shape %s cannot be reshaped like the prediction '
                             'of shape %s (%d elements vs %d)'
                             % (x.shape, y.shape, x.size, y.size))
        return x.reshape(y.shape)
    return F.reshape_like(x, y)


def _batch_mean(F, loss, batch_axis):
    return F.mean(loss, axis=batch_axis, exclude=True)


class Loss(HybridBlock):
    """Base class of the losses: ``weight`` (a scalar factor or None) and ``batch_axis`` (the
    axis that indexes samples)."""

    def __init__(self, weight, batch_axis, **kwargs):
        super(Loss, self).__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return '{}(batch_axis={}, w={})'.format(self.__class__.__name__, self._batch_axis,
                                                self._weight)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Override to compute the loss."""
        raise NotImplementedError


class L2Loss(Loss):
    r"""``weight/2 * (label - pred)^2``, averaged per sample (``weight`` defaults to 1)."""

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super(L2Loss, self).__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(label - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class L1Loss(Loss):
    r"""``|label - pred|``, averaged per sample."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super(L1Loss, self).__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class SigmoidBinaryCrossEntropyLoss(Loss):
    r"""Binary cross-entropy of ``sigmoid(pred)`` (or of ``pred`` itself with
    ``from_sigmoid=True``) against labels in [0, 1]. The logit form is computed stably as
    ``max(x, 0) - x*z + log(1 + exp(-|x|))``. ``pos_weight`` (broadcastable to the label)
    weights the positive term."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super(SigmoidBinaryCrossEntropyLoss, self).__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            soft = F.Activation(-F.abs(pred), act_type='softrelu')
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + soft
            else:
                # (1 + (pw - 1) * z) * log(1 + exp(-x)) + (1 - z) * x, written stably.
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * (soft + F.relu(-pred))
        else:
            eps = 1e-12
            pos = F.log(pred + eps) * label
            if pos_weight is not None:
                pos = F.broadcast_mul(pos, pos_weight)
            loss = -(pos + F.log(1. - pred + eps) * (1. - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    r"""Cross-entropy of ``softmax(pred, axis)``: with ``sparse_label`` the label holds class
    indices (``-log p[label]``), otherwise a distribution over ``axis``. ``from_logits=True``
    means ``pred`` is already a log-probability."""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super(SoftmaxCrossEntropyLoss, self).__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if (self._sparse_label and not self._from_logits and sample_weight is None
                and isinstance(pred, NDArray) and isinstance(label, NDArray)
                and self._batch_axis == 0 and pred.ndim == 2 and self._axis in (-1, 1)
                and label.size == pred.shape[0] and label.dtype == pred.dtype
                and pred.stype == "default"):
            # imperative and the common case: one operator and one backward (the mean over
            # the size-1 class axis is the identity); a hybridized loss keeps MXNet's graph
            return _apply_weighting(F, F._softmax_ce_rows(pred, label), self._weight)
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    r"""Kullback-Leibler divergence ``label * (log(label) - pred)`` summed per sample, ``pred``
    being log-probabilities (``from_logits=True``, the default) or logits that get a
    log_softmax over ``axis``."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super(KLDivLoss, self).__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    r"""Connectionist temporal classification loss (Graves et al., 2006).

    ``pred``: unnormalized activations, 'NTC' (default) or 'TNC'; the blank is the LAST class.
    ``label``: 'NT' or 'TN' class indices, padded with -1 (or limited by ``label_lengths``).
    ``pred_lengths``/``label_lengths`` (optional, per sample) give the valid lengths. Returns
    one negative log-likelihood per sample."""

    def __init__(self, layout='NTC', label_layout='NT', weight=None, **kwargs):
        if layout not in ('NTC', 'TNC'):
            raise ValueError("Only 'NTC' and 'TNC' layouts for pred are supported. Got: %s"
                             % layout)
        if label_layout not in ('NT', 'TN'):
            raise ValueError("Only 'NT' and 'TN' layouts for label are supported. Got: %s"
                             % label_layout)
        self._layout = layout
        self._label_layout = label_layout
        super(CTCLoss, self).__init__(weight, label_layout.find('N'), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,
                       sample_weight=None):
        if self._layout == 'NTC':
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        loss = F.CTCLoss(pred, label, pred_lengths, label_lengths,
                         use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None,
                         blank_label='last')
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    r"""Smooth L1: ``0.5/rho * d^2`` where ``d = |label - pred| <= rho``, ``d - 0.5*rho``
    beyond, averaged per sample."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super(HuberLoss, self).__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        dist = F.abs(label - pred)
        loss = F.where(dist > self._rho, dist - 0.5 * self._rho,
                       (0.5 / self._rho) * F.square(dist))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class HingeLoss(Loss):
    r"""``max(0, margin - pred * label)`` for labels in {-1, 1}, averaged per sample."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super(HingeLoss, self).__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.relu(self._margin - pred * label)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class SquaredHingeLoss(Loss):
    r"""``max(0, margin - pred * label)^2`` for labels in {-1, 1}, averaged per sample."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super(SquaredHingeLoss, self).__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(F.relu(self._margin - pred * label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class LogisticLoss(Loss):
    r"""``log(1 + exp(-pred * label))`` with ``label_format='signed'`` (labels in {-1, 1}) or
    the equivalent binary cross-entropy on logits with ``label_format='binary'`` ({0, 1})."""

    def __init__(self, weight=None, batch_axis=0, label_format='signed', **kwargs):
        super(LogisticLoss, self).__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if label_format not in ('signed', 'binary'):
            raise ValueError("label_format can only be signed or binary, received %s."
                             % label_format)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        if self._label_format == 'signed':
            label = (label + 1.0) / 2.0
        loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type='softrelu')
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class TripletLoss(Loss):
    r"""``max(0, |pred - positive|^2 - |pred - negative|^2 + margin)`` per sample (squared
    distances summed over the non-batch axes)."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super(TripletLoss, self).__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative):
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, None)


class PoissonNLLLoss(Loss):
    r"""Negative log-likelihood of ``target`` under a Poisson distribution: with
    ``from_logits=True`` ``pred`` is the log-rate (``exp(pred) - target*pred``), otherwise the
    rate (``pred - target*log(pred + epsilon)``). ``compute_full`` adds Stirling's
    approximation of ``log(target!)`` for targets above 1. Returns the mean over all
    elements (shape (1,))."""

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super(PoissonNLLLoss, self).__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            # MXNet evaluates the approximation everywhere and masks it, which gives NaN for a
            # zero target (0 * log 0); evaluating it on max(target, 1) keeps the loss finite.
            above = target > 1
            t = F.maximum(target, 1)
            stirling = t * F.log(t) - t + 0.5 * F.log(2 * t * np.pi)
            loss = loss + stirling * above
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    r"""For label 1: ``1 - cos(input1, input2)``; for label -1:
    ``max(0, cos(input1, input2) - margin)``; one value per sample, shape (N, 1)."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super(CosineEmbeddingLoss, self).__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        is_pos = label == 1
        is_neg = label == -1
        pos_part = (1 - cos_sim) * is_pos
        neg_part = F.relu(is_neg * (cos_sim - self._margin))
        loss = pos_part + neg_part
        return _apply_weighting(F, loss, self._weight, sample_weight)

    def _cosine_similarity(self, F, x, y, axis=-1):
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        dot = F.sum(x * y, axis=axis).reshape((-1, 1))
        return dot / F.maximum(x_norm * y_norm, 1e-12)


class SDMLLoss(Loss):
    r"""Smoothed deep metric learning loss (Bonadiman et al., 2019) for a batch of aligned
    pairs ``(x1[i], x2[i])``: the KL divergence between a softmax over negative squared
    distances of every pair in the batch and a smoothed identity target. Inputs are
    ``(N, D)``; returns one value per sample. Imperative only (needs the batch size)."""

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super(SDMLLoss, self).__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _compute_distances(self, x1, x2):
        """(N, N) squared euclidean distances between every x1[i] and x2[j]."""
        if x1.shape != x2.shape:
            raise ValueError('SDMLLoss: x1 and x2 must have the same shape, got %s and %s'
                             % (x1.shape, x2.shape))
        n, dim = x1.shape
        a = x1.expand_dims(1).broadcast_to((n, n, dim))
        b = x2.expand_dims(0).broadcast_to((n, n, dim))
        return ((a - b) ** 2).sum(axis=2)

    def _compute_labels(self, F, batch_size, dtype='float32'):
        """Smoothed identity: 1 - s on the diagonal, s / (N - 1) elsewhere."""
        gold = F.eye(batch_size, dtype=dtype)
        s = self.smoothing_parameter
        return gold * (1 - s) + (1 - gold) * s / (batch_size - 1)

    def _loss(self, F, x1, x2):
        batch_size = x1.shape[0]
        distances = self._compute_distances(x1, x2)
        labels = self._compute_labels(F, batch_size, distances.dtype)
        log_prob = F.log_softmax(-distances, axis=1)
        return self.kl_loss(log_prob, labels.as_in_context(distances.context))

    def hybrid_forward(self, F, x1, x2):
        return self._loss(F, x1, x2)
