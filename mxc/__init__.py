from .base import MXNetError  # noqa: F401  (the package surface grows in mxc/__init__ as modules land)
