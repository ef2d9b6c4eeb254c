"""``mx.mod`` / ``mx.module``: the Module API (MXNet 1.9.1)."""
from .base_module import BaseModule  # noqa: F401
from .module import Module  # noqa: F401
from .bucketing_module import BucketingModule  # noqa: F401
from .sequential_module import SequentialModule  # noqa: F401
from .python_module import PythonModule, PythonLossModule  # noqa: F401
from . import executor_group  # noqa: F401
