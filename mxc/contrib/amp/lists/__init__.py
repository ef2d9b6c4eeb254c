"""Operator lists of AMP: which operators run in low precision, which stay float32, which take
the widest dtype of their inputs (one module per target dtype)."""
from . import symbol_fp16  # noqa: F401
from . import symbol_bf16  # noqa: F401
