"""tests/ops/test_shape.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_shape import *  # noqa: F401,F403
