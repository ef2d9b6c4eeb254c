"""``mx.executor``: Executor, the result of ``Symbol.bind``/``simple_bind``."""
from ..symbol import symbol as _symbol
from .executor import Executor  # noqa: F401
from . import executor as _executor
from .cached_op import CachedOp  # noqa: F401

_symbol.install_executor(_executor)   # Symbol.bind, simple_bind and eval_imperative
