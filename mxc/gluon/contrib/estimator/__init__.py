"""``gluon.contrib.estimator`` (MXNet 1.9.1): a fit loop (`Estimator`) driven by event handlers.

`Estimator.fit` runs `BatchProcessor.fit_batch` on each batch and calls the handlers at six
points (train begin/end, epoch begin/end, batch begin/end); a handler whose ``batch_end`` or
``epoch_end`` returns True stops the loop. Default handlers (stopping, gradient update, metrics,
validation, logging) are added unless the caller passes one of the same kind."""
from . import estimator, event_handler, batch_processor  # noqa: F401
from .estimator import *  # noqa: F401,F403
from .event_handler import *  # noqa: F401,F403
from .batch_processor import *  # noqa: F401,F403
