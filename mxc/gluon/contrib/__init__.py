"""``gluon.contrib`` (MXNet 1.9.1): experimental blocks. Sub-packages register below."""
from . import nn, rnn, cnn, data  # noqa: F401
from . import estimator  # noqa: F401
