"""tests/ops/test_reduce.py re-run with the default context gpu(0) (see conftest.py)."""
from tests.ops.test_reduce import *  # noqa: F401,F403
