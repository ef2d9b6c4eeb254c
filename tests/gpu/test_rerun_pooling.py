"""tests/ops/test_pooling.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_pooling import *  # noqa: F401,F403
