"""``mx.executor``: Executor, the result of ``Symbol.bind``/``simple_bind``."""
from .executor import Executor  # noqa: F401
from .cached_op import CachedOp  # noqa: F401
