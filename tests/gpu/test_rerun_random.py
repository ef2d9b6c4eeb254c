"""tests/ops/test_random.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_random import *  # noqa: F401,F403
