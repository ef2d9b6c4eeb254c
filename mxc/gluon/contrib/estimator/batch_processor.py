"""What the estimator does with one batch: `BatchProcessor.fit_batch` (forward under
autograd, backward) and `evaluate_batch` (forward only). Subclass it to change either."""
from ... import utils as _gutils
from .... import autograd

__all__ = ["BatchProcessor"]


class BatchProcessor(object):
    """Default per-batch work of `Estimator.fit` and `Estimator.evaluate`.

    A batch is ``(data, label, ...)``; data and label are split along `batch_axis` over the
    estimator's contexts. Both methods return ``(data, label, pred, loss)``, each a list with one
    entry per context. The optimizer step is not taken here but by `GradientUpdateHandler`."""

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        data = _gutils.split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = _gutils.split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Predict `val_batch` with ``estimator.val_net`` and score it with ``val_loss``."""
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Forward `train_batch` through ``estimator.net`` while recording, then backward."""
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for piece in loss:
            piece.backward()
        return data, label, pred, loss
