"""Dynamic loss scaling for AMP (MXNet 1.9.1's ``mxnet.contrib.amp.loss_scaler``).

The scale starts at 2**16. A step whose gradients hold an inf or a NaN is skipped and halves the
scale for the next step; 2000 clean steps in a row double it (up to 2**24)."""
import logging

from ... import autograd as _ag, ndarray as nd

__all__ = ["LossScaler"]

_CHUNK = 200      # arrays per multi_all_finite call


class LossScaler:
    """Dynamic loss scaler; ``loss_scale`` is the current scale."""

    def __init__(self):
        self._loss_scale = 2.0 ** 16
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = 2.0 ** 24
        self._scale_seq_len = 2000
        self._unskipped = 0

    @property
    def loss_scale(self):
        return self._loss_scale

    def has_overflow(self, params):
        """Whether any gradient of `params` (gluon Parameters) is not finite; moves the scale."""
        grads = []
        for p in params:
            g = getattr(p, "_grad", None)
            if g:
                grads.append(g[0])
        overflow = False
        if grads:
            with _ag.pause():
                flag = nd.ones((1,), ctx=grads[0].context)
                for k in range(0, len(grads), _CHUNK):
                    part = grads[k:k + _CHUNK]
                    nd.multi_all_finite(*part, num_arrays=len(part), init_output=False, out=flag)
            overflow = not bool(flag.asnumpy()[0])
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.0
            self._unskipped = 0
            logging.info("AMP: decreasing loss scale to %f", self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
            logging.info("AMP: increasing loss scale to %f", self._next_loss_scale)
        return overflow
