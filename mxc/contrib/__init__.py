"""``mx.contrib``: MXNet 1.x's experimental namespaces (amp, the horovod-style facade)."""
from . import amp  # noqa: F401,E402
