"""tests/ops/test_activation.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_activation import *  # noqa: F401,F403
