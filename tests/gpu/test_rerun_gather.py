"""tests/ops/test_gather.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_gather import *  # noqa: F401,F403
