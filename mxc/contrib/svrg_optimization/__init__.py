"""``mx.contrib.svrg_optimization``: stochastic variance reduced gradient (SVRG, Johnson & Zhang
2013) on the Module API, as in MXNet 1.9.1.

``SVRGModule`` keeps a second module holding a snapshot of the weights, refreshed every
`update_freq` epochs together with the full-data gradient at the snapshot; each batch then
updates with ``g(w) - g(w_snapshot) + full_gradient``. ``_SVRGOptimizer`` routes the
``<name>_full`` kvstore keys (where the full gradients are summed across devices/workers) to an
assignment and every other key to the wrapped optimizer."""
from . import svrg_module  # noqa: F401
from . import svrg_optimizer  # noqa: F401
from .svrg_module import SVRGModule  # noqa: F401
